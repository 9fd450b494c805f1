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
(counters.py), or raise with NR_STRICT=1.

bf16_hook and fp16_hook send the float32 gradients as 16-bit elements, half
the bytes, as torch's bf16_compress_hook and fp16_compress_hook do for Gloo
and NCCL: each rank rounds its bucket once to the type, the box sums the
ranks' elements in FP32 in rank order and rounds the sum once, and the hook
writes it back as float32 divided by the world size (in float32: torch's hooks
divide in 16 bits before the sum, one rounding more); on hosts of several
ranks or racks (whose phases sum float32) the rounded elements go widened to
float32, the same sum rounded once, twice the bytes.  With NR_SHORT_PPM (the job's bound
on short packets) the buckets go tolerant: the box may complete a packet of
theirs without one rank's lost contribution, within the bound
(nr_allreduce_flags, NR_MSG_TOLERANT); every other all-reduce stays exact.
With NR_PRIO_CLASSES the tolerant buckets go in priority classes by their
place: DDP numbers its buckets from the output side (bucket 0, ready first
in the backward pass) to the input side, whose gradients the next forward
pass needs first, so the input side's buckets take the highest class
(bucket_class); buckets queued together then run at once, each on its
class's box channel.  stats()["buckets"] keeps each bucket's latency.
Where the default group composes its collectives (NR_TORCH_LOCAL=group,
local.py), hook_state() is None and the hooks all-reduce through the group
(its local phases and the box; exact, no bound, no classes).
"""
import threading

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

from .accept import refusal
from .backend import ProcessGroupNetreduce
from .worker import Worker
from .counters import STATS, kind

_lock = threading.Lock()
_default = None
_nbuckets = 0      # DDP's buckets in an iteration (learned from bucket.is_last())


def bucket_class(index, nbuckets, classes):
    """The priority class of DDP bucket index of nbuckets with classes classes:
    the output side's (index 0) the lowest, the input side's the highest, the
    buckets spread evenly; 0 while nbuckets is unknown or without classes."""
    if classes < 2 or nbuckets < 1:
        return 0
    return min(classes - 1, index * classes // nbuckets)


def hook_state():
    """The Worker the hooks use: the default group's when its backend is
    netreduce, else one of the default (world)
    group's ranks, through its store.  Collective on the first call: every
    rank calls it.  None where the default group composes its collectives
    (NR_TORCH_LOCAL=group: a rank's worker is its column's): the hooks then
    all-reduce through the group, its local phases and the box."""
    global _default
    pg = c10d._get_default_group()
    if isinstance(pg, ProcessGroupNetreduce):
        return None if pg.composed else pg.worker
    with _lock:
        if _default is None or _default.closed:
            store = c10d._get_default_store()
            _default = Worker(store, dist.get_rank(), dist.get_world_size(), "netreduce-hook")
        return _default


def _average(state, bucket, tolerant):
    global _nbuckets
    worker = state if isinstance(state, Worker) else hook_state()
    buf = bucket.buffer()
    if worker is None:   # NR_TORCH_LOCAL=group: through the group (local.py), exact
        fut = dist.all_reduce(buf, op=dist.ReduceOp.AVG, async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])
    index = bucket.index()
    if bucket.is_last():
        _nbuckets = index + 1
    cls = bucket_class(index, _nbuckets, worker.comm.classes) if tolerant else None
    why = refusal([buf], "AVG", worker.comm.topology)
    if why:
        STATS.delegate(kind("ddp_bucket", "AVG", buf), buf.numel() * buf.element_size(), why,
                       worker.rank, worker.job)
        fut = dist.all_reduce(buf.div_(worker.world), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])
    return worker.submit(buf, "AVG", as_list=False, kind=kind("ddp_bucket", "AVG", buf),
                         tolerant=tolerant, cls=cls, bucket=index)


def allreduce_hook(state, bucket):
    """DDP comm hook: average bucket.buffer() over the ranks through netreduce, exact."""
    return _average(state, bucket, False)


def tolerant_hook(state, bucket):
    """As allreduce_hook, the buckets tolerant: with the job's bound (NR_SHORT_PPM)
    the box may complete a packet a rank lost without its contribution, at most
    that many packets per million of a bucket; without one (or where the library
    cannot mark a message) exact all the same, counted (stats()["library"]:
    tolerant_calls, tolerant_exact_calls)."""
    return _average(state, bucket, True)


def _compressed_hook(state, bucket, dtype, name):
    """A 16-bit comm hook: bucket.buffer() (float32) rounded to dtype, summed
    through netreduce, written back as float32 divided by the world size."""
    worker = state if isinstance(state, Worker) else hook_state()
    buf = bucket.buffer()
    if buf.dtype != torch.float32:
        raise TypeError(f"netreduce.torch.{name}: DDP's bucket is {buf.dtype}, the hook "
                        "compresses float32 gradients (use allreduce_hook for other types)")
    half = buf.to(dtype)
    why = None if worker is None else refusal([half], "SUM", worker.comm.topology)
    if worker is None:   # NR_TORCH_LOCAL=group: through the group (local.py)
        fut = dist.all_reduce(half, async_op=True).get_future()
    elif why and refusal([half], "SUM") is None:
        # hosts of several ranks or racks, whose phases sum float32 only: the
        # rounded elements widened (exactly), the FP32 sum rounded once here
        fut = worker.submit(half.float(), "SUM", as_list=True,
                            kind=kind("ddp_bucket", "SUM", half) + " as float32")
    elif why:
        STATS.delegate(kind("ddp_bucket", "SUM", half), half.numel() * half.element_size(), why,
                       worker.rank, worker.job)
        fut = dist.all_reduce(half, async_op=True).get_future()
    else:
        fut = worker.submit(half, "SUM", as_list=True, kind=kind("ddp_bucket", "SUM", half))

    world = dist.get_world_size() if worker is None else worker.world

    def decompress(f):
        return buf.copy_(f.value()[0].to(dtype)).div_(world)
    return fut.then(decompress)


def bf16_hook(state, bucket):
    """DDP comm hook: the bucket's float32 gradients averaged as bfloat16 through
    netreduce (FP32 sums rounded once through the box), written back as float32."""
    return _compressed_hook(state, bucket, torch.bfloat16, "bf16_hook")


def fp16_hook(state, bucket):
    """As bf16_hook, with IEEE float16 (a narrower range: large gradients become Inf)."""
    return _compressed_hook(state, bucket, torch.float16, "fp16_hook")
