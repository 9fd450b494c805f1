#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One rank of the PyTorch end-to-end tests: examples/train.py's training loop
with what the tests need around it.

    train_rank.py --mode box|hook|ring|hook-bf16|box-tolerant --out DIR [--stall-at STEP --stall-rank R]
                  [train.py options]

mode box: backend "netreduce" through the box; hook: Gloo backend with
netreduce's DDP hook; ring: backend "netreduce" with NR_ALGO=ring.  Saves
DIR/rankR.pt: the final parameters, per step DDP's bucket layout (which
parameter sits where in which all-reduced bucket; read from the gradients,
which are views into the buckets), and netreduce.torch.stats(), for
check_train.py.  --stall-at: rank R
stops calling collectives after that step (sleeps, alive).  Prints "START
<unix time>" on stderr before init_process_group; a failure prints "ERROR
<unix time> <message>" there and exits 3.
"""
import argparse
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "examples"))
import train  # noqa: E402  (examples/train.py; puts python on the path)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

MODES = {"box": ("netreduce", "none"), "hook": ("gloo", "netreduce"),
         "ring": ("netreduce-ring", "none"), "hook-bf16": ("gloo", "netreduce-bf16"),
         "box-tolerant": ("netreduce", "netreduce-tolerant")}


def bucket_layout(model):
    """[[(param index, offset, numel), ...] per bucket], buckets in the order of
    their lowest parameter index: not by address, since where the allocator put
    each bucket differs between processes (rank 0 does more work beside)."""
    buckets = {}
    for i, p in enumerate(model.parameters()):
        g = p.grad
        if hasattr(g, "untyped_storage"):   # torch 2.x (typed storages are deprecated)
            st = g.untyped_storage()
            ptr, size = st.data_ptr(), st.nbytes() // g.element_size()
        else:
            ptr, size = g.storage().data_ptr(), g.storage().size()
        buckets.setdefault(ptr, []).append((i, g.storage_offset(), g.numel(), size))
    out = []
    for ptr in sorted(buckets, key=lambda b: min(r[0] for r in buckets[b])):
        rows = sorted(buckets[ptr], key=lambda r: r[1])
        size = rows[0][3]
        if sum(r[2] for r in rows) != size:
            raise SystemExit(f"bucket at {ptr:#x}: {size} elements, parameters cover "
                             f"{sum(r[2] for r in rows)}: not a plain concatenation")
        out.append([(i, off, n) for i, off, n, _ in rows])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--stall-at", type=int, default=0)
    p.add_argument("--stall-rank", type=int, default=1)
    a, rest = p.parse_known_args()
    backend, hook = MODES[a.mode]
    args = train.parse_args(rest + ["--backend", backend, "--ddp-hook", hook])
    # the first bucket too (DDP's default: 1 MiB) gets --bucket-cap-mb, so that a
    # small model spreads over several buckets
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_cap_mb * 1024 * 1024)
    layouts = []

    def after_backward(step, ddp):
        layouts.append(bucket_layout(ddp.module))
        if a.stall_at and step == a.stall_at and dist.get_rank() == a.stall_rank:
            print(f"rank {a.stall_rank}: stalling after step {step}", file=sys.stderr, flush=True)
            time.sleep(3600)

    print(f"START {time.time():.3f}", file=sys.stderr, flush=True)
    try:
        train.init(args)
        model = train.train(args, after_backward=after_backward)
    except Exception as e:  # noqa: BLE001 - the tests read the message
        print(f"ERROR {time.time():.3f} {e}", file=sys.stderr, flush=True)
        sys.exit(3)
    rank = dist.get_rank()
    import netreduce.torch
    torch.save({"rank": rank, "world": dist.get_world_size(), "mode": a.mode,
                "torch": str(torch.__version__), "stats": netreduce.torch.stats(),
                "params": [q.detach().clone() for q in model.parameters()],
                "layouts": layouts}, os.path.join(a.out, f"rank{rank}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
