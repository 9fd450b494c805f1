# SPDX-License-Identifier: BSD-3-Clause
"""One libnetreduce communicator, as Python sees it.

Settings come from the NR_* environment (host/README.md, via
nr_config_from_env); the caller supplies what a framework already knows: rank,
world size, and (when NR_ROOT / NR_ADDR are unset) the rendezvous address and
this host's data address.  Two variables are Python's own:

  NR_ALGO  box (nr_allreduce: through the box at NR_BOX, or across racks
           with NR_RACKS, where a rack without a box sums on its ring) or
           ring (nr_ring_allreduce, no box); default: box when NR_BOX or
           NR_RACKS is set, else ring
  NR_JOB   a name for the job, in every error message (default: chosen by
           the caller, e.g. one that rank 0 makes up and shares)

Every failure raises NetreduceError naming the rank, the job and what the call
waited for.  Not thread-safe: one thread uses a communicator at a time.

    cfg = Config(rank, world, job, "box")      # reads and checks the environment
    comm = Communicator(cfg)                   # collective
    comm.allreduce(ptr, count)                 # in place, float32 sum
"""
import ctypes
import json
import os
import re
import socket

from . import _lib

ALGOS = ("box", "ring")


class NetreduceError(RuntimeError):
    """A libnetreduce call failed.  Attributes: rank, job, what (the call, e.g.
    'all_reduce #12 of 1024 fp32 elements through the box'), code (enum nr_err),
    detail (the library's message), diagnosis (what the other ranks were doing,
    when known)."""

    def __init__(self, rank, job, what, code, detail, diagnosis=""):
        self.rank, self.job, self.what = rank, job, what
        self.code, self.detail, self.diagnosis = code, detail, diagnosis
        msg = f"netreduce job {job}, rank {rank}: {what} failed: {detail}"
        if code:
            msg += f" [{_lib.strerror(code)}]"
        if diagnosis:
            msg += f"; {diagnosis}"
        super().__init__(msg)

    def with_diagnosis(self, diagnosis):
        return NetreduceError(self.rank, self.job, self.what, self.code, self.detail, diagnosis)


def _box_env():
    """The box's control address: NR_BOX, or NR_SWITCH, its old name (the library reads
    both)."""
    return os.environ.get("NR_BOX") or os.environ.get("NR_SWITCH")


def algo_from_env():
    """NR_ALGO, checked; default box when NR_BOX or NR_RACKS is set, else ring.
    Across racks every rank must make the same call (nr_allreduce), box or not:
    a rack without a box (NR_BOX unset there) takes part on its ring."""
    racks = bool(os.environ.get("NR_RACKS"))
    algo = os.environ.get("NR_ALGO") or \
        ("box" if _box_env() or racks else "ring")
    if algo not in ALGOS:
        raise ValueError(f"NR_ALGO={algo!r}: use box (through the box at NR_BOX) or ring")
    if algo == "box" and not _box_env() and not racks:
        raise ValueError("NR_ALGO=box needs NR_BOX (the box's control address ip:port) "
                         "and NR_TOKEN; or use NR_ALGO=ring")
    return algo


def local_size():
    """The ranks a host runs: NR_LOCAL_SIZE, else torchrun's LOCAL_WORLD_SIZE; 1.
    Raises ValueError on one that is not a number >= 1."""
    v = os.environ.get("NR_LOCAL_SIZE") or os.environ.get("LOCAL_WORLD_SIZE") or "1"
    if not v.isdigit() or int(v) < 1:
        raise ValueError(f"local size {v!r} (NR_LOCAL_SIZE or LOCAL_WORLD_SIZE): a number >= 1")
    return int(v)


def local_rank(rank):
    """This rank's index on its host: NR_LOCAL_RANK, torchrun's LOCAL_RANK, or rank
    modulo the ranks a host runs (local_size(); 0 when that is not a number)."""
    for var in ("NR_LOCAL_RANK", "LOCAL_RANK"):
        v = os.environ.get(var, "")
        if v.isdigit():
            return int(v)
    try:
        return rank % local_size()
    except ValueError:
        return 0


def host_addr(value, rank):
    """NR_ADDR's address for rank: the one address, or from a list of one per local
    rank (comma-separated: under torchrun every worker of a host has the same
    environment, and the soft transport needs one address per rank)."""
    addrs = [a.strip() for a in value.split(",")]
    if len(addrs) == 1:
        return addrs[0]
    lr = local_rank(rank)
    if lr >= len(addrs):
        raise ValueError(f"NR_ADDR={value!r} lists {len(addrs)} addresses, one per local rank, "
                         f"and rank {rank} is local rank {lr}: list one for every rank of a host")
    return addrs[lr]


