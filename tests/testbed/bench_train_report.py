#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The report of tests/testbed/bench-train, from rank 0's JSON lines
(examples/train.py, with "rep" added): per host count, per backend

  median and p90 step time    over the steps after the warm-up of every round
  time to accuracy            training time until the test accuracy first
                              reached the target, median over the rounds
  final test accuracy         median over the rounds
  speedups                    median step time of gloo and of netreduce-ring
                              over that of netreduce; of a netreduce 16-bit
                              hook (gloo+netreduce-fp16): torch's hook of the
                              same type over Gloo (gloo+torch-fp16) over it
  CPU                         cores the ranks and the box kept busy

    bench_train_report.py --out DIR [--rate MBIT] RESULTS.jsonl

Prints the tables (markdown), writes DIR/bench-train.csv (the tables),
DIR/bench-train-steps.csv (every step of every run) and DIR/bench-train.png
(training loss against training time, one line per backend, the round with
the median training time).
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys

ORDER = ("gloo", "netreduce-ring", "netreduce", "gloo+hook", "gloo+torch-fp16",
         "gloo+netreduce-fp16", "gloo+torch-bf16", "gloo+netreduce-bf16")


def quantile(xs, q):
    """Nearest-rank quantile of a non-empty list."""
    xs = sorted(xs)
    return xs[max(0, math.ceil(len(xs) * q) - 1)] if xs else None


def load(path):
    steps, summaries = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                row = json.loads(line)
                (summaries if row.get("summary") else steps).append(row)
    return steps, summaries


def table(ranks, steps, summaries):
    rows = {}
    for s in summaries:
        if s["ranks"] != ranks:
            continue
        b = s["backend"]
        r = rows.setdefault(b, {"backend": b, "ranks": ranks, "runs": 0, "step_times": [],
                                "cpu_times": [], "box_cores": [], "tta": [], "acc": [],
                                "warmup": s["warmup"], "target_acc": s["target_acc"],
                                "grad_bytes": s["grad_bytes"], "torch": s.get("torch", "?")})
        r["runs"] += 1
        if s.get("box_cpu_s") is not None and s["train_s"] > 0:
            r["box_cores"].append(s["box_cpu_s"] / s["train_s"])
        r["tta"].append(s["time_to_acc_s"])
        r["acc"].append(s["final_test_acc"])
    for st in steps:
        r = rows.get(st["backend"])
        if st["ranks"] == ranks and r and st["step"] > r["warmup"]:
            r["step_times"].append(st["step_s"])
            r["cpu_times"].append(st.get("cpu_s", 0.0))
    out = []
    for b in sorted(rows, key=lambda b: ORDER.index(b) if b in ORDER else len(ORDER)):
        r = rows[b]
        reached = [t for t in r["tta"] if t is not None]
        med = statistics.median(r["step_times"]) if r["step_times"] else None
        out.append({
            "ranks": ranks, "backend": b, "torch": r["torch"], "runs": r["runs"],
            "steps_timed": len(r["step_times"]),
            "grad_mb": round(r["grad_bytes"] / 1e6, 2),
            "median_step_s": med,
            "p90_step_s": quantile(r["step_times"], 0.9),
            "target_acc": r["target_acc"],
            # a round that never reached the target makes the median meaningless
            "time_to_acc_s": statistics.median(reached) if len(reached) == len(r["tta"]) else None,
            "reached": f"{len(reached)}/{len(r['tta'])}",
            "final_acc": statistics.median(r["acc"]),
            # CPU demand: every rank's process (rank 0's CPU time per step times the
            # ranks) and the box, in cores; the testbed has os.cpu_count() in all
            "ranks_cores": ranks * statistics.median(r["cpu_times"]) / med if med else None,
            "box_cores": statistics.median(r["box_cores"]) if r["box_cores"] else None,
        })
    by = {r["backend"]: r for r in out}
    for r in out:
        r["speedup_vs_gloo"] = r["speedup_vs_ring"] = None
        if not r["median_step_s"]:
            continue
        if r["backend"] == "netreduce":
            bases = (("gloo", "speedup_vs_gloo"), ("netreduce-ring", "speedup_vs_ring"))
        elif r["backend"].startswith("gloo+netreduce-"):   # the 16-bit hooks: against torch's
            bases = (("gloo+torch-" + r["backend"].rsplit("-", 1)[1], "speedup_vs_gloo"),)
        else:
            bases = ()
        for base, key in bases:
            if base in by and by[base]["median_step_s"]:
                r[key] = by[base]["median_step_s"] / r["median_step_s"]
    return out


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def print_table(rows, rate):
    r0 = rows[0]
    print(f"\n{r0['ranks']} ranks, torch {r0['torch']}, links {rate} Mbit/s, {r0['grad_mb']} MB "
          f"of gradients per step, target test accuracy {r0['target_acc']}")
    print("| backend | runs | median step (s) | p90 step (s) | time to acc (s) | final acc "
          "| speedup vs gloo | speedup vs ring | CPU: ranks + box (cores) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        tta = fmt(r["time_to_acc_s"], ".2f") + (f" ({r['reached']})" if r["time_to_acc_s"] is None
                                                else "")
        print(f"| {r['backend']} | {r['runs']} | {fmt(r['median_step_s'], '.3f')} "
              f"| {fmt(r['p90_step_s'], '.3f')} | {tta} | {fmt(r['final_acc'], '.3f')} "
              f"| {fmt(r['speedup_vs_gloo'], '.2f')} | {fmt(r['speedup_vs_ring'], '.2f')} "
              f"| {fmt(r['ranks_cores'], '.2f')} + {fmt(r['box_cores'], '.2f')} |")


