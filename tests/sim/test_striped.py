#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Striping in the scale model (sim/README.md, "Striping"), against closed forms.

usage: test_striped.py NETREDUCE_PLAN SOURCE_ROOT

- One box (box.stripes 1): striped, striped-hier and striped-parallel are box,
  hier and parallel, to the last digit.
- K boxes: each sums 1/K of every rank's data, so a job whose box binds
  (its worker's rate, its ports) takes N S / (K x the box's rate), until the
  hosts' NICs bind (S / link); explicit channels go to the boxes in turn
  (3 channels over 2 boxes: box 0 sums 2/3 of S).
- --size's striped search: the answer meets the factor, half as many servers
  do not (or could not at their full rate), the answer is what the plan gives
  that many servers; none where boxes without a limit miss the target, with
  the time taken apart; --fixed-server keeps the largest server.
- The cluster file's box.stripes and its errors; sim/validate.py maps a
  measured row's boxes to the striped algorithm over as many boxes, a
  shaped row's K rails to one NIC of their sum (the ring keeps rail 0), keeps
  measure's boxes part out of the fit set, and takes the box's rates of the
  machine a file's header names.
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
TMP = tempfile.mkdtemp(prefix="nr-test-striped.")


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def near(got, want, tol=0.02):
    return abs(got / want - 1) <= tol


def run(cluster, *args):
    path = os.path.join(TMP, "cluster.json")
    with open(path, "w") as f:
        json.dump(cluster, f)
    return subprocess.run([PLAN, path, "--json", "--bytes", str(S), *args], capture_output=True, text=True,
                          timeout=120)


