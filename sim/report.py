#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""make sim-report: the papers' large-scale questions, answered by the scale
model (netreduce-plan) as plots in docs/scale/, with the tables behind them in
docs/scale/tables.md.  Every figure states its parameters; docs/scale.md reads
them.

  gpus.png       all-reduce time against GPU count (16 to 1024): ring, tree,
                 hierarchical, parallel through one box (the ASPLOS setup, PCIe 3
                 and NVLink inside), and racks of 16 machines with 3:1 uplinks
                 (racks, spine aggregation)
  crossover.png  hierarchical and parallel against the ring as the intra-host
                 bandwidth grows, with the papers' condition drawn over it
  deploy.png     the fraction of racks with a box against the speedup over the
                 ring (the library's racks design), at three oversubscriptions
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MiB = 1 << 20


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


ASPLOS = {"gpus_per_host": 8, "nic": "12.5GBps", "mtu": 4096,
          "latency": {"nic": "1us", "fabric": "1us", "intra": "1us"}}
STYLE = {"ring": ("ring", "k", "o"), "tree": ("tree* (NCCL-style)", "tab:gray", "s"),
         "hier": ("hierarchical", "tab:orange", "^"), "parallel": ("parallel", "tab:blue", "v"),
         "racks": ("racks* (agents)", "tab:green", "D"), "spine": ("spine* (leaf-spine)", "tab:red", "*")}


def fig_gpus(exe, out, tables, nbytes):
    panels = [
        ("PCIe 3 inside (15.75 GB/s), one box", dict(ASPLOS, intra="15.75GBps"), None),
        ("NVLink inside (100 GB/s), one box", dict(ASPLOS, intra="100GBps"), None),
        ("NVLink, racks of 16 machines, 3:1 uplinks, a box a rack",
         dict(ASPLOS, intra="100GBps", oversubscription=3), 16),
    ]
    counts = [16, 32, 64, 128, 256, 512, 1024]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    tables.append(f"## All-reduce time against GPU count ({nbytes // MiB} MiB a GPU)\n")
    for ax, (title, cl, rack) in zip(axes, panels):
        series = {}
        tables.append(f"### {title}\n\n| GPUs | " + " | ".join(STYLE) + " |\n|" + " --- |" * (len(STYLE) + 1))
        for n in counts:
            hosts = n // 8
            c = dict(cl)
            if rack and hosts > rack:
                c.update(racks=hosts // rack, hosts_per_rack=rack)
            else:
                c.update(hosts_per_rack=hosts)
                c.pop("oversubscription", None)
            t = by_algo(plan(exe, c, nbytes))
            cells = []
            for a in STYLE:
                if a in t:
                    series.setdefault(a, []).append((n, t[a]["seconds"] * 1e3))
                cells.append(f"{t[a]['seconds'] * 1e3:.2f}" if a in t else "-")
            tables.append(f"| {n} | " + " | ".join(cells) + " |")
        tables.append("")
        for a, pts in series.items():
            if rack is None and a in ("racks", "spine"):
                continue
            label, color, marker = STYLE[a]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(counts)
        ax.set_xticklabels([str(n) for n in counts])
        ax.set_xlabel("GPUs (8 a machine)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel(f"all-reduce of {nbytes // MiB} MiB a GPU, ms")
    fig.suptitle("netreduce-plan: machines of 8 GPUs, 12.5 GB/s (100 Gbit/s) host links, MTU 4096, "
                 "1 us a hop; * = the model's, not the library's", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "gpus.png"), dpi=90)
    plt.close(fig)


def speedup_figure(fig, ax, path, xlabel, title):
    """Label a speedup-over-the-ring plot, save it to path."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("speedup over the flat ring")
    ax.set_ylim(0, None)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fig_crossover(exe, out, tables, nbytes):
    H, P = 16, 8
    N = H * P
    ratios = [0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 10, 12, 16, 24, 32]
    cl = dict(ASPLOS, hosts_per_rack=H, gpus_per_host=P)
    pts = {"hier": [], "parallel": []}
    tables.append(f"## Hierarchical and parallel against the ring ({H} machines x {P} GPUs, "
                  f"{nbytes // MiB} MiB)\n\n| r = intra / host link | ring ms | hierarchical / ring | "
                  "parallel / ring |\n| --- | --- | --- | --- |")
    for r in ratios:
        c = dict(cl, intra=f"{12.5 * r}GBps")
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
    for r, name in ((15.75 / 12.5, "PCIe 3"), (100 / 12.5, "NVLink")):
        ax.axvline(r, color="tab:gray", ls=":", lw=1)
        ax.text(r, 0.2, " " + name, rotation=90, fontsize=8, color="tab:gray")
    ax.set_xscale("log", base=2)
    speedup_figure(fig, ax, os.path.join(out, "crossover.png"),
                   "r = intra-host bandwidth / host link bandwidth",
                   f"netreduce-plan: {H} machines x {P} GPUs, one box, 12.5 GB/s host links, "
                   f"{nbytes // MiB} MiB a GPU")


def fig_deploy(exe, out, tables, nbytes):
    R, H = 8, 8
    overs = [1, 2, 4]
    fig, ax = plt.subplots(figsize=(8, 5))
    tables.append(f"## Partial deployment ({R} racks of {H} hosts, one GPU a host, 12.5 GB/s host links, "
                  f"{nbytes // MiB} MiB)\n\n| uplink oversubscription | racks with a box | racks / ring | "
                  "spine* / ring (every rack) |\n| --- | --- | --- | --- |")
    for i, o in enumerate(overs):
        cl = dict(ASPLOS, gpus_per_host=1, racks=R, hosts_per_rack=H, oversubscription=o)
        rows = plan(exe, cl, nbytes, "--deploy")
        dep = [r for r in rows if r["kind"] == "deploy"]
        spine = by_algo(rows).get("spine")
        color = ["tab:green", "tab:purple", "tab:brown"][i]
        xs = [r["boxes"] / R for r in dep]
        ys = [r["speedup_ring"] for r in dep]
        ax.plot(xs, ys, marker="D", color=color, label=f"racks, uplinks {o}:1")
        if spine:
            ax.plot([1], [spine["speedup_ring"]], marker="*", ms=14, color=color, ls="none",
                    label=f"spine* (leaf-spine), {o}:1")
        sp = f"{spine['speedup_ring']:.2f}" if spine else "-"
        for r in dep:
            tables.append(f"| {o}:1 | {r['boxes']}/{R} | {r['speedup_ring']:.2f} | {sp} |")
    # Where the racks design pays (docs/racks.md): two racks behind a thin link.
    cl = dict(ASPLOS, gpus_per_host=1, racks=2, hosts_per_rack=H, tor_uplink="3.125GBps")
    rows = plan(exe, cl, nbytes, "--deploy")
    dep = [r for r in rows if r["kind"] == "deploy"]
    ax.plot([r["boxes"] / 2 for r in dep], [r["speedup_ring"] for r in dep], marker="D", ls="--",
            color="tab:olive", label="racks, 2 racks, inter-rack link 1/4 of a host link")
    for r in dep:
        tables.append(f"| 2 racks, inter-rack link 3.125 GB/s | {r['boxes']}/2 | {r['speedup_ring']:.2f} | "
                      f"{by_algo(rows)['spine']['speedup_ring']:.2f} |")
    tables.append("")
    ax.axhline(1, color="k", lw=1, label="ring")
    speedup_figure(fig, ax, os.path.join(out, "deploy.png"), "fraction of racks with a box (the first k)",
                   f"netreduce-plan: {R} racks of {H} hosts, 12.5 GB/s host links, the library's racks "
                   f"design, {nbytes // MiB} MiB")


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
              "Made by `make sim-report` (sim/report.py, netreduce-plan); docs/scale.md reads them. "
              "Times in ms; * = the model's, not the host library's.\n"]
    for name, fn in (("gpus", fig_gpus), ("crossover", fig_crossover), ("deploy", fig_deploy)):
        print(f"sim-report: {name}.png ...", flush=True)
        fn(a.plan, a.out, tables, a.bytes)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write("\n".join(tables) + "\n")
    print(f"sim-report: wrote {a.out}/gpus.png, crossover.png, deploy.png, tables.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
