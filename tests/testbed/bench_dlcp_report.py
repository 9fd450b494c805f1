#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The report of tests/testbed/bench-dlcp, from rank 0's summary lines
(examples/train.py, with variant, rep, loss, ppm and run_s added): per loss rate
and variant (de, spray, prio, bound-sr, bound, scaled, exact-sr, exact, gloo)

  median step        median over the rounds of each run's median step time
  throughput         steps per second relative to the same variant's loss-free
                     runs (median step at 0% / median step at this loss)
  time to accuracy   training time until the test accuracy first reached the
                     target, median over the rounds (only when every round did)
  final accuracy     median over the rounds
  short slots        packets the box completed with one contribution missing,
                     per run (median), and per million tolerant packets
  healthy            runs whose ranks all ended with every QP healthy

and every run on its own line.

    bench_dlcp_report.py --out DIR RESULTS.jsonl

Prints the tables (markdown) and writes DIR/bench-dlcp.md (the same),
DIR/bench-dlcp.csv (one row per loss rate and variant) and DIR/bench-dlcp.png
(relative throughput and time to accuracy against the loss rate).
"""
import argparse
import csv
import json
import os
import statistics
import sys

ORDER = ("de", "spray", "prio", "bound-sr", "bound", "scaled", "exact-sr", "exact", "gloo")
WHAT = {"bound": "netreduce, bound (NR_SHORT_PPM)", "scaled": "netreduce, bound, scaled sums",
        "exact": "netreduce, no bound", "gloo": "Gloo",
        "bound-sr": "bound, selective repeat (NR_SOFT_PROFILE=sr)",
        "exact-sr": "no bound, selective repeat (NR_SOFT_PROFILE=sr)",
        "prio": "bound, 3 priority classes by bucket (NR_PRIO_CLASSES=3)",
        "spray": "prio, each QP sprayed over 2 UDP source ports (NR_SPRAY_PORTS=2)",
        "de": "prio, small packets drop-eligible (NR_DE_THRESH)"}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def de_text(nr):
    """'1200 of 5000 (24.0%), 3 short': the drop-eligible contributions the box
    received of the tolerant ones, and short slots of those alone; '-' without."""
    de = nr.get("drop_eligible") or {}
    if not nr.get("de_thresh") or not de.get("tolerant"):
        return "-"
    return (f"{de['received']} of {de['tolerant']} ({100 * de['received'] / de['tolerant']:.1f}%)"
            f", {de['short']} short")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def healthy(run):
    """Every rank exited 0, and (netreduce) no QP in error and no failed call."""
    if run.get("failed"):
        return False
    nr = run.get("netreduce")
    return nr is None or (nr.get("qp_errors", 0) == 0 and nr.get("failed_ranks", 0) == 0)


def packets(run):
    """The box's slots of tolerant packets in the run: rank 0's tolerant bytes
    in MTU-sized packets (every rank sends the same; a slot is one packet
    position of all of them, what the bound counts)."""
    nr = run.get("netreduce") or {}
    return (nr.get("tolerant_bytes") or 0) / (run.get("mtu") or 4096)


def table(runs):
    rows = []
    for loss in sorted({r["loss"] for r in runs}):
        for v in sorted({r["variant"] for r in runs}, key=lambda v: ORDER.index(v)
                        if v in ORDER else len(ORDER)):
            mine = [r for r in runs if r["loss"] == loss and r["variant"] == v]
            ok = [r for r in mine if not r.get("failed")]
            tta = [r.get("time_to_acc_s") for r in ok]
            short = [(r.get("netreduce") or {}).get("short_slots") for r in ok]
            ppm = [1e6 * s / packets(r) for s, r in zip(short, ok) if s is not None and packets(r)]
            left = [(r.get("netreduce") or {}).get("left_out") for r in ok]
            rows.append({
                "loss": loss, "variant": v, "runs": len(mine), "failed": len(mine) - len(ok),
                "median_step_s": median([r.get("median_step_s") for r in ok]),
                "time_to_acc_s": median(tta) if ok and all(t is not None for t in tta) else None,
                "reached": f"{sum(t is not None for t in tta)}/{len(mine)}",
                "final_acc": median([r.get("final_test_acc") for r in ok]),
                "short_slots": median(short),
                "short_ppm_seen": median(ppm),
                "left_out": next((lo for lo in reversed(left) if lo), None),
                "healthy": f"{sum(healthy(r) for r in mine)}/{len(mine)}",
                "ppm": max((r.get("ppm") or 0 for r in mine), default=0),
            })
    base = {r["variant"]: r["median_step_s"] for r in rows if r["loss"] == 0}
    for r in rows:
        b = base.get(r["variant"])
        r["throughput_rel"] = b / r["median_step_s"] if b and r["median_step_s"] else None
    return rows


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def markdown(rows, runs):
    r0 = next((r for r in runs if not r.get("failed")), runs[0])
    target = r0.get("target_acc", "?")
    lines = [
        f"{r0.get('ranks', '?')} ranks, torch {r0.get('torch', '?')}, links "
        f"{r0.get('rate_mbit', '?')} Mbit/s both ways with the loss per link and direction, "
        f"{r0.get('steps', '?')} steps a run, target test accuracy {target}; bound "
        f"{max((r['ppm'] for r in rows), default=0)} ppm"
        + (f"; two paths, B at {r0['path_b_mbit']} Mbit/s" if r0.get("paths") == 2 else "")
        + ("; links serving the DSCP classes by priority" if r0.get("prio_bands") else "")
        + (f"; every queue {r0['queue_kb']} KiB (tail drop)" if r0.get("queue_kb") else ""),
        "",
        "| loss % | variant | runs | median step (s) | throughput vs loss-free | "
        "time to acc (s) | final acc | short slots | short ppm | left out (per rank) | "
        "QPs healthy |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        tta = fmt(r["time_to_acc_s"], ".1f") + ("" if r["time_to_acc_s"] is not None
                                                 else f" ({r['reached']})")
        runs_s = f"{r['runs']}" + (f" ({r['failed']} failed)" if r["failed"] else "")
        lines.append(
            f"| {r['loss']:g} | {r['variant']} | {runs_s} | {fmt(r['median_step_s'], '.3f')} | "
            f"{fmt(r['throughput_rel'], '.2f')} | {tta} | {fmt(r['final_acc'], '.3f')} | "
            f"{fmt(r['short_slots'], '.0f')} | {fmt(r['short_ppm_seen'], '.0f')} | "
            f"{r['left_out'] if r['left_out'] else '-'} | {r['healthy']} |")
    lines += ["", "Every run:", "",
              "| round | loss % | variant | median step (s) | time to acc (s) | final acc | "
              "tolerant calls | short slots | short denied | left out | drop-eligible | "
              "QPs in error | queue drops | run (s) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(runs, key=lambda r: (r["rep"], r["loss"], ORDER.index(r["variant"])
                                         if r["variant"] in ORDER else 9)):
        nr = r.get("netreduce") or {}
        if r.get("failed"):
            lines.append(f"| {r['rep']} | {r['loss']:g} | {r['variant']} | failed (exit codes "
                         f"{r.get('exit_codes', '?')}) | | | | | | | | | | {fmt(r.get('run_s'), '.0f')} |")
            continue
        qp = "-" if not nr else str(nr.get("qp_errors", 0)) + \
            (f" ({nr['qp_error']})" if nr.get("qp_error") else "")
        lines.append(
            f"| {r['rep']} | {r['loss']:g} | {r['variant']} | {fmt(r.get('median_step_s'), '.3f')} | "
            f"{fmt(r.get('time_to_acc_s'), '.1f')} | {fmt(r.get('final_test_acc'), '.3f')} | "
            f"{nr.get('tolerant_calls', '-') if nr else '-'} | "
            f"{fmt(nr.get('short_slots'), 'd')} | {fmt(nr.get('short_denied'), 'd')} | "
            f"{nr.get('left_out') or '-'} | {de_text(nr)} | {qp} | {fmt(r.get('queue_drops'), 'd')} | "
            f"{fmt(r.get('run_s'), '.0f')} |")
    lines += ["", "Variants: " + "; ".join(f"{v}: {WHAT[v]}" for v in ORDER
                                          if any(r["variant"] == v for r in rows)) + ".",
              "Throughput: the variant's median step at 0% loss over its median step at this "
              "loss. Time to accuracy: training time (evaluation excluded) until the test "
              "accuracy first reached the target, median over the rounds, '-' unless every "
              "round reached it. Short slots: packets the box completed with one contribution "
              "missing (rank 0 asks the box at the end), short ppm: per million packet positions "
              "sent tolerant (what the bound counts). QPs healthy: runs whose ranks all finished with no QP in "
              "error and no failed call."]
    return "\n".join(lines)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for v in ORDER:
        mine = sorted((r for r in rows if r["variant"] == v), key=lambda r: r["loss"])
        if not mine:
            continue
        xs = [r["loss"] for r in mine]
        axes[0].plot(xs, [r["throughput_rel"] for r in mine], marker="o", label=WHAT[v])
        axes[1].plot(xs, [r["time_to_acc_s"] for r in mine], marker="o", label=WHAT[v])
    if all(r["time_to_acc_s"] is None for r in rows):
        axes[1].text(0.5, 0.5, "no variant reached the target accuracy in every round",
                     ha="center", va="center", transform=axes[1].transAxes)
    axes[0].set_ylabel("throughput / loss-free (same variant)")
    axes[0].axhline(1.0, color="grey", linewidth=0.6)
    axes[1].set_ylabel("training time to the target accuracy (s)")
    for ax in axes:
        ax.set_xlabel("loss per link and direction (%)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    failed = [f"{r['variant']} at {r['loss']:g}%" for r in rows if r["failed"]]
    if failed:   # no point to draw: say so under the plot
        fig.text(0.01, 0.01, "runs failed (see the table): " + ", ".join(failed), fontsize=8,
                 color="firebrick")
    fig.tight_layout(rect=(0, 0.04 if failed else 0, 1, 1))
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("results")
    a = p.parse_args()
    runs = [r for r in load(a.results) if r.get("summary")]
    if not runs:
        print(f"bench_dlcp_report: no results in {a.results}", file=sys.stderr)
        return 2
    rows = table(runs)
    text = markdown(rows, runs)
    print("\n" + text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench-dlcp.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "bench-dlcp.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, os.path.join(a.out, "bench-dlcp.png"))
    print(f"\nwrote {a.out}/bench-dlcp.md, bench-dlcp.csv, bench-dlcp.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
