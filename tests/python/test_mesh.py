#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The backend's groups as c10d names them, on torch 2.x: 2 ranks over loopback
(127.0.1.1-2, the library's ring, no root, no box) make a DeviceMesh, a DTensor and
functional collectives on backend="netreduce"; each sum is
exact and every all-reduce and reduce-scatter they issue reaches libnetreduce (its
call count grows by each), the all-gathers go to Gloo, counted; a new_group beside it is a netreduce
group with a communicator of its own (the process's two communicators share the
soft transport's socket), its all-reduce exact and through the library too, none
delegated (e2e torch2-train-hsdp: a 2 x 2 mesh through the box).  Before the
groups kept their name, init_device_mesh failed with "ProcessGroup name not set";
before the soft transport shared its socket, a subgroup's collectives went to Gloo.
Usage: test_mesh.py            (spawns the ranks; skips on torch 1.13: no DeviceMesh)"""
import json
import os
import random
import socket
import subprocess
import sys

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("SKIP: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

WORLD = 2


def library_calls():
    import netreduce.torch
    lib = netreduce.torch.stats()["library"]
    return lib.get("ring_calls", 0) + lib.get("box_calls", 0)


def rank_main():
    import netreduce.torch  # registers the backend
    from torch.distributed.device_mesh import init_device_mesh
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.tensor import DTensor, Partial, Replicate

    dist.init_process_group("netreduce")
    rank, out = dist.get_rank(), {}
    pg = dist.group.WORLD
    out["name"] = pg.group_name == dist.distributed_c10d._get_process_group_name(pg)
    ones = torch.arange(8, dtype=torch.float32) * (rank + 1)
    want = torch.arange(8, dtype=torch.float32) * 3          # ranks 1 and 2 times the same
    calls0 = library_calls()

    # a subgroup: a communicator of its own beside the world group's
    sub = dist.new_group([0, 1])
    t = ones.clone()
    dist.all_reduce(t, group=sub)
    out["new_group"] = torch.equal(t, want) and bool(sub.group_name)
    out["sub_type"] = type(sub).__name__
    out["sub_worker"] = getattr(sub, "worker", None) is not None and \
        sub.worker is not pg.worker

    mesh = init_device_mesh("cpu", (WORLD,))
    out["mesh_group"] = type(mesh.get_group()).__name__
    dt = DTensor.from_local(ones.clone(), mesh, [Partial()])
    out["dtensor"] = torch.equal(dt.redistribute(mesh, [Replicate()]).to_local(), want)
    ar = funcol.all_reduce(ones.clone(), "sum", mesh)
    out["funcol_all_reduce"] = torch.equal(ar.wait() if hasattr(ar, "wait") else ar, want)
    # the library's reduce-scatter reads the input where it is and leaves it so
    src = ones.clone()
    rs = funcol.reduce_scatter_tensor(src, "sum", 0, mesh)
    rs = rs.wait() if hasattr(rs, "wait") else rs
    out["funcol_reduce_scatter"] = torch.equal(rs, want[rank * 4:(rank + 1) * 4]) and \
        torch.equal(src, ones)
    rs = funcol.reduce_scatter_tensor(ones.clone(), "avg", 0, mesh)
    rs = rs.wait() if hasattr(rs, "wait") else rs
    out["funcol_reduce_scatter_avg"] = torch.equal(rs, want[rank * 4:(rank + 1) * 4] / 2)
    ag = funcol.all_gather_tensor(ones[:4].clone(), 0, mesh)
    ag = ag.wait() if hasattr(ag, "wait") else ag
    out["funcol_all_gather"] = torch.equal(ag, torch.cat([torch.arange(4.0), torch.arange(4.0) * 2]))
    out["library_calls"] = library_calls() - calls0
    out["stats"] = netreduce.torch.stats()["netreduce"]
    out["delegated"] = netreduce.torch.stats()["delegated"]
    out["gloo"] = netreduce.torch.stats().get("gloo", {})
    # what netreduce refuses (float64) goes to Gloo, AVG too: Gloo has none
    # ("Cannot use ReduceOp.AVG with Gloo"), so its SUM, then divided
    mean = sum(range(1, WORLD + 1)) / WORLD
    src = torch.full((4 * WORLD,), float(rank + 1), dtype=torch.float64)
    rs64 = torch.empty(4, dtype=torch.float64)
    dist.reduce_scatter_tensor(rs64, src, op=dist.ReduceOp.AVG)
    dist.all_reduce(src, op=dist.ReduceOp.AVG)
    red = torch.full((3,), float(rank + 1))   # a reduce is Gloo's: AVG on its root alone
    dist.reduce(red, dst=WORLD - 1, op=dist.ReduceOp.AVG)
    out["gloo_avg"] = torch.equal(rs64, torch.full_like(rs64, mean)) and \
        torch.equal(src, torch.full_like(src, mean)) and \
        (rank != WORLD - 1 or torch.equal(red, torch.full_like(red, mean)))
    dist.barrier()
    dist.destroy_process_group()
    print("RESULT " + json.dumps(out), flush=True)


def main():
    if int(torch.__version__.split(".")[0]) < 2:
        print(f"SKIP: torch {torch.__version__} has no DeviceMesh (the torch2 suite runs this)")
        return 77
    with socket.socket() as s:   # free on every address: the store binds 0.0.0.0 and ::
        s.bind(("", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NR_")}
    env.update(MASTER_ADDR="127.0.1.1", MASTER_PORT=str(port), WORLD_SIZE=str(WORLD),
               GLOO_SOCKET_IFNAME="lo", NR_UDP_PORT=str(random.randint(20000, 30000)),
               NR_TIMEOUT_MS="20000", USE_LIBUV="0")
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank"],
                              env=dict(env, RANK=str(r), NR_ADDR=f"127.0.1.{r + 1}"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(WORLD)]
    fails, results = [], []
    for r, p in enumerate(procs):
        try:
            text, _ = p.communicate(timeout=150)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            text, _ = p.communicate()
            fails.append(f"rank {r}: still running after 150 s")
        print(f"---- rank {r} (exit {p.returncode})\n{text.strip()}")
        lines = [ln for ln in text.splitlines() if ln.startswith("RESULT ")]
        if p.returncode != 0 or not lines:
            fails.append(f"rank {r} exited {p.returncode}")
            continue
        results.append(json.loads(lines[-1][7:]))
    for r, out in enumerate(results):
        for k in ("name", "new_group", "dtensor", "funcol_all_reduce", "funcol_reduce_scatter",
                  "funcol_reduce_scatter_avg", "funcol_all_gather", "gloo_avg"):
            if out.get(k) is not True:
                fails.append(f"rank {r}: {k}: {out.get(k)}")
        if out["mesh_group"] != "ProcessGroupNetreduce":
            fails.append(f"rank {r}: the mesh's group is a {out['mesh_group']}")
        if out["sub_type"] != "ProcessGroupNetreduce" or out["sub_worker"] is not True:
            fails.append(f"rank {r}: the subgroup is a {out['sub_type']}, a communicator of "
                         f"its own: {out['sub_worker']}")
        if out["delegated"]:
            fails.append(f"rank {r}: delegated to Gloo: {out['delegated']}")
        # the subgroup's all-reduce, the DTensor's, funcol's and its two
        # reduce-scatters: each one call of the library (the all-gather is
        # Gloo's: no box, the ring gathers nothing)
        if out["library_calls"] != 5:
            fails.append(f"rank {r}: {out['library_calls']} library calls, expected 5 "
                         f"(netreduce: {out['stats']})")
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        print(f"PASS: DeviceMesh, DTensor and functional collectives on netreduce, "
              f"exact; library calls a rank {[o['library_calls'] for o in results]}")
    return 1 if fails else 0


if __name__ == "__main__":
    if "--rank" in sys.argv:
        rank_main()
    else:
        sys.exit(main())
