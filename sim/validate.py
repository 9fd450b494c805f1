#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The scale model against the testbed: every configuration the testbed's
benchmarks measured, simulated by netreduce-plan with the same parameters
(hosts, processes, racks, link rates, RoCE MTU), side by side.

Input: JSON lines of `tests/testbed/bench-e2e --out` and
`tests/testbed/bench-hier --out` (sim/validation/ keeps a dated set).  A row is
the median over the launches of each launch's median call time.  The model's
parameters are the testbed's, plus the ones in TESTBED below (one set for every
row; sim/README.md says how they were chosen).  Exit 1 if a row is off by more
than --tolerance, 2 on bad input.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# What the testbed adds that its link rates do not say: the soft transport's
# per-packet path on the hosts and the box (latency), and the software cost of
# one step of a ring (a message's set-up, the step's hand-over).
HERE = os.path.dirname(os.path.abspath(__file__))
TESTBED = json.loads(os.environ.get("NR_SIM_TESTBED", "null")) or {"latency": {"nic": "100us", "intra": "20us", "fabric": "20us"},
           "step_cost": "1ms", "header_bytes": 58, "gradients": "host",
           "box": {"mode": "switch", "workers": 1, "rates": os.path.join(HERE, "boxes", "epyc-2vcpu.jsonl")}}


# A row whose inter-rack link carried more than RESENT times the model's bytes
# measured go-back-N resends, not the network: printed, not compared.
RESENT = 1.25


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise SystemExit(f"validate: {p}:{n}: {e}")
    return rows


def case(r):
    """(cluster fields, model algorithm, label) for one measured row, or None."""
    mtu = r.get("mtu", 1024)
    base = dict(TESTBED, nic=f"{r['rate_mbit']}Mbps", mtu=mtu)
    part = r.get("part", "e2e")
    if part == "e2e":
        algo = {"netreduce": "box", "ring": "ring"}.get(r["tbalgo"])
        if algo is None:
            return None
        return dict(base, hosts_per_rack=r["ranks"]), algo, f"flat N={r['ranks']}"
    if part == "hosts":
        P = r["procs"]
        H = r["ranks"] // P
        algo = {"parallel": "parallel", "hierarchical": "hier", "ring": "ring"}[r["tbalgo"]]
        return (dict(base, hosts_per_rack=H, gpus_per_host=P, intra=f"{r['intra_mbit']}Mbps",
                     library_intra=f"{r['intra_mbit']}Mbps"), algo,
                f"{H}x{P} r={r['ratio']:g}")
    if part == "racks":
        H = r["ranks"] // 2
        c = dict(base, rack_hosts=[H, H], tor_uplink=f"{r['inter_mbit']}Mbps")
        if r["tbalgo"] == "ring":
            return c, "ring", f"2 racks x{H} x={r['inter_mbit']}"
        kind = r["kind"]
        if kind == "racks-1agent":
            c["rack_agents"] = 1
        if kind == "racks-nobox":
            c["boxes"] = [0]
        return c, "racks", f"2 racks x{H} x={r['inter_mbit']} {kind}"
    return None


def simulate(plan, cluster, algo, nbytes):
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
    return row["seconds"], row["cross_rack_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+", help="bench-e2e / bench-hier --out files")
    ap.add_argument("--plan", default="build/netreduce-plan")
    ap.add_argument("--tolerance", type=float, default=0.10)
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
    for r in rows:
        if r.get("loss", 0) or r.get("wrong", 0):
            continue
        c = case(r)
        if c is None:
            continue
        key = (json.dumps(c[0], sort_keys=True), c[1], c[2], r["bytes"], r.get("tbalgo"))
        g = groups.setdefault(key, {"time": [], "xrack": []})
        g["time"].append(r["time_us"] / 1e6)
        if "xrack_bytes" in r:
            g["xrack"].append(r["xrack_bytes"] / r["ops"])
    if not groups:
        print("validate: no rows to compare", file=sys.stderr)
        return 2
    print(f"model parameters beyond the testbed's own: {json.dumps(TESTBED)}")
    print(f"{'configuration':<34} {'algorithm':<9} {'bytes':>9} {'runs':>4} {'testbed ms':>11} "
          f"{'model ms':>9} {'model/testbed':>13} {'x-rack S: testbed (model)':>26}")
    off = resent = 0
    for key in sorted(groups, key=lambda k: (k[2], k[1], k[3])):
        cluster, algo, label, nbytes, tbalgo = key
        cl = json.loads(cluster)
        meas = statistics.median(groups[key]["time"])
        model, xmodel = simulate(a.plan, cl, algo, nbytes)
        ratio = model / meas
        xr, note = "", ""
        if groups[key]["xrack"]:
            # The testbed counts frames (headers included) on its inter-rack link.
            wire = (cl["mtu"] + cl.get("header_bytes", 58)) / cl["mtu"]
            xm = statistics.median(groups[key]["xrack"]) / nbytes
            xr = f"{xm:.2f} ({xmodel * wire / nbytes:.2f})"
            if xm > RESENT * xmodel * wire / nbytes:
                note = "  resends: the transport's, not the network's"
        bad = abs(ratio - 1) > a.tolerance and not note
        off += bad
        resent += bool(note)
        print(f"{label:<34} {algo:<9} {nbytes:>9} {len(groups[key]['time']):>4} {meas * 1e3:>11.1f} "
              f"{model * 1e3:>9.1f} {ratio:>13.3f} {xr:>26}{'  OUTSIDE' if bad else ''}{note}")
    n = len(groups) - resent
    print(f"{n - off} of {n} within {a.tolerance:.0%} of the testbed"
          + (f"; {resent} not compared: the testbed resent more than {RESENT:g}x the bytes the model "
             "moves across racks (its soft transport has no congestion control; docs/racks.md)"
             if resent else ""))
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
