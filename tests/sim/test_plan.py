#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The scale model against closed forms (sim/README.md, "What the model is").

usage: test_plan.py NETREDUCE_PLAN SOURCE_ROOT

On clusters small and regular enough to be solved by hand, the simulated
times must be the closed forms' (within 2%: latencies and steps are small by
construction here): the box's S / link, the ring's 2(N-1)/N S / link,
host/README.md's cost model of the hierarchical and parallel variants,
docs/racks.md's of the racks, and no algorithm without a box under the
all-reduce lower bound 2(N-1)/N S / link.  Then the planner's errors and the
shipped cluster files.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

PLAN, ROOT = sys.argv[1], sys.argv[2]
S = 64 << 20
B = 1e9                        # 1 GB/s host links
WIRE = (4096 + 58) / 4096      # headers at the default MTU
UNIT = S * WIRE / B            # S / B_e on the wire
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def plan(cluster, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cluster, f)
    try:
        p = subprocess.run([PLAN, f.name, "--json", "--bytes", str(S), *args],
                           capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        raise SystemExit(f"netreduce-plan failed: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def times(cluster, *args):
    return {r["algo"]: r for r in plan(cluster, *args) if r["kind"] == "algos"}


def near(got, want, tol=0.02):
    return abs(got / want - 1) <= tol


# Tiny latencies and no step cost, the box at the wire's rate (the papers'
# switch-sized box; test_scale.py holds the box as a server), gradients in host
# memory (nothing staged): the closed forms hold to well within 2%.
base = {"nic": "1GBps", "latency": {"nic": "1us", "fabric": "1us", "intra": "1us"},
        "box": "wire", "step_cost": 0, "gradients": "host"}

# 1. One rack of 8 hosts: the box, the ring, the tree against the bounds.
t = times(dict(base, hosts_per_rack=8))
n = 8
check(t["box"]["seconds"] >= UNIT, f"box {t['box']['seconds']:.4f} s >= S / link {UNIT:.4f} s")
check(near(t["box"]["seconds"], UNIT), "box within 2% of S / link")
ring = 2 * (n - 1) / n * UNIT
check(near(t["ring"]["seconds"], ring), f"ring {t['ring']['seconds']:.4f} s within 2% of 2(N-1)/N S / link {ring:.4f}")
for a in ("ring", "tree"):
    check(t[a]["seconds"] >= ring * 0.999, f"{a} not under the all-reduce lower bound 2(N-1)/N S / link")
check(near(t["ring"]["seconds"] / t["box"]["seconds"], 2 * (n - 1) / n),
      "box / ring = 2(N-1)/N = 1.75 (the papers' traffic saving)")
check(t["box"]["cross_rack_bytes"] == 0, "one rack: nothing crosses racks")

# The box's credits bound a connection: half a pool of 2 messages (64 KiB) a
# round trip of 4 hops of 100 us is 64 KiB / 400 us, far under the 1 GB/s link.
t = times(dict(base, hosts_per_rack=4, pool_msgs=2, latency={"nic": "100us"}), "--algo", "box")
want = S / (65536 / 400e-6)
check(near(t["box"]["seconds"], want), f"credits: box {t['box']['seconds']:.3f} s = S / (W / RTT) ({want:.3f})")
t = times(dict(base, hosts_per_rack=4, latency={"nic": "100us"}), "--algo", "box")
check(t["box"]["seconds"] > UNIT * 1.2, "the default pool (8 messages: 256 KiB in flight) does not fill 1 GB/s at 400 us")
t = times(dict(base, hosts_per_rack=4, pool_msgs=16, latency={"nic": "100us"}), "--algo", "box")
check(near(t["box"]["seconds"], UNIT), "a pool of 16 (512 KiB in flight) does")

# 2. 4 hosts x 2 GPUs at r = 4 and r = 1: host/README.md's cost model.
for r in (1, 4):
    t = times(dict(base, hosts_per_rack=4, gpus_per_host=2, intra=f"{r}GBps", library_intra=f"{r}GBps"))
    P = 2
    local = S / (r * B)              # the local phases carry no headers
    hier = UNIT + P * local
    par = UNIT + 2 * (P - 1) / P * local
    check(near(t["hier"]["seconds"], hier), f"r={r}: hierarchical {t['hier']['seconds']:.4f} s = 1 + P/r units ({hier:.4f})")
    check(near(t["parallel"]["seconds"], par), f"r={r}: parallel {t['parallel']['seconds']:.4f} s = 1 + 2(P-1)/(P r) units ({par:.4f})")
    check(t["parallel"]["seconds"] <= t["hier"]["seconds"], f"r={r}: parallel never slower than hierarchical")
    # The papers' condition: parallel beats the flat ring when r > 2H(P-1)/(HP-2) = 1.33.
    check((t["parallel"]["seconds"] < t["ring"]["seconds"]) == (r > 4 / 3),
          f"r={r}: parallel beats the ring exactly when r > 1.33")

# 3. Two racks of 4, the inter-rack link a quarter of a host link: docs/racks.md.
racks = dict(base, rack_hosts=[4, 4], tor_uplink="0.25GBps")
t = times(racks)
rx, m = 0.25, 4
want = (2 + max(1 / m, 1 / rx)) * UNIT
check(near(t["racks"]["seconds"], want), f"racks {t['racks']['seconds']:.3f} s = (2 + max(1/m, 1/r_x)) units ({want:.3f})")
check(near(t["racks"]["cross_rack_bytes"], 2 * S), "racks: 2 S cross between racks")
check(near(t["ring"]["cross_rack_bytes"], 2 * 2 * 7 / 8 * S), "flat ring: 2 x 2(N-1)/N S cross")
want_ring = 2 * 7 / 8 * UNIT / rx
check(near(t["ring"]["seconds"], want_ring), f"flat ring {t['ring']['seconds']:.3f} s = 2(N-1)/N / r_x units ({want_ring:.3f})")
# The spine (model only): one pass, bound by the slower of a host link and an uplink.
want = max(1, 1 / rx) * UNIT
check(near(t["spine"]["seconds"], want), f"spine {t['spine']['seconds']:.3f} s = max(1, 1/r_x) units ({want:.3f})")
check(t["spine"]["library"] is False and t["racks"]["library"] is True, "spine is marked the model's, racks the library's")
# Partial deployment: boxes in more racks never slow the racks algorithm.
dep = [r for r in plan(racks, "--deploy") if r["kind"] == "deploy"]
check([r["boxes"] for r in dep] == [0, 1, 2], "--deploy: 0, 1, 2 racks with a box")
check(all(a["seconds"] >= b["seconds"] * 0.999 for a, b in zip(dep, dep[1:])),
      "--deploy: each box added never slows the job")
check(near(dep[0]["seconds"], (2 * 2 * 3 / 4 + 1 / rx) * UNIT),
      "--deploy: no box at all = rack rings and the agents' rings")

# FSDP's collectives (collective): the ring's one half, (N-1)/N S / link; the box the
# all-reduce's S / link (a box is transparent to a connection); no tree, no local phases.
for coll in ("reduce_scatter", "allgather"):
    t = times(dict(base, hosts_per_rack=8, collective=coll))
    half = (n - 1) / n * UNIT
    check(near(t["ring"]["seconds"], half), f"{coll}: ring {t['ring']['seconds']:.4f} s within 2% of "
          f"(N-1)/N S / link {half:.4f}")
    check(near(t["box"]["seconds"], UNIT), f"{coll}: box within 2% of S / link, as its all-reduce")
    check(set(t) == {"ring", "box"} and t["ring"]["collective"] == coll,
          f"{coll}: only the ring and the box, rows marked {coll}")

# 4. Errors: clear, exit 2, naming what is wrong.
def fails(cluster, args, words):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(cluster if isinstance(cluster, str) else json.dumps(cluster))
    try:
        p = subprocess.run([PLAN, f.name, *args], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    check(p.returncode == 2 and all(w in p.stderr for w in words) and "terminate" not in p.stderr,
          f"error names {words}: {p.stderr.strip()!r}")


fails(dict(base, hosts_per_rack=4, nicc="1GBps"), [], ["unknown field", "nicc"])
fails(dict(base, hosts_per_rack=4, nic="1 furlong"), [], ["bandwidth", "unit"])
fails({"hosts_per_rack": 4}, [], ["nic", "required"])
fails(dict(base, hosts_per_rack=4, gpus_per_host=2), [], ["intra", "required"])
fails(dict(base, hosts_per_rack=4, gpus_per_host=2, intra="100GBps"), [], ["library_intra", "NR_INTRA_GBPS", "required"])
fails(dict(base, hosts_per_rack=4, box_port="1GBps"), [], ["box_port", "box", "ports", "port_speed"])
fails(dict(base, hosts_per_rack=4, box={"cores": 4}), [], ["box: unknown field", "cores", "workers"])
fails(dict(base, hosts_per_rack=4, box={"rates": "/nonexistent/rates.jsonl"}), [], ["box.rates", "/nonexistent/rates.jsonl", "nr-bench-switch"])
fails(dict(base, hosts_per_rack=4, box={"workers": 0}), [], ["box.workers", "1..4096"])
fails(dict(base, hosts_per_rack=4, box={"mode": "two-armed"}), [], ["mode", "one-armed", "switch"])
fails(dict(base, hosts_per_rack=4, gpus_per_host=2, intra="9GBps", library_intra="9GBps", nics=4), [], ["nics=4", "gpus_per_host"])
fails(dict(base, hosts_per_rack=6, jobs=4), [], ["jobs=4", "divide"])
fails(dict(base, hosts_per_rack=4, step_cost=["10us", "1us"]), [], ["step_cost", "low <= high"])
fails(dict(base, hosts_per_rack=4, dtype="int8"), [], ["dtype", "bf16"])
fails(dict(base, hosts_per_rack=4), ["--size", "--factor", "x"], ["--factor x"])
fails(dict(base, hosts_per_rack=4), ["--algo", "allgather"], ["--algo allgather"])
fails(dict(base, hosts_per_rack=4), ["--bytes", "-3M"], ["size"])
fails(dict(base, hosts_per_rack=4, boxes=[7]), [], ["boxes", "rack indices"])
fails("{ not json", [], ["not valid JSON"])
fails(dict(base, hosts_per_rack=4), ["--variant", "nvlink"], ["--variant nvlink"])
p = subprocess.run([PLAN, "/nonexistent.json"], capture_output=True, text=True)
check(p.returncode == 2 and "/nonexistent.json" in p.stderr, "a missing file is named")
p = subprocess.run([PLAN, "--help"], capture_output=True, text=True)
check(p.returncode == 0 and "usage: netreduce-plan" in p.stdout, "--help")

# 5. The shipped cluster files: every variant, every algorithm, a finite time.
files = sorted(glob.glob(os.path.join(ROOT, "sim", "examples", "*.json")))
check(len(files) >= 3, f"{len(files)} example cluster files")
for path in files:
    p = subprocess.run([PLAN, path, "--json", "--deploy"], capture_output=True, text=True, timeout=120)
    rows = [json.loads(l) for l in p.stdout.splitlines()] if p.returncode == 0 else []
    ok = rows and all(0 < r["seconds"] < 1e3 for r in rows)
    check(bool(ok), f"{os.path.basename(path)}: {len(rows)} rows, all finite"
          + ("" if p.returncode == 0 else f" ({p.stderr.strip()})"))

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
