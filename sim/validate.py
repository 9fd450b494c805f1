#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The scale model against the testbed: every configuration the testbed's
benchmarks measured, simulated by netreduce-plan with the same parameters
(hosts, processes, racks, jobs, link rates, RoCE MTU, the box's workers),
side by side.

Input: JSON lines of `tests/testbed/bench-e2e --out`, `tests/testbed/bench-hier
--out` and `sim/validation/measure --out` (sim/validation/ keeps dated sets).
A row is the median over the launches (and jobs) of each launch's median call
time.  A row's `boxes` (default 1) is the number of boxes its job striped over
(NR_BOX's list): box, hierarchical and parallel rows with boxes > 1 are
compared against the model's striped, striped-hier and striped-parallel over
as many boxes like the row's.  The testbed stripes them over its rails (a host
a link to each box, shaped alike, carrying 1/K of the job each): on shaped
links a host's NIC in the model is the K rails' sum, as the striped flows
share them evenly; the ring keeps rail 0.  measure's boxes part (K = 1 and 2
side by side) is labelled by its K and left out of the fit set.  The soft
transport's rate is its machine's and build's: that part's session (its file)
fits its own on its one-box unshaped rows (its "fit" rows), with the hop and
step of the fit set, and its striped unshaped rows check it.

The box's rates are those of the machine a file's header names
(sim/boxes/epyc-2vcpu.jsonl for an AMD EPYC guest, xeon-2vcpu.jsonl for an
Intel Xeon one; a header naming neither: EPYC's).

The model's parameters are the testbed's own plus three constants fitted here
on one set of rows and checked on the others: the soft transport's latency a
hop (latency.nic), a step's software cost (step_cost), and on unshaped links
the soft transport's rate, what the hosts move together on the machine's
CPUs (each of N hosts gets 1/N of it).  The fit set: flat 4-host rows at
4 KiB, 64 KiB and 4 MiB; every other row checks.

A row is within when model/testbed is within --tolerance (15%); a row outside
is counted and shown with its reason: resends (the inter-rack link carried
more than 1.25 times the model's bytes: the soft transport has no congestion
control), cpu (unshaped links: the hosts' transport and the box share the
machine's vCPUs, which the model describes by one fitted rate), workers (the
box's workers busy-poll as many vCPUs as the machine has).  Exit 1 if a row
outside has none of these reasons, 2 on bad input.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# What the testbed is beyond its rates: the box the hosts' switch, on its
# machine's class of rates; gradients in host memory; the soft transport's
# latencies inside a host and across the box namespace.
FIXED = {"latency": {"intra": "20us", "fabric": "20us"}, "header_bytes": 58, "gradients": "host",
         "box": {"mode": "switch", "workers": 1, "rates": os.path.join(HERE, "boxes", "epyc-2vcpu.jsonl")}}
# The box's rates by the machine a file's header names (its first match; else FIXED's).
MACHINES = {"AMD EPYC": "epyc-2vcpu.jsonl", "Intel(R) Xeon(R)": "xeon-2vcpu.jsonl"}
GRID = {"hop": [25e-6, 50e-6, 75e-6, 100e-6, 125e-6, 150e-6, 200e-6, 300e-6],
        "step": [0, 0.05e-3, 0.1e-3, 0.25e-3, 0.5e-3, 1e-3, 1.5e-3, 2e-3],
        "soft": [0.2e9, 0.3e9, 0.35e9, 0.4e9, 0.45e9, 0.5e9, 0.55e9, 0.6e9, 0.7e9, 0.8e9, 1.0e9, 1.2e9]}
# A row whose inter-rack link carried more than RESENT times the model's bytes
# measured go-back-N resends, not the network.
RESENT = 1.25
VCPUS = 2       # the testbed machine's (sim/validation/*.jsonl headers)
# sim/validation/measure's parts: the rows where latency and the box's rate matter.
PARTS = {"small": "small messages, 4 KiB to 256 KiB, shaped and unshaped links",
         "unshaped": "1 to 16 MiB on unshaped links",
         "workers": "the box on 1 and 2 workers driven to its limit",
         "jobs": "two jobs sharing one box",
         "boxes": "a job striped over 1 and 2 boxes, large messages, shaped and unshaped links"}


SKIPPED = []    # the files' "# skipped" and "# not run" lines: launches not measured


def load(paths):
    """The files' rows, each with the box's rates of the machine its file's header names (_rates)."""
    rows = []
    for p in paths:
        rates = None
        with open(p) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if line.startswith("# skipped") or line.startswith("# not run"):
                    SKIPPED.append(f"{os.path.basename(p)}: {line[2:]}")
                if line.startswith("#") and rates is None:
                    rates = next((os.path.join(HERE, "boxes", v) for m, v in MACHINES.items() if m in line), None)
                if not line.startswith("{"):
                    continue
                try:
                    rows.append(dict(json.loads(line), _rates=rates or FIXED["box"]["rates"],
                                     _file=os.path.basename(p)))
                except ValueError as e:
                    raise SystemExit(f"validate: {p}:{n}: {e}")
    return rows


def striped(c, algo, boxes, rate):
    """A row of a job striped over `boxes` boxes (NR_BOX's list): the model's
    striped algorithm of the same name over as many boxes like the row's.  The
    testbed's host has a rail of `rate` Mbit/s (0: unshaped) to each box, each
    carrying its stripe, 1/K of the job: in the model one NIC of K rails' rate."""
    if boxes == 1 or algo == "ring":
        return c, algo
    box = dict(c.get("box", FIXED["box"]), stripes=boxes)
    c = dict(c, box=box)
    if rate:
        c["nic"] = f"{boxes * rate}Mbps"
    return c, {"box": "striped", "hier": "striped-hier", "parallel": "striped-parallel"}[algo]


def case(r):
    """(cluster fields, model algorithm, label, unshaped) for one measured row, or None.
    A row's `boxes` (default 1) is the boxes its job striped over."""
    mtu = r.get("mtu", 1024)
    unshaped = not r.get("rate_mbit")
    base = dict(FIXED, mtu=mtu, box=dict(FIXED["box"], rates=r.get("_rates", FIXED["box"]["rates"])))
    if not unshaped:
        base["nic"] = f"{r['rate_mbit']}Mbps"
    part = r.get("part", "e2e")
    boxes = r.get("boxes", 1)
    if not (isinstance(boxes, int) and boxes >= 1):
        raise SystemExit(f"validate: a row's boxes must be an integer >= 1, not {boxes!r}")
    if part in ("e2e", "small", "unshaped", "workers", "jobs", "boxes"):
        algo = {"netreduce": "box", "ring": "ring"}.get(r["tbalgo"])
        if algo is None:
            return None
        jobs = r.get("jobs", 1)
        c = dict(base, hosts_per_rack=r["ranks"] * jobs, jobs=jobs)
        w = r.get("box_workers", 1)
        if w != 1 or r.get("channels", 1) > 1:
            c["box"] = dict(base["box"], workers=w, channels=max(1, r.get("channels", 1)))
        c, algo = striped(c, algo, boxes, r.get("rate_mbit", 0))
        label = f"flat N={r['ranks']}" + (f" x {jobs} jobs" if jobs > 1 else "") + \
            (f", box {w} workers" if part == "workers" else "") + \
            (f", {boxes} boxes" if boxes > 1 and algo != "ring" else ", 1 box" if part == "boxes" else "") + \
            (" unshaped" if unshaped else "")
        return c, algo, label, unshaped
    if part == "hosts":
        P = r["procs"]
        H = r["ranks"] // P
        algo = {"parallel": "parallel", "hierarchical": "hier", "ring": "ring"}[r["tbalgo"]]
        c, algo = striped(dict(base, hosts_per_rack=H, gpus_per_host=P, intra=f"{r['intra_mbit']}Mbps",
                               library_intra=f"{r['intra_mbit']}Mbps"), algo, boxes, r.get("rate_mbit", 0))
        return c, algo, f"{H}x{P} r={r['ratio']:g}" + (f", {boxes} boxes" if boxes > 1 and algo != "ring" else ""), \
            unshaped
    if part == "racks" and boxes > 1:
        raise SystemExit("validate: a racks row striped over several boxes: the model does not stripe the racks "
                         "algorithm (sim/README.md, \"Striping\")")
    if part == "racks":
        H = r["ranks"] // 2
        c = dict(base, rack_hosts=[H, H], tor_uplink=f"{r['inter_mbit']}Mbps")
        if r["tbalgo"] == "ring":
            return c, "ring", f"2 racks x{H} x={r['inter_mbit']}", unshaped
        kind = r["kind"]
        if kind == "racks-1agent":
            c["rack_agents"] = 1
        if kind == "racks-nobox":
            c["boxes"] = [0]
        return c, "racks", f"2 racks x{H} x={r['inter_mbit']} {kind}", unshaped
    return None


def fit_set(g):
    """Flat 4-host rows at 4 KiB, 64 KiB and 4 MiB fit the constants (not the boxes part's)."""
    return g["label"].startswith("flat N=4") and "jobs" not in g["label"] and "workers" not in g["label"] \
        and " box" not in g["label"] and g["bytes"] in (4096, 65536, 4 << 20)


def session_fit(g):
    """measure's boxes part: its one-box unshaped rows past 64 KiB fit its session's soft rate."""
    return g["session"] is not None and g["unshaped"] and ", 1 box" in g["label"] and g["bytes"] > 65536


def model_cluster(g, k):
    cl = json.loads(g["cluster"])
    cl["latency"] = dict(cl["latency"], nic=f"{k['hop'] * 1e6:g}us")
    cl["step_cost"] = f"{k['step'] * 1e3:g}ms"
    if g["unshaped"]:
        hosts = sum(cl["rack_hosts"]) if "rack_hosts" in cl else cl["hosts_per_rack"] * cl.get("racks", 1)
        cl["nic"] = k["sessions"].get(g["session"], k["soft"]) / hosts
    return cl


def simulate(plan, cluster, algo, nbytes, cache):
    key = (json.dumps(cluster, sort_keys=True), algo, nbytes)
    if key in cache:
        return cache[key]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(dict(cluster, name="testbed"), f)
    try:
        out = subprocess.run([plan, f.name, "--json", "--algo", algo, "--bytes", str(int(nbytes))],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        raise SystemExit(f"validate: netreduce-plan failed: {out.stderr.strip()}")
    row = next(r for r in map(json.loads, out.stdout.splitlines()) if r["algo"] == algo)
    cache[key] = (row["seconds"], row["cross_rack_bytes"])
    return cache[key]


def error(plan, groups, k, cache):
    """Sum of squared log ratios of model to testbed over groups."""
    e = 0
    for g in groups:
        m, _ = simulate(plan, model_cluster(g, k), g["algo"], g["bytes"], cache)
        e += math.log(m / g["time"]) ** 2
    return e


def fit(plan, groups, cache):
    """hop and step on the fit set's shaped and small rows, then soft on its unshaped ones."""
    k = {"hop": 100e-6, "step": 1e-3, "soft": 0.4e9, "sessions": {}}
    fitting = [g for g in groups if fit_set(g)]
    timing = [g for g in fitting if not g["unshaped"] or g["bytes"] <= 65536]
    if timing:
        best = min(((h, s) for h in GRID["hop"] for s in GRID["step"]),
                   key=lambda hs: error(plan, timing, dict(k, hop=hs[0], step=hs[1]), cache))
        k.update(hop=best[0], step=best[1])
    rate = [g for g in fitting if g["unshaped"] and g["bytes"] > 65536]
    if rate:
        k["soft"] = min(GRID["soft"], key=lambda s: error(plan, rate, dict(k, soft=s), cache))
    for sess in sorted({g["session"] for g in groups if session_fit(g)}):
        own = [g for g in groups if session_fit(g) and g["session"] == sess]
        k["sessions"][sess] = min(GRID["soft"], key=lambda s: error(plan, own, dict(k, sessions={sess: s}), cache))
    return k, len(fitting)


def reason(g, ratio, xr, xmodel, tol):
    if abs(ratio - 1) <= tol:
        return ""
    if xr is not None and xr > RESENT * xmodel:
        return "resends"
    if "workers" in g["label"] and g["workers"] >= VCPUS:
        return "workers"
    if g["unshaped"]:
        return "cpu"
    return "unexplained"


REASONS = {"resends": "the inter-rack link carried more than 1.25x the model's bytes: the soft transport "
                      "resent what was only queued (no congestion control; docs/racks.md)",
           "workers": "the box's workers busy-poll as many vCPUs as the machine has, and the hosts' soft "
                      "transport waits for CPU",
           "cpu": "unshaped links: the hosts' soft transport and the box share the machine's 2 vCPUs; the "
                  "model describes them by one fitted rate",
           "unexplained": "no known reason: the model is wrong here"}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+", help="bench-e2e / bench-hier / measure --out files")
    ap.add_argument("--plan", default="build/netreduce-plan")
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    a = ap.parse_args()
    rows = load(a.jsonl)
    # bench-hier's flat ring rows say local 1: their processes a host are the
    # parallel and hierarchical rows' of the same launch.
    procs = {(r.get("rep"), r.get("ratio")): r["local"] for r in rows
             if r.get("part") == "hosts" and r["tbalgo"] != "ring"}
    for r in rows:
        if r.get("part") == "hosts":
            r["procs"] = r["local"] if r["tbalgo"] != "ring" else procs.get((r.get("rep"), r.get("ratio")))
            if r["procs"] is None:
                raise SystemExit("validate: a hosts ring row without its launch's parallel or hierarchical row")
    groups = {}
    parts = {r.get("part") for r in rows}
    for r in rows:
        if r.get("loss", 0) or r.get("wrong", 0):
            continue
        c = case(r)
        if c is None:
            continue
        cluster, algo, label, unshaped = c
        session = r["_file"] if r.get("part") == "boxes" else None
        key = (json.dumps(cluster, sort_keys=True), algo, label, r["bytes"], session)
        g = groups.setdefault(key, {"cluster": key[0], "algo": algo, "label": label, "bytes": r["bytes"],
                                    "unshaped": unshaped, "session": session, "workers": r.get("box_workers", 1), "times": [],
                                    "xrack": [], "load": []})
        g["times"].append(r["time_us"] / 1e6)
        if "xrack_bytes" in r:
            g["xrack"].append(r["xrack_bytes"] / r["ops"])
        if "load1" in r:
            g["load"].append(r["load1"])
    if not groups:
        print("validate: no rows to compare", file=sys.stderr)
        return 2
    groups = sorted(groups.values(), key=lambda g: (g["label"], g["algo"], g["bytes"]))
    for g in groups:
        g["time"] = statistics.median(g["times"])
    cache = {}
    k, nfit = fit(a.plan, groups, cache)
    fixed = json.dumps(FIXED["latency"])
    print(f"fitted on {nfit} rows (flat 4-host, 4 KiB, 64 KiB, 4 MiB): latency a hop {k['hop'] * 1e6:g} us, "
          f"step cost {k['step'] * 1e3:g} ms, the soft transport on unshaped links {k['soft'] * 8 / 1e9:g} "
          f"Gbit/s among the hosts; fixed: latency {fixed}, the box the hosts' switch at the rates of "
          "the machine a file's header names (sim/boxes/: " + ", ".join(f"{m} {v}" for m, v in MACHINES.items()) +
          ")")
    for sess, soft in k["sessions"].items():
        print(f"{sess}: its own soft transport on unshaped links, {soft * 8 / 1e9:g} Gbit/s among the hosts, fitted on "
              f"its one-box unshaped rows past 64 KiB (set: fit); its striped rows check it")
    head = (f"{'configuration':<38} {'algorithm':<9} {'bytes':>9} {'runs':>4} {'load':>5} {'testbed ms':>11} "
            f"{'model ms':>9} {'model/testbed':>13} {'set':>5} {'x-rack S: testbed (model)':>26}")
    print(head)
    md = ["| configuration | algorithm | bytes | runs | load | testbed ms | model ms | model / testbed | set | "
          "verdict |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    count = {"fit": [0, 0], "check": [0, 0]}
    why = {}
    for g in groups:
        cl = model_cluster(g, k)
        model, xmodel = simulate(a.plan, cl, g["algo"], g["bytes"], cache)
        ratio = model / g["time"]
        xr = xm = None
        xtext = ""
        if g["xrack"]:
            # The testbed counts frames (headers included) on its inter-rack link.
            wire = (cl["mtu"] + cl.get("header_bytes", 58)) / cl["mtu"]
            xr = statistics.median(g["xrack"]) / g["bytes"]
            xm = xmodel * wire / g["bytes"]
            xtext = f"{xr:.2f} ({xm:.2f})"
        r = reason(g, ratio, xr, xm, a.tolerance)
        s = "fit" if fit_set(g) or session_fit(g) else "check"
        count[s][0] += not r
        count[s][1] += 1
        if r:
            why.setdefault(r, []).append(f"{g['label']} {g['algo']} {g['bytes']}")
        ld = f"{max(g['load']):.2f}" if g["load"] else "-"
        print(f"{g['label']:<38} {g['algo']:<9} {g['bytes']:>9} {len(g['times']):>4} {ld:>5} "
              f"{g['time'] * 1e3:>11.2f} {model * 1e3:>9.2f} {ratio:>13.3f} {s:>5} {xtext:>26}"
              f"{'  OUTSIDE: ' + r if r else ''}")
        md.append(f"| {g['label']} | {g['algo']} | {g['bytes']} | {len(g['times'])} | {ld} | "
                  f"{g['time'] * 1e3:.2f} | {model * 1e3:.2f} | {ratio:.3f} | {s} | "
                  f"{'within' if not r else 'outside: ' + r} |")
    total_in = count["fit"][0] + count["check"][0]
    total = count["fit"][1] + count["check"][1]
    summary = (f"{total_in} of {total} rows within {a.tolerance:.0%} of the testbed, {total - total_in} outside "
               f"(fit set {count['fit'][0]} of {count['fit'][1]}, check set {count['check'][0]} of "
               f"{count['check'][1]})")
    print(summary)
    for r, items in why.items():
        print(f"  outside, {r} ({len(items)}): {REASONS[r]}")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("# The scale model against the testbed\n\n"
                    "Made by `make sim-report` (`sim/validate.py` on `sim/validation/*.jsonl`; the files' headers "
                    "say how each was measured).  `load`: the highest 1-minute load average a launch started "
                    "at (- : the older file, taken with nothing else running).  `set`: the rows the three "
                    "constants were fitted on, and the rows that check them.\n\n")
            f.write(f"Fitted: latency a hop {k['hop'] * 1e6:g} us, step cost {k['step'] * 1e3:g} ms, the soft "
                    f"transport on unshaped links {k['soft'] * 8 / 1e9:g} Gbit/s among the hosts" +
                    "".join(f"; {sess}'s own (measure's boxes part, fitted on its one-box unshaped rows past 64 "
                            f"KiB): {soft * 8 / 1e9:g} Gbit/s" for sess, soft in k["sessions"].items()) + ".\n\n")
            f.write("\n".join(md) + "\n\n" + summary + ".\n\n")
            for r, items in why.items():
                f.write(f"- outside, {r} ({len(items)}): {REASONS[r]}\n")
            if SKIPPED:
                f.write("\nLaunches not measured (the files' own notes):\n\n" +
                        "".join(f"- {x}\n" for x in SKIPPED))
            missing = [p for p in PARTS if p not in parts]
            if missing:
                f.write("\nNot measured yet (`sim/validation/measure --only " + ",".join(missing) +
                        "`, on an otherwise idle machine): " + "; ".join(PARTS[p] for p in missing) + ".\n")
    return 1 if "unexplained" in why else 0


if __name__ == "__main__":
    sys.exit(main())
