# SPDX-License-Identifier: BSD-3-Clause
"""The local-group path for hosts with several ranks (NR_TORCH_LOCAL=group).

torchrun runs LOCAL_WORLD_SIZE ranks a host, numbered host by host.  Instead of
the library's shared-memory phases (NR_LOCAL_SIZE, host/README.md), the local
phases run on a process group of the host's ranks of the framework's own
backend for the tensor's device (Gloo for host tensors, NCCL for CUDA ones:
NVLink where the host has it), and the box sums the shares: local rank p of
every host holds one communicator of its own (a "column" of H ranks, one a
host, made without NR_LOCAL_SIZE), through which it all-reduces share p.  An
all-reduce:

  1. the local reduce-scatter: local rank p gets share p of the host's sum
     (16-bit tensors summed in FP32, so the result is still rounded once);
  2. share p through the box, over column p (the hosts' sums added in host
     order; a CUDA share staged through pinned host memory, staging.py);
  3. the local all-gather: every rank gets every share back.

FSDP's collectives (one piece each, no chunks):

  reduce-scatter  the local reduce-scatter of every host's blocks of local index
                  p (in FP32), then column p's reduce-scatter through the box
                  (nr_reduce_scatter; CUDA: its all-reduce, staged, this host's
                  block): rank (h, p) gets share (h, p); no all-gather;
  all-gather      column p's all-gather through the box (nr_allgather, byte for
                  byte; CUDA: staged through pinned memory), then the local
                  all-gather of those, put back in rank order.  The columns'
                  all-gather jobs open at the first, each apart: the host's ranks
                  agree on the box's answers, and where it refused any, every
                  rank gathers with Gloo from then on (counted with why).

An all-reduce goes in chunks of NR_STAGE_CHUNK_KB (default 4096 KiB): the three phases of different
chunks overlap (the local backend reduces chunk c + 1 while the worker sends
chunk c through the box); a thread of this rank drives them, one call after
the other.  Every rank ends with the same bits (the all-gather copies them);
the local backend sums in its own order, not in local-rank order (Gloo's and
NCCL's alike), so the result is the hosts' local sums, each in that order,
added in host order: bit-identical to the library's path only where the order
does not matter (integers within the mantissa).

CUDA tensors: the NCCL group is made at a rank's first CUDA all-reduce, for
that tensor's device (a tensor on another device goes to Gloo, counted); the
driver thread runs the phases on a stream of its own, after what the caller
had queued on its current stream (an event), and the caller's future carries
the driver stream's completion (a CUDA-aware torch Future), so a caller that
waits may use the tensor on any stream.  A host of one rank (LOCAL_WORLD_SIZE=1
with NR_TORCH_LOCAL=group) makes a local group of one: the phases run, nothing
crosses between GPUs (make gpu-check on one GPU).
"""
import os
import queue
import threading

import torch
from torch._C._distributed_c10d import (AllreduceOptions, PrefixStore, ProcessGroupGloo,
                                        ReduceScatterOptions)
import torch.distributed as dist

from ..comm import NetreduceError
from . import staging
from .accept import flat_refusal, gather_refusal, refusal
from .counters import STATS, kind, now
from .worker import Worker

MODES = ("group", "library")


def mode():
    """NR_TORCH_LOCAL: "group" (this path) or "library" (NR_LOCAL_SIZE's, the
    default); raises ValueError naming the variable on anything else."""
    m = os.environ.get("NR_TORCH_LOCAL") or "library"
    if m not in MODES:
        raise ValueError(f"NR_TORCH_LOCAL={m!r}: group (local phases on a local process group, "
                         "the box for the shares) or library (NR_LOCAL_SIZE's shared memory)")
    return m


