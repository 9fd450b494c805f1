#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gloo_allreduce.py: the Gloo baseline of the end-to-end testbed.

PyTorch's torch.distributed all_reduce on the "gloo" backend, with the same
sweep, check and output as nr-allreduce-perf and nr-mpi-allreduce
("algo":"gloo"), so tests/testbed/run --algo gloo puts what PyTorch users run
today next to netreduce and the ring:

  gloo_allreduce.py -b 16M -e 64M -f 2 --iters 2 --warmup 1 --check --json

The rendezvous is torch's env:// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE;
GLOO_SOCKET_IFNAME picks the interface), as the testbed sets them.  time_us
is the median of one call on rank 0, after a barrier; algbw = bytes / time
(1e9 bytes/s), busbw = algbw * 2(N-1)/N.

--check: Gloo does not define its summation order (its ring sums each chunk
starting at a different rank), so an element is wrong when it differs from
the rank-ordered reference by more than 1e-5 * (sum of |contributions|), or
from rank 0's result.  The contributions are nr-mpi-allreduce's.

--dtype fp16 or bf16 (torch 2.x's Gloo; 1.13's sums fp16 only): the same
contributions rounded to the type, all-reduced as it (Gloo's ring rounds at
every hop), bytes = elements x 2; --check then allows the ring's roundings,
world x 2^-7 (bf16) or 2^-10 (fp16) of the sum of |contributions|.

--allgather, --reduce-scatter (as nr-allreduce-perf's): all_gather (into views
of one tensor: Gloo has no all_gather_into_tensor on 1.13 and 2.6) and
reduce_scatter_tensor (where Gloo has none, all_reduce and the share, as its
users do: "via":"all_reduce") of each size (the bytes gathered, or the input),
cut to a multiple of the ranks; busbw = algbw * (N-1)/N; "coll" in the JSON.
--check: an all-gather must give every rank's bytes, a reduce-scatter's share
is held to the all-reduce's tolerance.

Exit: 0 all right, 1 some element wrong, 2 error.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

REL_TOL = 1e-5


