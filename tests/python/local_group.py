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
    st = netreduce.torch.stats()
    out.update(netreduce=st["netreduce"], gloo=st.get("gloo", {}), delegated=st.get("delegated", {}),
               library=st.get("library", {}))
    print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
