# SPDX-License-Identifier: BSD-3-Clause
"""The c10d backend "netreduce" (registered by `import netreduce.torch`).

A Python subclass of c10d's ProcessGroup, returned by the creator function
given to dist.Backend.register_backend (torch 1.13 and 2.x; on 2.x registered
for the devices "cpu" and "cuda").

Through libnetreduce (the Worker's worker thread): all-reduce of one
contiguous float32, bfloat16 or float16 tensor, on the CPU or a CUDA device,
with SUM or AVG, and float32 with MAX (MAX: through the box when its job
computes max, NR_REDUCE, else over the ring; not on hosts with several ranks
or racks, nor 16-bit types); bfloat16 and float16 are summed in FP32 and
rounded once through the box (each type its own box job, opened at its first
all-reduce), rounded at every hop over the ring; the coalesced all-reduce of
such tensors (one flat buffer); reduce-scatter with SUM, AVG or MAX (host
tensors: the library's nr_reduce_scatter, the input read in place and only this
rank's share written; CUDA ones: an all-reduce of a copy, then the share).
With NR_TORCH_LOCAL=group the world group's all-reduces are local.py's (the
host's ranks on a local group of Gloo, or NCCL for CUDA tensors, the box for
the shares).  Everything else goes to an inner ProcessGroupGloo on the same store, after
the netreduce requests queued before it have run: an all-reduce netreduce
cannot take warns once per kind and is counted (counters.py), or raises with
NR_STRICT=1; the other collectives are Gloo's by design and only counted.
Works are work.Work: wait() raises netreduce's error, DDP reads the future.
The group keeps the name c10d gives it (DeviceMesh, DTensor and the functional
collectives look it up by name).  A group made while another group of the
process holds a communicator (a subgroup: dist.new_group, DeviceMesh's
dimensions, HSDP's) makes one of its own, flat (every member on its own
address), its own box job (the soft transport's communicators of a process
share its receive socket); where two of its ranks share a host (their packets
never leave it for the box), with NR_TORCH_LOCAL=group or NR_RACKS, or where the
box takes no job for it (a tenant at its quota), a subgroup hands every
collective to its Gloo, counted as delegated with that reason.

Every all-reduce of the backend is exact: a process group is not told what
a tensor holds, so it never guesses that one may lose packets.  Gradients go
tolerant (the box may complete their packets short, within the job's bound
NR_SHORT_PPM) only when the application says so: DDP's tolerant_hook
(hook.py) on this backend's communicator, or Worker.request(tolerant=True).
"""
import os

from torch._C._distributed_c10d import (AllreduceCoalescedOptions, AllreduceOptions,
                                        PrefixStore, ProcessGroupGloo, ReduceOp,
                                        ReduceOptions, ReduceScatterOptions)
import torch
import torch.distributed as dist

from .. import _lib
from ..comm import NetreduceError, local_size
from . import work as works
from .accept import flat_refusal, gather_refusal, refusal
from .worker import Worker, held
from . import local as localgroup
from .counters import STATS, kind

BACKEND = "netreduce"

_OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")


def op_name(op):
    """'SUM', 'MAX', ... for a ReduceOp (torch 2.x) or a RedOpType (1.13).
    Compared with ==: on 2.x `op in (ReduceOp.SUM, ...)` is always False."""
    for name in _OPS:
        try:
            if op == getattr(ReduceOp, name):
                return name
        except (AttributeError, TypeError):
            continue
    return str(op)


def _allreduce_opts(opts, op):
    """AllreduceOptions from the overloads (tensors, opts), (tensors, op), (tensor, op)."""
    if isinstance(opts, ReduceOp):
        opts, op = None, opts
    if op is not None:
        opts = AllreduceOptions()
        opts.reduceOp = op
    return opts if opts is not None else AllreduceOptions()


def _sub_refusal():
    """Why a subgroup cannot have a communicator of its own here, or None.  Its
    communicator is flat: each rank on its own address (NR_ADDR's, or its
    list's entry for the rank's local rank, as the world's communicator has),
    whichever host its other members are on."""
    if localgroup.mode() == "group":
        return ("NR_TORCH_LOCAL=group: subgroups through the box take one rank a host; this "
                "group's collectives go to Gloo")
    if os.environ.get("NR_RACKS"):
        return ("NR_RACKS: the racks' layout is the world group's; this group's collectives "
                "go to Gloo")
    return None


