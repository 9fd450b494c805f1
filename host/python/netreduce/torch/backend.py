# SPDX-License-Identifier: BSD-3-Clause
"""The c10d backend "netreduce" (registered by `import netreduce.torch`).

all_reduce of one contiguous float32 CPU tensor with SUM or AVG goes through
libnetreduce (the Engine's worker thread); every other collective, dtype and
op goes to an inner ProcessGroupGloo created on the same store, after the
netreduce requests queued before it have run.  Works are C++ Works
(_create_work_from_future), so DDP and anything else written against c10d
can wait on them.  One catch: the C++ Work made from a future (the only kind a
Python backend can hand to C++ on torch 1.13) returns normally from wait()
when the future failed; DDP reads the future's value, which raises, but
dist.all_reduce(t) only calls wait().  So calls from dist.all_reduce get a
Python Work whose wait() raises netreduce's error.
"""
import sys

from torch._C._distributed_c10d import (AllreduceOptions, PrefixStore, ProcessGroupGloo,
                                        ReduceOp, _create_work_from_future)
import torch
import torch.distributed as dist

from .engine import Engine

BACKEND = "netreduce"


_ALL_REDUCE = dist.distributed_c10d.all_reduce.__code__


class PyWork(dist.Work):
    """The Work dist.all_reduce gets: wait() and result() raise if the request failed."""

    def __init__(self, fut, tensors):
        super().__init__()
        self._fut, self._tensors = fut, tensors

    def wait(self, timeout=None):
        self._fut.wait()   # raises the request's error
        return True

    def result(self):
        self.wait()
        return self._tensors

    def get_future(self):
        return self._fut

    def is_completed(self):
        return self._fut.done()

    def is_success(self):
        return self.exception() is None if self._fut.done() else False

    def exception(self):
        if not self._fut.done():
            return None
        try:
            self._fut.value()
            return None
        except Exception as e:  # noqa: BLE001 - that is the answer
            return e

    def synchronize(self):
        pass


def _mine(tensors, op):
    """Is this all-reduce one netreduce does (else Gloo does it)?"""
    if len(tensors) != 1 or op not in (ReduceOp.SUM, ReduceOp.AVG):
        return False
    t = tensors[0]
    return t.dtype == torch.float32 and t.device.type == "cpu" and t.is_contiguous() \
        and not t.is_sparse


def _delegated(name):
    def method(self, *args, **kwargs):
        self._engine.drain()     # keep the order the caller issued collectives in
        return getattr(self._gloo, name)(*args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"{name}: delegated to the inner Gloo process group."
    return method


class ProcessGroupNetreduce(dist.ProcessGroup):
    """c10d process group: all-reduce through netreduce, the rest through Gloo."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        # Gloo first: it checks the rendezvous and the data path between the hosts
        # (GLOO_SOCKET_IFNAME picks the interface) before libnetreduce needs it.
        self._gloo = ProcessGroupGloo(PrefixStore("netreduce-gloo", store), rank, size, timeout)
        self._engine = Engine(store, rank, size, "netreduce")

    @property
    def engine(self):
        return self._engine

    def getBackendName(self):   # called by C++ (DDP's logger)
        return BACKEND

    def _get_backend_name(self):
        return BACKEND

    def allreduce(self, tensors, opts=None, op=None):
        # the overloads of ProcessGroup.allreduce: (tensors, opts), (tensors, op), (tensor, op)
        if isinstance(tensors, torch.Tensor):
            tensors = [tensors]
        if isinstance(opts, ReduceOp):
            opts, op = None, opts
        if op is not None:
            opts = AllreduceOptions()
            opts.reduceOp = op
        elif opts is None:
            opts = AllreduceOptions()
        if not _mine(tensors, opts.reduceOp):
            self._engine.drain()
            return self._gloo.allreduce(tensors, opts)
        t = tensors[0]
        if t.numel() == 0:
            fut = torch.futures.Future()
            fut.set_result(tensors)
        else:
            fut = self._engine.submit(t, average=opts.reduceOp == ReduceOp.AVG)
        if sys._getframe(1).f_code is _ALL_REDUCE:   # Python code: it will call wait()
            return PyWork(fut, tensors)
        return _create_work_from_future(fut)          # C++ (DDP): it reads the value

    allreduce_coalesced = _delegated("allreduce_coalesced")
    broadcast = _delegated("broadcast")
    allgather = _delegated("allgather")
    _allgather_base = _delegated("_allgather_base")
    allgather_coalesced = _delegated("allgather_coalesced")
    gather = _delegated("gather")
    scatter = _delegated("scatter")
    reduce = _delegated("reduce")
    reduce_scatter = _delegated("reduce_scatter")
    _reduce_scatter_base = _delegated("_reduce_scatter_base")
    alltoall_base = _delegated("alltoall_base")
    alltoall = _delegated("alltoall")
    send = _delegated("send")
    recv = _delegated("recv")
    recv_anysource = _delegated("recv_anysource")
    barrier = _delegated("barrier")
    monitored_barrier = _delegated("monitored_barrier")

    def shutdown(self):
        """Destroy the communicator now (collective; also done at exit)."""
        self._engine.close()


def create(store, rank, size, timeout):
    """The creator function c10d calls for init_process_group("netreduce")."""
    return ProcessGroupNetreduce(store, rank, size, timeout)
