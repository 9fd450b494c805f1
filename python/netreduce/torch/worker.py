# SPDX-License-Identifier: BSD-3-Clause
"""One netreduce communicator behind a worker thread, for torch.

Worker(store, rank, world, prefix) settles the job's settings through the
c10d store (job name, rank 0's rendezvous address when NR_ROOT is unset, the
rendezvous' secret when neither NR_JOB_SECRET nor NR_TOKEN gives one: 32
random bytes rank 0 makes),
starts the heartbeat (watch.py), creates the communicator (collective) and
one worker thread.  submit() queues an all-reduce of a contiguous float32,
bfloat16 or float16 tensor (16-bit: summed in FP32 and rounded once through
the box), on the CPU or a CUDA device (staged through pinned host memory,
staging.py), and returns a torch.futures.Future; requests run in submission
order on the worker, which calls libnetreduce through ctypes (the GIL is
released during the call).  A failure completes that future with a
NetreduceError (with what the other ranks were doing), and every later one
with the same error: the communicator is broken.  Each completed request is
counted in counters.STATS under the kind the caller gives.
"""
import atexit
import itertools
import os
import queue
import secrets
import sys
import threading
import uuid
import weakref

import torch

from .. import _lib
from ..comm import (Communicator, Config, NetreduceError, algo_from_env, free_port, host_addr,
                    route_addr)
from . import accept, staging
from .counters import STATS, now, share_report
from .watch import Watch

_live = weakref.WeakSet()


_made = itertools.count()   # the order this process made its workers in


def held():
    """This process holds a live communicator of several ranks: a group made now
    is a subgroup (backend.py), with a communicator of its own (the soft
    transport's receive socket shared with the others, host/transport)."""
    return any(e.world > 1 and not e.closed for e in _live)


class _Req:
    """One queued request (Worker.request)."""
    __slots__ = ("tensor", "op", "as_list", "fut", "kind", "ready", "tolerant", "cls", "bucket",
                 "t_submit", "out")

    def __init__(self, tensor, op, as_list, fut, kind, ready, tolerant, cls, bucket, t_submit,
                 out=None):
        self.tensor, self.op, self.as_list, self.fut = tensor, op, as_list, fut
        self.kind, self.ready, self.tolerant = kind, ready, tolerant
        self.cls, self.bucket, self.t_submit = cls, bucket, t_submit
        self.out = out   # a reduce-scatter's share (host tensors), else None


def _settle(store, key, rank, make):
    """Rank 0 makes a value and publishes it under key; the others read it."""
    if rank == 0:
        value = make()
        store.set(key, value)
        return value
    return store.get(key).decode()


def _rendezvous_secret(store, key, rank):
    """Every hello of the rendezvous proves a secret: NR_JOB_SECRET's, NR_TOKEN's,
    or else (None of them set) 32 random bytes that rank 0 makes and sets in the
    store under key, which the others get before init: their hex.  None when the
    environment gives one.  As secret as the store: torchrun's TCPStore takes
    anyone who reaches it, so on a shared network set NR_JOB_SECRET."""
    if os.environ.get("NR_JOB_SECRET") or os.environ.get("NR_TOKEN"):
        return None
    return _settle(store, key, rank, lambda: secrets.token_hex(32))


def _local_addr(rank):
    addr = os.environ.get("NR_ADDR")
    if addr:
        return host_addr(addr, rank)
    master = os.environ.get("MASTER_ADDR")
    if master:
        return route_addr(master)
    raise ValueError("NR_ADDR is not set and there is no MASTER_ADDR to find this host's "
                     "address from: set NR_ADDR to this host's IPv4 address on the data path")


def _job_name(sub):
    """The box job's name: NR_JOB, or "nr-" and 8 hex digits; a subgroup's NR_JOB
    (or "nr") and "-g" and 8 hex digits (at most 63 characters)."""
    job = os.environ.get("NR_JOB")
    if not sub:
        return job or "nr-" + uuid.uuid4().hex[:8]
    return f"{(job or 'nr')[:53]}-g{uuid.uuid4().hex[:8]}"


def _value(fut):
    try:
        return fut.value()
    except NetreduceError as e:
        raise e.with_traceback(None) from None   # torch appends the traceback to the message


