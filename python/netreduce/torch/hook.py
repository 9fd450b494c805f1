# SPDX-License-Identifier: BSD-3-Clause
"""DDP communication hook: gradient buckets through netreduce, whatever the
process group's backend (Gloo, NCCL):

    model.register_comm_hook(None, netreduce.torch.allreduce_hook)

state None uses one communicator for the process, created from the default
process group (its rank, size and store) on the first bucket; hook_state()
creates it up front instead.  For DDP on the default group (not a subgroup).
The hook averages, as DDP's default hook does: it sums the bucket over the
ranks and divides by the world size.  float32 buckets go through netreduce,
on the CPU or a CUDA device (staged through pinned host memory in chunks,
staging.py); other buckets go through the process group, with a warning once
(counters.py), or raise with NR_STRICT=1.  With NR_SHORT_PPM (the job's bound
on short packets) the buckets go tolerant: the box may complete a packet of
theirs without one rank's lost contribution, within the bound
(nr_allreduce_flags, NR_MSG_TOLERANT); every other all-reduce stays exact.
"""
import threading

import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

from .backend import refusal
from .engine import Engine
from .counters import STATS, kind

_lock = threading.Lock()
_default = None


def hook_state():
    """The Engine the hook uses: the default (world) group's ranks, through its
    store.  Collective on the first call: every rank calls it."""
    global _default
    with _lock:
        if _default is None or _default.closed:
            store = c10d._get_default_store()
            _default = Engine(store, dist.get_rank(), dist.get_world_size(), "netreduce-hook")
        return _default


def allreduce_hook(state, bucket):
    """DDP comm hook: average bucket.buffer() over the ranks through netreduce."""
    engine = state if isinstance(state, Engine) else hook_state()
    buf = bucket.buffer()
    why = refusal([buf], "AVG", engine.comm.topology)
    if why:
        STATS.delegate(kind("ddp_bucket", "AVG", buf), buf.numel() * buf.element_size(), why,
                       engine.rank, engine.job)
        fut = dist.all_reduce(buf.div_(engine.world), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])
    return engine.submit(buf, "AVG", as_list=False, kind=kind("ddp_bucket", "AVG", buf),
                         tolerant=engine.tolerant)