def _nccl(store, rank, size, timeout):
    """A ProcessGroupNCCL of the host's ranks, or raises RuntimeError saying why not."""
    try:
        from torch._C._distributed_c10d import ProcessGroupNCCL
    except ImportError:
        raise RuntimeError(f"torch {torch.__version__} is built without NCCL, the local "
                           "backend of CUDA tensors") from None
    opts = ProcessGroupNCCL.Options()
    opts._timeout = timeout
    return ProcessGroupNCCL(store, rank, size, opts)


class _Local:
    """A local process group of one backend, and which collectives it has."""

    def __init__(self, pg, backend, stream=None):
        self.pg, self.backend, self.stream = pg, backend, stream
        # its reduce-scatter (False: none, an all-reduce and this rank's share
        # of it instead: twice the local traffic; Gloo of torch 1.13)
        self.rs_native = True
        self.ag_native = True    # its all-gather into one tensor (else into views)


class LocalComposition:
    """The local group and the column communicator of one rank (collective:
    every rank of the job makes one, in the same order)."""

    def __init__(self, store, rank, size, timeout, local):
        if size % local:
            raise ValueError(f"NR_TORCH_LOCAL=group: {size} ranks do not split into hosts of "
                             f"{local} (LOCAL_WORLD_SIZE)")
        self.rank, self.size, self.local = rank, size, local
        self.host, self.lrank = divmod(rank, local)
        self.hosts = size // local
        self._store, self._timeout = store, timeout
        self.cpu = _Local(ProcessGroupGloo(PrefixStore(f"netreduce-local/{self.host}", store),
                                           self.lrank, local, timeout), "gloo")
        self.cuda = None          # _Local of NCCL, made at the first CUDA all-reduce
        # the columns' all-gathers: None until the first, then True, or why not (the
        # same on every rank: the local ranks agree on it, see _column_gather)
        self.gather = None
        self._mu = threading.Lock()   # ... by one thread
        self.worker = Worker(PrefixStore(f"netreduce-col/{self.lrank}", store), self.host,
                             self.hosts, "netreduce", flat=True, addr_rank=rank)
        self._q = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"netreduce-local-{rank}",
                                        daemon=True)
        self._thread.start()

    def refusal(self, device):
        """Why the local phases cannot run for a tensor on device, or None (the
        caller's thread: a CUDA rank's NCCL group is made here, at its first)."""
        if device.type == "cpu":
            return None
        if device.type != "cuda":
            return f"NR_TORCH_LOCAL=group takes CPU and CUDA tensors, not {device.type}"
        with self._mu:
            if self.cuda is None:
                try:
                    pg = _nccl(PrefixStore(f"netreduce-local-nccl/{self.host}", self._store),
                               self.lrank, self.local, self._timeout)
                except RuntimeError as e:
                    return f"NR_TORCH_LOCAL=group on a CUDA tensor: {e}"
                with torch.cuda.device(device):
                    self.cuda = _Local(pg, "nccl", torch.cuda.Stream(device))
        if self.cuda.stream.device != device:
            return (f"NR_TORCH_LOCAL=group: this rank's NCCL group is on "
                    f"{self.cuda.stream.device}, the tensor on {device}")
        return None

    def _chunks(self, n, esize):
        """Element ranges [a, b) of the chunks, each a multiple of the local ranks."""
        step = max(self.local, staging.chunk_bytes() // esize // self.local * self.local)
        return [(a, min(a + step, n)) for a in range(0, n, step)]

    def allreduce(self, tensor, op):
        """SUM or AVG of tensor (contiguous float32, bfloat16 or float16, on the
        CPU, or on a CUDA device refusal() took) in place: returns a torch Future
        completed with tensor (or the error).  Run by this rank's driver thread,
        one call after the other."""
        return self._submit(self._allreduce, tensor, [tensor], tensor, op)

    def reduce_scatter(self, output, flat, op):
        """SUM or AVG of flat (world x output's elements, one type: float32,
        bfloat16 or float16, CPU or a CUDA device refusal() took) over the job,
        this rank's share into output: a torch Future completed with output."""
        return self._submit(self._reduce_scatter, output, [output, flat], output, flat, op)

    def allgather(self, output, flat):
        """Every rank's bytes of flat into output (world x them, in rank order),
        byte for byte, on the CPU or a CUDA device refusal() took: a torch Future
        completed with output."""
        return self._submit(self._allgather_bytes, output, [output, flat], flat, output)

    def allreduce_refusal(self, tensors, op):
        """Why allreduce() cannot take tensors (the backend's list) with op, or None."""
        why = refusal(tensors, op, False)
        return why or self._sum_refusal(op) or self.refusal(tensors[0].device)

    def rs_refusal(self, output, flat, op):
        """Why reduce_scatter() cannot take these, or None."""
        why = flat_refusal([output, flat], op, False) or self._sum_refusal(op)
        if why:
            return why
        if output.dtype != flat.dtype:
            return f"tensors of several types: {flat.dtype} into {output.dtype}"
        if flat.numel() != output.numel() * self.size:
            raise ValueError(f"reduce_scatter: the input has {flat.numel()} elements, the "
                             f"output {output.numel()}: expected {output.numel() * self.size} "
                             f"for {self.size} ranks")
        return self.refusal(flat.device)

    @staticmethod
    def _sum_refusal(op):
        if op == "MAX":
            return "NR_TORCH_LOCAL=group sums only (its local phases are reduce-scatters)"
        return None

    def gather_refusal(self, output, flat):
        """Why allgather() cannot take these, or None: what the box's all-gather
        takes (accept.gather_refusal: contiguous, one type, one device, CUDA
        staged), the column communicator on a box that takes an all-gather job."""
        why = gather_refusal([output, flat], staged=True)
        if why:
            return why
        if self.worker.algo != "box":
            return "no box: the columns' all-gathers need the box (NR_BOX)"
        return self.gather_refused() or self.refusal(flat.device)

    def gather_refused(self):
        """Why the columns' all-gathers are Gloo's (the box refused one's job), or None."""
        return self.gather if isinstance(self.gather, str) else None

    def _submit(self, fn, result, tensors, *args):
        """fn(loc, *args) on the driver thread; a Future completed with result."""
        if result.device.type == "cuda":
            ready = torch.cuda.Event()
            ready.record(torch.cuda.current_stream(result.device))
            fut = torch.futures.Future(devices=[result.device])
        else:
            ready, fut = None, torch.futures.Future()
        self._q.put((fn, result, tensors, args, ready, fut))
        return fut

    def drain(self):
        """Wait until every collective submitted so far has run (the backend,
        before it hands one to Gloo: the order the caller issued them in)."""
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
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

    def _one(self, fn, result, tensors, args, ready, fut):
        try:
            if ready is None:
                fn(self.cpu, *args)
                fut.set_result(result)
                return
            # CUDA: the phases on the driver's stream, after the caller's;
            # the future completes on it (its events recorded there)
            stream = self.cuda.stream
            with torch.cuda.device(result.device), torch.cuda.stream(stream):
                stream.wait_event(ready)
                for t in tensors:
                    t.record_stream(stream)
                fn(self.cuda, *args)
                fut.set_result(result)
        except Exception as e:   # noqa: BLE001 - handed to the caller's future
            fut.set_exception(e)

    def _allreduce(self, loc, tensor, op):
        t0 = now()
        flat = tensor.view(-1)
        work = flat.float() if flat.dtype != torch.float32 else flat
        n = work.numel()
        pad = (-n) % self.local
        buf = torch.cat([work, work.new_zeros(pad)]) if pad else work
        chunks = [buf[a:b] for a, b in self._chunks(buf.numel(), 4)]
        shares = [buf.new_empty(c.numel() // self.local) for c in chunks]
        opts = ReduceScatterOptions()
        opts.reduceOp = dist.ReduceOp.SUM
        # every chunk's local reduce-scatter queued at once (the local backend runs
        # them in turn); each share through the box as soon as it is in; each
        # chunk's all-gather as soon as its share came back
        rs = [self._local_reduce_scatter(loc, s, c, opts) for s, c in zip(shares, chunks)]
        boxed = []
        for w, s, c in zip(rs, shares, chunks):
            self._share_in(loc, w, s, c)   # NCCL: this stream waits (the staging after it)
            boxed.append(self.worker.request(s, "SUM", as_list=False,
                                             kind=kind("all_reduce", "SUM", s) + " column")[0])
        ag = []
        for f, s, c in zip(boxed, shares, chunks):
            f.wait()
            ag.append(self._allgather(loc, c, s))
        for w in ag:
            w.wait()
        res = buf[:n]
        if op == "AVG":
            res.div_(self.size)
        if res.data_ptr() != flat.data_ptr() or res.dtype != flat.dtype:
            flat.copy_(res)   # 16-bit: rounded once, here
        self._done(loc, kind("all_reduce", op, tensor) + " local group",
                   tensor.numel() * tensor.element_size(), t0)

    def _reduce_scatter(self, loc, output, flat, op):
        """Local rank p's blocks of every host (the shares of ranks (h, p), h in
        host order) summed over the host by a local reduce-scatter (in FP32),
        then over the hosts by column p's reduce-scatter: this rank's share.
        One piece (no chunks): the shares are the caller's."""
        t0 = now()
        n, hosts, local = output.numel(), self.hosts, self.local
        # [host, local rank, n] in rank order -> [local rank, host, n], in FP32
        work = torch.empty((local, hosts, n), dtype=torch.float32, device=flat.device)
        work.copy_(flat.view(hosts, local, n).transpose(0, 1))
        mine = work.new_empty(hosts * n)
        opts = ReduceScatterOptions()
        opts.reduceOp = dist.ReduceOp.SUM
        self._share_in(loc, self._local_reduce_scatter(loc, mine, work.view(-1), opts), mine,
                       work.view(-1))
        k = kind("reduce_scatter", "SUM", mine) + " column"
        if mine.device.type == "cpu":
            share = mine.new_empty(n)
            raw, _ = self.worker.request_reduce_scatter(mine, share, "SUM", kind=k)
            raw.wait()
        else:   # CUDA: the column's all-reduce (staged), this host's block
            raw, _ = self.worker.request(mine, "SUM", as_list=False, kind=k)
            raw.wait()
            share = mine.view(hosts, n)[self.host]
        if op == "AVG":
            share.div_(self.size)
        output.view(-1).copy_(share)   # 16-bit: rounded once, here
        self._done(loc, kind("reduce_scatter", op, flat) + " local group",
                   flat.numel() * flat.element_size(), t0)

    def _allgather_bytes(self, loc, flat, output):
        """Column p's all-gather (the box: ranks (h, p), h in host order), then the
        local all-gather of those; output in rank order."""
        t0 = now()
        hosts, local = self.hosts, self.local
        src = flat.view(-1).view(torch.uint8)
        nb = src.numel()
        cuda = src.device.type == "cuda"
        if cuda:   # the box's all-gather is of host memory: staged, pinned
            src = torch.empty(nb, dtype=torch.uint8, pin_memory=True).copy_(src)
        col = torch.empty(hosts * nb, dtype=torch.uint8, pin_memory=cuda)
        self._column_gather(src, col, kind("allgather", "-", flat) + " column")
        if cuda:   # both copies synchronous on the driver's stream
            col = col.to(flat.device)
        every = torch.empty(local * hosts * nb, dtype=torch.uint8, device=flat.device)
        self._allgather(loc, every, col).wait()
        # [local rank, host, bytes] -> [host, local rank, bytes]: rank order
        output.view(-1).view(torch.uint8).view(hosts, local, nb).copy_(
            every.view(local, hosts, nb).transpose(0, 1))
        self._done(loc, kind("allgather", "-", flat) + " local group",
                   output.numel() * output.element_size(), t0)

    def _column_gather(self, src, col, k):
        """Column p's all-gather of src into col through the box.  Its job opens at
        the first, for each column apart: the box may take one column's and refuse
        another's (a tenant's quota).  So at the first the host's ranks agree (a
        MAX over the local Gloo group): where any column was refused, every rank
        raises here, before the local phase, and self.gather says why; the backend
        then gathers with Gloo, every rank alike (each column's ranks heard their
        box's answer alike, rank 0 of the column told them)."""
        if self.gather_refused():   # agreed by a first queued beside this one
            raise RuntimeError(self.gather)
        raw, _ = self.worker.request_allgather(src, col, kind=k)
        if self.gather is not None:
            raw.wait()
            return
        code, err = 0, None
        try:
            raw.wait()
        except NetreduceError as e:    # 1: the box took no all-gather job for this column
            code, err = (1 if isinstance(self.worker.gather, str) else 2), e
        except Exception as e:   # noqa: BLE001 - 2: failed; raised once agreed
            code, err = 2, e
        flag = torch.tensor([code], dtype=torch.int32)
        opts = AllreduceOptions()
        opts.reduceOp = dist.ReduceOp.MAX
        self.cpu.pg.allreduce([flag], opts).wait()
        agreed = int(flag.item())
        if agreed == 0:
            self.gather = True
            return
        if err is not None and code == 2:
            raise err
        if agreed == 1:
            self.gather = (f"the box takes no all-gather job ({self.worker.gather})"
                           if code else "the box takes no all-gather job for another column "
                           "of this host's ranks (NR_TORCH_LOCAL=group)")
            raise RuntimeError(self.gather)
        raise RuntimeError("netreduce: all_gather: another local rank's column all-gather "
                           "failed") from err

    def _done(self, loc, k, nbytes, t0):
        if loc.stream is not None:
            loc.stream.synchronize()   # the time counted is the collective's, not its queueing
        t1 = now()
        STATS.through(k, nbytes, t1 - t0, t1)

    def _local_reduce_scatter(self, loc, out, inp, opts):
        """The local backend's reduce-scatter of inp into out, or (Gloo of torch
        1.13 has none) its all-reduce of inp, whose share _share_in() reads;
        counted under the backend by what was issued."""
        if loc.rs_native:
            try:
                w = loc.pg._reduce_scatter_base(out, inp, opts)
                STATS.count(loc.backend, "local reduce_scatter")
                return w
            except RuntimeError as e:
                if "support" not in str(e):
                    raise
                loc.rs_native = False
        aopts = AllreduceOptions()
        aopts.reduceOp = dist.ReduceOp.SUM
        STATS.count(loc.backend, "local all_reduce")
        return loc.pg.allreduce([inp], aopts)

    def _share_in(self, loc, w, out, inp):
        """Wait for w, _local_reduce_scatter's; where it was an all-reduce, this
        rank's share of inp into out."""
        w.wait()
        if not loc.rs_native:
            out.copy_(inp.view(self.local, -1)[self.lrank])

    def _allgather(self, loc, c, s):
        """Every local rank's share s into chunk c: the local backend's all-gather
        into one tensor, or (Gloo of torch 1.13 has none) into views of c;
        counted under the backend."""
        STATS.count(loc.backend, "local allgather")
        if loc.ag_native:
            try:
                return loc.pg._allgather_base(c, s)
            except RuntimeError as e:
                if "support" not in str(e) and "implement" not in str(e):
                    raise
                loc.ag_native = False
        return loc.pg.allgather([list(c.split(s.numel()))], [s])

    def close(self):
        if self._thread.is_alive():
            self._q.put(None)
            self._thread.join()
        if self.cuda is not None:   # the NCCL group destroyed, not left to its destructor
            stop = getattr(self.cuda.pg, "shutdown", None) or getattr(self.cuda.pg, "_shutdown",
                                                                      None)
            if stop is not None:
                stop()
        self.worker.close()
