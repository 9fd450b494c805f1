# SPDX-License-Identifier: BSD-3-Clause
"""DDP communication hook: gradient buckets through netreduce, whatever the
process group's backend (Gloo, NCCL):

    model.register_comm_hook(None, netreduce.torch.allreduce_hook)

state None uses one communicator for the process, created from the default
process group (its rank, size and store) on the first bucket; hook_state()
creates it up front instead.  For DDP on the default group (not a subgroup).
The hook averages, as DDP's default hook does: it sums the bucket over the
ranks and divides by the world size.  Buckets that netreduce cannot take (not
float32) go through the process group.  Buckets on a GPU are staged through
host memory (untested: no GPU where this was written).
"""
import threading

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

from .engine import Engine

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
    if buf.dtype != torch.float32:
        fut = dist.all_reduce(buf.div_(engine.world), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])
    if buf.device.type == "cpu":
        return engine.submit(buf, average=True, as_list=False)
    host = buf.to("cpu")

    def back(f):
        return buf.copy_(f.value())
    return engine.submit(host, average=True, as_list=False).then(back)
