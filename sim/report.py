#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""make sim-report: the papers' large-scale questions, answered by the scale
model (netreduce-plan) with the box as a server, as plots in docs/scale/, with
the tables behind them in docs/scale/tables.md and the validation table in
docs/scale/validation.md.  Everything comes from the shipped files: the
example clusters (sim/examples/), the box's rates (sim/boxes/), the testbed's
measurements (sim/validation/).  docs/scale.md reads them.

  gpus.png       all-reduce time against GPU count (16 to 1024): the baselines'
                 band (ring, NCCL's tree, NCCL's pick) against parallel and
                 hierarchical through a box without a limit, through named
                 box servers, and racks of 16 machines with a server a rack
  capacity.png   the speedup over the best baseline against the box's
                 capacity (its cores swept, no port limit)
  crossover.png  hierarchical and parallel against the ring as the library's
                 intra-host rate grows, with the papers' condition
  deploy.png     racks with a box, and the speedup over the ring (the
                 library's racks design), servers and boxes without a limit
  striping.png   where boxes pay: how many striped box servers (32 or 64
                 cores) beat NCCL's pick by 1.5x, against hosts and host link
  tables.md      every plot's numbers, and --size for the example clusters
  striping.md    striping.png's map as tables, each cell's command
  validation.md  sim/validate.py on sim/validation/*.jsonl
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

MiB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))


def plan(exe, cluster, nbytes, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cluster, f)
    try:
        p = subprocess.run([exe, f.name, "--json", "--bytes", str(nbytes), *args],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        raise SystemExit(f"sim-report: netreduce-plan failed: {p.stderr.strip()}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def by_algo(rows):
    return {r["algo"]: r for r in rows if r["kind"] == "algos"}


def example(name):
    with open(os.path.join(HERE, "examples", name)) as f:
        return json.load(f)


# The ASPLOS hosts with NVLink (sim/examples/asplos.json), the library's own
# shared-memory rate and staging from that file.
ASPLOS = example("asplos.json")
HOST = {k: ASPLOS[k] for k in ("gpus_per_host", "nic", "library_intra", "stage", "latency", "mtu")}
HOST.update(intra="100GBps", intra_link="nvlink")
SMALL = {"workers": 16, "ports": 2, "port_speed": "100Gbps"}      # asplos.json's box server
LARGE = {"workers": 64, "ports": 8, "port_speed": "400Gbps"}
STYLE = {"ring": ("ring", "k", "o"), "tree": ("tree* (NCCL's)", "tab:gray", "s"),
         "hier": ("hierarchical", "tab:orange", "^"), "parallel": ("parallel", "tab:blue", "v"),
         "racks": ("racks*", "tab:green", "D"), "spine": ("spine*", "tab:red", "*")}


def server_name(b):
    if b == "wire":
        return "no limit"
    return f"{b['workers']} cores, {b['ports']} x {b['port_speed'].replace('Gbps', 'G')}"


def baseline_band(ax, pts, label=True):
    """The baselines: ring and tree as bands (step cost low-high), NCCL's pick."""
    n = [p[0] for p in pts]
    for a, color in (("ring", "k"), ("tree", "tab:cyan")):
        lo = [p[1][a]["seconds"] * 1e3 for p in pts]
        hi = [p[1][a]["seconds_hi"] * 1e3 for p in pts]
        ax.fill_between(n, lo, hi, color=color, alpha=0.25, lw=0.5, edgecolor=color,
                        label=f"{STYLE[a][0]}, step 0.5-10 us" if label else None)
    best = [p[1][p[1]["ring"]["best_baseline"]]["seconds"] * 1e3 for p in pts]
    ax.plot(n, best, color="k", lw=1.5, label="best baseline (NCCL's pick)" if label else None)


def fig_gpus(exe, out, tables, nbytes):
    counts = [16, 32, 64, 128, 256, 512, 1024]
    panels = [
        ("one box without a limit (the papers')", [("parallel", "wire", False), ("hier", "wire", False),
                                                   ("parallel", "wire", True)], None),
        ("one box server", [("parallel", SMALL, False), ("parallel", LARGE, False),
                            ("parallel", LARGE, True)], None),
        ("racks of 16 machines, 3:1 uplinks, a server a rack", [("racks", LARGE, False), ("spine", LARGE, False),
                                                                ("racks", LARGE, True)], 16),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5), sharey=True)
    tables.append(f"## All-reduce time against GPU count ({nbytes // MiB} MiB of fp32 gradients a GPU)\n\n"
                  "Machines of 8 GPUs (NVLink 100 GB/s), 12.5 GB/s (100 Gbit/s) NICs; the library's local "
                  f"phases at {HOST['library_intra']} (its shared memory) or, marked GPU path, at NVLink; times "
                  "in ms at the step cost's low end (0.5 us), the baselines' band to 10 us in brackets.\n")
    for ax, (title, series, rack) in zip(axes, panels):
        pts, lines = [], {}
        for n in counts:
            hosts = n // 8
            c = dict(HOST)
            if rack and hosts > rack:
                c.update(racks=hosts // rack, hosts_per_rack=rack, oversubscription=3)
            else:
                c.update(hosts_per_rack=hosts)
            base = by_algo(plan(exe, dict(c, box="wire"), nbytes, "--algo", "ring,tree"))
            pts.append((n, base))
            for algo, box, gpu in series:
                if algo in ("racks", "spine") and "racks" not in c:
                    continue        # one rack: nothing across racks
                t = by_algo(plan(exe, dict(c, box=box, gpu_path=gpu), nbytes, "--algo", algo))
                if algo in t:
                    lines.setdefault((algo, server_name(box), gpu), []).append((n, t[algo]))
        baseline_band(ax, pts)
        for i, ((algo, box, gpu), p) in enumerate(lines.items()):
            label, color, marker = STYLE[algo]
            ax.plot([x[0] for x in p], [x[1]["seconds"] * 1e3 for x in p], marker=marker, color=color,
                    ls="--" if gpu else ["-", ":", "-."][i % 3],
                    label=f"{label}, {box}" + (", GPU path (NCCL local phases)" if gpu else ""))
        tables.append(f"### {title}\n")
        heads = ["GPUs", "ring", "tree*", "pick"] + [f"{a} ({b}{', GPU path' if g else ''})" for a, b, g in lines]
        tables.append("| " + " | ".join(heads) + " |\n|" + " --- |" * len(heads))
        for i, (n, base) in enumerate(pts):
            cells = [str(n)]
            for a in ("ring", "tree"):
                cells.append(f"{base[a]['seconds'] * 1e3:.2f} ({base[a]['seconds_hi'] * 1e3:.2f})")
            cells.append(base["ring"]["best_baseline"] + "/" + base["ring"]["tuner_proto"])
            for key, p in lines.items():
                hit = [x[1] for x in p if x[0] == n]
                cells.append(f"{hit[0]['seconds'] * 1e3:.2f}" if hit else "-")
            tables.append("| " + " | ".join(cells) + " |")
        tables.append("")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(counts)
        ax.set_xticklabels([str(n) for n in counts])
        ax.set_xlabel("GPUs (8 a machine)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel(f"all-reduce of {nbytes // MiB} MiB a GPU, ms")
    fig.suptitle("netreduce-plan: machines of 8 GPUs (NVLink), 12.5 GB/s NICs, MTU 4096; the box a server "
                 "(cores at nr-bench-switch's measured rates, one-armed ports) or without a limit; "
                 "* = the model's, not the library's", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "gpus.png"), dpi=90)
    plt.close(fig)


def speedup_figure(fig, ax, path, xlabel, title, ylabel="speedup over the flat ring"):
    """Label a speedup plot, save it to path."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, None)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fig_capacity(exe, out, tables, nbytes):
    """The box's capacity swept: workers at the measured rates, no port limit."""
    workers = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    cases = [
        ("8 hosts x 1 GPU", dict(HOST, gpus_per_host=1, intra=HOST["nic"], hosts_per_rack=8), False, "tab:green"),
        ("64 hosts x 1 GPU", dict(HOST, gpus_per_host=1, intra=HOST["nic"], hosts_per_rack=64), False, "tab:olive"),
        ("16 x 8 GPUs", dict(HOST, hosts_per_rack=16), False, "tab:blue"),
        ("16 x 8 GPUs, GPU path", dict(HOST, hosts_per_rack=16), True, "tab:purple"),
        ("128 x 8 GPUs, GPU path", dict(HOST, hosts_per_rack=128), True, "tab:red"),
    ]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    tables.append(f"## The box's capacity ({nbytes // MiB} MiB a GPU, the box the hosts' switch: no port "
                  "limit; its cores at sim/boxes/xeon-16c.jsonl's rates, past 8 at the 8-worker rate a core)\n\n"
                  "| cluster | cores | box Gbit/s | best box algorithm | vs best baseline (step 0.5 / 10 us) |\n"
                  "| --- | --- | --- | --- | --- |")
    for label, c, gpu, color in cases:
        xs, lo, hi = [], [], []
        for w in workers:
            cl = dict(c, gpu_path=gpu, box={"mode": "switch", "workers": w})
            t = by_algo(plan(exe, cl, nbytes))
            boxed = [t[a] for a in ("box", "hier", "parallel") if a in t]
            best = max(boxed, key=lambda r: r["speedup_best"])
            xs.append(best["box_gbps"])
            lo.append(best["speedup_best"])
            hi.append(best["speedup_best_hi"])
            tables.append(f"| {label} | {w} | {best['box_gbps']:.0f} | {best['algo']} | "
                          f"{best['speedup_best']:.2f} / {best['speedup_best_hi']:.2f} |")
        ax.fill_between(xs, lo, hi, color=color, alpha=0.25, lw=0)
        ax.plot(xs, lo, marker="o", color=color, label=label)
    tables.append("")
    ax.axhline(1, color="k", lw=1, label="best baseline (NCCL's pick)")
    for w, name in ((16, "16 cores"), (64, "64 cores")):
        g = 303.6 / 8 * w
        ax.axvline(g, color="tab:gray", ls=":", lw=1)
        ax.text(g, 0.05, " " + name, rotation=90, fontsize=8, color="tab:gray")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    speedup_figure(fig, ax, os.path.join(out, "capacity.png"),
                   "the box's capacity, Gbit/s of gradients summed (cores x the measured rate)",
                   f"netreduce-plan: the best box algorithm against NCCL's pick, {nbytes // MiB} MiB a GPU, "
                   "12.5 GB/s NICs (band: step cost 0.5-10 us)", "speedup over the best baseline")


def fig_crossover(exe, out, tables, nbytes):
    H, P = 16, 8
    N = H * P
    ratios = [0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 10, 12, 16, 24, 32]
    cl = dict(HOST, hosts_per_rack=H, box="wire")
    pts = {"hier": [], "parallel": []}
    tables.append(f"## Hierarchical and parallel against the ring ({H} machines x {P} GPUs, a box without a "
                  f"limit, {nbytes // MiB} MiB, step 0.5 us)\n\n| r = library_intra / host link | ring ms | "
                  "hierarchical / ring | parallel / ring |\n| --- | --- | --- | --- |")
    for r in ratios:
        c = dict(cl, library_intra=f"{12.5 * r}GBps")
        t = by_algo(plan(exe, c, nbytes, "--algo", "ring,hier,parallel"))
        ring = t["ring"]["seconds"]
        for a in pts:
            pts[a].append((r, ring / t[a]["seconds"]))
        tables.append(f"| {r:g} | {ring * 1e3:.2f} | {ring / t['hier']['seconds']:.2f} | "
                      f"{ring / t['parallel']['seconds']:.2f} |")
    tables.append("")
    par_thr = 2 * H * (P - 1) / (N - 2)
    hier_thr = P * N / (N - 2)
    tables.append(f"The papers' condition (host/README.md's cost model): parallel beats the ring for "
                  f"r > 2H(P-1)/(HP-2) = {par_thr:.2f}, hierarchical for r > P HP/(HP-2) = {hier_thr:.2f}.\n")
    fig, ax = plt.subplots(figsize=(8, 5))
    for a in pts:
        label, color, marker = STYLE[a]
        ax.plot([p[0] for p in pts[a]], [p[1] for p in pts[a]], marker=marker, color=color, label=label)
    ax.axhline(1, color="k", lw=1, label="ring")
    ax.axvline(par_thr, color="tab:blue", ls="--", lw=1, label=f"condition, parallel: r > {par_thr:.2f}")
    ax.axvline(hier_thr, color="tab:orange", ls="--", lw=1, label=f"condition, hierarchical: r > {hier_thr:.2f}")
    lib = float(HOST["library_intra"].replace("GBps", "")) / 12.5
    for r, name in ((lib, f"the library today ({HOST['library_intra']})"), (100 / 12.5, "NVLink (a GPU path)")):
        ax.axvline(r, color="tab:gray", ls=":", lw=1)
        ax.text(r, 0.2, " " + name, rotation=90, fontsize=8, color="tab:gray")
    ax.set_xscale("log", base=2)
    speedup_figure(fig, ax, os.path.join(out, "crossover.png"),
                   "r = the library's intra-host rate / host link bandwidth",
                   f"netreduce-plan: {H} machines x {P} GPUs, a box without a limit, 12.5 GB/s host links, "
                   f"{nbytes // MiB} MiB a GPU")


def fig_deploy(exe, out, tables, nbytes):
    R, H = 8, 8
    overs = [1, 2, 4]
    fig, ax = plt.subplots(figsize=(8, 5))
    tables.append(f"## Partial deployment ({R} racks of {H} hosts, one GPU a host, 12.5 GB/s host links, "
                  f"{nbytes // MiB} MiB, step 0.5 us)\n\n| uplink oversubscription | box | racks with a box | "
                  "racks / ring | spine* / ring (every rack) |\n| --- | --- | --- | --- | --- |")
    colors = ["tab:green", "tab:purple", "tab:brown"]
    for i, o in enumerate(overs):
        for box, ls in (("wire", "--"), (SMALL, "-")):
            cl = dict(HOST, gpus_per_host=1, intra=HOST["nic"], racks=R, hosts_per_rack=H, oversubscription=o,
                      box=box)
            rows = plan(exe, cl, nbytes, "--deploy")
            dep = [r for r in rows if r["kind"] == "deploy"]
            spine = by_algo(rows).get("spine")
            ax.plot([r["boxes"] / R for r in dep], [r["speedup_ring"] for r in dep], marker="D", ls=ls,
                    color=colors[i], label=f"racks, uplinks {o}:1, {server_name(box)}")
            if spine and box != "wire":
                ax.plot([1], [spine["speedup_ring"]], marker="*", ms=14, color=colors[i], ls="none",
                        label=f"spine*, {o}:1, {server_name(box)}")
            sp = f"{spine['speedup_ring']:.2f}" if spine else "-"
            for r in dep:
                tables.append(f"| {o}:1 | {server_name(box)} | {r['boxes']}/{R} | {r['speedup_ring']:.2f} | {sp} |")
    # Where the racks design pays (docs/racks.md): two racks behind a thin link.
    cl = dict(HOST, gpus_per_host=1, intra=HOST["nic"], racks=2, hosts_per_rack=H, tor_uplink="3.125GBps",
              box=SMALL)
    rows = plan(exe, cl, nbytes, "--deploy")
    dep = [r for r in rows if r["kind"] == "deploy"]
    ax.plot([r["boxes"] / 2 for r in dep], [r["speedup_ring"] for r in dep], marker="D", ls=":",
            color="tab:olive", label=f"racks, 2 racks, inter-rack link 1/4 of a host link, {server_name(SMALL)}")
    for r in dep:
        tables.append(f"| 2 racks, inter-rack link 3.125 GB/s | {server_name(SMALL)} | {r['boxes']}/2 | "
                      f"{r['speedup_ring']:.2f} | {by_algo(rows)['spine']['speedup_ring']:.2f} |")
    tables.append("")
    ax.axhline(1, color="k", lw=1, label="ring")
    speedup_figure(fig, ax, os.path.join(out, "deploy.png"), "fraction of racks with a box (the first k)",
                   f"netreduce-plan: {R} racks of {H} hosts, 12.5 GB/s host links, the library's racks "
                   f"design, {nbytes // MiB} MiB")


def sizing(exe, out, tables, nbytes):
    """--size for the example clusters, as the library is and with a GPU path."""
    tables.append(f"## Sizing: how many box servers beat the best baseline by 1.5x ({nbytes // MiB} MiB of fp32 "
                  "gradients a GPU; cores searched up to 64, ports up to 8 of the file's speed; the table: one box "
                  "for the job, then the racks algorithm over groups; the line after it: the job striped over "
                  "servers, up to 128)\n")
    runs = [("asplos.json", "nvlink", []), ("asplos.json", "nvlink", ["gpu_path=true"]),
            ("asplos.json", "nvlink", ["gpu_path=true", "box.port_speed=400Gbps"]),
            ("rack-scale.json", None, []), ("rack-scale.json", None, ["gpu_path=true"]),
            ("rail-1024.json", None, []), ("rail-1024.json", None, ["gpu_path=true"]),
            ("ethernet-64.json", "16-hosts", []), ("ethernet-64.json", "32-hosts", []),
            ("ethernet-64.json", "64-hosts", [])]
    for name, variant, sets in runs:
        gpu = "gpu_path=true" in sets
        args = ["--size", "--factor", "1.5"] + [x for kv in sets for x in ("--set", kv)]
        if variant:
            args += ["--variant", variant]
        cmd = f"netreduce-plan sim/examples/{name} --size --factor 1.5" + \
            (f" --variant {variant}" if variant else "") + "".join(f" --set {kv}" for kv in sets)
        rows = [r for r in plan(exe, example(name), nbytes, *args, "--max-stripes", "0") if r["kind"] == "size"]
        tables.append(f"### {name}{' [' + variant + ']' if variant else ''}, "
                      f"{'a GPU path (NCCL local phases)' if gpu else 'the library as it is'}"
                      f"{', 400 Gbit/s ports' if any('port_speed' in kv for kv in sets) else ''}\n\n`{cmd}`; "
                      f"the best baseline: {rows[0]['baseline']}, {rows[0]['baseline_seconds'] * 1e3:.2f}-"
                      f"{rows[0]['baseline_seconds_hi'] * 1e3:.2f} ms\n\n"
                      "| boxes | hosts a box | each box | algorithm | ms | vs baseline | |\n"
                      "| --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            each = "no limit" if r["wire"] else f"{r['workers']} cores" + \
                (f", {r['ports']} ports" if r["ports"] else "")
            tables.append(f"| {r['boxes']} | {r['hosts_per_box']} | {each} | {r['algo']}"
                          f"{'' if r['library'] else '*'} | {r['seconds'] * 1e3:.2f} | "
                          f"{r['speedup_best']:.2f}-{r['speedup_best_hi']:.2f} | {r['role']} |")
        answer = [r for r in rows if r["role"] == "answer"]
        best = max(rows, key=lambda r: r["speedup_best"] if not r["wire"] else 0)
        tables.append("\n" + (f"Answer: {answer[0]['boxes']} box(es) of {answer[0]['workers']} cores and "
                              f"{answer[0]['ports']} ports: {answer[0]['speedup_best']:.2f}x."
                              if answer else
                              f"No number of servers reaches 1.5x; the most a server buys here: "
                              f"{best['speedup_best']:.2f}x ({best['boxes']} box(es), {best['algo']}).") + "\n")
        tables.append(striped_answer(plan(exe, example(name), nbytes, *args, "--stripes-only")) + "\n")


def striped_answer(rows):
    """One sentence: the striped search's answer (netreduce-plan --size's stripes-answer row)."""
    a = next(r for r in rows if r["kind"] == "stripes-answer")
    if a["servers"]:
        return (f"Striped (NR_BOX's list): {a['servers']} server(s) of {a['workers']} cores and {a['ports']} ports: "
                f"{a['speedup']:.2f}x ({a['algo']}).")
    if a["most"] >= a["factor"]:
        return (f"Striped (NR_BOX's list): none up to {a['max_stripes']} servers; they reach at most "
                f"{a.get('best_speedup', 0):.2f}x, boxes without a limit {a['most']:.2f}x.")
    near = f"; {a['approach_servers']} server(s) reach {a['approach_speedup']:.2f}x" if "approach_servers" in a \
        else (f"; {a['max_stripes']} servers reach {a['best_speedup']:.2f}x" if "best_speedup" in a else "")
    return (f"Striped (NR_BOX's list): none reaches {a['factor']:g}x; the most, with boxes without a limit, "
            f"{a['most']:.2f}x ({a['most_algo']}, {a['most_seconds'] * 1e3:.3f} ms: local phases "
            f"{a['local_seconds'] * 1e3:.3f}, the hosts' NICs {a['nics_seconds'] * 1e3:.3f}, the ToR uplinks past "
            f"them {a['fabric_seconds'] * 1e3:.3f}, latency, windows and step costs {a['rest_seconds'] * 1e3:.3f}, "
            f"staging {a['staging_seconds'] * 1e3:.3f}: bounded by "
            f"{a['bound']}){near}.")


# Where boxes pay (striping.png, striping.md): hosts x host link x GPUs a host,
# the servers a job stripes over (NR_BOX's list) to beat NCCL's pick by 1.5x.
MAP_HOSTS = [4, 16, 64, 256, 1024]
MAP_LINKS = [25, 100, 200, 400, 800]                   # Gbit/s, one link a host
MAP_KINDS = [("1 GPU a host", 1, False), ("8 GPUs, the library's local phases", 8, False),
             ("8 GPUs, a GPU path (NCCL local phases)", 8, True)]
MAP_SERVERS = [(64, 8), (32, 4)]                        # cores, 400 Gbit/s ports: more port than core capacity
MAP_STRIPES = 64                                        # the most servers a job stripes over here
MAP_FACTOR = 1.5
BOUND = {"the hosts' NICs": "NICs", "the local phases": "local phases", "staging": "staging",
         "the ToR uplinks": "uplinks", "latency, windows and step costs": "latency"}


def map_cluster(hosts, link, gpus, gpu_path, cores, ports):
    c = {"hosts_per_rack": hosts, "gpus_per_host": gpus, "nic": f"{link}Gbps", "stage": "55GBps",
         "latency": {"nic": "1us", "fabric": "1us", "intra": "1us"}, "mtu": 4096,
         "box": {"mode": "one-armed", "workers": cores, "ports": ports, "port_speed": "400Gbps"}}
    if gpus > 1:
        c.update(intra=HOST["intra"], intra_link="nvlink", library_intra=HOST["library_intra"], gpu_path=gpu_path)
    return c


def map_args(cores, ports):
    return ["--size", "--stripes-only", "--fixed-server", "--factor", str(MAP_FACTOR), "--max-cores", str(cores),
            "--max-ports", str(ports), "--max-stripes", str(MAP_STRIPES)]


def map_point(exe, nbytes, hosts, link, gpus, gpu_path):
    """The 64-core servers' answer, then the 32-core ones' where 64 cores have one
    (where 64 cores have none, 32 have none: fewer cores and ports never speed a box up)."""
    out = {}
    for cores, ports in MAP_SERVERS:
        if out and not out[MAP_SERVERS[0][0]]["servers"]:
            out[cores] = dict(out[MAP_SERVERS[0][0]], derived=True)
            continue
        rows = plan(exe, map_cluster(hosts, link, gpus, gpu_path, cores, ports), nbytes, *map_args(cores, ports))
        out[cores] = next(r for r in rows if r["kind"] == "stripes-answer")
    return out


def map_cell(a):
    if a["servers"]:
        return f"{a['servers']} ({a['speedup']:.2f}x)"
    if a["most"] >= MAP_FACTOR:         # servers would reach it, more than MAP_STRIPES of them
        return f"> {MAP_STRIPES}" + (f" ({MAP_STRIPES}: {a['best_speedup']:.2f}x)" if "best_speedup" in a else "")
    return f"none ({a['most']:.2f}x: {BOUND[a['bound']]})"


def fig_striping(exe, out, tables, nbytes):
    """The map: every point in its own netreduce-plan, two at a time (2 cores)."""
    points = [(h, l, g, p) for _, g, p in MAP_KINDS for h in MAP_HOSTS for l in MAP_LINKS]
    points.sort(key=lambda x: -x[0] * x[2])            # the largest first: the pool ends evenly
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(points, pool.map(lambda x: map_point(exe, nbytes, *x), points)))
    cmd = ("netreduce-plan CLUSTER --size --stripes-only --fixed-server --factor 1.5 --max-cores C --max-ports P "
           f"--max-stripes {MAP_STRIPES}")
    md = ["# Where boxes pay: striped box servers against NCCL's pick\n",
          "Made by `make sim-report` (sim/report.py's `fig_striping`, netreduce-plan). How many box servers a job "
          "stripes over (NR_BOX's list: every host to every box, box k sums 1/K of every message; sim/README.md, "
          "\"Striping\") beat NCCL's pick (its tuner's ring or tree) by 1.5x at the step cost's low end (0.5 us), "
          f"{nbytes // MiB} MiB of fp32 gradients a GPU, at most {MAP_STRIPES} servers. A cell: servers of 64 cores "
          "(8 x 400 Gbit/s ports) / of 32 cores (4 x 400 Gbit/s), each with the speedup it reaches; `none` where "
          "boxes without a limit miss 1.5x, with the most they reach and what bounds it (the largest part of that "
          "time: the hosts' NICs, the library's local phases, staging, or latency, windows and step costs); "
          f"`> {MAP_STRIPES}` where more servers would be needed (with what {MAP_STRIPES} reach, where their cores "
          "and ports could at all). Servers are counted in powers of two. Where 64-core servers have no answer the "
          "32-core "
          "cell is theirs without a run of its own (fewer cores and ports never make a box faster).\n",
          "The cluster: one rack, non-blocking, `hosts_per_rack` hosts of one link (`nic`) each, MTU 4096, 1 us a "
          "hop, gradients staged at 55 GB/s (`stage`); 8-GPU hosts with NVLink at "
          f"{HOST['intra']} and the library's local phases at {HOST['library_intra']} (`library_intra`) or at NVLink "
          "(`gpu_path: true`: NR_TORCH_LOCAL=group's NCCL phases); the box servers' cores at sim/boxes/xeon-16c.jsonl's rates (past 8 "
          f"workers the 8-worker rate a core). Each cell is `{cmd}` on that cluster (C, P: 64, 8 or 32, 4).\n"]
    for title, g, p in MAP_KINDS:
        md.append(f"## {title}\n")
        md.append("| hosts | " + " | ".join(f"{l} Gbit/s" for l in MAP_LINKS) + " |")
        md.append("| --- |" + " --- |" * len(MAP_LINKS))
        for h in MAP_HOSTS:
            cells = []
            for l in MAP_LINKS:
                r = done[(h, l, g, p)]
                cells.append(map_cell(r[64]) + " / " + map_cell(r[32]) if r[64]["servers"] else map_cell(r[64]))
            md.append(f"| {h} | " + " | ".join(cells) + " |")
        md.append("")
    with open(os.path.join(out, "striping.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5))
    for ax, (title, g, p) in zip(axes, MAP_KINDS):
        grid = [[done[(h, l, g, p)][64] for l in MAP_LINKS] for h in MAP_HOSTS]
        val = [[math.log2(a["servers"]) if a["servers"] else float("nan") for a in row] for row in grid]
        ax.imshow(val, cmap="YlGn_r", vmin=0, vmax=math.log2(MAP_STRIPES), origin="lower", aspect="auto", alpha=0.5)
        for i, row in enumerate(grid):
            for j, a in enumerate(row):
                b = done[(MAP_HOSTS[i], MAP_LINKS[j], g, p)][32]
                text = (f"{a['servers']} / {b['servers'] or '-'}\n{a['speedup']:.2f}x" if a["servers"] else
                        (f"> {MAP_STRIPES}" if a["most"] >= MAP_FACTOR else f"none\n{a['most']:.2f}x\n"
                         f"{BOUND[a['bound']]}"))
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="k" if a["servers"] else "tab:red")
        ax.set_xticks(range(len(MAP_LINKS)))
        ax.set_xticklabels([f"{l}" for l in MAP_LINKS])
        ax.set_yticks(range(len(MAP_HOSTS)))
        ax.set_yticklabels([str(h) for h in MAP_HOSTS])
        ax.set_xlabel("host link, Gbit/s")
        ax.set_ylabel("hosts")
        ax.set_title(title, fontsize=10)
    fig.suptitle(f"netreduce-plan: striped box servers to beat NCCL's pick by {MAP_FACTOR}x ({nbytes // MiB} MiB "
                 "a GPU): 64-core / 32-core servers (400 Gbit/s ports), the 64-core speedup; none: the most boxes "
                 "without a limit reach, and what bounds it", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "striping.png"), dpi=90)
    plt.close(fig)
    tables.append("## Where boxes pay (striping.png)\n\nThe map's tables and each cell's command: "
                  "[striping.md](striping.md).\n")



def validation(plan_exe, out):
    files = sorted(glob.glob(os.path.join(HERE, "validation", "*.jsonl")))
    p = subprocess.run([sys.executable, os.path.join(HERE, "validate.py"), "--plan", plan_exe,
                        "--markdown", os.path.join(out, "validation.md"), *files],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"sim-report: validate.py failed: {p.stderr.strip()}")
    return next((l for l in p.stdout.splitlines() if "rows within" in l), "no rows")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", default="build/netreduce-plan")
    ap.add_argument("--out", default="docs/scale")
    ap.add_argument("--bytes", type=int, default=100 * MiB)
    a = ap.parse_args()
    if not os.access(a.plan, os.X_OK):
        print(f"sim-report: {a.plan} not built (make build, with SimGrid: make deps)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    tables = ["# The scale model's figures: the tables behind the plots\n",
              "Made by `make sim-report` (sim/report.py, netreduce-plan) from the shipped files; "
              "docs/scale.md reads them. Times in ms; * = the model's, not the host library's.\n"]
    start = time.time()
    for name, fn in (("gpus", fig_gpus), ("capacity", fig_capacity), ("crossover", fig_crossover),
                     ("deploy", fig_deploy), ("sizing", sizing), ("striping", fig_striping)):
        print(f"sim-report: {name} ... ({time.time() - start:.0f} s)", flush=True)
        fn(a.plan, a.out, tables, a.bytes)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write("\n".join(tables) + "\n")
    print(f"sim-report: validation ... ({time.time() - start:.0f} s)", flush=True)
    print("sim-report: " + validation(a.plan, a.out))
    print(f"sim-report: wrote {a.out}/gpus.png, capacity.png, crossover.png, deploy.png, striping.png, tables.md, "
          f"striping.md, validation.md in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
