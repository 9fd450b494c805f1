#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""How exact a 16-bit all-reduce is, measured side by side on the same data:
netreduce (through the box with NR_BOX: FP32 sums in rank order rounded
once; without: our ring, rounded at every hop) and Gloo's all-reduce of the
same tensor (its ring, rounded at every hop; torch 1.13's Gloo has fp16, not
bf16), against the exact sum (float64).

One process per rank, torch's env:// rendezvous (MASTER_ADDR, MASTER_PORT,
RANK, WORLD_SIZE), as tests/testbed/run and torchrun set them:

    accuracy.py --dtype bf16,fp16 --dist normal,wide [--count N] [--seed S] [--check]

Every rank's gradients come from (seed, rank): normal N(0, 1) scaled to
gradients' size, or "wide" (an exponent spread over 2^-s..2^s on top).  Rank 0
regenerates them all, computes the exact sum and the rounded-once reference,
and prints one JSON line a type and distribution: the errors of netreduce, of Gloo and of the
reference in ulps of the type at the sum's scale (sum of |x|: the ulp at the
exact value is unbounded where values cancel), mean and max; "box_exact":
whether netreduce's result is the rounded-once reference bit for bit (through
the box it must be).  --check: exit 1 unless the box's result is the
reference, and its mean and max errors are at most the rings' (ours and Gloo's).
"""
import argparse
import json
import os
import sys

import numpy as np

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("SKIP: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

try:
    import netreduce.torch   # registers the backend (installed, or PYTHONPATH=python)
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import netreduce.torch   # noqa: E402

TYPES = {"bf16": (torch.bfloat16, 7, -126, 30), "fp16": (torch.float16, 10, -14, 10)}


def gradients(seed, rank, count, dtype, dist_):
    """Rank's gradients (float32 before rounding to dtype)."""
    rng = np.random.default_rng([seed, rank])
    g = rng.standard_normal(count) * (1.0 if dtype == "fp16" else 1e-3)
    if dist_ == "wide":
        s = TYPES[dtype][3]
        g = np.ldexp(g, rng.integers(-s, s + 1, count))
    return torch.from_numpy(g.astype(np.float32)).to(TYPES[dtype][0])


def ulps(got, exact, scale, dtype):
    """|got - exact| in ulps of dtype at scale, over the finite elements: (mean, max)."""
    _, mant, emin, _ = TYPES[dtype]
    g = got.double().numpy()
    ok = np.isfinite(g) & np.isfinite(exact)
    e = np.maximum(np.floor(np.log2(np.where(scale > 0, scale, 1.0))), emin)
    err = np.abs(g - exact)[ok] / np.ldexp(1.0, (e[ok] - mant).astype(int))
    return float(err.mean()), float(err.max())


def measure(a, dtype, dist_, algo, gloo, rank, world):
    """One all-reduce of each (netreduce, Gloo) on dtype gradients of dist_;
    rank 0's row (and its failures with --check), None elsewhere."""
    x = gradients(a.seed, rank, a.count, dtype, dist_)
    kind = f"all_reduce SUM {str(TYPES[dtype][0]).replace('torch.', '')} cpu contiguous"
    before = netreduce.torch.stats()["netreduce"].get(kind, {"calls": 0})["calls"]
    nr = x.clone()
    dist.all_reduce(nr)
    through = netreduce.torch.stats()["netreduce"].get(kind, {"calls": 0})["calls"] - before
    gl, why = x.clone(), None
    try:
        dist.all_reduce(gl, group=gloo)
    except RuntimeError as e:    # torch 1.13's Gloo: "Invalid scalar type" for bf16
        gl, why = None, str(e).splitlines()[0]
    if rank != 0:
        return None, []
    xs = [gradients(a.seed, r, a.count, dtype, dist_) for r in range(world)]
    wide = [t.double().numpy() for t in xs]
    exact, scale = sum(wide), sum(np.abs(w) for w in wide)
    acc = xs[0].float()
    for t in xs[1:]:
        acc = acc + t.float()      # FP32, rank order
    ref = acc.to(TYPES[dtype][0])
    row = {"ranks": world, "dtype": dtype, "dist": dist_, "count": a.count, "netreduce": algo,
           "torch": torch.__version__, "through_netreduce": through,
           "netreduce_exact": bool(torch.equal(nr.view(torch.int16), ref.view(torch.int16))),
           "netreduce_ulps": ulps(nr, exact, scale, dtype),
           "rounded_once_ulps": ulps(ref, exact, scale, dtype),
           "gloo_ulps": ulps(gl, exact, scale, dtype) if gl is not None else None}
    if why:
        row["gloo"] = why
    fails = []
    box = row["netreduce_ulps"] if algo == "box" else row["rounded_once_ulps"]
    rings = [row["gloo_ulps"]] + ([row["netreduce_ulps"]] if algo == "ring" else [])
    if through != 1:
        fails.append(f"{through} all-reduces of {kind} through netreduce, expected 1")
    if algo == "box" and not row["netreduce_exact"]:
        fails.append(f"{dtype} {dist_}: the box's result is not the rounded-once reference")
    for r in rings:
        if r is not None and (box[0] > r[0] or box[1] > r[1]):
            fails.append(f"{dtype} {dist_}: rounded once {box} is less exact than a ring's {r}")
    return row, fails


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="bf16,fp16", help="comma list of bf16, fp16")
    p.add_argument("--dist", default="normal,wide", help="comma list of normal, wide")
    p.add_argument("--count", type=int, default=65536)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    for t in a.dtype.split(","):
        if t not in TYPES:
            p.error(f"--dtype {t}: bf16 or fp16")
    for d in a.dist.split(","):
        if d not in ("normal", "wide"):
            p.error(f"--dist {d}: normal or wide")
    os.environ.setdefault("NR_TIMEOUT_MS", "30000")
    dist.init_process_group("netreduce")
    rank, world = dist.get_rank(), dist.get_world_size()
    algo = dist.distributed_c10d._get_default_group().worker.algo
    gloo = dist.new_group(backend="gloo")
    fails = []
    for t in a.dtype.split(","):
        for d in a.dist.split(","):
            row, f = measure(a, t, d, algo, gloo, rank, world)
            if row is not None:
                print(json.dumps(row), flush=True)
            fails += f
    for f in fails:
        print(f"FAIL: {f}", file=sys.stderr)
    dist.destroy_process_group()
    return 1 if a.check and fails else 0


if __name__ == "__main__":
    sys.exit(main())
