# SPDX-License-Identifier: BSD-3-Clause
"""One netreduce communicator behind a worker thread, for torch.

Engine(store, rank, world, prefix) settles the job's settings
through the c10d store (job name, rank 0's rendezvous address when NR_ROOT is
unset), starts the heartbeat (watch.py), creates the communicator
(collective) and one worker thread.  submit() queues an all-reduce of a
contiguous float32 CPU tensor and returns a torch.futures.Future; requests run
in submission order on the worker, which calls libnetreduce through ctypes
(the GIL is released during the call).  A failure completes that future with
a NetreduceError (with what the other ranks were doing), and every later one
with the same error: the communicator is broken.
"""
import atexit
import os
import queue
import threading
import uuid
import weakref

import torch

from ..comm import Communicator, Config, NetreduceError, algo_from_env, free_port, route_addr
from .watch import Watch

_live = weakref.WeakSet()


def _settle(store, key, rank, make):
    """Rank 0 makes a value and publishes it under key; the others read it."""
    if rank == 0:
        value = make()
        store.set(key, value)
        return value
    return store.get(key).decode()


def _local_addr():
    addr = os.environ.get("NR_ADDR")
    if addr:
        return addr
    master = os.environ.get("MASTER_ADDR")
    if master:
        return route_addr(master)
    raise ValueError("NR_ADDR is not set and there is no MASTER_ADDR to find this host's "
                     "address from: set NR_ADDR to this host's IPv4 address on the data path")


def _value(fut):
    try:
        return fut.value()
    except NetreduceError as e:
        raise e.with_traceback(None) from None   # torch appends the traceback to the message


class Engine:
    """store: the c10d store of the group (keys under prefix); rank, world: this
    rank and the number of ranks.  Collective."""

    def __init__(self, store, rank, world, prefix):
        self.rank, self.world = rank, world
        algo = algo_from_env()
        self.job = _settle(store, f"{prefix}/job", rank,
                           lambda: os.environ.get("NR_JOB") or "nr-" + uuid.uuid4().hex[:8])
        root = addr = None
        if world > 1:
            addr = _local_addr()
            if not os.environ.get("NR_ROOT"):
                root = _settle(store, f"{prefix}/{self.job}/root", rank,
                               lambda: f"{addr}:{free_port(addr)}")
        cfg = Config(rank, world, self.job, algo, root=root, addr=addr)
        if world > 1 and cfg.struct.transport == b"soft" and \
                any(e.world > 1 and not e.closed for e in _live):
            raise cfg.error("init", 0, "this process already has a netreduce communicator and "
                            "the soft transport binds NR_UDP_PORT on NR_ADDR once per process: "
                            "use the backend or the DDP hook, not both, and create subgroups "
                            "with backend='gloo'")
        self.timeout_s = cfg.timeout_ms / 1000.0
        self.watch = Watch(store, rank, world, self.job, self.timeout_s) if world > 1 else None
        try:
            self.comm = Communicator(cfg)
        except BaseException:
            if self.watch:
                self.watch.stop()
            raise
        self.algo = algo
        self.error = None
        self.closed = False
        self._q = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"netreduce-{rank}", daemon=True)
        self._thread.start()
        _live.add(self)

    def submit(self, tensor, average=False, as_list=True):
        """Queue an in-place sum (average=True: mean) of tensor over the ranks.
        The future's value is [tensor] (as_list) or tensor."""
        fut = torch.futures.Future()
        if self.closed:
            fut.set_exception(NetreduceError(self.rank, self.job, "all_reduce", 0,
                                             "the netreduce engine is closed"))
        else:
            self._q.put((tensor, average, as_list, fut))
        # Future.set_exception stores the exception as the value, to be raised by
        # value() in Python: C++ waiters (DDP's reducer) would take it for a
        # result.  A then() callback that raises marks the chained future failed
        # in C++ as well, with the exception's message.
        return fut.then(_value)

    def drain(self):
        """Wait until every request submitted so far has run (no-op on the worker)."""
        if not self.closed and threading.current_thread() is not self._thread:
            self._q.join()

    def _run(self):
        while True:
            item = self._q.get()
            try:
                if item is None:
                    return
                self._one(*item)
            finally:
                self._q.task_done()

    def _one(self, tensor, average, as_list, fut):
        if self.error is not None:
            fut.set_exception(self.error)
            return
        try:
            if self.watch:
                self.watch.started(self.comm.seq + 1)
            self.comm.allreduce(tensor.data_ptr(), tensor.numel())
            if self.watch:
                self.watch.finished()
            if average:
                tensor.div_(self.world)
        except NetreduceError as e:
            if self.watch:
                self.watch.fail(self.comm.seq)
                e = e.with_diagnosis(self.watch.diagnose(self.comm.seq, self.timeout_s))
            self.error = e
            fut.set_exception(e)
            return
        except Exception as e:   # noqa: BLE001 - hand anything else to the waiter
            fut.set_exception(e)
            return
        try:
            fut.set_result([tensor] if as_list else tensor)
        except Exception:   # a callback of the future failed: it is stored in the chained future
            pass

    def close(self):
        """Stop the worker after the queued requests, then destroy the communicator
        (collective while healthy).  Idempotent."""
        if getattr(self, "closed", True):
            return
        self.closed = True
        self._q.put(None)
        self._thread.join()
        if self.watch:
            self.watch.stop()
        self.comm.close()
        _live.discard(self)


@atexit.register
def shutdown():
    """Close every engine of this process (collective while healthy)."""
    for engine in list(_live):
        engine.close()
