#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gloo_stream.py: Gloo's TCP transport between two ranks, both ways at once,
in Gbit/s a core: nr-tp-perf's counterpart (bench/transport/README.md).

Each rank sends --bytes to the other in --msg tensors with torch.distributed's
isend/irecv on the "gloo" backend, --depth of them in flight each way, and
divides what it sent by the CPU time of its process (user + system, every
thread: Gloo's own included).  Rank 0 prints both ranks' figures, in
nr-tp-perf's format (--json: its JSON lines, "transport":"gloo").

  gloo_stream.py --loopback [--bytes 1G] [--msg 4M]        two processes on 127.0.0.1
  MASTER_ADDR=.. MASTER_PORT=.. RANK=r WORLD_SIZE=2 gloo_stream.py   one rank

With NR_ROOT/NR_RANK/NR_ADDR set (the testbed's hosts) and no MASTER_ADDR, the
rendezvous is NR_ROOT's address on port + 1, Gloo bound to NR_ADDR's interface.
Figures only; exit 0 done, 1 a wrong stamp, 2 an error.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time


def size_arg(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s and s[-1].upper() in mult:
        return int(s[:-1]) * mult[s[-1].upper()]
    return int(s)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def iface_of(addr):
    """The interface holding addr (for GLOO_SOCKET_IFNAME), or None."""
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in out.splitlines():
        f = line.split()
        if len(f) > 3 and f[3].split("/")[0] == addr:
            return f[1]
    return None


def rank_main(a):
    import torch
    import torch.distributed as dist

    if "MASTER_ADDR" not in os.environ and os.environ.get("NR_ROOT"):
        host, port = os.environ["NR_ROOT"].rsplit(":", 1)
        os.environ["MASTER_ADDR"] = host
        os.environ["MASTER_PORT"] = str(int(port) + 1)
        os.environ["RANK"] = os.environ.get("NR_RANK", "0")
        os.environ["WORLD_SIZE"] = "2"
        ifn = iface_of(os.environ.get("NR_ADDR", ""))
        if ifn:
            os.environ["GLOO_SOCKET_IFNAME"] = ifn
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    if world != 2:
        sys.exit("gloo_stream.py: WORLD_SIZE must be 2")
    peer = 1 - rank
    n = (a.bytes + a.msg - 1) // a.msg
    count = a.msg // 4
    send = [torch.full((count,), float(k), dtype=torch.float32) for k in range(a.depth)]
    recv = [torch.empty(count, dtype=torch.float32) for _ in range(a.depth)]
    dist.barrier()
    t0 = time.monotonic()
    u0, s0 = cpu()
    pend, wrong = [], 0
    for k in range(n):
        slot = k % a.depth
        if len(pend) == a.depth:
            j, sw, rw = pend.pop(0)
            sw.wait()
            rw.wait()
            if recv[j % a.depth][0].item() != float(j % a.depth):
                wrong += 1
        pend.append((k, dist.isend(send[slot], peer), dist.irecv(recv[slot], peer)))
    for j, sw, rw in pend:
        sw.wait()
        rw.wait()
        if recv[j % a.depth][0].item() != float(j % a.depth):
            wrong += 1
    wall = time.monotonic() - t0
    u1, s1 = cpu()
    dist.barrier()
    mine = {"bench": "tp", "transport": "gloo", "label": a.label, "rank": rank, "mtu": 0,
            "msg": a.msg, "depth": a.depth, "qps": 1, "window": 0, "bytes": n * a.msg,
            "wall_s": wall, "cpu_s": u1 - u0 + s1 - s0, "user_s": u1 - u0, "sys_s": s1 - s0,
            "wrong": wrong}
    mine["gbps_wall"] = mine["bytes"] * 8 / 1e9 / wall
    mine["gbps_core"] = mine["bytes"] * 8 / 1e9 / mine["cpu_s"]
    objs = [None, None]
    dist.all_gather_object(objs, mine)
    if rank == 0:
        for o in objs:
            if a.json:
                print(json.dumps(o), flush=True)
            else:
                print("rank %d: gloo: %.3f GB each way in %.3f s wall (%.2f Gbit/s), CPU %.3f s "
                      "(user %.3f sys %.3f): %.2f Gbit/s a core each way, wrong %d"
                      % (o["rank"], o["bytes"] / 1e9, o["wall_s"], o["gbps_wall"], o["cpu_s"],
                         o["user_s"], o["sys_s"], o["gbps_core"], o["wrong"]), flush=True)
    dist.destroy_process_group()
    return 1 if any(o["wrong"] for o in objs) else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loopback", action="store_true", help="both ranks here, on 127.0.0.1")
    p.add_argument("--bytes", type=size_arg, default=1 << 30, help="bytes each way (1G)")
    p.add_argument("--msg", type=size_arg, default=4 << 20, help="bytes a tensor (4M)")
    p.add_argument("--depth", type=int, default=4, help="tensors in flight each way (4)")
    p.add_argument("--label", default="")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if not a.loopback:
        return rank_main(a)
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT="29613", WORLD_SIZE="2",
               GLOO_SOCKET_IFNAME="lo")
    env.pop("NR_ROOT", None)
    args = [sys.executable, os.path.abspath(__file__)] + [x for x in sys.argv[1:]
                                                           if x != "--loopback"]
    procs = [subprocess.Popen(args, env=dict(env, RANK=str(r))) for r in (0, 1)]
    rc = [q.wait() for q in procs]
    return max(rc)


if __name__ == "__main__":
    sys.exit(main())