class Worker:
    """store: the c10d store of the group (keys under prefix); rank, world: this
    rank and the number of ranks.  flat: one rank a host whatever the
    environment's local size (local.py's columns, subgroups); addr_rank: the
    rank NR_ADDR's list is indexed by (default rank).  sub: a subgroup's, its
    box job named NR_JOB (or "nr") and "-g" and 8 hex digits rank 0 draws.
    Collective."""

    def __init__(self, store, rank, world, prefix, flat=False, addr_rank=None, sub=False):
        self.rank, self.world = rank, world
        self.seq = next(_made)
        algo = algo_from_env()
        self.job = _settle(store, f"{prefix}/job", rank, lambda: _job_name(sub))
        root = addr = secret = None
        if world > 1:
            addr = _local_addr(rank if addr_rank is None else addr_rank)
            if flat or not os.environ.get("NR_ROOT"):   # NR_ROOT is the job's, not a column's
                root = _settle(store, f"{prefix}/{self.job}/root", rank,
                               lambda: f"{addr}:{free_port(addr)}")
            secret = _rendezvous_secret(store, f"{prefix}/{self.job}/secret", rank)
        cfg = Config(rank, world, self.job, algo, root=root, addr=addr, secret=secret, flat=flat)
        self.chunk = staging.chunk_bytes()
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
        # all-gathers through the box: None until the first one ran; True, or the
        # reason the box took no job for them (the backend then gathers with Gloo)
        self.gather = None
        self.closed = False
        self._stagers = {}   # CUDA device -> Stager
        self._q = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"netreduce-{rank}", daemon=True)
        self._thread.start()
        _live.add(self)

    def failed(self, what, detail):
        return NetreduceError(self.rank, self.job, what, 0, detail)

    def stager(self, device):
        """The staging pipeline for a CUDA device (created on first use)."""
        s = self._stagers.get(device)
        if s is None:
            s = self._stagers[device] = staging.Stager(staging.CudaOps(device, self.chunk))
        return s

    @property
    def tolerant(self):
        """Whether the job has a bound on tolerant messages (NR_SHORT_PPM set): a
        request asked to go tolerant then may lose packets within it."""
        return self.comm.short_ppm > 0

    def request(self, tensor, op="SUM", as_list=True, kind=None, tolerant=False, cls=None,
                bucket=None):
        """Queue an in-place reduction of tensor over the ranks, op SUM, AVG (the
        sum divided by the ranks) or MAX (float32): contiguous float32, bfloat16
        or float16, on the CPU or a CUDA device.  Returns (raw, fut):
        the worker completes raw with [tensor] (as_list) or tensor, or with the
        NetreduceError; fut is chained to it for C++ waiters.  kind: what
        stats() counts the request as.  tolerant: the box may complete it
        short within the job's bound (gradients only; Communicator.allreduce).
        cls: a tolerant request's priority class (NR_PRIO_CLASSES; 0 the lowest):
        with classes, requests queued together run at once, each on its
        class's box channel (Communicator.allreduce_multi).  bucket: the DDP
        bucket's index, whose latency stats() keeps.  Raises TypeError or
        ValueError on a tensor it cannot take (accept.py), before anything is
        queued."""
        accept.check(tensor, op)
        cuda = tensor.device.type == "cuda"
        raw = torch.futures.Future(devices=[tensor.device]) if cuda else torch.futures.Future()
        if self.closed:
            raw.set_exception(self.failed("all_reduce", "the netreduce worker is closed"))
        else:
            ready = self.stager(tensor.device).ops.ready() if cuda else None
            self._q.put(_Req(tensor, op, as_list, raw, kind, ready, tolerant, cls, bucket,
                             now()))
        # Future.set_exception stores the exception as the value, to be raised by
        # value() in Python: C++ waiters (DDP's reducer) would take it for a
        # result.  A then() callback that raises marks the chained future failed
        # in C++ as well, with the exception's message.
        return raw, raw.then(_value)

    def request_reduce_scatter(self, tensor, out, op="SUM", kind=None):
        """Queue a reduce-scatter of host tensor (contiguous, world x out's
        elements, left as it is) into out, this rank's share, op SUM, AVG or MAX
        (Communicator.reduce_scatter: through the box the share is read out of
        the all-reduce, with no copy of tensor and no buffer of the whole).
        Returns (raw, fut) as request()."""
        accept.check(tensor, op)
        accept.check(out, op)
        if tensor.device.type != "cpu" or out.device.type != "cpu" or \
                tensor.numel() != out.numel() * self.world or tensor.dtype != out.dtype:
            raise ValueError(f"netreduce: reduce-scatter of host tensors of one type, the "
                             f"input {self.world} x the output's elements: got "
                             f"{tensor.numel()} {tensor.dtype} on {tensor.device} into "
                             f"{out.numel()} {out.dtype} on {out.device}")
        raw = torch.futures.Future()
        if self.closed:
            raw.set_exception(self.failed("reduce_scatter", "the netreduce worker is closed"))
        else:
            self._q.put(_Req(tensor, op, False, raw, kind, None, False, None, None, now(), out))
        return raw, raw.then(_value)

    def request_allgather(self, tensor, out, kind=None):
        """Queue an all-gather of host tensor (this rank's bytes) into out (world x
        its bytes; accept.gather_refusal says what it takes): Communicator.allgather.
        Returns (raw, fut) as request(), the future's value out."""
        nbytes = tensor.numel() * tensor.element_size()
        if out.numel() * out.element_size() != nbytes * self.world:
            raise ValueError(f"netreduce: all-gather of {nbytes} bytes a rank into "
                             f"{out.numel() * out.element_size()}: expected {self.world} x "
                             f"{nbytes}")
        raw = torch.futures.Future()
        if self.closed:
            raw.set_exception(self.failed("all_gather", "the netreduce worker is closed"))
        else:
            self._q.put(_Req(tensor, "GATHER", False, raw, kind, None, False, None, None, now(),
                             out))
        return raw, raw.then(_value)

    def submit(self, tensor, op="SUM", as_list=True, kind=None, tolerant=False, cls=None,
               bucket=None):
        """request(), the future for C++ and Python waiters alike."""
        return self.request(tensor, op, as_list, kind, tolerant, cls, bucket)[1]

    def drain(self):
        """Wait until every request submitted so far has run (no-op on the worker)."""
        if not self.closed and threading.current_thread() is not self._thread:
            self._q.join()

    def _batchable(self, r):
        """Whether request r may run beside others (priority classes): a host
        tensor through the box job, no failure yet."""
        return (r is not None and r.out is None and self.error is None and self.comm.classes and
                self.algo == "box" and r.tensor.device.type == "cpu" and
                ("max" if r.op == "MAX" else "sum") == self.comm.reduce)

    def _run(self):
        while True:
            batch = [self._q.get()]
            # with classes: the host requests queued behind one go with it, at once
            while self._batchable(batch[-1]) and not self._q.empty():
                batch.append(self._q.get())
            alone = not self._batchable(batch[-1])    # None (close), or one of its own
            together = batch[:-1] if alone else batch
            try:
                if together:
                    self._many(together)
                if alone and batch[-1] is None:
                    return
                if alone:
                    self._one(batch[-1])
            finally:
                for _ in batch:
                    self._q.task_done()

    def _many(self, reqs):
        """Host requests at once (Communicator.allreduce_multi: each on its class's
        box channel), then each one's division (AVG), counters and future."""
        if self.error is not None:
            for r in reqs:
                r.fut.set_exception(self.error)
            return
        t0 = now()
        try:
            if self.watch:
                self.watch.started(self.comm.seq + 1)
            done = self.comm.allreduce_multi([(r.tensor.data_ptr(), r.tensor.numel(),
                                        "max" if r.op == "MAX" else "sum", r.tolerant,
                                        accept.DTYPES[r.tensor.dtype], r.cls) for r in reqs])
            if self.watch:
                self.watch.finished()
        except NetreduceError as e:
            if self.watch:
                self.watch.fail(self.comm.seq)
                e = e.with_diagnosis(self.watch.diagnose(self.comm.seq, self.timeout_s))
            self.error = e
            for r in reqs:
                r.fut.set_exception(e)
            return
        except Exception as e:   # noqa: BLE001 - hand anything else to the waiters
            for r in reqs:
                r.fut.set_exception(e)
            return
        t1 = now()
        for r, t in zip(reqs, done):
            if r.op == "AVG":
                r.tensor.div_(self.world)
            self._done(r, t0, t1, t)

    def _done(self, r, t0, t1, t_in=None):
        """Request r completed (its all-reduce ran from t0 to t1, its result in
        at t_in, default t1): counted, its future set."""
        if r.kind:   # the bytes the library counts: an all-gather's, what it gathered
            t = r.out if r.op == "GATHER" else r.tensor
            STATS.through(r.kind, t.numel() * t.element_size(), t1 - t0, t1, r.tolerant)
        if r.bucket is not None:
            STATS.bucket(r.bucket, (t_in or t1) - r.t_submit, r.cls)
        result = r.out if r.out is not None else r.tensor
        try:
            r.fut.set_result([result] if r.as_list else result)
        except Exception:   # a callback of the future failed: it is stored in the chained future
            pass

    def _allreduce(self, host, op="sum", tolerant=False, cls=None):
        """One libnetreduce call on a contiguous host tensor of accept.DTYPES, watched."""
        if self.watch:
            self.watch.started(self.comm.seq + 1)
        self.comm.allreduce(host.data_ptr(), host.numel(), op, tolerant, accept.DTYPES[host.dtype],
                            cls)
        if self.watch:
            self.watch.finished()

    def _one(self, r):
        if self.error is not None:
            r.fut.set_exception(self.error)
            return
        t0 = now()
        try:
            divide = self.world if r.op == "AVG" else None
            lib_op = "max" if r.op == "MAX" else "sum"
            if r.op == "GATHER":
                if self.watch:
                    self.watch.started(self.comm.seq + 1)
                try:
                    self.comm.allgather(r.tensor.data_ptr(), r.out.data_ptr(),
                                        r.tensor.numel() * r.tensor.element_size())
                except NetreduceError as e:
                    if e.code != _lib.ERR_UNSUPPORTED:
                        raise
                    # the box took no all-gather job: this request fails alone, the
                    # communicator goes on (the backend gathers with Gloo from now on)
                    self.gather = e.detail
                    if self.watch:
                        self.watch.finished()
                    r.fut.set_exception(e)
                    return
                self.gather = True
                if self.watch:
                    self.watch.finished()
            elif r.out is not None:
                if self.watch:
                    self.watch.started(self.comm.seq + 1)
                self.comm.reduce_scatter(r.tensor.data_ptr(), r.out.data_ptr(), r.out.numel(),
                                         lib_op, accept.DTYPES[r.tensor.dtype])
                if self.watch:
                    self.watch.finished()
                if divide:
                    r.out.div_(divide)
            elif r.tensor.device.type == "cuda":
                self.stager(r.tensor.device).run(
                    r.tensor, r.ready, lambda host: self._allreduce(host, lib_op, r.tolerant, r.cls),
                    divide)
            else:
                self._allreduce(r.tensor, lib_op, r.tolerant, r.cls)
                if divide:
                    r.tensor.div_(divide)
        except NetreduceError as e:
            if self.watch:
                self.watch.fail(self.comm.seq)
                e = e.with_diagnosis(self.watch.diagnose(self.comm.seq, self.timeout_s))
            self.error = e
            r.fut.set_exception(e)
            return
        except Exception as e:   # noqa: BLE001 - hand anything else to the waiter
            r.fut.set_exception(e)
            return
        self._done(r, t0, now())

    def health(self):
        """This rank's side of the job at the end of training: QPs in error (0:
        every one healthy; qp_error: the first one's error) and whether a call
        failed (the communicator is then broken)."""
        n, msg = self.comm.qp_errors()
        return {"qp_errors": n, "qp_error": msg, "failed": self.error is not None}

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
        STATS.retire(self.comm.stats())
        self.comm.close()
        _live.discard(self)