def plan(cluster, *args):
    p = run(cluster, *args)
    if p.returncode != 0:
        raise SystemExit(f"netreduce-plan failed: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def times(cluster, *args):
    return {r["algo"]: r for r in plan(cluster, *args) if r["kind"] == "algos"}


def rates(name, rows):
    """An nr-bench-switch --json file of (payload, workers, gbps) aggregate rows."""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write("# test rates\n")
        for payload, workers, gbps in rows:
            f.write(json.dumps({"bench": "switch", "path": "aggregate", "job": "channels", "workers": workers,
                                "channels": workers, "conns": 8, "payload": payload, "gbps": gbps}) + "\n")
    return path


base = {"nic": "12.5GBps", "latency": {"nic": "1us", "fabric": "1us", "intra": "1us"}, "step_cost": 0,
        "gradients": "host"}
R = rates("lin.jsonl", [(4096, 1, 40.0), (4096, 8, 320.0)])   # 40 Gbit/s a worker

# 1. One box: the striped algorithms are today's, to the last digit.
one = dict(base, hosts_per_rack=4, gpus_per_host=2, intra="50GBps", library_intra="20GBps",
           box={"workers": 2, "ports": 1, "port_speed": "100Gbps", "rates": R})
t = times(one, "--algo", "box,hier,parallel,striped,striped-hier,striped-parallel")
for a in ("box", "hier", "parallel"):
    s = "striped" if a == "box" else "striped-" + a
    check(a in t and s in t and abs(t[s]["seconds"] / t[a]["seconds"] - 1) < 1e-9
          and abs(t[s]["seconds_hi"] / t[a]["seconds_hi"] - 1) < 1e-9,
          f"box.stripes 1: {s} is {a} ({t.get(s, {}).get('seconds')} s, {t.get(a, {}).get('seconds')} s)")
check(not any(a.startswith("striped") for a in times(one)), "box.stripes 1: no striped rows unless asked")

# 2. K boxes of one worker each (40 Gbit/s): 16 hosts bring 16 S, each box sums 16 S / K.
N = 16
cl = dict(base, hosts_per_rack=N, box={"mode": "switch", "workers": 1, "rates": R})
for k in (1, 2, 4):
    t = times(dict(cl, box=dict(cl["box"], stripes=k)), "--algo", "striped")
    want = N * S / k / (40e9 / 8)
    check(near(t["striped"]["seconds"], want),
          f"{k} box(es) of 1 worker: striped {t['striped']['seconds']:.4f} s = N S / (K x 40 Gbit/s) ({want:.4f})")
# Enough boxes: the hosts' NICs bind, S / link.
t = times(dict(cl, box=dict(cl["box"], workers=8, stripes=8)), "--algo", "striped")
want = S * WIRE / 12.5e9
check(near(t["striped"]["seconds"], want),
      f"8 boxes of 8 workers: striped {t['striped']['seconds']:.4f} s = S / link ({want:.4f})")
# One-armed boxes: each its own ports (1 x 100 Gbit/s carry N S / K in and out).
t = times(dict(cl, box={"workers": 8, "ports": 1, "port_speed": "100Gbps", "rates": R, "stripes": 4}),
          "--algo", "striped")
want = N * S * WIRE / 4 / 12.5e9
check(near(t["striped"]["seconds"], want),
      f"4 one-armed boxes on 1 x 100 Gbit/s: {t['striped']['seconds']:.4f} s = N S / (K x port) ({want:.4f})")
# 3 channels over 2 boxes: box 0 has channels 0 and 2, 2/3 of S on 2 workers of its 4.
t = times(dict(cl, box={"mode": "switch", "workers": 4, "channels": 3, "rates": R, "stripes": 2}),
          "--algo", "striped")
want = N * S * 2 / 3 / (80e9 / 8)
check(near(t["striped"]["seconds"], want),
      f"3 channels over 2 boxes: {t['striped']['seconds']:.4f} s = N (2/3) S / 2 workers ({want:.4f})")
# Several GPUs: striped-parallel splits each local rank's share over the boxes.
par = dict(base, hosts_per_rack=8, gpus_per_host=4, intra="1000GBps", library_intra="1000GBps",
           box={"mode": "switch", "workers": 1, "rates": R})
t1 = times(par, "--algo", "striped-parallel")["striped-parallel"]
t4 = times(dict(par, box=dict(par["box"], stripes=4)), "--algo", "striped-parallel")["striped-parallel"]
check(near(t1["phases"][1] / t4["phases"][1], 4, 0.03),
      f"striped-parallel on 4 boxes: its box phase 1/4 ({t1['phases'][1]:.4f} / {t4['phases'][1]:.4f} s)")

# 3. --size's striped search: 16 hosts, servers of up to 8 workers (320 Gbit/s) on 8 x 100 Gbit/s.
sized = dict(base, hosts_per_rack=N, box={"workers": 8, "ports": 8, "port_speed": "100Gbps", "rates": R},
             step_cost=["0.5us", "10us"])
rows = plan(sized, "--size", "--stripes-only", "--factor", "1.5", "--max-cores", "8", "--max-ports", "8")
check(not any(r["kind"] == "size" for r in rows), "--stripes-only: no other layout")
ans = next(r for r in rows if r["kind"] == "stripes-answer")
srv = [r for r in rows if r["kind"] == "stripes" and not r["wire"]]
check(ans["servers"] and ans["speedup"] >= 1.5, f"--size 1.5: {ans['servers']} server(s), {ans.get('speedup')}x")
if ans["servers"]:
    half = [r for r in srv if r["servers"] == ans["servers"] // 2]
    check(ans["servers"] == 1 or (half and not half[0]["meets"]) or ans["servers"] // 2 in ans["skipped"],
          "--size: half as many servers miss the target (or cannot at their full rate)")
    direct = dict(sized, box=dict(sized["box"], workers=ans["workers"], ports=ans["ports"], stripes=ans["servers"]))
    t = times(direct, "--algo", ans["algo"])
    check(near(t[ans["algo"]]["speedup_best"], ans["speedup"], 1e-6),
          f"--size's striped answer is what the plan gives {ans['servers']} servers")
    fixed = next(r for r in plan(sized, "--size", "--stripes-only", "--fixed-server", "--factor", "1.5",
                                 "--max-cores", "8", "--max-ports", "8") if r["kind"] == "stripes-answer")
    check(fixed["workers"] == 8 and fixed["ports"] == 8 and fixed["servers"] == ans["servers"],
          "--fixed-server: the largest server, as many of them")
# None: 8-GPU hosts whose local phases (5 GB/s) bound the box algorithms (striped: 8 S on a NIC).
slow = dict(base, hosts_per_rack=4, gpus_per_host=8, intra="100GBps", library_intra="5GBps",
            box={"workers": 8, "ports": 8, "port_speed": "100Gbps", "rates": R})
a = next(r for r in plan(slow, "--size", "--stripes-only", "--fixed-server") if r["kind"] == "stripes-answer")
check(a["servers"] is None and a["most"] < 1.5 and a["bound"] == "the local phases"
      and near(a["local_seconds"] + a["nics_seconds"] + a["fabric_seconds"] + a["rest_seconds"] + a["staging_seconds"], a["most_seconds"],
               1e-6), f"none: bounded by the local phases, the time taken apart ({a['most']:.2f}x)")

# 4. The file's box.stripes, its errors; validate.py's boxes.
p = run(dict(base, hosts_per_rack=4, box={"stripes": 0}))
check(p.returncode == 2 and "box.stripes" in p.stderr, "box.stripes 0: an error naming it")
p = run(dict(base, hosts_per_rack=4), "--set", "box.stripes=2")
check(p.returncode == 0 and any(json.loads(l)["algo"] == "striped" for l in p.stdout.splitlines()),
      "--set box.stripes=2 reaches the cluster: striped rows")
sys.path.insert(0, os.path.join(ROOT, "sim"))
import validate  # noqa: E402
c, algo, label, _ = validate.case({"tbalgo": "netreduce", "ranks": 4, "rate_mbit": 100, "boxes": 2})
check(algo == "striped" and c["box"]["stripes"] == 2 and "2 boxes" in label,
      "validate.py: a row of 2 boxes is the striped model over 2 boxes")
c, algo, _, _ = validate.case({"tbalgo": "netreduce", "ranks": 4, "rate_mbit": 100})
check(algo == "box" and "stripes" not in c["box"], "validate.py: a row without boxes is one box")
check(c["nic"] == "100Mbps", "validate.py: a row of one box keeps its link's rate")
c, algo, _, _ = validate.case({"tbalgo": "netreduce", "ranks": 4, "rate_mbit": 100, "boxes": 2})
check(c["nic"] == "200Mbps", "validate.py: a shaped row of 2 boxes has 2 rails of the rate a host: one NIC of 200 Mbit/s")
c, algo, _, _ = validate.case({"tbalgo": "ring", "ranks": 4, "rate_mbit": 100, "boxes": 2})
check(algo == "ring" and c["nic"] == "100Mbps", "validate.py: the ring of a 2-box launch keeps rail 0")
c, algo, _, _ = validate.case({"tbalgo": "netreduce", "ranks": 4, "rate_mbit": 0, "boxes": 2})
check(algo == "striped" and "nic" not in c, "validate.py: an unshaped row of 2 boxes: the fitted soft rate, no rails")
_, _, label, _ = validate.case({"tbalgo": "netreduce", "ranks": 4, "rate_mbit": 0, "part": "boxes"})
check("1 box" in label and not validate.fit_set({"label": label, "bytes": 4 << 20}),
      "validate.py: the boxes part's one-box rows are labelled apart and are not in the fit set")
with tempfile.TemporaryDirectory() as d:
    for name, head in (("intel", "# 2 CPUs (Intel(R) Xeon(R) Processor)"), ("amd", "# a 2-vCPU AMD EPYC guest"),
                       ("none", "# a machine")):
        with open(os.path.join(d, name), "w") as f:
            f.write(head + '\n{"tbalgo": "netreduce", "ranks": 4, "rate_mbit": 100, "bytes": 4096, "time_us": 1}\n')
    rates = {n: os.path.basename(validate.case(validate.load([os.path.join(d, n)])[0])[0]["box"]["rates"])
             for n in ("intel", "amd", "none")}
check(rates == {"intel": "xeon-2vcpu.jsonl", "amd": "epyc-2vcpu.jsonl", "none": "epyc-2vcpu.jsonl"},
      f"validate.py: the box's rates of the machine a file's header names ({rates})")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
