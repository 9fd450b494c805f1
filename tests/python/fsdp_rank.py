#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One rank of e2e torch-train-fsdp (tests/python/e2e_torch.sh): an MLP wrapped in
FSDP (FullyShardedDataParallel, on the CPU: torch 2.x) learns a task of its own (4
classes a fixed random linear teacher gives 32 inputs: chance 0.25) on the backend
given, each rank its own deterministic batches.  Prints "RESULT {json}": the mean
loss of every step (all-reduced), the accuracy on 512 held-out inputs, the full
parameters at the end (summon_full_params) as a hex digest (the same bits on every
rank), netreduce.torch.stats()'s counts of what went through netreduce, to Gloo
and was delegated, and the netreduce communicators the process holds.  --hsdp:
HSDP instead (HYBRID_SHARD on a 2 x world/2 DeviceMesh, "replicate" x "shard").
Usage: fsdp_rank.py BACKEND [STEPS] [--hsdp]      (BACKEND: netreduce or gloo)"""
import hashlib
import json
import sys

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

import netreduce.torch


def main():
    hsdp = "--hsdp" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--hsdp"]
    backend = args[0]
    steps = int(args[1]) if len(args) > 1 else 8
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)   # the same initial parameters on every rank and backend
    model = torch.nn.Sequential(torch.nn.Linear(32, 96), torch.nn.ReLU(),
                                torch.nn.Linear(96, 96), torch.nn.ReLU(), torch.nn.Linear(96, 4))
    if hsdp:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import ShardingStrategy
        mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
        model = FSDP(model, device_id=torch.device("cpu"), use_orig_params=True,
                     device_mesh=mesh, sharding_strategy=ShardingStrategy.HYBRID_SHARD)
    else:
        model = FSDP(model, device_id=torch.device("cpu"), use_orig_params=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    # the task: 4 classes a fixed random teacher gives 32 inputs (learnable; chance 0.25)
    teacher = torch.randn(32, 4, generator=torch.Generator().manual_seed(7))
    g = torch.Generator().manual_seed(100 + rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(32, 32, generator=g)
        y = (x @ teacher).argmax(1)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        dist.all_reduce(t)
        losses.append(t.item() / world)
    # accuracy on held-out inputs, the same on every rank (FSDP's forward gathers)
    xe = torch.randn(512, 32, generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        acc = (model(xe).argmax(1) == (xe @ teacher).argmax(1)).float().mean().item()
    st = netreduce.torch.stats()
    with FSDP.summon_full_params(model):
        h = hashlib.sha256()
        for p in model.parameters():
            # a copy: numpy's view of the parameter itself would pin its storage,
            # which FSDP frees when the context ends
            h.update(p.detach().clone().numpy().tobytes())
        digest = h.hexdigest()[:16]
    print("RESULT " + json.dumps({"rank": rank, "backend": backend, "losses": losses,
                                  "accuracy": acc, "params": digest,
                                  "netreduce": st["netreduce"], "gloo": st.get("gloo", {}),
                                  "delegated": st.get("delegated", {}),
                                  "library": st.get("library", {}),
                                  "workers": st["communicators"]}), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
