# SPDX-License-Identifier: BSD-3-Clause
"""netreduce for PyTorch.

    import netreduce.torch                          # registers the c10d backend
    dist.init_process_group("netreduce")            # env:// or tcp:// as usual

or keep Gloo/NCCL and route DDP's gradient buckets only:

    model.register_comm_hook(None, netreduce.torch.allreduce_hook)

Settings from the environment: NR_SWITCH, NR_TOKEN (the box), NR_ALGO (box or
ring), NR_JOB (a name in error messages), NR_TIMEOUT_MS, NR_ADDR, NR_ROOT and
the other NR_* of libnetreduce (host/README.md), which reach the library
unchanged: NR_LOCAL_SIZE / NR_HIER (hosts with several ranks, ranks host by
host as torchrun numbers them) and NR_RACKS (a job across racks).

The communicators are destroyed at exit (collective: every rank exits);
shutdown() does it earlier, e.g. before a second init_process_group.
"""
import torch.distributed as dist

from ..comm import NetreduceError
from .backend import BACKEND, ProcessGroupNetreduce, create
from .engine import Engine, shutdown
from .hook import allreduce_hook, hook_state

__all__ = ["BACKEND", "Engine", "NetreduceError", "ProcessGroupNetreduce", "allreduce_hook",
           "hook_state", "shutdown"]

if not hasattr(dist.Backend, BACKEND.upper()):
    dist.Backend.register_backend(BACKEND, create)
