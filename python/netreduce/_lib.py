# SPDX-License-Identifier: BSD-3-Clause
"""ctypes binding of libnetreduce's C API (host/netreduce.h).

No compiled extension: the shared library is loaded with ctypes, which
releases the GIL for the duration of every call.  The library is found, in
order, at $NETREDUCE_LIB (a path), then wherever the dynamic linker finds
libnetreduce.so (`ninja -C build install` puts it under /usr/local/lib).
"""
import ctypes
import ctypes.util
import os
import threading

# enum nr_err
OK = 0
ERR_CONFIG = -1
ERR_INVALID = -2
ERR_NOMEM = -3
ERR_BOOTSTRAP = -4
ERR_BOX = -5
ERR_TRANSPORT = -6
ERR_PEER = -7
ERR_TIMEOUT = -8
ERR_BROKEN = -9
ERR_UNSUPPORTED = -10   # the box takes no job for the call (nr_allgather); the comm goes on

NR_FLOAT32 = 0
NR_BF16 = 1
NR_FP16 = 2
# the element types by name (netreduce.h: enum nr_dtype), and their bytes
DTYPES = {"fp32": NR_FLOAT32, "bf16": NR_BF16, "fp16": NR_FP16}
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
NR_SUM = 0
NR_MAX = 1

# nr_allreduce_flags: the box may complete this message's packets short, within
# the job's bound (NR_SHORT_PPM); every other message is exact
NR_MSG_TOLERANT = 0x1


def NR_MSG_CLASS(c):   # noqa: N802 - the C macro's name
    """A tolerant message's priority class c (0 the lowest; NR_PRIO_CLASSES)."""
    return ((c & 0x7) + 1) << 4


class NrConfig(ctypes.Structure):
    """struct nr_config, field for field (host/netreduce.h); size is sizeof of this
    layout, which the library reads and writes no further than."""
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("rank", ctypes.c_int),
        ("world", ctypes.c_int),
        ("root", ctypes.c_char_p),
        ("switch_addr", ctypes.c_char_p),
        ("token", ctypes.c_char_p),
        ("transport", ctypes.c_char_p),
        ("device", ctypes.c_char_p),
        ("addr", ctypes.c_char_p),
        ("mtu", ctypes.c_uint32),
        ("msg_size", ctypes.c_uint32),
        ("timeout_ms", ctypes.c_uint32),
        ("pool_msgs", ctypes.c_uint32),
        ("channels", ctypes.c_uint32),
        ("ring_window", ctypes.c_uint32),
        ("udp_port", ctypes.c_uint16),
        ("gid_index", ctypes.c_int),
        ("ack_timeout", ctypes.c_uint8),
        ("local_size", ctypes.c_int),
        ("local_rank", ctypes.c_int),
        ("hier", ctypes.c_char_p),
        ("intra_gbps", ctypes.c_double),
        ("inter_gbps", ctypes.c_double),
        ("shm_pace_gbps", ctypes.c_double),
        ("racks", ctypes.c_char_p),
        ("rack_agents", ctypes.c_int),
        ("soft_profile", ctypes.c_char_p),
        ("tclass", ctypes.c_uint8),
        ("soft_ackreq", ctypes.c_uint16),
        ("soft_window", ctypes.c_uint32),
        ("bootstrap_timeout_ms", ctypes.c_uint32),
        ("reduce", ctypes.c_char_p),
        ("short_ppm", ctypes.c_uint32),
        ("short_dscp", ctypes.c_uint8),
        ("short_scale", ctypes.c_uint8),
        ("spray_ports", ctypes.c_uint8),
        ("spray_reorder", ctypes.c_uint16),
        ("prio_classes", ctypes.c_uint8),
        ("job_secret", ctypes.c_char_p),
        ("de_thresh", ctypes.c_double),
    ]


class NrAllreduceReq(ctypes.Structure):
    """struct nr_allreduce_req (host/netreduce.h): one all-reduce of nr_allreduce_multi."""
    _fields_ = [("sendbuf", ctypes.c_void_p), ("recvbuf", ctypes.c_void_p),
                ("count", ctypes.c_size_t), ("dtype", ctypes.c_int), ("op", ctypes.c_int),
                ("flags", ctypes.c_uint)]


class NrCommStats(ctypes.Structure):
    """struct nr_comm_stats (host/netreduce.h)."""
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("box_calls", "box_bytes", "ring_calls", "ring_bytes", "failed_calls", "busy_ns",
                 "tolerant_calls", "tolerant_bytes", "tolerant_exact_calls", "bf16_calls",
                 "fp16_calls")]


class NrBoxCounters(ctypes.Structure):
    """struct nr_box_counters (host/netreduce.h)."""
    _fields_ = [("completed", ctypes.c_uint64), ("short_slots", ctypes.c_uint64),
                ("short_denied", ctypes.c_uint64), ("short_ppm", ctypes.c_uint32),
                ("ranks", ctypes.c_uint32)]


