# SPDX-License-Identifier: BSD-3-Clause
"""What went where, for the whole process: the counters behind
netreduce.torch.stats() and report().

Every all-reduce the backend or the hook is handed is counted under its kind,
"all_reduce SUM float32 cpu contiguous" (collective, op, dtype, device,
layout): under "netreduce" once libnetreduce completed it, under "delegated"
when it went to Gloo instead, with the reason.  A delegation warns once per
kind (NetreduceFallbackWarning); with NR_STRICT=1 it raises
NetreduceUnsupported instead.  The other collectives (broadcast, barrier,
all-gather...) are Gloo's by design: counted under "gloo" by name, no warning;
so are the local phases of NR_TORCH_LOCAL=group (local.py), under its local
backend's name ("gloo", or "nccl" for CUDA tensors).
"library" holds libnetreduce's own counters (nr_comm_stats_ex) summed over the
process's communicators: a test compares them with "netreduce".  With
NR_SHORT_PPM, "tolerant" counts the requests asked to go tolerant (DDP's
gradient buckets; the library's tolerant_calls those it sent so) and, on rank
0, "box" holds the box's counters of the job: short_slots, short_denied,
left_out per rank and drop_eligible (with NR_DE_THRESH, "de_thresh").

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
            self._tolerant = {}    # kind -> [calls, bytes] of those asked to go tolerant
            self._delegated = {}   # kind -> [calls, bytes, why]
            self._calls = {}       # backend ("gloo", "nccl") -> collective -> calls
            self._warned = set()
            self._busy_s = 0.0     # time the communicators spent on requests
            self._first = None     # monotonic time of the first request
            self._last = None      # ... and of the end of the last one
            self._retired = {}     # library counters of closed communicators
            self._buckets = {}     # DDP bucket index -> [latencies (s), class]

    def through(self, k, nbytes, busy_s, t_end, tolerant=False):
        with self._lock:
            row = self._through.setdefault(k, [0, 0])
            row[0] += 1
            row[1] += nbytes
            if tolerant:
                row = self._tolerant.setdefault(k, [0, 0])
                row[0] += 1
                row[1] += nbytes
            self._busy_s += busy_s
            if self._first is None:
                self._first = t_end - busy_s
            self._last = t_end

    def bucket(self, index, latency_s, cls):
        """A DDP bucket's all-reduce done latency_s after the hook handed it over."""
        with self._lock:
            row = self._buckets.setdefault(index, [[], cls])
            row[0].append(latency_s)
            row[1] = cls

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

    def count(self, backend, collective, n=1):
        """n calls of a collective on another backend (Gloo's by design, a local phase)."""
        with self._lock:
            row = self._calls.setdefault(backend, {})
            row[collective] = row.get(collective, 0) + n

    def gloo(self, collective, n=1):
        self.count("gloo", collective, n)

    def retire(self, library):
        """A communicator closes: keep its library counters."""
        with self._lock:
            for key, v in library.items():
                self._retired[key] = self._retired.get(key, 0) + v

    def snapshot(self, live_library, box=None, de_thresh=0.0):
        with self._lock:
            lib = dict(self._retired)
            for counters in live_library:
                for key, v in counters.items():
                    lib[key] = lib.get(key, 0) + v
            return {
                "netreduce": {k: {"calls": c, "bytes": b} for k, (c, b) in self._through.items()},
                # of those, asked to go tolerant (DDP's gradient buckets with NR_SHORT_PPM):
                # library's tolerant_calls says how many went with the short DSCP
                "tolerant": {k: {"calls": c, "bytes": b} for k, (c, b) in self._tolerant.items()},
                # rank 0 of a job with a bound: the box's counters (Communicator.box_counters)
                "box": box,
                # NR_DE_THRESH: a tolerant packet under this x its bucket's RMS is drop-eligible
                "de_thresh": de_thresh,
                "delegated": {k: {"calls": c, "bytes": b, "why": w}
                              for k, (c, b, w) in self._delegated.items()},
                "gloo": dict(self._calls.get("gloo", {})),
                # NR_TORCH_LOCAL=group's local phases of CUDA tensors
                "nccl": dict(self._calls.get("nccl", {})),
                "library": lib,
                "busy_s": self._busy_s,
                "wall_s": (self._last - self._first) if self._first is not None else 0.0,
                # per DDP bucket (index: 0 the output side's): the median of its
                # all-reduces' latency, from the hook's handing it over to the result
                "buckets": {i: {"median_s": sorted(v)[len(v) // 2], "calls": len(v), "class": c}
                            for i, (v, c) in sorted(self._buckets.items()) if v},
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
           "allreduce_s": round(busy, 6), "wall_s": round(wall, 6),
           "tolerant": tolerant_summary(snap), "types": types_of(snap)}
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
            f"({types_text(out['types'])}) "
            f"{'through the box' if algo == 'box' else 'over the ring'}; {what} at most "
            f"{gain:.2f}x over a ring all-reduce at the same link rate (N={world}, traffic "
            f"ratio {ratio:.2f})")
    if gain < LITTLE:
        text += (f": little to gain, the job is compute-bound (all-reduce is "
                 f"{100 * share:.0f}% of its time)")
    dlcp = tolerant_text(snap)
    if dlcp:
        text += "; " + dlcp
    out["text"] = text
    return out


def types_of(snap):
    """Calls and bytes through netreduce by element type: {"float32": {"calls",
    "bytes"}, "bfloat16": ...} (the dtype of each kind, counters.kind)."""
    out = {}
    for k, v in snap["netreduce"].items():
        row = out.setdefault(k.split()[2], {"calls": 0, "bytes": 0})
        row["calls"] += v["calls"]
        row["bytes"] += v["bytes"]
    return out


def types_text(types):
    """'float32: 12 calls, bfloat16: 30 calls'"""
    return ", ".join(f"{t}: {v['calls']} calls" for t, v in sorted(types.items())) or "none"


def tolerant_summary(snap):
    """The bound on tolerant messages at work: calls asked to go tolerant, those
    the library sent with the short DSCP and those it sent exact, and the box's
    short_slots, short_denied (short_why: by reason), left_out, drop_eligible
    (tolerant contributions the box received, those of them drop-eligible, short
    slots of those alone; de_thresh: NR_DE_THRESH) and, with priority classes,
    short_by_class (rank 0 of a job with a bound)."""
    lib = snap.get("library", {})
    box = snap.get("box") or {}
    asked = sum(v["calls"] for v in snap.get("tolerant", {}).values())
    return {"asked_calls": asked,
            "tolerant_calls": lib.get("tolerant_calls", 0),
            "tolerant_bytes": lib.get("tolerant_bytes", 0),
            "tolerant_exact_calls": lib.get("tolerant_exact_calls", 0),
            "short_ppm": box.get("short_ppm"), "short_slots": box.get("short_slots"),
            "short_denied": box.get("short_denied"), "left_out": box.get("left_out"),
            "short_why": box.get("short_why"), "short_by_class": box.get("short_by_class"),
            "drop_eligible": box.get("drop_eligible"),
            "de_thresh": snap.get("de_thresh"), "box_error": box.get("error")}


def tolerant_text(snap):
    """One sentence on the bound, '' when no call asked to go tolerant."""
    t = tolerant_summary(snap)
    if not t["asked_calls"]:
        return ""
    text = (f"{t['asked_calls']} gradient all-reduces tolerant, {t['tolerant_calls']} of them "
            f"sent so ({t['tolerant_bytes'] / 2**20:.1f} MiB)")
    if t["tolerant_exact_calls"]:
        text += f", {t['tolerant_exact_calls']} exact (not markable)"
    if t["box_error"]:
        text += f"; the box's counters: {t['box_error']}"
    elif t["short_slots"] is not None:
        text += (f"; the box completed {t['short_slots']} packets short (bound "
                 f"{t['short_ppm']} ppm), {t['short_denied']} waited instead, left out "
                 f"per rank {t['left_out']}")
        why = {k: v for k, v in (t["short_why"] or {}).items() if v}
        if why:
            text += " (waited: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items())) + ")"
        if t["short_by_class"]:
            text += f", short by priority class (0 the lowest) {t['short_by_class']}"
        de = t["drop_eligible"] or {}
        if t["de_thresh"] and de.get("tolerant"):
            text += (f"; drop-eligible (under {t['de_thresh']:g} x a bucket's RMS): "
                     f"{de['received']} of {de['tolerant']} tolerant packets "
                     f"({100 * de['received'] / de['tolerant']:.1f}%), {de['short']} short "
                     "slots of them alone")
    return text


def now():
    return time.monotonic()
