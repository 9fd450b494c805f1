#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables of tests/testbed/bench-hier: measured medians next to the cost models.

Hosts with several ranks (host/README.md, "Choosing the variant"), in units of
S / B_e (S bytes per rank, B_e the host link each way, r = B_i / B_e, N = HP):
  flat ring      2(N-1)/N / min(1, r)
  parallel       1 + 2(P-1)/(P r)
  hierarchical   1 + P / r
Racks (docs/racks.md, "Bytes per link"), R = 2 racks of H hosts, m = H agents
(or 1 with NR_RACK_AGENTS=1), r_x = B_x / B_e (B_x: the inter-rack link):
  racks, a box each         2 + max(1/m, 1/r_x)           (rack sum, agents, back)
  racks, rack 1 no box      2 * 2(H-1)/H + max(1/m, 1/r_x) (that rack sums on its ring)
  flat ring over 2H hosts   2(N-1)/N / min(1, r_x)
Bytes over the inter-rack link per all-reduce, both ways: racks 2 S, flat ring
2 * 2(N-1)/N S (frame headers, ACKs and the set-up not counted by the model).
"""
import argparse
import json
import statistics
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def med(xs):
    return statistics.median(xs) if xs else None


def ms(x):
    return "-" if x is None else f"{x / 1000:.0f}"


def unit_s(nbytes, mbit):
    """Seconds of one S / B_e at MBIT Mbit/s."""
    return nbytes * 8 / (mbit * 1e6)


def hosts_model(H, P, r):
    N = H * P
    return {"ring": 2 * (N - 1) / N / min(1.0, r),
            "parallel": 1 + 2 * (P - 1) / (P * r),
            "hierarchical": 1 + P / r}


def racks_model(H, rx):
    N = 2 * H
    step2 = max(1 / H, 1 / rx)
    return {"racks": 2 + step2,
            "racks-1agent": 2 + max(1.0, 1 / rx),
            "racks-nobox": 2 * 2 * (H - 1) / H + step2,
            "ring": 2 * (N - 1) / N / min(1.0, rx)}


def report_hosts(rows):
    rows = [r for r in rows if r.get("part") == "hosts"]
    if not rows:
        return
    r0 = rows[0]
    P = r0["local"]
    H = r0["ranks"] // P
    N = H * P
    rate = r0["rate_mbit"]
    algos = ["parallel", "hierarchical", "ring"]
    print(f"\n== {H} hosts x {P} processes: host links {rate} Mbit/s each way, "
          f"intra-host = r x that (shared memory paced, loopback shaped)")
    print("   time: median over launches of each launch's median call, ms; "
          "(model) = the cost model's time, links only")
    for size in sorted({r["bytes"] for r in rows}):
        u = unit_s(size, rate)
        print(f"\n   {size} bytes per rank (S / B_e = {u * 1000:.0f} ms)")
        hdr = f"   {'r':>5} {'intra Mbit':>10}"
        for a in algos:
            hdr += f" {a + ' ms (model)':>24}"
        print(hdr + f" {'fastest':>14} {'model says':>14}")
        wins = {}
        for ratio in sorted({r["ratio"] for r in rows}):
            sel = [r for r in rows if r["ratio"] == ratio and r["bytes"] == size]
            model = hosts_model(H, P, ratio)
            line = f"   {ratio:>5g} {sel[0]['intra_mbit'] if sel else 0:>10}"
            meas = {}
            for a in algos:
                t = med([r["time_us"] for r in sel if r["tbalgo"] == a])
                meas[a] = t
                cell = f"{ms(t)} ({model[a] * u * 1000:.0f})"
                line += f" {cell:>24}"
            got = [a for a in algos if meas[a] is not None]
            best = min(got, key=lambda a: meas[a]) if got else "-"
            wins[ratio] = meas
            print(line + f" {best:>14} {min(algos, key=lambda a: model[a]):>14}")
        print(f"\n   the condition (model): parallel beats the flat ring for r > "
              f"2H(P-1)/(N-2) = {2 * H * (P - 1) / (N - 2):.2f}, hierarchical for r > "
              f"P N/(N-2) = {P * N / (N - 2):.2f}")
        for a, thr in (("parallel", 2 * H * (P - 1) / (N - 2)), ("hierarchical", P * N / (N - 2))):
            said, seen = [], []
            for ratio, meas in sorted(wins.items()):
                if meas.get(a) is None or meas.get("ring") is None:
                    continue
                said.append(ratio > thr)
                seen.append(meas[a] < meas["ring"])
                print(f"   r = {ratio:g}: {a} {'beats' if seen[-1] else 'does not beat'} the ring "
                      f"({ms(meas[a])} vs {ms(meas['ring'])} ms); model: "
                      f"{'beats' if said[-1] else 'does not beat'} -> "
                      f"{'agrees' if said[-1] == seen[-1] else 'DISAGREES'}")


def report_racks(rows):
    rows = [r for r in rows if r.get("part") == "racks"]
    if not rows:
        return
    r0 = rows[0]
    N = r0["ranks"]
    H = N // 2
    rate = r0["rate_mbit"]
    print(f"\n== 2 racks x {H} hosts: host links {rate} Mbit/s each way, one inter-rack link "
          f"(each box's port) at x Mbit/s each way")
    print(f"   racks = the library across racks (docs/racks.md), a box each, {H} agents per rack; "
          "1agent = the same with NR_RACK_AGENTS=1;\n   nobox = rack 1 without a box; "
          "ring = flat ring over all hosts (no box job)")
    print("   time: median over launches, ms (model); xrack: bytes over the inter-rack link per "
          "all-reduce, both ways, in S (model)")

    def kind(r):
        return "ring" if r["tbalgo"] == "ring" else r["kind"]

    kinds = ["racks", "racks-1agent", "racks-nobox", "ring"]
    for size in sorted({r["bytes"] for r in rows}):
        u = unit_s(size, rate)
        print(f"\n   {size} bytes per rank (S / B_e = {u * 1000:.0f} ms)")
        short = {"racks": "racks", "racks-1agent": "1agent", "racks-nobox": "nobox", "ring": "ring"}
        print(f"   {'':13} {'time, ms (model)':^59} {'inter-rack bytes / S (model)':^51}")
        hdr = f"   {'x Mbit':>7} {'r_x':>5}"
        for k in kinds:
            hdr += f" {short[k]:>14}"
        for k in kinds:
            hdr += f" {short[k]:>12}"
        print(hdr)
        for x in sorted({r["inter_mbit"] for r in rows}, reverse=True):
            rx = x / rate
            model = racks_model(H, rx)
            xmodel = {"racks": 2.0, "racks-1agent": 2.0, "racks-nobox": 2.0,
                      "ring": 2 * 2 * (N - 1) / N}
            line = f"   {x:>7} {rx:>5.2f}"
            xr = ""
            for k in kinds:
                sel = [r for r in rows if r["inter_mbit"] == x and r["bytes"] == size and kind(r) == k]
                t = med([r["time_us"] for r in sel])
                cell = f"{ms(t)} ({model[k] * u * 1000:.0f})"
                line += f" {cell:>14}"
                xb = med([r["xrack_bytes"] / r["ops"] for r in sel])
                cell = "-" if xb is None else f"{xb / size:.2f} ({xmodel[k]:.2f})"
                xr += f" {cell:>12}"
            print(line + xr)
        c = 2 * (N - 1) / N
        print(f"\n   the condition (model): the racks beat the flat ring when r_x < (c-1)/2 = "
              f"{(c - 1) / 2:.3f} (c = 2(N-1)/N = {c:.2f}); with rack 1 without a box when "
              f"r_x < (c-1)/(4(H-1)/H) = {(c - 1) / (4 * (H - 1) / H):.3f}; with one agent when "
              f"r_x < (c-1)/2 too, if r_x <= 1")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl")
    ap.add_argument("--load", default="?")
    ap.add_argument("--nproc", default="?")
    ap.add_argument("--env", default="")
    ap.add_argument("--iters", default="?")
    a = ap.parse_args()
    rows = load(a.jsonl)
    if not rows:
        print("bench-hier: no results", file=sys.stderr)
        return 2
    wrong = sum(r.get("wrong", 0) for r in rows)
    reps = max(r.get("rep", 1) for r in rows)
    print(f"setup: {len(rows)} rows, {reps} launch(es) per topology of {a.iters} timed calls "
          f"each, soft RoCE transport ({a.env}), {a.nproc} CPUs shared by the hosts and the "
          f"box(es), load average at the end {a.load}; every row checked bit for bit: "
          f"{wrong} wrong elements")
    report_hosts(rows)
    report_racks(rows)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