def _box(workers):
    """The box's counters of the first job with a bound that this rank registered
    (rank 0 with NR_SHORT_PPM): None elsewhere; {"error": ...} when the box did
    not answer."""
    for e in workers:
        if e.comm.short_ppm and e.rank == 0 and e.algo == "box":
            try:
                box = e.comm.box_counters()
            except NetreduceError as err:
                return {"error": str(err)}
            if box is not None:
                return box
    return None


def stats():
    """Calls and bytes per kind through netreduce, delegated to Gloo (with why)
    and Gloo's other collectives, with libnetreduce's own counters, and on rank
    0 of a job with a bound the box's (short_slots, short_denied, left_out per
    rank): see counters.py; "communicators": how many of several ranks the
    process holds (its world group's and its subgroups')."""
    workers = [e for e in list(_live) if not e.closed]
    out = STATS.snapshot([e.comm.stats() for e in workers], _box(workers),
                         max((e.comm.cfg.struct.de_thresh for e in workers), default=0.0))
    out["communicators"] = sum(e.world > 1 for e in workers)
    return out


def health():
    """This process's communicators at this point: QPs in error (0: healthy) and
    failed calls, summed over them (Worker.health); collective-free."""
    out = {"qp_errors": 0, "qp_error": "", "failed": False}
    for e in [e for e in list(_live) if not e.closed]:
        h = e.health()
        out["qp_errors"] += h["qp_errors"]
        out["qp_error"] = out["qp_error"] or h["qp_error"]
        out["failed"] = out["failed"] or h["failed"]
    return out


_reported = False


def report(file=None):
    """The communication share of this process's all-reduces and what the box can
    bring at that share (a dict; its 'text' is printed to file when given)."""
    workers = [e for e in list(_live) if e.world > 1] or [None]
    e = workers[0]
    out = share_report(stats(), e.world if e else 1, e.algo if e else "ring",
                       e.rank if e else 0)
    if file is not None:
        print(out["text"], file=file, flush=True)
    return out


@atexit.register
def shutdown():
    """Close every worker of this process (collective while healthy); rank 0 of a
    job prints the communication share first (NR_REPORT=0: not)."""
    global _reported
    # newest first: every rank closes its groups in the reverse of the order it
    # made them, the order c10d makes every rank make them in (no rank waits in
    # one group's close for a rank waiting in another's)
    workers = sorted(_live, key=lambda e: e.seq, reverse=True)
    if not _reported and os.environ.get("NR_REPORT", "1") != "0" and \
            any(e.rank == 0 and e.world > 1 and e.error is None for e in workers):
        _reported = True
        report(sys.stderr)
    for worker in workers:
        worker.close()