def route_addr(peer):
    """This host's IPv4 address on the route to peer (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((socket.gethostbyname(peer), 9))
        return s.getsockname()[0]


def free_port(addr):
    """A TCP port free on addr right now (for rank 0's rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


# nr_config_check names struct fields ("addr=...: ..."); nr_config_from_env names the
# variables but, seeing world 1 in the environment, skips the checks that only
# apply to several ranks.  Those fields' messages get their variables' names.
_FIELD_VARS = {"root": "NR_ROOT", "addr": "NR_ADDR", "switch_addr": "NR_BOX",
               "token": "NR_TOKEN", "local_size": "NR_LOCAL_SIZE", "local_rank": "NR_LOCAL_RANK",
               "racks": "NR_RACKS", "rack_agents": "NR_RACK_AGENTS", "short_ppm": "NR_SHORT_PPM",
               "short_dscp": "NR_SHORT_DSCP", "short_scale": "NR_SHORT_SCALE",
               "spray_ports": "NR_SPRAY_PORTS", "spray_reorder": "NR_SPRAY_REORDER",
               "prio_classes": "NR_PRIO_CLASSES",
               "job_secret": "NR_JOB_SECRET", "de_thresh": "NR_DE_THRESH"}

# What the library calls a secret given in the struct when it came from the launcher's store.
_STORE_SECRET = "the secret rank 0 made and shared through the launcher's store"


def _env_names(msg):
    msg = re.sub(r"^(\w+)(?=[=:])", lambda m: _FIELD_VARS.get(m[1], m[1]), msg)
    return re.sub(r"\((\w+) is set\)", lambda m: f"({_FIELD_VARS.get(m[1], m[1])} is set)", msg)


class Config:
    """The settings of one communicator: nr_config_from_env, then what the caller
    knows.  rank, world win over NR_RANK and NR_WORLD (which must agree when
    set); root ("ip:port" of rank 0's rendezvous) and addr (this host's data
    address) are used when NR_ROOT / NR_ADDR are unset; secret (hex) is the
    rendezvous' secret when neither NR_JOB_SECRET nor NR_TOKEN gives one (one
    that rank 0 made and shared through the launcher's store).  flat: one rank
    a host (no NR_LOCAL_SIZE, torchrun's local size not taken: the torch
    backend's local-group columns).  Raises NetreduceError on a bad setting,
    naming the variable."""

    def __init__(self, rank, world, job, algo, root=None, addr=None, secret=None, flat=False):
        if algo not in ALGOS:
            raise ValueError(f"algo {algo!r}: use box or ring")
        self.rank, self.world, self.job, self.algo = rank, world, job, algo
        self.secret_from_store = False
        lib = _lib.lib()
        cfg = _lib.NrConfig()
        if lib.nr_config_init_env(ctypes.byref(cfg), ctypes.sizeof(cfg)):
            raise self.error("configuration from the environment", _lib.ERR_CONFIG,
                             _lib.last_error())
        for var, have, want in (("NR_RANK", cfg.rank, rank), ("NR_WORLD", cfg.world, world)):
            if os.environ.get(var) and have != want and not flat:   # a column's are its own
                raise self.error("configuration", _lib.ERR_CONFIG,
                                 f"{var}={have} but the framework says {want}: unset {var} "
                                 "or make them agree")
        cfg.rank, cfg.world = rank, world
        # torchrun gives the host's ranks as LOCAL_WORLD_SIZE and LOCAL_RANK: the
        # library's NR_LOCAL_SIZE and NR_LOCAL_RANK when NR_LOCAL_SIZE is unset
        adopted = []
        pairs = (("NR_LOCAL_SIZE", "local_size", "LOCAL_WORLD_SIZE"),
                 ("NR_LOCAL_RANK", "local_rank", "LOCAL_RANK"))
        for var, field, torchrun in pairs if not os.environ.get("NR_LOCAL_SIZE") and not flat \
                else ():
            value = os.environ.get(torchrun)
            if not os.environ.get(var) and value:
                if not value.isdigit():
                    raise self.error("configuration", _lib.ERR_CONFIG,
                                     f"{torchrun}={value!r} (from torchrun): not a number")
                setattr(cfg, field, int(value))
                adopted.append(f"{var} taken from torchrun's {torchrun}={value}")
        if flat:
            cfg.local_size, cfg.local_rank = 1, -1
        # ctypes keeps the assigned bytes alive as long as cfg
        if (flat or not cfg.root) and root:
            cfg.root = root.encode()
        if flat and addr:   # the caller's: NR_ADDR's list is indexed by the job's rank
            cfg.addr = addr.encode()
        elif cfg.addr and b"," in cfg.addr:
            cfg.addr = host_addr(cfg.addr.decode(), rank).encode()
        if not cfg.addr and addr:
            cfg.addr = addr.encode()
        self.secret_from_store = bool(secret) and not cfg.job_secret and not cfg.token
        if self.secret_from_store:
            cfg.job_secret = secret.encode()
        if algo == "box" and not cfg.switch_addr and not cfg.racks:
            raise self.error("configuration", _lib.ERR_CONFIG,
                             "algorithm box needs NR_BOX (the box's control address) and "
                             "NR_TOKEN; or use NR_ALGO=ring")
        if lib.nr_config_check(ctypes.byref(cfg)):
            msg = _env_names(_lib.last_error())
            raise self.error("configuration", _lib.ERR_CONFIG,
                             msg + (f" ({', '.join(adopted)})" if adopted else ""))
        self.struct = cfg
        self.root = (cfg.root or b"").decode()
        self.switch = (cfg.switch_addr or b"").decode()
        self.racks = (cfg.racks or b"").decode()
        self.timeout_ms = cfg.timeout_ms

    def error(self, what, code, detail):
        if self.secret_from_store:
            detail = detail.replace("job_secret of struct nr_config", _STORE_SECRET)
        return NetreduceError(self.rank, self.job, what, code, detail)


class Communicator:
    """nr_comm_init ... nr_comm_destroy of a Config, errors as NetreduceError.
    Collective: every rank constructs it at the same time."""

    def __init__(self, config):
        self.cfg = config
        self.rank, self.world, self.job = config.rank, config.world, config.job
        self.algo, self.switch = config.algo, config.switch
        self.seq = 0
        self._h = None
        handle = ctypes.c_void_p()
        rc = _lib.lib().nr_comm_init(ctypes.byref(config.struct), ctypes.byref(handle))
        if rc:
            what = f"init (rendezvous at {config.root or '-'}"
            what += f", box at {config.switch})" if config.switch else ", no box)"
            raise config.error(what, rc, _lib.last_error())
        self._h = handle

    def describe(self, count, seq=None, dtype="fp32"):
        """'all_reduce #seq of COUNT fp32 elements through the box at ...', for messages."""
        if self.algo == "ring":
            via = "over the ring"
        elif self.cfg.racks:
            via = f"across racks {self.cfg.racks} (" + \
                (f"this rack's box at {self.switch})" if self.switch else "this rack without a box)")
        else:
            via = f"through the box at {self.switch}"
        return f"all_reduce #{self.seq if seq is None else seq} of {count} {dtype} elements {via}"

    @property
    def reduce(self):
        """What the box job computes: "sum" or "max" (NR_REDUCE)."""
        return (self.cfg.struct.reduce or b"sum").decode()

    @property
    def topology(self):
        """Hosts with several ranks or racks (whose local and rack phases sum only)."""
        return self.cfg.struct.local_size > 1 or bool(self.cfg.racks)

    @property
    def short_ppm(self):
        """The bound on tolerant messages (NR_SHORT_PPM; 0: every message exact)."""
        return self.cfg.struct.short_ppm

    @property
    def classes(self):
        """Priority classes of tolerant messages (NR_PRIO_CLASSES; 0 or 1: none)."""
        return self.cfg.struct.prio_classes if self.cfg.struct.prio_classes > 1 else 0

    def _check(self, ptr, count, op, dtype):
        if not isinstance(ptr, int) or isinstance(ptr, bool):
            raise TypeError(f"netreduce: allreduce takes an address (int), not {type(ptr).__name__}")
        if ptr <= 0:
            raise ValueError(f"netreduce: allreduce address {ptr:#x} is not a buffer")
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"netreduce: allreduce count must be an int, not {type(count).__name__}")
        if count < 0:
            raise ValueError(f"netreduce: allreduce count {count} is negative")
        if op not in ("sum", "max"):
            raise ValueError(f"netreduce: allreduce op {op!r}: \"sum\" or \"max\"")
        if dtype not in _lib.DTYPES:
            raise ValueError(f"netreduce: allreduce dtype {dtype!r}: \"fp32\", \"bf16\" or "
                             "\"fp16\"")
        if op == "max" and dtype != "fp32":
            raise ValueError(f"netreduce: allreduce op max of {dtype}: max is fp32 only")
        if self._h is None:
            raise self.cfg.error(self.describe(count, dtype=dtype), _lib.ERR_BROKEN,
                                 "communicator closed")

    def allreduce_multi(self, reqs):
        """Several in-place all-reduces at once (nr_allreduce_multi): reqs a list
        of (ptr, count, op, tolerant, dtype, cls), cls a tolerant one's priority
        class (None: 0).  With classes (NR_PRIO_CLASSES) each runs on its class's
        box channel beside the others, a channel's in the order given; else one
        after the other.  Every rank gives a class's all-reduces in the same order
        (grouped as it likes).  Through the box only (the job computes op).
        Returns when each one's result was in, in time.monotonic() seconds."""
        for ptr, count, op, _, dtype, _ in reqs:
            self._check(ptr, count, op, dtype)
            if self.algo != "box" or op != self.reduce:
                raise ValueError("netreduce: allreduce_multi goes through the box job "
                                 f"(computing {self.reduce}), not the ring")
        arr = (_lib.NrAllreduceReq * len(reqs))()
        for i, (ptr, count, op, tolerant, dtype, cls) in enumerate(reqs):
            flags = (_lib.NR_MSG_TOLERANT | _lib.NR_MSG_CLASS(cls or 0)) if tolerant else 0
            arr[i] = _lib.NrAllreduceReq(ptr, ptr, count, _lib.DTYPES[dtype],
                                         _lib.NR_MAX if op == "max" else _lib.NR_SUM, flags)
        first = self.seq + 1
        self.seq += len(reqs)
        done = (ctypes.c_uint64 * len(reqs))()
        rc = _lib.lib().nr_allreduce_multi(self._h, arr, len(reqs), done)
        if rc:
            raise self.cfg.error(f"all_reduce #{first}..#{self.seq} ({len(reqs)} at once) "
                                 f"through the box at {self.switch}", rc,
                                 _lib.last_error(self._h))
        return [t / 1e9 for t in done]   # CLOCK_MONOTONIC, as time.monotonic()

    def allreduce(self, ptr, count, op="sum", tolerant=False, dtype="fp32", cls=None):
        """Reduce count elements of dtype ("fp32", "bf16" or "fp16") at address
        ptr over all ranks, in place: op "sum", or "max" (fp32 only).  Through
        the box when its job computes op (a 16-bit type's job opens at its
        first call: every rank calls with the same dtype), else over the ring
        (nr_ring_allreduce on the communicator's plain QPs: a box forwards
        them; 16-bit sums are then rounded at every hop).  tolerant: the box
        may complete this call's packets short, within the job's bound
        (nr_allreduce_flags with NR_MSG_TOLERANT); over the ring, or where the
        library cannot mark it, the call is exact all the same.  cls: a tolerant
        call's priority class (NR_PRIO_CLASSES; None: 0)."""
        self._check(ptr, count, op, dtype)
        self.seq += 1
        lib = _lib.lib()
        box = self.algo == "box" and op == self.reduce
        lop = _lib.NR_MAX if op == "max" else _lib.NR_SUM
        ldt = _lib.DTYPES[dtype]
        if box and tolerant:
            rc = lib.nr_allreduce_flags(self._h, ptr, ptr, count, ldt, lop,
                                        _lib.NR_MSG_TOLERANT | _lib.NR_MSG_CLASS(cls or 0))
        else:
            fn = lib.nr_allreduce if box else lib.nr_ring_allreduce
            rc = fn(self._h, ptr, ptr, count, ldt, lop)
        if rc:
            raise self.cfg.error(self.describe(count, dtype=dtype), rc, _lib.last_error(self._h))

    def reduce_scatter(self, src, dst, count, op="sum", dtype="fp32"):
        """Reduce count x world elements of dtype at address src over all ranks
        and put this rank's share, elements [rank x count, (rank + 1) x count),
        at address dst (nr_reduce_scatter: through the box the all-reduce of src
        with only the share read out, no buffer of the whole; elsewhere the
        library's all-reduce into one, the share copied).  op "sum", or "max"
        (fp32; through the box only when its job computes max)."""
        self._check(src, count * self.world, op, dtype)
        self._check(dst, count, op, dtype)
        self.seq += 1
        lop = _lib.NR_MAX if op == "max" else _lib.NR_SUM
        rc = _lib.lib().nr_reduce_scatter(self._h, src, dst, count, _lib.DTYPES[dtype], lop)
        if rc:
            raise self.cfg.error(self.describe(count * self.world, dtype=dtype), rc,
                                 _lib.last_error(self._h))

    def allgather(self, src, dst, nbytes):
        """Every rank's nbytes bytes at address src to dst + rank x nbytes on every
        rank (nr_allgather: through the box, byte for byte whatever they hold;
        src may be dst + rank x nbytes).  Needs the box."""
        for ptr in (src, dst):
            if not isinstance(ptr, int) or isinstance(ptr, bool) or ptr <= 0:
                raise ValueError(f"netreduce: allgather address {ptr!r} is not a buffer")
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
            raise ValueError(f"netreduce: allgather nbytes {nbytes!r}: a count of bytes")
        if self._h is None:
            raise self.cfg.error(f"all_gather of {nbytes} bytes a rank", _lib.ERR_BROKEN,
                                 "communicator closed")
        self.seq += 1
        rc = _lib.lib().nr_allgather(self._h, src, dst, nbytes)
        if rc:
            raise self.cfg.error(f"all_gather #{self.seq} of {nbytes} bytes a rank through the "
                                 f"box at {self.switch}", rc, _lib.last_error(self._h))

    def stats(self):
        """libnetreduce's counters of this communicator (nr_comm_stats_ex) as a dict:
        box_calls, box_bytes, ring_calls, ring_bytes, failed_calls, busy_ns,
        tolerant_calls, tolerant_bytes, tolerant_exact_calls, bf16_calls, fp16_calls."""
        if self._h is None:
            return {}
        st = _lib.NrCommStats()
        _lib.lib().nr_comm_stats_ex(self._h, ctypes.byref(st), ctypes.sizeof(st))
        return {name: getattr(st, name) for name, _ in st._fields_}

    def box_counters(self):
        """The box's counters of this communicator's job (nr_comm_box_counters_ex):
        completed, short_slots, short_denied, short_ppm, ranks, left_out (per
        rank, the contributions the box left out of short packets), short_why
        (short_denied by reason), drop_eligible (tolerant contributions
        received, those of them drop-eligible, short slots of those alone) and,
        with priority classes, short_by_class (short_slots by class, 0 the
        lowest).  None where
        there is none to ask for: not rank 0, no box, closed.  Raises
        NetreduceError when the box does not answer.  Any thread."""
        if self._h is None or self.rank != 0 or self.algo != "box":
            return None
        out = _lib.NrBoxCounters()
        left = (ctypes.c_uint64 * self.world)()
        lib = _lib.lib()
        rc = lib.nr_comm_box_counters_ex(self._h, ctypes.byref(out), ctypes.sizeof(out), left,
                                         self.world)
        if rc == _lib.ERR_INVALID:
            return None
        if rc:
            raise self.cfg.error("the box's counters (job_status)", rc, _lib.last_error())
        d = {name: getattr(out, name) for name, _ in out._fields_}
        d["left_out"] = list(left)
        d["short_why"], by_class, d["drop_eligible"] = self._short_detail()
        if by_class:
            d["short_by_class"] = by_class
        return d

    def _short_detail(self):
        """short_denied by reason, short_slots by priority class and the
        drop-eligible contributions (job_status short_why, short_by_class and
        drop_eligible, nr_comm_box_status), the jobs summed: ({}, [], {}) for a
        job without a bound."""
        buf = ctypes.create_string_buffer(1 << 16)
        rc = _lib.lib().nr_comm_box_status(self._h, buf, len(buf))
        if rc:
            raise self.cfg.error("the box's job_status", rc, _lib.last_error())
        why, by_class, de = {}, [], {}
        for job in json.loads(buf.value.decode()).get("jobs", []):
            for k, v in (job.get("short_why") or {}).items():
                why[k] = why.get(k, 0) + v
            for k, v in (job.get("drop_eligible") or {}).items():
                de[k] = de.get(k, 0) + v
            for c, v in enumerate(job.get("short_by_class") or []):
                by_class += [0] * (c + 1 - len(by_class))
                by_class[c] += v
        return why, by_class, de

    def qp_errors(self):
        """(QPs of this communicator in error, the first one's error): (0, '')
        when every QP is healthy (nr_comm_qp_errors)."""
        if self._h is None:
            return 0, ""
        buf = ctypes.create_string_buffer(512)
        n = _lib.lib().nr_comm_qp_errors(self._h, buf, len(buf))
        return n, buf.value.decode(errors="replace")

    @property
    def credits(self):
        return _lib.lib().nr_comm_credits(self._h) if self._h else 0

    @property
    def channels(self):
        """Box channels the messages are striped over (NR_CHANNELS; 1 without a box)."""
        return _lib.lib().nr_comm_channels(self._h) if self._h else 0

    def close(self):
        """nr_comm_destroy (collective while healthy; rank 0 removes the box's job)."""
        h, self._h = self._h, None
        if h:
            _lib.lib().nr_comm_destroy(h)
