# SPDX-License-Identifier: BSD-3-Clause
"""What went where, for the whole process: the counters behind
netreduce.torch.stats() and report().

Every all-reduce the backend or the hook is handed is counted under its kind,
"all_reduce SUM float32 cpu contiguous" (collective, op, dtype, device,
layout): under "netreduce" once libnetreduce completed it, under "delegated"
when it went to Gloo instead, with the reason.  A delegation warns once per
kind (NetreduceFallbackWarning); with NR_STRICT=1 it raises
NetreduceUnsupported instead.  The other collectives (broadcast, barrier,
all-gather...) are Gloo's by design: counted under "gloo" by name, no warning.
"library" holds libnetreduce's own counters (nr_comm_stats) summed over the
process's communicators: a test compares them with "netreduce".

report() is the communication share: the time the communicators spent in
all-reduce against the wall time since the first one, and what the box can
bring at that share (Amdahl's law with the traffic ratio of a ring,
2(N-1)/N).  Rank 0 prints it when the process group shuts down.
"""
import os
import threading
import time
import warnings

from ..comm import NetreduceError


class NetreduceFallbackWarning(UserWarning):
    """An all-reduce netreduce cannot take went to Gloo (once per kind)."""


class NetreduceUnsupported(NetreduceError):
    """NR_STRICT=1: an all-reduce netreduce cannot take (instead of delegating it)."""


def strict():
    """NR_STRICT=1 (or true/yes): raise instead of delegating."""
    return os.environ.get("NR_STRICT", "").lower() in ("1", "true", "yes")


def kind(collective, op, tensor):
    """'all_reduce SUM float32 cuda contiguous': what a request is, for the counters."""
    if tensor.is_sparse:
        layout = "sparse"
    elif not tensor.is_contiguous():
        layout = "strided"
    else:
        layout = "contiguous"
    dtype = str(tensor.dtype).replace("torch.", "")
    return f"{collective} {op} {dtype} {tensor.device.type} {layout}"


class Stats:
    """The process's counters; thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        with self._lock:
            self._through = {}     # kind -> [calls, bytes]
            self._delegated = {}   # kind -> [calls, bytes, why]
            self._gloo = {}        # collective -> calls
            self._warned = set()
            self._busy_s = 0.0     # time the communicators spent on requests
            self._first = None     # monotonic time of the first request
            self._last = None      # ... and of the end of the last one
            self._retired = {}     # library counters of closed communicators

    def through(self, k, nbytes, busy_s, t_end):
        with self._lock:
            row = self._through.setdefault(k, [0, 0])
            row[0] += 1
            row[1] += nbytes
            self._busy_s += busy_s
            if self._first is None:
                self._first = t_end - busy_s
            self._last = t_end

    def delegate(self, k, nbytes, why, rank, job):
        """Count an all-reduce that goes to Gloo; warn once per kind, or raise (NR_STRICT)."""
        if strict():
            raise NetreduceUnsupported(rank, job, k, 0, f"netreduce cannot take it ({why}) and "
                                       "NR_STRICT=1 forbids handing it to Gloo")
        with self._lock:
            row = self._delegated.setdefault(k, [0, 0, why])
            row[0] += 1
            row[1] += nbytes
            first = k not in self._warned
            self._warned.add(k)
        if first:
            warnings.warn(f"netreduce: {k} goes to Gloo, not through netreduce: {why} "
                          "(warned once per kind; netreduce.torch.stats() counts them; "
                          "NR_STRICT=1 raises instead)", NetreduceFallbackWarning, stacklevel=4)

    def gloo(self, collective):
        with self._lock:
            self._gloo[collective] = self._gloo.get(collective, 0) + 1

    def retire(self, library):
        """A communicator closes: keep its library counters."""
        with self._lock:
            for key, v in library.items():
                self._retired[key] = self._retired.get(key, 0) + v

    def snapshot(self, live_library):
        with self._lock:
            lib = dict(self._retired)
            for counters in live_library:
                for key, v in counters.items():
                    lib[key] = lib.get(key, 0) + v
            return {
                "netreduce": {k: {"calls": c, "bytes": b} for k, (c, b) in self._through.items()},
                "delegated": {k: {"calls": c, "bytes": b, "why": w}
                              for k, (c, b, w) in self._delegated.items()},
                "gloo": dict(self._gloo),
                "library": lib,
                "busy_s": self._busy_s,
                "wall_s": (self._last - self._first) if self._first is not None else 0.0,
            }


STATS = Stats()

# Below this share of the job's time in all-reduce, the box has little to give.
LITTLE = 1.10


def share_report(snap, world, algo, rank=0):
    """The communication share and the box's possible gain, as a dict with 'text'."""
    busy, wall = snap["busy_s"], snap["wall_s"]
    nbytes = sum(v["bytes"] for v in snap["netreduce"].values())
    calls = sum(v["calls"] for v in snap["netreduce"].values())
    out = {"rank": rank, "world": world, "algo": algo, "calls": calls, "bytes": nbytes,
           "allreduce_s": round(busy, 6), "wall_s": round(wall, 6)}
    if calls == 0 or wall <= 0 or world < 2:
        out["share"] = None
        why = f"a job of {world} rank" if world < 2 else "no all-reduce went through netreduce"
        out["text"] = f"netreduce rank {rank}: {why}: no communication share to report"
        return out
    share = min(1.0, busy / wall)
    # a ring moves 2(N-1)/N times the buffer over each host link, the box once
    ratio = 2.0 * (world - 1) / world
    if algo == "box":
        # measured through the box: the same job on a ring would spend ratio x longer
        gain = (1 - share) + share * ratio
        what = "the box brings this job"
    else:
        gain = 1.0 / ((1 - share) + share / ratio)
        what = "a box would bring this job"
    out.update(share=round(share, 4), ring_traffic_ratio=round(ratio, 4), gain=round(gain, 4))
    text = (f"netreduce rank {rank}: all-reduce took {busy:.2f} s of {wall:.2f} s since the "
            f"first one ({100 * share:.0f}%), {calls} calls, {nbytes / 2**20:.1f} MiB "
            f"{'through the box' if algo == 'box' else 'over the ring'}; {what} at most "
            f"{gain:.2f}x over a ring all-reduce at the same link rate (N={world}, traffic "
            f"ratio {ratio:.2f})")
    if gain < LITTLE:
        text += (f": little to gain, the job is compute-bound (all-reduce is "
                 f"{100 * share:.0f}% of its time)")
    out["text"] = text
    return out


def now():
    return time.monotonic()
