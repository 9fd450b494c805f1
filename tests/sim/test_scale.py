#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The scale model's box as a server, its baselines and its hosts
(sim/README.md: "The box", "Baselines", "Hosts"), against closed forms.

usage: test_scale.py NETREDUCE_PLAN SOURCE_ROOT

- The box's rate is applied: a flat box whose hosts bring more than its
  workers sum (or its ports carry) takes N S / capacity and is slower than the
  ring; the rate file is read as nr-bench-switch --json writes it (extra
  fields, dtype rows, the median of repeated rows, workers and MTUs between
  the measured ones); several jobs share a box's workers.
- NCCL's double binary tree: its trees as trees.cc draws them, no host an
  inner node of both, the tree's time NCCL's closed form 2 S / B (+ its
  pipeline's fill); NCCL's tuner's pick and predicted time by hand.
- --size: the answer meets the factor and fewer cores do not.
- Hosts: staging, several NICs, bf16, the step cost's band.
"""
import json
import os
import subprocess
import sys
import tempfile

PLAN, ROOT = sys.argv[1], sys.argv[2]
S = 64 << 20
WIRE = (4096 + 58) / 4096
failures = []
TMP = tempfile.mkdtemp(prefix="nr-test-scale.")


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def near(got, want, tol=0.02):
    return abs(got / want - 1) <= tol


def plan(cluster, *args, nbytes=S):
    path = os.path.join(TMP, "cluster.json")
    with open(path, "w") as f:
        json.dump(cluster, f)
    p = subprocess.run([PLAN, path, "--json", "--bytes", str(nbytes), *args],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"netreduce-plan failed: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def times(cluster, *args, nbytes=S):
    return {r["algo"]: r for r in plan(cluster, *args, nbytes=nbytes) if r["kind"] == "algos"}


def rates(name, rows, about="# test rates"):
    """An nr-bench-switch --json file of (payload, workers, gbps[, dtype]) rows,
    with the fields the bench writes and one a newer bench may add."""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(about + "\n")
        f.write('{"bench":"switch","path":"forward","workers":1,"conns":8,"payload":4096,"gbps":999}\n')
        f.write('{"bench":"memcpy","gbps":400}\n')
        for row in rows:
            payload, workers, gbps = row[:3]
            r = {"bench": "switch", "path": "aggregate", "job": "channels", "workers": workers,
                 "channels": workers, "conns": 8, "payload": payload, "gbps": gbps,
                 "mpps": 1.0, "ns_per_pkt_worker": 1.0, "wall_gbps": gbps, "scaling": 1.0}
            if len(row) > 3:
                r["dtype"] = row[3]
            f.write(json.dumps(r) + "\n")
    return path


GB = 1e9
base = {"nic": "12.5GBps", "latency": {"nic": "1us", "fabric": "1us", "intra": "1us"},
        "step_cost": 0, "gradients": "host"}
UNIT = S * WIRE / 12.5e9          # S over one host link

# 1. The box's rate: 16 hosts at 12.5 GB/s bring 200 GB/s; one worker sums 40 Gbit/s.
R = rates("one.jsonl", [(4096, 1, 40.0), (4096, 2, 70.0), (4096, 2, 74.0), (4096, 4, 120.0),
                        (1024, 1, 20.0), (1024, 2, 36.0), (1024, 4, 60.0)])
N = 16
t = times(dict(base, hosts_per_rack=N, box={"mode": "switch", "workers": 1, "rates": R}))
cap = 40e9 / 8
want = N * S * WIRE / (cap * WIRE)
check(near(t["box"]["seconds"], want),
      f"box of 1 worker: {t['box']['seconds']:.3f} s = N S / its rate ({want:.3f})")
check(t["box"]["seconds"] > t["ring"]["seconds"],
      f"a flat box at N x link ({N * 12.5:.0f} GB/s) above its capacity ({cap / GB:.0f} GB/s) is slower "
      f"than the ring ({t['box']['seconds']:.3f} s > {t['ring']['seconds']:.3f} s)")
check(t["box"]["box_gbps"] == 40.0, "the box's rate is the file's 1-worker row")
# The shipped default server (sim/boxes/xeon-16c.jsonl), one worker: the same verdict.
t = times(dict(base, hosts_per_rack=N, box={"mode": "switch", "workers": 1}))
check(near(t["box"]["seconds"], N * S / (42.7e9 / 8)) and t["box"]["seconds"] > t["ring"]["seconds"],
      f"the shipped rates, 1 worker: box {t['box']['seconds']:.3f} s = N S / 42.7 Gbit/s, slower than the ring")
# Two rows for 2 workers (70, 74): their median; 3 workers between 2 and 4; 8 past 4 at 4's rate a worker.
for w, g in ((2, 72.0), (3, 96.0), (8, 240.0)):
    t = times(dict(base, hosts_per_rack=N, box={"mode": "switch", "workers": w, "rates": R}), "--algo", "box")
    check(near(t["box"]["seconds"], N * S / (g * 1e9 / 8)),
          f"{w} workers: the box sums {g:g} Gbit/s ({t['box']['seconds']:.3f} s)")
# NR_CHANNELS=1: one box job of one channel runs on one worker of four.
t = times(dict(base, hosts_per_rack=N, box={"mode": "switch", "workers": 4, "channels": 1, "rates": R}),
          "--algo", "box")
check(near(t["box"]["seconds"], N * S / (40e9 / 8)), "channels 1: one worker of four sums the job")
# An MTU between the measured ones: a packet's time linear in its size.
t1, t4 = 1024 * 8 / 20.0, 4096 * 8 / 40.0      # ns a packet, 1 worker
g2048 = 2048 * 8 / (t1 + (t4 - t1) * (2048 - 1024) / 3072)
t = times(dict(base, hosts_per_rack=N, mtu=2048, box={"mode": "switch", "workers": 1, "rates": R}), "--algo", "box")
check(near(t["box"]["seconds"], N * S / (g2048 * 1e9 / 8)),
      f"MTU 2048: {g2048:.1f} Gbit/s, between the 1 KiB and 4 KiB rows by a packet's time")
# One-armed: the ports carry N S in and out; workers enough (8 at 4's rate a worker: 240 Gbit/s).
t = times(dict(base, hosts_per_rack=N, box={"workers": 8, "ports": 2, "port_speed": "100Gbps", "rates": R}),
          "--algo", "box")
check(near(t["box"]["seconds"], N * S * WIRE / (2 * 12.5e9)),
      f"one-armed on 2 x 100 Gbit/s: box {t['box']['seconds']:.3f} s = N S / (2 ports)")
# bf16: its own rows where the file has them, fp32's payload rate where not; half the bytes.
RB = rates("bf16.jsonl", [(4096, 1, 40.0), (4096, 1, 30.0, "bf16")])
t = times(dict(base, hosts_per_rack=N, dtype="bf16", box={"mode": "switch", "workers": 1, "rates": RB}),
          "--algo", "box")
check(near(t["box"]["seconds"], N * S / 2 / (30e9 / 8)), "bf16: the file's bf16 row, half the bytes")
t = times(dict(base, hosts_per_rack=N, dtype="bf16", box={"mode": "switch", "workers": 1, "rates": R}),
          "--algo", "box")
check(near(t["box"]["seconds"], N * S / 2 / (40e9 / 8)), "bf16 without bf16 rows: fp32's payload rate")
# Two jobs of 8 hosts share one box's worker: each takes as long as one job of 16.
t = times(dict(base, hosts_per_rack=N, jobs=2, box={"mode": "switch", "workers": 1, "rates": R}), "--algo", "box")
check(near(t["box"]["seconds"], N * S / (40e9 / 8)),
      f"2 jobs of 8 on one worker: {t['box']['seconds']:.3f} s, the box's rate shared")
t = times(dict(base, hosts_per_rack=8, box={"mode": "switch", "workers": 1, "rates": R}), "--algo", "box")
check(near(t["box"]["seconds"], 8 * S / (40e9 / 8)), "one job of 8: half that")

# 2. NCCL's double binary tree.
def trees(n):
    p = subprocess.run([PLAN, "--trees", str(n)], capture_output=True, text=True, timeout=30)
    rows = [json.loads(l) for l in p.stdout.splitlines()]
    par = [[None] * n, [None] * n]
    kids = [[None] * n, [None] * n]
    for r in rows:
        par[r["tree"]][r["rank"]] = r["parent"]
        kids[r["tree"]][r["rank"]] = r["children"]
    return par, kids


ok_shape = ok_inner = ok_roots = True
for n in range(1, 70):
    par, kids = trees(n)
    for k in range(2):
        roots = [r for r in range(n) if par[k][r] < 0]
        edges = sum(len(c) for c in kids[k])
        consistent = all(par[k][c] == r for r in range(n) for c in kids[k][r])
        reach = set(roots)
        frontier = list(roots)
        while frontier:
            x = frontier.pop()
            for c in kids[k][x]:
                if c not in reach:
                    reach.add(c)
                    frontier.append(c)
        ok_shape &= len(roots) == 1 and edges == n - 1 and consistent and len(reach) == n \
            and all(len(c) <= 2 for c in kids[k])
    inner = [[par[k][r] >= 0 and len(kids[k][r]) > 0 for r in range(n)] for k in range(2)]
    ok_inner &= not any(inner[0][r] and inner[1][r] for r in range(n))
    # ncclGetDtreeRoots: 0, and n-1 (n even) or 1 (n odd)
    r1 = [r for r in range(n) if par[1][r] < 0][0]
    ok_roots &= [r for r in range(n) if par[0][r] < 0][0] == 0 and r1 == (1 if n % 2 and n > 1 else n - 1)
check(ok_shape, "--trees 1..69: each tree a binary tree over every host")
check(ok_inner, "--trees 1..69: no host is an inner node of both trees")
check(ok_roots, "--trees 1..69: the roots are NCCL's (0; n-1, or 1 for n odd)")
par, kids = trees(14)
want = {0: [8], 8: [4, 12], 4: [2, 6], 12: [10, 13], 2: [1, 3], 6: [5, 7], 10: [9, 11]}
check(all(sorted(kids[0][r]) == c for r, c in want.items()), "14 hosts, tree 0: trees.cc's drawing")
par, kids = trees(13)
want = {1: [9], 9: [0, 5], 5: [3, 7], 0: [11], 3: [2, 4], 7: [6, 8], 11: [10, 12]}
check(all(sorted(kids[1][r]) == c for r, c in want.items()), "13 hosts, tree 1: trees.cc's shifted drawing")
par, kids = trees(12)
want = {11: [3], 3: [1, 7], 7: [5, 9], 1: [0, 2], 5: [4, 6], 9: [8, 10]}
check(all(sorted(kids[1][r]) == c for r, c in want.items()), "12 hosts, tree 1: trees.cc's mirrored drawing")
# The tree's time: NCCL's closed form, algbw = busbw / 2 (tuning.cc's ratio .5 for trees):
# S / (B / 2) = 2 S / B, plus the pipeline's fill (2 x depth x chunk / 2 / B).
wire_box = dict(base, box="wire")
for n in (4, 8, 13, 16, 32):
    t = times(dict(wire_box, hosts_per_rack=n), "--algo", "tree")
    depth = max(len(bin(n - 1)) - 2, 1)
    fill = 2 * depth * (512 * 1024 / 2) / 12.5e9
    want = 2 * UNIT + fill
    check(abs(t["tree"]["seconds"] / want - 1) <= 0.01,
          f"{n} hosts: tree {t['tree']['seconds'] * 1e3:.2f} ms = 2 S / B + fill ({want * 1e3:.2f})")
# NCCL's tuner: 16 hosts x 8 GPUs (NVLink), 12.5 GB/s.  At 4 KiB tree/LL:
# lat 6.8 + 2 (7 x .6 + log2(16) x 5.0) = 55.2 us; busbw min(12.5 x .92, 2 x 36) / 3.8
# = 3.026, algbw / 2 x treeCorrection[LL][log2(4096 >> 6)] = .7: 4096 / (1000 x 1.059)
# = 3.87 us: 59.07 us.  At 100 MiB ring/Simple.
a16 = dict(base, hosts_per_rack=16, gpus_per_host=8, intra="100GBps", library_intra="10GBps", box="wire")
r = times(a16, "--algo", "ring", nbytes=4096)["ring"]
check(r["tuner_algo"] == "tree" and r["tuner_proto"] == "LL" and near(r["tuner_seconds"], 59.07e-6, 0.001),
      f"tuner at 4 KiB: {r['tuner_algo']}/{r['tuner_proto']} {r['tuner_seconds'] * 1e6:.2f} us (tree/LL 59.07)")
r = times(a16, "--algo", "ring", nbytes=100 << 20)["ring"]
check(r["tuner_algo"] == "ring" and r["tuner_proto"] == "Simple" and r["best_baseline"] == "ring",
      f"tuner at 100 MiB: {r['tuner_algo']}/{r['tuner_proto']}, the best baseline the simulated ring")

# 3. The step cost's band: the ring pays it 2(N-1) times.
t = times(dict(wire_box, hosts_per_rack=8, step_cost=["1us", "10us"]), "--algo", "ring")
check(near(t["ring"]["seconds_hi"] - t["ring"]["seconds"], 14 * 9e-6, 0.001),
      "step cost 1-10 us: the ring's band is 2(N-1) x 9 us wide")

# 4. --size: 8 hosts, servers of at most 16 workers (40 Gbit/s each, 4 KiB) on up to
# 8 x 100 Gbit/s.  1.2x the ring (9.6 ms) takes 8 S in 8 ms: 546 Gbit/s, 16 workers
# (8 give 320) and 6 ports; two boxes pass the data twice (the racks algorithm) and
# cannot.
R8 = rates("lin.jsonl", [(4096, 1, 40.0), (4096, 8, 320.0)])
sized = dict(base, hosts_per_rack=8, box={"workers": 16, "ports": 8, "port_speed": "100Gbps", "rates": R8},
             step_cost=["0.5us", "10us"])
rows = [r for r in plan(sized, "--size", "--factor", "1.2", "--max-cores", "16", "--max-ports", "8") if r["kind"] == "size"]
ans = [r for r in rows if r["role"] == "answer"]
check(len(ans) == 1 and ans[0]["speedup_best"] >= 1.2 and ans[0]["boxes"] == 1 and ans[0]["workers"] == 16
      and ans[0]["ports"] == 6, f"--size 1.2: one box of 16 cores and 6 ports ({ans[0] if ans else None})")
if ans:
    a = ans[0]
    fewer = [r for r in rows if r["role"] == "fewer"]
    check(fewer and all(not f["meets"] and f["speedup_best"] < 1.2 for f in fewer),
          "--size: fewer cores than the answer's miss the target: " +
          ", ".join(f"{f['workers']} cores {f['speedup_best']:.2f}x" for f in fewer))
    direct = dict(sized, box={"workers": a["workers"], "ports": a["ports"], "port_speed": "100Gbps", "rates": R8,
                              "per": a["hosts_per_box"]})
    t = times(direct, "--algo", a["algo"])
    check(near(t[a["algo"]]["seconds"], a["seconds"], 1e-6) and near(t[a["algo"]]["speedup_best"], a["speedup_best"], 1e-6),
          f"--size's answer ({a['boxes']} box of {a['workers']} cores, {a['ports']} ports) is what the plan gives it")
    unl = [r for r in rows if r["role"] == "unlimited" and r["boxes"] == a["boxes"]]
    check(unl and unl[0]["seconds"] <= a["seconds"] * 1.0001, "--size: a box without a limit is never slower")

# 5. Hosts.  Staging: the copies at 1 GB/s bound the box; nothing for the baselines or a GPU path.
st = dict(base, hosts_per_rack=4, box="wire", gradients="gpu", stage="1GBps", stage_chunk="4M")
t = times(st)
per_call = 1 * 0 + 4 * 1e-6
want = S / 1e9 + 2 * (4 << 20) / 1e9 + (S / (4 << 20) - 1) * per_call
check(near(t["box"]["seconds"], want), f"staged at 1 GB/s: box {t['box']['seconds']:.4f} s = S / stage + fill ({want:.4f})")
check(t["ring"]["staged_seconds"] == 0 and t["tree"]["staged_seconds"] == 0, "the baselines are not staged")
t = times(dict(st, gpu_path=True), "--algo", "box")
check(near(t["box"]["seconds"], UNIT), "gpu_path: nothing staged")
# Several NICs (rail-optimised): the ring a ring a NIC; hierarchical keeps one connection a host.
nics = dict(base, hosts_per_rack=4, gpus_per_host=8, intra="10000GBps", library_intra="10000GBps", box="wire")
one, eight = times(nics), times(dict(nics, nics=8))
# The ring: 2(N-1) steps, each S/N a channel over its NIC plus a hop up and down.
for k, t in ((1, one), (8, eight)):
    want = 2 * 31 * (S / 32 / k * WIRE / 12.5e9 + 2e-6)
    check(near(t["ring"]["seconds"], want),
          f"{k} NIC(s): the ring {t['ring']['seconds'] * 1e3:.3f} ms = 2(N-1) (S/N/nics / B + 2 hops) ({want * 1e3:.3f})")
    fill = 2 * 2 * (512 * 1024 / 2) / 12.5e9
    want = 2 * UNIT / k + fill
    check(near(t["tree"]["seconds"], want),
          f"{k} NIC(s): the tree {t['tree']['seconds'] * 1e3:.3f} ms = 2 S / (nics B) + fill ({want * 1e3:.3f})")
check(near(eight["parallel"]["seconds"], one["parallel"]["seconds"] / 8, 0.03), "8 NICs: parallel's box jobs 1/8")
check(near(eight["hier"]["seconds"], one["hier"]["seconds"], 0.01), "8 NICs: hierarchical gains nothing (local rank 0's NIC)")
# bf16: half the bytes for every algorithm.
f32, b16 = times(dict(wire_box, hosts_per_rack=8)), times(dict(wire_box, hosts_per_rack=8, dtype="bf16"))
check(all(near(b16[a]["seconds"], f32[a]["seconds"] / 2, 0.02) for a in f32),
      "bf16: every algorithm moves half the bytes (" +
      ", ".join(f"{a} {b16[a]['seconds'] / f32[a]['seconds']:.3f}" for a in f32) + ")")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