def _shared_host(store, rank, size):
    """Two ranks of the group on one host (torchrun numbers ranks host by host,
    local_size() a host), as "ranks A and B (global G and H) share host K", or
    None; every rank of the group reads every rank's host through its store, so
    every rank gets the same answer."""
    local = local_size()
    if local == 1:
        return None
    me = dist.get_rank()
    store.set(f"netreduce-sub/host/{rank}", str(me))
    seen = {}
    for r in range(size):
        g = int(store.get(f"netreduce-sub/host/{r}").decode())
        if g // local in seen:
            return (f"ranks {seen[g // local][0]} and {r} (global {seen[g // local][1]} and {g}) "
                    f"share host {g // local}")
        seen[g // local] = (r, g)
    return None


def _sub_worker(store, rank, size):
    """A subgroup's communicator, or (None, why): where the layout forbids one
    (_sub_refusal), where two of its ranks share a host (their packets never
    leave it for the box), or where its box took no job for it (a tenant at its
    quota, a box full: the box's refusal reaches every rank of the group
    alike).  Then every rank hands the group's collectives to Gloo."""
    why = _sub_refusal()
    if why:
        return None, why
    shared = _shared_host(store, rank, size)
    if shared:
        return None, (f"{shared}: packets between a host's ranks never leave it for the box; "
                      "this group's collectives go to Gloo")
    try:
        return Worker(store, rank, size, "netreduce", flat=True, addr_rank=dist.get_rank(),
                      sub=True), None
    except NetreduceError as e:
        if e.code != _lib.ERR_BOX:
            raise
        return None, (f"the box took no job for this subgroup ({e.detail}); this group's "
                      "collectives go to Gloo")


class _Gloo:
    """The inner ProcessGroupGloo, every collective handed to it as Gloo's but
    an AVG, which Gloo has not ("Cannot use ReduceOp.AVG with Gloo"; FSDP2
    reduce-scatters with AVG): of floating tensors its SUM, the outputs then
    divided by the group's size (work.Then); a reduce's on its root alone."""

    def __init__(self, pg, size):
        self._pg, self._n = pg, size

    def __getattr__(self, name):
        return getattr(self._pg, name)

    def _avg(self, opts, outputs, call, divided=None):
        if op_name(opts.reduceOp) != "AVG" or not all(o.is_floating_point() for o in outputs):
            return call(opts)
        s = type(opts)()
        s.reduceOp = ReduceOp.SUM
        for field in ("timeout", "rootRank", "rootTensor"):
            if hasattr(opts, field):
                setattr(s, field, getattr(opts, field))
        divided = outputs if divided is None else divided
        return works.Then(call(s), lambda: [o.div_(self._n) for o in divided], outputs)

    def allreduce(self, tensors, opts):
        return self._avg(opts, tensors, lambda o: self._pg.allreduce(tensors, o))

    def allreduce_coalesced(self, tensors, opts):
        return self._avg(opts, tensors, lambda o: self._pg.allreduce_coalesced(tensors, o))

    def reduce_scatter(self, outputs, inputs, opts):
        return self._avg(opts, outputs, lambda o: self._pg.reduce_scatter(outputs, inputs, o))

    def _reduce_scatter_base(self, output, input, opts):
        return self._avg(opts, [output], lambda o: self._pg._reduce_scatter_base(output, input, o))

    def reduce(self, tensors, opts=None, op=ReduceOp.SUM, root=None):
        if isinstance(tensors, torch.Tensor):   # the binding's other form: (tensor, root, op)
            tensors, root, opts = [tensors], opts if root is None else root, ReduceOptions()
            opts.rootRank, opts.reduceOp = root, op
        opts = opts if opts is not None else ReduceOptions()
        root = tensors if opts.rootRank == self._pg.rank() else []
        return self._avg(opts, tensors, lambda o: self._pg.reduce(tensors, o), divided=root)


class ProcessGroupNetreduce(dist.ProcessGroup):
    """c10d process group: all-reduce through netreduce, the rest through Gloo."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        # Gloo first: it checks the rendezvous and the data path between the hosts
        # (GLOO_SOCKET_IFNAME picks the interface) before libnetreduce needs it.
        self._gloo = _Gloo(ProcessGroupGloo(PrefixStore("netreduce-gloo", store), rank, size,
                                            timeout), size)
        # a subgroup (another group of the process holds a communicator): its own
        # communicator, or where the layout forbids one none, every collective
        # Gloo's, counted with why (the same on every rank: every process made
        # its world group first)
        self._sub = None
        self._local = None
        if size > 1 and localgroup.mode() == "group" and not held():
            # NR_TORCH_LOCAL=group (local.py): the host's ranks sum on a local group
            # (Gloo, NCCL for CUDA tensors; of one where a host has one rank), the
            # box the shares over this rank's column; the group's other collectives
            # are Gloo's, counted with why
            self._local = localgroup.LocalComposition(store, rank, size, timeout,
                                                      local_size())
            self._worker = self._local.worker
            self._sub = ("NR_TORCH_LOCAL=group: this rank's communicator is its column's (one "
                         "rank a host); the group's collectives but its all-reduces, "
                         "reduce-scatters and all-gathers go to Gloo")
        elif size > 1 and held():
            self._worker, self._sub = _sub_worker(store, rank, size)
        else:
            self._worker = Worker(store, rank, size, "netreduce")
        self._coalesced = None   # works issued between _start_coalescing and _end_coalescing

    @property
    def worker(self):
        return self._worker

    @property
    def composed(self):
        """Whether NR_TORCH_LOCAL=group composes this group's collectives (local.py):
        its worker is then this rank's column's, one rank a host, not the group's."""
        return self._local is not None

    def getBackendName(self):   # called by C++ (DDP's logger, ProcessGroup.name())
        return BACKEND

    # c10d names every group it makes (_new_process_group_helper: _set_group_name)
    # and DeviceMesh, DTensor and the functional collectives find it by that name;
    # ProcessGroup keeps the name in its backends, which a Python process group
    # has none of ("ProcessGroup name not set"), so the group keeps its own.
    def _set_group_name(self, name):
        self._group_name = name

    @property
    def group_name(self):
        if getattr(self, "_group_name", None) is None:
            raise RuntimeError("netreduce: the process group has no name yet (c10d names "
                               "it when it makes it: dist.init_process_group, dist.new_group)")
        return self._group_name

    def _get_group_name(self):
        return self.group_name

    def _set_group_desc(self, desc):
        self._group_desc = desc

    @property
    def group_desc(self):
        return getattr(self, "_group_desc", "undefined")

    def _get_backend_name(self):
        return BACKEND

    def _issued(self, work):
        if self._coalesced is not None:
            self._coalesced.append(work)
        return work

    def _submit(self, tensor, op, collective, then=None, result=None, tolerant=False):
        """tensor (contiguous float32) through netreduce; then(tensor) runs on the result."""
        raw, fut = self._worker.request(tensor, op, as_list=False,
                                        kind=kind(collective, op, tensor), tolerant=tolerant)

        def finish(f):
            if then is not None:
                then(f.value())
            else:
                f.value()
            return result
        return self._issued(works.Work(fut.then(finish), result, cause=raw))

    def _to_gloo(self, collective, call, refused=None):
        """A collective for Gloo, after the netreduce requests queued before it.
        refused=(kind, bytes, why): an all-reduce netreduce could not take."""
        if refused is not None:
            STATS.delegate(*refused, self.rank(), self._worker.job if self._worker else "-")
        else:
            STATS.gloo(collective)
        self._drain()     # keep the order the caller issued collectives in
        return self._issued(call())

    def _drain(self):
        """Wait until the collectives submitted before have run: NR_TORCH_LOCAL=group's
        (local.py's driver), else the worker's."""
        if self._local is not None:
            self._local.drain()
        elif self._worker is not None:
            self._worker.drain()

    def _sub_gloo(self, collective, call, t, nbytes, name="-"):
        """A subgroup's collective (no worker): Gloo's, counted as delegated with why."""
        return self._to_gloo(collective, call, (kind(collective, name, t), nbytes, self._sub))

    def allreduce(self, tensors, opts=None, op=None):
        if isinstance(tensors, torch.Tensor):
            tensors = [tensors]
        opts = _allreduce_opts(opts, op)
        name = op_name(opts.reduceOp)
        if self._local is not None:
            why = self._local.allreduce_refusal(tensors, name)
        else:
            why = self._sub or refusal(tensors, name, self._worker.comm.topology)
        if why:
            t = tensors[0] if tensors else torch.empty(0)
            return self._to_gloo("all_reduce",
                                 lambda: self._gloo.allreduce(tensors, opts),
                                 (kind("all_reduce", name, t),
                                  sum(x.numel() * x.element_size() for x in tensors), why))
        t = tensors[0]
        if t.numel() == 0:
            return self._issued(works.done(tensors))
        if self._local is not None:   # NR_TORCH_LOCAL=group (local.py): its driver's turn
            fut = self._local.allreduce(t, name)
            return self._issued(works.Work(fut.then(lambda f: (f.value(), tensors)[1]), tensors))
        return self._submit(t, name, "all_reduce", result=tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        name = op_name(opts.reduceOp) if opts is not None else "SUM"
        why = self._sub or flat_refusal(tensors, name, self._worker.comm.topology)
        if why:
            t = tensors[0] if tensors else torch.empty(0)
            opts = opts if opts is not None else AllreduceCoalescedOptions()
            return self._to_gloo("all_reduce_coalesced",
                                 lambda: self._gloo.allreduce_coalesced(tensors, opts),
                                 (kind("all_reduce_coalesced", name, t),
                                  sum(x.numel() * x.element_size() for x in tensors), why))
        flat = torch.cat([t.reshape(-1) for t in tensors])
        if flat.numel() == 0:
            return self._issued(works.done(tensors))

        def scatter(summed):
            off = 0
            for t in tensors:
                t.copy_(summed[off:off + t.numel()].view_as(t))
                off += t.numel()
        return self._submit(flat, name, "all_reduce_coalesced", then=scatter, result=tensors)

    def _reduce_scatter_flat(self, output, flat, name, collective, result, copied=False):
        """reduce-scatter of flat: host tensors through the library's reduce-scatter
        (flat read as it is, the share written into output; no copy of the input),
        else an all-reduce of a copy of flat (copied: flat is one already), then this
        rank's share."""
        n = output.numel()
        if flat.numel() != n * self.size():
            raise ValueError(f"{collective}: the input has {flat.numel()} elements, the output "
                             f"{n}: expected {n * self.size()} for {self.size()} ranks")
        if n == 0:
            return self._issued(works.done(result))
        lib_op = "max" if name == "MAX" else "sum"
        w = self._worker
        if flat.device.type == "cpu" and output.is_contiguous() and \
                (w.algo != "box" or lib_op == w.comm.reduce):
            raw, fut = w.request_reduce_scatter(flat, output.view(-1), name,
                                                kind=kind(collective, name, flat))
            return self._issued(works.Work(fut.then(lambda f: (f.value(), result)[1]), result,
                                           cause=raw))
        flat = flat if copied else flat.clone()
        share = slice(self.rank() * n, (self.rank() + 1) * n)
        return self._submit(flat, name, collective, result=result,
                            then=lambda summed: output.view(-1).copy_(summed[share]))

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        opts = opts if opts is not None else ReduceScatterOptions()   # SUM
        name = op_name(opts.reduceOp)
        if self._local is not None and len(output_tensors) == 1 and len(input_tensors) == 1:
            flat = torch.cat([t.reshape(-1) for t in input_tensors[0]])
            return self._local_reduce_scatter(output_tensors[0], flat, opts, output_tensors,
                                              lambda: self._gloo.reduce_scatter(
                                                  output_tensors, input_tensors, opts))
        if self._sub:
            return self._sub_gloo("reduce_scatter",
                                  lambda: self._gloo.reduce_scatter(output_tensors, input_tensors,
                                                                    opts),
                                  output_tensors[0] if output_tensors else torch.empty(0),
                                  sum(t.numel() * t.element_size() for tl in input_tensors
                                      for t in tl), name)
        if len(output_tensors) != 1 or len(input_tensors) != 1:
            why = "a list of several devices' tensors: netreduce reduce-scatters one"
        else:
            why = flat_refusal(output_tensors + input_tensors[0], name,
                               self._worker.comm.topology)
        if not why:
            flat = torch.cat([t.reshape(-1) for t in input_tensors[0]])
            return self._reduce_scatter_flat(output_tensors[0], flat, name, "reduce_scatter",
                                             output_tensors, copied=True)
        t = output_tensors[0] if output_tensors else torch.empty(0)
        return self._to_gloo("reduce_scatter",
                             lambda: self._gloo.reduce_scatter(output_tensors, input_tensors,
                                                               opts),
                             (kind("reduce_scatter", name, t),
                              sum(x.numel() * x.element_size() for tl in input_tensors
                                  for x in tl), why))

    def _reduce_scatter_base(self, output, input, opts=None):
        opts = opts if opts is not None else ReduceScatterOptions()   # SUM
        name = op_name(opts.reduceOp)
        if self._local is not None:
            return self._local_reduce_scatter(output, input.reshape(-1), opts, [output],
                                              lambda: self._gloo._reduce_scatter_base(
                                                  output, input, opts))
        if self._sub:
            return self._sub_gloo("reduce_scatter",
                                  lambda: self._gloo._reduce_scatter_base(output, input, opts),
                                  input, input.numel() * input.element_size(), name)
        why = flat_refusal([output, input], name, self._worker.comm.topology)
        if not why:
            return self._reduce_scatter_flat(output, input.reshape(-1), name,
                                             "reduce_scatter", [output])
        return self._to_gloo("reduce_scatter",
                             lambda: self._gloo._reduce_scatter_base(output, input, opts),
                             (kind("reduce_scatter", name, input),
                              input.numel() * input.element_size(), why))

    def _local_reduce_scatter(self, output, flat, opts, result, gloo):
        """NR_TORCH_LOCAL=group's reduce-scatter (local.py), or gloo(), counted as
        delegated with why local.py cannot take it."""
        name = op_name(opts.reduceOp)
        why = self._local.rs_refusal(output, flat, name)
        if why:
            return self._to_gloo("reduce_scatter",
                                 gloo,
                                 (kind("reduce_scatter", name, flat),
                                  flat.numel() * flat.element_size(), why))
        if output.numel() == 0:
            return self._issued(works.done(result))
        fut = self._local.reduce_scatter(output, flat, name)
        return self._issued(works.Work(fut.then(lambda f: (f.value(), result)[1]), result))

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        return works.combine([self._reduce_scatter_base(o, i, opts)
                              for o, i in zip(outputs, inputs)], outputs)

    def _gather(self, collective, output, input, result, then=None):
        """All-gather of host tensor input into the flat host tensor output through
        the box (nr_allgather: every rank's bytes back as they were), then(); or
        (None, why) when netreduce cannot take it (accept.gather_refusal; why None:
        no box, the group's all-gathers are Gloo's by design)."""
        w = self._worker
        if self._local is not None:
            return self._local_gather(collective, output, input, result, then)
        if w is None:
            return None, self._sub
        if w.algo != "box":
            return None, None
        why = gather_refusal([output, input], w.comm.topology) or self._gather_refused()
        if why:
            return None, why
        first = w.gather is None
        raw, fut = w.request_allgather(input, output, kind=kind(collective, "-", input))
        return self._gathered(first, raw, self._gather_refused, fut, result, then, cause=raw)

    def _gather_refused(self):
        """Why the worker's all-gathers are Gloo's: the box took no all-gather job; or None."""
        g = self._worker.gather
        return f"the box takes no all-gather job ({g})" if isinstance(g, str) else None

    def _gathered(self, first, waited, refused, fut, result, then, cause=None):
        """The Work of an all-gather: fut, then then(); or (None, refused()) where
        this was the communicator's first (waited for here, before going on) and
        found that the box takes no all-gather job."""
        if first:
            try:
                waited.wait()
            except Exception:
                why = refused()
                if why:
                    return None, why
                raise

        def finish(f):
            f.value()
            if then is not None:
                then()
            return result
        return self._issued(works.Work(fut.then(finish), result, cause=cause)), None

    def _local_gather(self, collective, output, input, result, then):
        """_gather() under NR_TORCH_LOCAL=group: the column's all-gather through
        the box, then the local one (local.py); (None, why) where it cannot.  The
        first finds out whether the box takes the job, before going on."""
        why = self._local.gather_refusal(output, input)
        if why:
            return None, why
        first = self._local.gather is None   # the host's ranks agree on the columns' jobs
        fut = self._local.allgather(output, input)
        return self._gathered(first, fut, self._local.gather_refused, fut, result, then)

    def _allgather_base(self, output, input, opts=None):
        """all_gather_into_tensor: through the box (host tensors, accept.gather_refusal;
        CUDA ones too under NR_TORCH_LOCAL=group, staged),
        else Gloo's all-gather into views of output (Gloo has no _allgather_base of its
        own on torch 1.13 and 2.6), counted with why."""
        if output.numel() != input.numel() * self.size() or not output.is_contiguous():
            raise ValueError(f"all_gather_into_tensor: the output must be contiguous with "
                             f"{self.size()} x {input.numel()} elements, it has {output.numel()}")
        work, why = self._gather("allgather_into_tensor", output.view(-1),
                                 input.contiguous().view(-1), [output])
        if work is not None:
            return work
        views = list(output.view(-1).split(input.numel()))
        return self._to_gloo("allgather_into_tensor",
                             lambda: self._gloo.allgather([views], [input.reshape(-1)]),
                             (kind("allgather_into_tensor", "-", input),
                              output.numel() * output.element_size(), why) if why else None)

    def _gloo_allgather(self, output_tensors, input_tensors, opts):
        if opts is None:
            return self._gloo.allgather(output_tensors, input_tensors)
        return self._gloo.allgather(output_tensors, input_tensors, opts)

    def allgather(self, output_tensors, input_tensors, opts=None):
        """all_gather (the list form): through the box into one buffer, then each
        rank's part into its tensor; else Gloo's, counted with why."""
        why = None
        if self._sub and self._local is None:
            why = self._sub
        elif self._worker.algo != "box":   # no box: the group's all-gathers are Gloo's
            return self._to_gloo("allgather", lambda: self._gloo_allgather(output_tensors,
                                                                           input_tensors, opts))
        elif len(output_tensors) != 1 or len(input_tensors) != 1 or \
                len(output_tensors[0]) != self.size():
            why = "a list of several devices' tensors: netreduce gathers one"
        else:
            outs, x = output_tensors[0], input_tensors[0]
            if any(o.numel() != x.numel() or o.dtype != x.dtype for o in outs):
                why = "outputs of another size or type than the input"
            else:
                flat = torch.empty(x.numel() * self.size(), dtype=x.dtype, device=x.device)

                def scatter():
                    if flat.is_cuda:   # the copies are queued on the callback's stream
                        flat.record_stream(torch.cuda.current_stream(flat.device))
                    for o, part in zip(outs, flat.split(x.numel())):
                        o.copy_(part.view_as(o))
                work, why = self._gather("allgather", flat, x.contiguous().view(-1),
                                         output_tensors, scatter)
                if work is not None:
                    return work
        t = input_tensors[0] if input_tensors else torch.empty(0)
        return self._to_gloo("allgather",
                             lambda: self._gloo_allgather(output_tensors, input_tensors, opts),
                             (kind("allgather", "-", t),
                              sum(o.numel() * o.element_size() for ol in output_tensors
                                  for o in ol), why) if why else None)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        return works.combine([self._allgather_base(o, i) for o, i in zip(outputs, inputs)],
                             outputs)

    def _start_coalescing(self, device=None):
        if self._coalesced is not None:
            raise RuntimeError("netreduce: _start_coalescing while already coalescing")
        self._coalesced = []

    def _end_coalescing(self, device=None):
        issued, self._coalesced = self._coalesced or [], None
        return works.combine(issued, [])

    def shutdown(self):
        """Destroy the communicator now (collective; also done at exit)."""
        if self._local is not None:
            self._local.close()
        elif self._worker is not None:
            self._worker.close()


def _delegated(name):
    def method(self, *args, **kwargs):
        return self._to_gloo(name, lambda: getattr(self._gloo, name)(*args, **kwargs))
    method.__name__ = name
    method.__doc__ = f"{name}: delegated to the inner Gloo process group."
    return method


for _name in ("broadcast", "allgather_coalesced", "gather",
              "scatter", "reduce", "alltoall_base", "alltoall", "send", "recv",
              "recv_anysource", "barrier", "monitored_barrier"):
    if hasattr(ProcessGroupGloo, _name):
        setattr(ProcessGroupNetreduce, _name, _delegated(_name))


def create(store, rank, size, timeout):
    """The creator function c10d calls for init_process_group("netreduce")."""
    return ProcessGroupNetreduce(store, rank, size, timeout)
