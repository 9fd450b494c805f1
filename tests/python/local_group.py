#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One rank of e2e torch-local-group (tests/python/e2e_torch.sh): hosts with
several ranks (LOCAL_WORLD_SIZE), all-reduces on backend "netreduce" through
the local-group path (NR_TORCH_LOCAL=group: local phases on Gloo, the box for
the shares) or the library's (NR_TORCH_LOCAL=library, NR_LOCAL_SIZE's shared
memory).  Every rank's inputs are integers, so any summation order gives the
same bits: each result is checked bit for bit against the exact sum (bf16
rounded once from it), and its digest printed to compare across ranks.
Prints "RESULT {json}": the checks, the median time of each size, and
netreduce.torch.stats()'s counts.
Usage: local_group.py"""
import hashlib
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

import netreduce.torch

# name, elements, dtype, op, timed iterations
CASES = (("fp32 1 MiB", 1 << 18, torch.float32, "sum", 5),
         ("fp32 16 MiB", 1 << 22, torch.float32, "sum", 3),
         ("fp32 odd", 262147, torch.float32, "sum", 1),
         ("fp32 avg", 4099, torch.float32, "avg", 1),
         ("bf16 2 MiB", 1 << 20, torch.bfloat16, "sum", 3))


def shard_input(r, n):
    """Rank r's all-gather input: n float32, -0.0 first, a NaN with a payload of
    its own second (a float sum would make +0.0 and quiet it), then r + 0.5."""
    x = torch.full((n,), r + 0.5)
    x[0] = -0.0
    x.view(torch.int32)[1] = 0x7F800001 + r    # a signalling NaN's bits
    return x


def sharded(rank, world):
    """FSDP's collectives through the local-group path: reduce-scatters (the
    share exact, the input left as it was) and all-gathers (every rank's bytes
    back unchanged, -0.0 and NaN payloads too), both forms."""
    checks = {}
    for name, n, dtype, op in (("rs fp32", 1 << 16, torch.float32, "sum"),
                               ("rs fp32 avg", 4099, torch.float32, "avg"),
                               ("rs bf16", 1 << 15, torch.bfloat16, "sum")):
        base = (torch.arange(n * world) % 89).double()
        want = base * world + world * (world - 1) / 2
        if op == "avg":
            want = want / world
        x = (base + rank).to(dtype)
        got = torch.empty(n, dtype=dtype)
        dist.reduce_scatter_tensor(got, x, op=dist.ReduceOp.AVG if op == "avg" else
                                   dist.ReduceOp.SUM)
        checks[name] = bool(torch.equal(got, want[rank * n:(rank + 1) * n].to(dtype)) and
                            torch.equal(x, (base + rank).to(dtype)))
    n = 5003
    want = torch.cat([shard_input(r, n) for r in range(world)]).view(torch.int32)
    got = torch.empty(n * world)
    dist.all_gather_into_tensor(got, shard_input(rank, n))
    checks["ag into tensor"] = bool(torch.equal(got.view(torch.int32), want))
    parts = [torch.empty(n) for _ in range(world)]
    dist.all_gather(parts, shard_input(rank, n))
    checks["ag list"] = bool(torch.equal(torch.cat(parts).view(torch.int32), want))
    return checks


def hooked(rank, world):
    """DDP with netreduce's comm hooks (hook_state(), as examples/train.py): the
    gradient averaged over every rank of every host, exact."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    checks = {}
    for name, hook in (("ddp hook", netreduce.torch.allreduce_hook),
                       ("ddp bf16 hook", netreduce.torch.bf16_hook)):
        model = torch.nn.Linear(8, 1, bias=False)
        ddp = DDP(model)
        ddp.register_comm_hook(netreduce.torch.hook_state(), hook)
        ddp(torch.full((1, 8), float(rank + 1))).sum().backward()
        checks[name] = bool(torch.equal(model.weight.grad, torch.full((1, 8), (world + 1) / 2)))
    return checks


def main():
    dist.init_process_group("netreduce")
    rank, world = dist.get_rank(), dist.get_world_size()
    mode = os.environ.get("NR_TORCH_LOCAL") or "library"
    out = {"rank": rank, "mode": mode, "checks": {}, "ms": {}, "digest": {}}
    for name, n, dtype, op, iters in CASES:
        if dtype != torch.float32 and mode == "library":
            continue   # the library's local phases sum float32 only (Gloo's then, none on 1.13)
        base = (torch.arange(n) % 97).double()
        want = base * world + world * (world - 1) / 2        # the sum of base + r over the ranks
        if op == "avg":
            want = want / world
        want = want.to(dtype)
        times, x = [], None
        for _ in range(iters):
            x = (base + rank).to(dtype)
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x, op=dist.ReduceOp.AVG if op == "avg" else dist.ReduceOp.SUM)
            times.append(time.perf_counter() - t0)
        out["checks"][name] = bool(torch.equal(x, want))
        out["ms"][name] = statistics.median(times) * 1e3
        out["digest"][name] = hashlib.sha256(x.view(torch.uint8).numpy().tobytes()).hexdigest()[:16]
    # a collective the backend hands to Gloo waits for those issued before it
    n = 1 << 18
    base = (torch.arange(n) % 97).float()
    x = base + rank
    w = dist.all_reduce(x, async_op=True)
    y = x if rank == 0 else torch.empty_like(x)   # rank 0 sends x: its sum, not its input
    dist.broadcast(y, src=0)
    w.wait()
    want = base * world + world * (world - 1) / 2
    out["checks"]["gloo after"] = bool(torch.equal(x, want) and torch.equal(y, want))
    if mode == "group":
        out["checks"].update(sharded(rank, world))
    out["checks"].update(hooked(rank, world))
    st = netreduce.torch.stats()
    out.update(netreduce=st["netreduce"], gloo=st.get("gloo", {}), delegated=st.get("delegated", {}),
               library=st.get("library", {}))
    print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