def plot(steps, summaries, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = sorted({s["ranks"] for s in summaries})
    fig, axes = plt.subplots(1, len(ranks), figsize=(6 * len(ranks), 4.2), squeeze=False)
    for ax, n in zip(axes[0], ranks):
        for b in ORDER:
            runs = [s for s in summaries if s["ranks"] == n and s["backend"] == b]
            if not runs:
                continue
            mid = sorted(runs, key=lambda s: s["train_s"])[(len(runs) - 1) // 2]
            pts = [(st["train_s"], st["loss"]) for st in steps
                   if st["ranks"] == n and st["backend"] == b and st["rep"] == mid["rep"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=b, linewidth=1.2)
        ax.set_title(f"{n} ranks")
        ax.set_xlabel("training time (s)")
        ax.set_ylabel("training loss (rank 0's batch)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--rate", default="?")
    p.add_argument("results")
    a = p.parse_args()
    steps, summaries = load(a.results)
    if not summaries:
        print(f"bench_train_report: no results in {a.results}", file=sys.stderr)
        return 2
    all_rows = []
    for n in sorted({s["ranks"] for s in summaries}):
        rows = table(n, steps, summaries)
        print_table(rows, a.rate)
        all_rows += rows
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench-train.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(all_rows[0]))
        w.writeheader()
        w.writerows(all_rows)
    with open(os.path.join(a.out, "bench-train-steps.csv"), "w", newline="") as f:
        keys = ["ranks", "backend", "rep", "step", "step_s", "train_s", "loss", "acc", "test_acc"]
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(steps)
    plot(steps, summaries, os.path.join(a.out, "bench-train.png"))
    print(f"\nsteps after the warm-up of every round pooled; time to accuracy: training "
          f"time (evaluation excluded) until the test accuracy first reached the target, "
          f"median over the rounds; speedup: median step time of the baseline / netreduce's "
          f"(a netreduce 16-bit hook's: torch's hook of that type over Gloo / it); "
          f"CPU: cores busy on average during the steps (ranks: rank 0's process CPU time per "
          f"step x ranks; box: its CPU time / training time), of {os.cpu_count()} on this "
          f"machine (near that: CPU-bound, not link-bound).\n"
          f"wrote {a.out}/bench-train.csv, bench-train-steps.csv, bench-train.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