# What nr_config_init() must produce (host/README.md): checked at load time, so a
# library whose struct nr_config's first fields no longer match NrConfig is
# refused instead of being handed a wrong layout (a newer library with more
# fields takes this size and keeps its defaults for the rest).
_DEFAULTS = {"size": ctypes.sizeof(NrConfig), "rank": 0, "world": 1, "transport": b"soft", "mtu": 0, "msg_size": 65536,
             "timeout_ms": 10000, "pool_msgs": 8, "channels": 1, "ring_window": 16,
             "udp_port": 4791, "gid_index": -1, "ack_timeout": 0, "root": None,
             "switch_addr": None, "local_size": 1, "local_rank": -1, "hier": None,
             "racks": None, "rack_agents": 0,
             "tclass": 0, "soft_ackreq": 0, "soft_window": 0, "bootstrap_timeout_ms": 300000,
             "reduce": None, "short_ppm": 0, "short_dscp": 10, "short_scale": 0,
             "spray_ports": 0, "spray_reorder": 0, "prio_classes": 0, "job_secret": None,
             "de_thresh": 0.0}

_lock = threading.Lock()
_lib = None


def _find():
    path = os.environ.get("NETREDUCE_LIB")
    if path:
        if not os.path.exists(path):
            raise OSError(f"NETREDUCE_LIB={path}: no such file; point it at libnetreduce.so "
                          "(BUILD/host/shared/libnetreduce.so) or unset it")
        return path
    name = ctypes.util.find_library("netreduce")
    if not name:
        raise OSError("libnetreduce.so not found: install it (ninja -C build install, then "
                      "ldconfig) or set NETREDUCE_LIB to its path "
                      "(BUILD/host/shared/libnetreduce.so)")
    return name


def _bind(lib):
    c_int, c_void_p, c_size_t, c_char_p = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
    cfgp = ctypes.POINTER(NrConfig)
    protos = {
        "nr_config_init": (None, [cfgp, c_size_t]),
        "nr_config_init_env": (c_int, [cfgp, c_size_t]),
        "nr_config_check": (c_int, [cfgp]),
        "nr_comm_init": (c_int, [cfgp, ctypes.POINTER(c_void_p)]),
        "nr_comm_destroy": (None, [c_void_p]),
        "nr_allreduce": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_int, c_int]),
        "nr_allreduce_flags": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_int, c_int,
                                       ctypes.c_uint]),
        "nr_ring_allreduce": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_int, c_int]),
        "nr_reduce_scatter": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_int, c_int]),
        "nr_allgather": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t]),
        "nr_comm_rank": (c_int, [c_void_p]),
        "nr_comm_world": (c_int, [c_void_p]),
        "nr_comm_credits": (ctypes.c_uint32, [c_void_p]),
        "nr_comm_channels": (ctypes.c_uint, [c_void_p]),
        "nr_comm_stats_ex": (c_int, [c_void_p, ctypes.POINTER(NrCommStats), c_size_t]),
        "nr_comm_box_counters_ex": (c_int, [c_void_p, ctypes.POINTER(NrBoxCounters), c_size_t,
                                            ctypes.POINTER(ctypes.c_uint64), c_size_t]),
        "nr_comm_box_status": (c_int, [c_void_p, c_char_p, c_size_t]),
        "nr_allreduce_multi": (c_int, [c_void_p, ctypes.POINTER(NrAllreduceReq), ctypes.c_uint,
                                       ctypes.POINTER(ctypes.c_uint64)]),
        "nr_comm_qp_errors": (c_int, [c_void_p, c_char_p, c_size_t]),
        "nr_strerror": (c_char_p, [c_int]),
        "nr_comm_last_error": (c_char_p, [c_void_p]),
    }
    for name, (res, args) in protos.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    cfg = NrConfig()
    lib.nr_config_init(ctypes.byref(cfg), ctypes.sizeof(cfg))
    got = {k: getattr(cfg, k) for k in _DEFAULTS}
    if got != _DEFAULTS:
        raise OSError(f"{lib._name}: nr_config_init() gives {got}, expected {_DEFAULTS}: "
                      "this libnetreduce does not match the Python package (struct nr_config "
                      "changed?); use the library built from the same source")
    return lib


def lib():
    """The loaded and checked libnetreduce (loaded once per process)."""
    global _lib
    with _lock:
        if _lib is None:
            _lib = _bind(ctypes.CDLL(_find()))
        return _lib


def strerror(code):
    return lib().nr_strerror(code).decode(errors="replace")


def last_error(comm=None):
    """nr_comm_last_error: of comm, or with None of this thread's last config/init call."""
    msg = lib().nr_comm_last_error(comm)
    return msg.decode(errors="replace") if msg else ""