def size_arg(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        if s and s[-1].upper() in mult:
            return int(s[:-1]) * mult[s[-1].upper()]
        return int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {s!r} (bytes, K/M/G suffixes)")


def elem(rank, count):
    """nr-mpi-allreduce's elem(rank, i) for i < count, as float32."""
    i = np.arange(count, dtype=np.uint64)
    x = ((i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    x ^= np.uint32((rank * 40503 + 1) & 0xFFFFFFFF)
    x ^= x >> np.uint32(15)
    x = (x.astype(np.uint64) * np.uint64(0x2C1B3C6D) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    x ^= x >> np.uint32(12)
    v = (x & np.uint32(0xFFFFFF)).astype(np.float32) / np.float32(0x1000000) - np.float32(0.5)
    return v * np.float32(3.0) + np.float32(0.001) * np.float32(rank)


# --dtype: torch's type, the check's relative tolerance per rank (16-bit: a rounding a hop)
DTYPES = {"fp32": ("float32", 0.0), "bf16": ("bfloat16", 2.0 ** -7), "fp16": ("float16", 2.0 ** -10)}


def contributions(rank, count, dtype):
    """elem() as a tensor of dtype (rounded to it)."""
    import torch
    return torch.from_numpy(elem(rank, count)).to(getattr(torch, DTYPES[dtype][0]))


def wrong_elements(got, root_got, world, dtype):
    """got, root_got: tensors of dtype."""
    g = got.double().numpy()
    ref = np.zeros(g.shape, dtype=np.float32)
    mag = np.zeros(g.shape, dtype=np.float64)
    for r in range(world):
        v = contributions(r, g.size, dtype).float().numpy()
        ref += v
        mag += np.abs(v.astype(np.float64))
    tol = REL_TOL if dtype == "fp32" else world * DTYPES[dtype][1]
    off = np.abs(g - ref.astype(np.float64)) > tol * mag + 1e-30
    off |= (got != root_got).numpy() & ~(np.isnan(g) & np.isnan(root_got.double().numpy()))
    return int(off.sum())


# Every tensor a collective used, alive until the process group is destroyed: torch
# 2.6's Gloo hung in destroy_process_group now and then when a collective's tensors
# had been freed before it (a function's locals), never with them alive.
_KEEP = []


def collective(o, send, rank, world):
    """--allgather or --reduce-scatter of send (count elements, a multiple of world):
    the median time of one call, and (--check) the wrong elements over all ranks."""
    import torch
    import torch.distributed as dist
    share = send.numel() // world
    if o.allgather:   # into views of out: Gloo has no all_gather_into_tensor on 1.13 and 2.6
        mine, out = send[rank * share:(rank + 1) * share].clone(), torch.empty_like(send)
        views = list(out.split(share))
        call = lambda: dist.all_gather(views, mine)   # noqa: E731
    else:
        out = torch.empty(share, dtype=send.dtype)
        call = lambda: dist.reduce_scatter_tensor(out, send)   # noqa: E731
        try:
            call()
        except RuntimeError:   # a Gloo without reduce-scatter: what its users do instead
            buf = send.clone()

            def call():
                buf.copy_(send)
                dist.all_reduce(buf)
                out.copy_(buf[rank * share:(rank + 1) * share])
            o.gloo_rs = "all_reduce"
    _KEEP.append((send, out, call))   # call holds the views, mine and buf
    for _ in range(o.warmup):
        call()
    dist.barrier()
    t = []
    for _ in range(o.iters):
        t0 = time.monotonic()
        call()
        t.append(time.monotonic() - t0)
    wrong = 0
    if o.check:
        if o.allgather:   # every rank's share of its own contributions, as they were
            want = torch.cat([contributions(r, send.numel(), o.dtype)[r * share:(r + 1) * share]
                              for r in range(world)])
            bad = int((out.view(-1).view(torch.uint8) != want.view(torch.uint8)).sum())
        else:
            bad = wrong_share(out, rank, share, world, o.dtype)
        w = torch.tensor([bad], dtype=torch.int64)
        dist.all_reduce(w)
        wrong = int(w.item())
        _KEEP.append(w)
    return statistics.median(t), wrong


def wrong_share(got, rank, share, world, dtype):
    """wrong_elements() of a reduce-scatter's share (no result of rank 0's to hold it to)."""
    g = got.double().numpy()
    ref = np.zeros(g.shape, dtype=np.float32)
    mag = np.zeros(g.shape, dtype=np.float64)
    for r in range(world):
        v = contributions(r, share * world, dtype).float().numpy()[rank * share:(rank + 1) * share]
        ref += v
        mag += np.abs(v.astype(np.float64))
    tol = REL_TOL if dtype == "fp32" else world * DTYPES[dtype][1]
    return int((np.abs(g - ref.astype(np.float64)) > tol * mag + 1e-30).sum())


def main():
    ap = argparse.ArgumentParser(description="torch.distributed all_reduce on Gloo, "
                                 "as nr-allreduce-perf measures netreduce")
    ap.add_argument("-b", "--minbytes", type=size_arg, default=4)
    ap.add_argument("-e", "--maxbytes", type=size_arg, default=1 << 20)
    ap.add_argument("-f", "--stepfactor", type=float, default=2.0)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="fp32")
    coll = ap.add_mutually_exclusive_group()
    coll.add_argument("--allgather", action="store_true")
    coll.add_argument("--reduce-scatter", action="store_true")
    o = ap.parse_args()
    if o.iters < 1 or o.warmup < 0 or o.stepfactor <= 1:
        ap.error("--iters >= 1, --warmup >= 0, -f > 1")

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    wrong_total = 0
    es = 4 if o.dtype == "fp32" else 2
    size = max(es, o.minbytes)
    while True:   # every size from -b, times -f, up to -e inclusive
        count = size // es
        if o.allgather or o.reduce_scatter:   # a whole share a rank
            count = max(world, count // world * world)
        send = contributions(rank, count, o.dtype)
        if o.allgather or o.reduce_scatter:
            med, wrong = collective(o, send, rank, world)
        else:
            buf = send.clone()
            for _ in range(o.warmup):
                buf.copy_(send)
                dist.all_reduce(buf)
            dist.barrier()
            t = []
            for _ in range(o.iters):
                buf.copy_(send)
                t0 = time.monotonic()
                dist.all_reduce(buf)
                t.append(time.monotonic() - t0)
            med = statistics.median(t)
            wrong = 0
            if o.check:
                root_got = buf.clone()
                dist.broadcast(root_got, 0)
                w = torch.tensor([wrong_elements(buf, root_got, world, o.dtype)], dtype=torch.int64)
                dist.reduce(w, 0)
                wrong = int(w.item())
        if rank == 0:
            nbytes = count * es
            algbw = nbytes / med / 1e9
            busbw = algbw * (1 if o.allgather or o.reduce_scatter else 2) * (world - 1) / world
            if o.json:
                row = {"algo": "gloo", "dtype": o.dtype, "ranks": world, "bytes": nbytes,
                       "time_us": round(med * 1e6, 2), "algbw_gbps": algbw,
                       "busbw_gbps": busbw, "wrong": wrong}
                if o.allgather or o.reduce_scatter:
                    row["coll"] = "allgather" if o.allgather else "reduce_scatter"
                if getattr(o, "gloo_rs", None):   # how this Gloo reduce-scattered
                    row["via"] = o.gloo_rs
                print(json.dumps(row, separators=(",", ":")), flush=True)
            else:
                print(f"{nbytes:12d} {count:12d} {med * 1e6:12.2f} {algbw:12.4f} "
                      f"{busbw:12.4f} {wrong:8d}", flush=True)
            wrong_total += wrong
        if size >= o.maxbytes:
            break
        size = min(o.maxbytes, max(size + es, int(size * o.stepfactor)))
    dist.destroy_process_group()
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
