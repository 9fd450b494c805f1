#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Data-parallel training of an MLP on scikit-learn's bundled digits (8x8
images, 10 classes; shipped with python3-sklearn, no download), one process
per rank, one thread per process, through Gloo or netreduce:

    torchrun-style env (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) plus, for
    netreduce, NR_BOX and NR_TOKEN (the box), then:

    train.py --backend gloo             # the baseline
    train.py --backend netreduce        # dist.init_process_group("netreduce"): through the box
    train.py --backend netreduce-ring   # the same backend, our ring (NR_ALGO=ring), no box
    train.py --backend gloo --ddp-hook netreduce   # Gloo, DDP's buckets through netreduce
    train.py --ddp-hook netreduce-tolerant   # the buckets tolerant (with NR_SHORT_PPM)
    train.py --backend gloo --ddp-hook netreduce-bf16   # ... as bfloat16 (half the bytes)
    train.py --backend gloo --ddp-hook torch-fp16  # Gloo's own 16-bit ring (torch's hook)

Rank 0 prints one JSON line per step (loss and accuracy of its batch, step
time and the CPU time its process used in it, cumulative training time; test
accuracy every --eval-every steps) and a
summary line: median and p90 step time after --warmup steps, training time to
--target-acc test accuracy.  Evaluation is not counted as training time.
Through netreduce the summary also has "netreduce": the bound on tolerant
gradients at work (NR_SHORT_PPM: gradient all-reduces asked to go tolerant and
sent so, the box's short_slots, short_denied and left_out per rank) and the
QPs' health on every rank at the end (qp_errors: 0 when every one is healthy).
Fixed seeds: the model, the split and DistributedSampler's shuffle are the
same in every run.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

try:
    import netreduce  # noqa: F401 - installed (ninja install) or on PYTHONPATH
except ImportError:       # run from the source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

BACKENDS = ("gloo", "netreduce", "netreduce-ring")
# --ddp-hook: netreduce's hooks (netreduce.torch) and torch's own 16-bit ones
# (default_hooks.bf16_compress_hook / fp16_compress_hook, over the backend)
HOOKS = ("none", "netreduce", "netreduce-tolerant", "netreduce-bf16", "netreduce-fp16",
         "torch-bf16", "torch-fp16")


def uses_netreduce(args):
    """Whether the run goes through netreduce at all (its backend or its hook)."""
    return args.backend != "gloo" or args.ddp_hook.startswith("netreduce")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=BACKENDS, default="netreduce")
    p.add_argument("--ddp-hook", choices=HOOKS, default="none",
                   help="DDP's comm hook: netreduce's (float32, exact or tolerant: with "
                        "NR_SHORT_PPM the box may complete a lost packet short; or the "
                        "gradients sent as bfloat16 or float16 through netreduce), or torch's "
                        "16-bit compress hooks over the backend (the baseline)")
    p.add_argument("--steps", type=int, default=70)
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the step-time figures")
    p.add_argument("--batch", type=int, default=8, help="samples per rank and step")
    p.add_argument("--hidden", default="1024,1024", help="hidden layer widths, comma list")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--target-acc", type=float, default=0.9,
                   help="test accuracy whose training time is reported")
    p.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    p.add_argument("--quiet", action="store_true", help="only the summary line")
    a = p.parse_args(argv)
    a.hidden = [int(h) for h in a.hidden.split(",") if h]
    if a.steps < 1 or a.batch < 1 or a.warmup < 0 or a.eval_every < 1:
        p.error("--steps, --batch, --eval-every must be >= 1 and --warmup >= 0")
    return a


def load_data(seed):
    """Digits as float32 in [0, 1]: (x_train, y_train, x_test, y_test); 360 test images."""
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    perm = np.random.RandomState(seed).permutation(len(x))
    x = torch.from_numpy(x[perm].astype(np.float32) / 16.0)
    y = torch.from_numpy(y[perm].astype(np.int64))
    return x[360:], y[360:], x[:360], y[:360]


def build_model(hidden, seed):
    torch.manual_seed(seed)
    layers, width = [], 64
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*layers)


def batches(x, y, rank, world, batch, seed):
    """The batches rank sees, step after step (DistributedSampler, epoch after epoch)."""
    ds = TensorDataset(x, y)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=seed,
                                 drop_last=True)
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        yield from DataLoader(ds, batch_size=batch, sampler=sampler, drop_last=True)
        epoch += 1


def init(args):
    """init_process_group for --backend (env:// rendezvous)."""
    if not uses_netreduce(args):
        dist.init_process_group("gloo")
        return
    import netreduce.torch  # noqa: F401 - registers the backend "netreduce"
    if args.backend == "netreduce-ring":
        os.environ["NR_ALGO"] = "ring"
    dist.init_process_group("gloo" if args.backend == "gloo" else "netreduce")


