# SPDX-License-Identifier: BSD-3-Clause
"""netreduce for PyTorch (1.13 and 2.x).

    import netreduce.torch                          # registers the c10d backend
    dist.init_process_group("netreduce")            # env:// or tcp:// as usual

or keep Gloo/NCCL and route DDP's gradient buckets only:

    model.register_comm_hook(None, netreduce.torch.allreduce_hook)
    model.register_comm_hook(None, netreduce.torch.bf16_hook)   # as bfloat16: half the bytes

float32, bfloat16 and float16 all-reduces with SUM or AVG (float32 with MAX),
on the CPU or a CUDA device, go through libnetreduce (16-bit: summed in FP32
and rounded once through the box); the rest goes to Gloo (backend.py), with a warning once per kind
of all-reduce it could not take, or an error with NR_STRICT=1.  stats() says
what went where, with libnetreduce's own counters; report() gives the job's
communication share and what the box can bring at that share (rank 0 prints
it at exit; NR_REPORT=0: not).

Settings from the environment: NR_BOX, NR_TOKEN (the box), NR_ALGO (box or
ring), NR_JOB (a name in error messages), NR_TIMEOUT_MS, NR_ADDR, NR_ROOT,
NR_STRICT, NR_REPORT, NR_STAGE_CHUNK_KB (GPU staging) and the other NR_* of
libnetreduce (host/README.md), which reach the library unchanged:
NR_LOCAL_SIZE / NR_HIER (hosts with several ranks, ranks host by host as
torchrun numbers them; under torchrun LOCAL_WORLD_SIZE and LOCAL_RANK give
them), NR_RACKS (a job across racks) and NR_SHORT_PPM (the bound on tolerant
messages: with tolerant_hook, DDP's gradient buckets may have packets
completed short within it; everything else stays exact).  health() says whether this rank's QPs are
healthy.

The communicators are destroyed at exit (collective: every rank exits);
shutdown() does it earlier, e.g. before a second init_process_group.
"""
import inspect

import torch.distributed as dist

from ..comm import NetreduceError
from .backend import BACKEND, ProcessGroupNetreduce, create
from .worker import Worker, health, report, shutdown, stats
from .hook import allreduce_hook, bf16_hook, fp16_hook, hook_state, tolerant_hook
from .counters import NetreduceFallbackWarning, NetreduceUnsupported

__all__ = ["BACKEND", "Worker", "NetreduceError", "NetreduceFallbackWarning",
           "NetreduceUnsupported", "ProcessGroupNetreduce", "allreduce_hook", "bf16_hook",
           "fp16_hook", "health", "tolerant_hook",
           "hook_state", "report", "shutdown", "stats"]

if not hasattr(dist.Backend, BACKEND.upper()):
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        dist.Backend.register_backend(BACKEND, create, devices=["cpu", "cuda"])   # torch 2.x
    else:
        dist.Backend.register_backend(BACKEND, create)                            # torch 1.13
