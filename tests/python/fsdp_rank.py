#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One rank of e2e torch-train-fsdp (tests/python/e2e_torch.sh): an MLP wrapped in
FSDP (FullyShardedDataParallel, on the CPU: torch 2.x) trains a few steps on the
backend given, each rank its own deterministic batches.  Prints "RESULT {json}":
the mean loss of every step (all-reduced), and netreduce.torch.stats()'s counts
of what went through netreduce, to Gloo and was delegated.
Usage: fsdp_rank.py BACKEND [STEPS]      (BACKEND: netreduce or gloo)"""
import json
import sys

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

import netreduce.torch


def main():
    backend = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)   # the same initial parameters on every rank and backend
    model = torch.nn.Sequential(torch.nn.Linear(32, 96), torch.nn.ReLU(),
                                torch.nn.Linear(96, 96), torch.nn.ReLU(), torch.nn.Linear(96, 4))
    model = FSDP(model, device_id=torch.device("cpu"), use_orig_params=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 32, generator=g)
        y = torch.randint(0, 4, (16,), generator=g)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        dist.all_reduce(t)
        losses.append(t.item() / world)
    st = netreduce.torch.stats()
    print("RESULT " + json.dumps({"rank": rank, "backend": backend, "losses": losses,
                                  "netreduce": st["netreduce"], "gloo": st.get("gloo", {}),
                                  "delegated": st.get("delegated", {}),
                                  "library": st.get("library", {})}), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