def netreduce_summary(args):
    """What netreduce says at the end (collective: every rank calls it): the
    tolerant gradients and the box's counters (rank 0's view), and the QPs of
    every rank (gathered through Gloo).  None without netreduce."""
    if not uses_netreduce(args):
        return None
    import netreduce.torch
    from netreduce.torch.counters import tolerant_summary
    healths = [None] * dist.get_world_size()
    dist.all_gather_object(healths, netreduce.torch.health())
    out = tolerant_summary(netreduce.torch.stats())
    out.update(qp_errors=sum(h["qp_errors"] for h in healths),
               failed_ranks=sum(1 for h in healths if h["failed"]),
               qp_error=next((h["qp_error"] for h in healths if h["qp_error"]), ""),
               # rank 0's DDP buckets: the median latency of each one's all-reduce
               buckets=netreduce.torch.stats().get("buckets"))
    return out


def train(args, after_backward=None, out=sys.stdout):
    """Train; after_backward(step, ddp_model) runs after each backward pass
    (gradients reduced), before the optimizer step.  Returns the model."""
    torch.set_num_threads(1)
    rank, world = dist.get_rank(), dist.get_world_size()
    xtr, ytr, xte, yte = load_data(args.seed)
    model = build_model(args.hidden, args.seed)
    nparams = sum(p.numel() for p in model.parameters())
    ddp = DDP(model, bucket_cap_mb=args.bucket_cap_mb, gradient_as_bucket_view=True)
    if args.ddp_hook.startswith("netreduce"):
        import netreduce.torch
        hook = {"netreduce": netreduce.torch.allreduce_hook,
                "netreduce-tolerant": netreduce.torch.tolerant_hook,
                "netreduce-bf16": netreduce.torch.bf16_hook,
                "netreduce-fp16": netreduce.torch.fp16_hook}
        ddp.register_comm_hook(netreduce.torch.hook_state(), hook[args.ddp_hook])
    elif args.ddp_hook.startswith("torch"):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(None, default_hooks.bf16_compress_hook if args.ddp_hook ==
                               "torch-bf16" else default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    stream = batches(xtr, ytr, rank, world, args.batch, args.seed)
    name = args.backend + ("" if args.ddp_hook == "none" else "+hook" if args.ddp_hook ==
                           "netreduce" else "+" + args.ddp_hook)

    def emit(obj):
        if rank == 0:
            print(json.dumps(obj), file=out, flush=True)

    times, train_s, reached = [], 0.0, None
    test_acc = None
    for step in range(1, args.steps + 1):
        x, y = next(stream)
        c0 = time.process_time()   # this process, all threads (ours and the library's)
        t0 = time.perf_counter()
        opt.zero_grad()
        logits = ddp(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        if after_backward:
            after_backward(step, ddp)
        opt.step()
        dt = time.perf_counter() - t0
        cpu = time.process_time() - c0
        train_s += dt
        if step > args.warmup:
            times.append(dt)
        row = {"step": step, "backend": name, "ranks": world, "loss": round(loss.item(), 6),
               "acc": round((logits.argmax(1) == y).float().mean().item(), 4),
               "step_s": round(dt, 6), "cpu_s": round(cpu, 6), "train_s": round(train_s, 6)}
        if step % args.eval_every == 0 or step == args.steps:
            with torch.no_grad():
                out_te = model(xte)
                test_acc = (out_te.argmax(1) == yte).float().mean().item()
                row["test_acc"] = round(test_acc, 4)
                row["test_loss"] = round(F.cross_entropy(out_te, yte).item(), 6)
            if reached is None and test_acc >= args.target_acc:
                reached = train_s
        if not args.quiet:
            emit(row)
    times.sort()
    nr = netreduce_summary(args)
    emit({"summary": True, "backend": name, "ranks": world, "torch": str(torch.__version__),
          "params": nparams,
          "grad_bytes": 4 * nparams, "steps": args.steps, "warmup": args.warmup,
          "batch": args.batch, "median_step_s": round(statistics.median(times), 6) if times else None,
          "p90_step_s": round(times[math.ceil(0.9 * len(times)) - 1], 6) if times else None,
          "target_acc": args.target_acc, "time_to_acc_s": round(reached, 6) if reached else None,
          "final_test_acc": round(test_acc, 4), "train_s": round(train_s, 6),
          **({"netreduce": nr} if nr is not None else {})})
    return model


def main(argv=None):
    args = parse_args(argv)
    init(args)
    train(args)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
