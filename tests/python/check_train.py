#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the ranks' final parameters (DIR/rankR.pt from train_rank.py) against
a single process that applies the same updates with the gradients summed the
way netreduce sums them:

  box   DDP's backend path: each rank's gradient divided by the world size
        (DDP does that before the all-reduce), summed in rank order (the box's
        ordered mode)
  hook  the DDP hook: raw gradients summed in rank order, then divided
  box-tolerant  the backend with netreduce's tolerant_hook (as hook)
  hook-bf16  netreduce's bf16 hook: each rank's gradients rounded to bfloat16,
        summed in FP32 in rank order and rounded once to bfloat16 (the box),
        then as float32 divided
  ring  as box, but each bucket summed chunk by chunk in ring order
        (netreduce.reference.ring_sum), with the bucket layout the ranks saw
  --groups G (with box): hosts of G ranks (NR_LOCAL_SIZE=G), or 2 racks of
        2 hosts with G = 2: each group's ranks in order, then the groups'
        sums in order (netreduce.reference.group_sum)

    check_train.py --mode box|hook|ring|hook-bf16|box-tolerant --dir DIR --world N [--groups G]
                   [--tolerant PPM [--de]] [train.py options]

Every rank must hold bit-identical parameters, equal to the reference bit for
bit; and its counters (netreduce.torch.stats()) must show every gradient byte
of every step through libnetreduce, in the library's own count too, and no
all-reduce delegated to Gloo.  --tolerant PPM (NR_SHORT_PPM): every
all-reduce (DDP's buckets) asked to go tolerant and the library sent every one
so (short DSCP), and rank 0's box holds the bound PPM for the job; when the box
completed packets short, the sums are not the reference's: then the ranks must
still agree bit for bit (the box sends every rank the same result).  --de
(NR_DE_THRESH set): rank 0's box received drop-eligible contributions, some
of the tolerant ones, and the summary names the threshold.  Exit 0 pass, 1
fail.
"""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "examples"))
import train  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from netreduce.reference import box_sum, group_sum, ring_sum  # noqa: E402


# mode -> (summation order, divide before the sum (DDP's backend path) or after (the hook))
MODES = {"box": ("box", True), "ring": ("ring", True), "hook": ("box", False),
         "hook-bf16": ("box-bf16", False), "box-tolerant": ("box", False)}
# bytes of a gradient element on the wire, by mode
ELEMENT_BYTES = {"hook-bf16": 2}


def reduce_step(order, scale_first, grads, layout, world, groups=1):
    """grads[r][i]: rank r's gradient of parameter i -> the reduced gradients."""
    nparam = len(grads[0])
    if scale_first:
        grads = [[t.div(world) for t in g] for g in grads]
    out = [None] * nparam
    if order == "box-bf16":   # rounded once each way: FP32 sums in rank order (the box)
        out = [box_sum([g[i].reshape(-1).to(torch.bfloat16).float() for g in grads])
               .to(torch.bfloat16).float().view_as(grads[0][i]) for i in range(nparam)]
    elif order in ("box", "groups"):   # element-wise: the bucket layout does not matter
        out = [group_sum([g[i].reshape(-1) for g in grads], groups if order == "groups" else 1)
               .view_as(grads[0][i]) for i in range(nparam)]
    else:
        for bucket in layout:
            flat = [torch.cat([g[i].reshape(-1) for i, _, _ in bucket]) for g in grads]
            total = ring_sum(flat)
            for i, off, n in bucket:
                start = off - bucket[0][1]
                out[i] = total[start:start + n].view_as(grads[0][i]).clone()
        if any(o is None for o in out):
            raise SystemExit("the ring layout does not cover every parameter")
    if not scale_first:
        out = [o.div(world) for o in out]
    return out


def reference(order, scale_first, args, world, layouts, groups=1):
    torch.set_num_threads(1)
    xtr, ytr, _, _ = train.load_data(args.seed)
    model = train.build_model(args.hidden, args.seed)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    streams = [train.batches(xtr, ytr, r, world, args.batch, args.seed) for r in range(world)]
    for step in range(args.steps):
        grads = []
        for r in range(world):
            x, y = next(streams[r])
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            grads.append([p.grad.detach().clone() for p in model.parameters()])
        reduced = reduce_step(order, scale_first, grads, layouts[step], world, groups)
        for p, g in zip(model.parameters(), reduced):
            p.grad.copy_(g)
        opt.step()
    return [p.detach() for p in model.parameters()]


def counted(r, want_bytes):
    """What rank r's netreduce.torch.stats() must say: every gradient byte of every
    step went through netreduce's all-reduces, libnetreduce counted the same calls
    and bytes as the backend (its all-gathers too: DDP checks the parameters' shapes
    across ranks with one), nothing was delegated and nothing failed."""
    st, rank, fail = r["stats"], r["rank"], []
    calls = sum(v["calls"] for v in st["netreduce"].values())
    nbytes = sum(v["bytes"] for v in st["netreduce"].values())
    grad_bytes = sum(v["bytes"] for k, v in st["netreduce"].items() if not k.startswith("allgather"))
    lib = st["library"]
    lib_calls = lib.get("box_calls", 0) + lib.get("ring_calls", 0)
    lib_bytes = lib.get("box_bytes", 0) + lib.get("ring_bytes", 0)
    # all-gathers (DDP's check of the parameters' shapes) go to Gloo on hosts of several
    # ranks, counted with the reason (nr_allgather is flat only); all-reduces never
    delegated = {k: v for k, v in st["delegated"].items() if not k.startswith("allgather")}
    if delegated:
        fail.append(f"rank {rank}: all-reduces delegated to Gloo: {delegated}")
    if grad_bytes != want_bytes:
        fail.append(f"rank {rank}: {grad_bytes} bytes all-reduced through netreduce, expected "
                    f"{want_bytes} (every step's gradients)")
    if (calls, nbytes) != (lib_calls, lib_bytes):
        fail.append(f"rank {rank}: the backend claims {calls} calls and {nbytes} bytes, "
                    f"libnetreduce counted {lib_calls} and {lib_bytes}")
    if lib.get("failed_calls"):
        fail.append(f"rank {rank}: {lib['failed_calls']} libnetreduce calls failed")
    return fail


def drop_eligible(r):
    """Rank 0 with NR_DE_THRESH: the library marked small packets drop-eligible and
    the box received them among the tolerant ones.  The failures."""
    st = r["stats"]
    de = (st.get("box") or {}).get("drop_eligible") or {}
    if not st.get("de_thresh"):
        return [f"rank 0: stats()['de_thresh'] is {st.get('de_thresh')!r}: NR_DE_THRESH unseen"]
    if not 0 < de.get("received", 0) < de.get("tolerant", 0):
        return [f"rank 0: the box's drop_eligible {de}: expected some of the tolerant "
                "contributions drop-eligible, not none and not all"]
    return []


def tolerant(r, ppm, world):
    """What rank r's stats must say with the bound: every all-reduce asked to go
    tolerant and sent so; rank 0: the box holds the bound for the job.  The
    failures, and the box's short_slots (rank 0; else None)."""
    st, rank, fail = r["stats"], r["rank"], []
    # every all-reduce; DDP's all-gathers (its check of the parameters' shapes) are exact
    calls = sum(v["calls"] for k, v in st["netreduce"].items() if not k.startswith("allgather"))
    asked = sum(v["calls"] for v in st.get("tolerant", {}).values())
    lib = st["library"]
    if asked != calls:
        fail.append(f"rank {rank}: {asked} of {calls} all-reduces asked to go tolerant")
    if lib.get("tolerant_calls") != calls or lib.get("tolerant_exact_calls"):
        fail.append(f"rank {rank}: the library sent {lib.get('tolerant_calls')} of {calls} "
                    f"tolerant, {lib.get('tolerant_exact_calls')} exact")
    if rank != 0:
        return fail, None
    box = st.get("box") or {}
    if box.get("short_ppm") != ppm or box.get("ranks") != world or \
            len(box.get("left_out") or []) != world:
        fail.append(f"rank 0: the box's counters of the job {box}: expected the bound {ppm} "
                    f"and left_out for {world} ranks")
    elif sum((box.get("short_why") or {}).values()) != box.get("short_denied"):
        fail.append(f"rank 0: the box's short_why {box.get('short_why')} does not add up to "
                    f"short_denied {box.get('short_denied')}")
    return fail, box.get("short_slots")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=tuple(MODES), required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--groups", type=int, default=1)
    p.add_argument("--tolerant", type=int, default=0, metavar="PPM")
    p.add_argument("--de", action="store_true")
    a, rest = p.parse_known_args()
    args = train.parse_args(rest)
    ranks = [torch.load(os.path.join(a.dir, f"rank{r}.pt")) for r in range(a.world)]
    fail = []
    for r in ranks[1:]:
        same = all(torch.equal(x, y) for x, y in zip(ranks[0]["params"], r["params"]))
        if not same:
            fail.append(f"rank {r['rank']}'s parameters differ from rank 0's")
        if r["layouts"] != ranks[0]["layouts"]:
            fail.append(f"rank {r['rank']}'s bucket layouts differ from rank 0's")
    layouts = ranks[0]["layouts"]
    if len(layouts) != args.steps:
        fail.append(f"{len(layouts)} steps recorded, expected {args.steps}")
    nbuckets = max(len(lay) for lay in layouts)
    order, scale_first = MODES[a.mode]
    if a.groups > 1:
        if a.mode != "box":
            print("check_train.py: --groups goes with --mode box", file=sys.stderr)
            return 2
        order = "groups"
    short = None   # packets the box completed short (rank 0 asked it)
    de = None      # --de: the box's drop_eligible
    if a.tolerant:
        for r in ranks:
            f, s = tolerant(r, a.tolerant, a.world)
            fail += f
            short = s if r["rank"] == 0 else short
            if a.de and r["rank"] == 0:
                fail += drop_eligible(r)
                de = r["stats"]["box"]["drop_eligible"]
    ref = reference(order, scale_first, args, a.world, layouts, a.groups)
    for i, (x, y) in enumerate(zip(ranks[0]["params"], ref)):
        if short:   # sums without a lost contribution: not the reference's
            break
        if not torch.equal(x, y):
            d = (x - y).abs()
            fail.append(f"parameter {i} {tuple(x.shape)}: {int((d > 0).sum())} elements differ "
                        f"from the reference (max |diff| {float(d.max()):.3g})")
    # Would another summation order have passed too?  Then the check tells nothing.
    other = "ring" if order in ("box", "box-bf16") else "box"
    alt = reference(other, scale_first, args, a.world, layouts)   # groups: vs rank order
    if all(torch.equal(x, y) for x, y in zip(ref, alt)):
        fail.append(f"the {order} and {other} summation orders give identical parameters: "
                    "the check cannot tell them apart (change the seed or the model)")
    grad_bytes = ELEMENT_BYTES.get(a.mode, 4) * sum(x.numel() for x in ref)
    calls = 0
    for r in ranks:
        fail += counted(r, args.steps * grad_bytes)
        calls += sum(v["calls"] for k, v in r["stats"]["netreduce"].items()
                     if not k.startswith("allgather"))
    summary = (f"{a.world} ranks, {args.steps} steps, {sum(x.numel() for x in ref)} parameters, "
               f"up to {nbuckets} DDP buckets per step, torch {ranks[0]['torch']}, "
               f"{calls // a.world} all-reduces a rank through libnetreduce, none delegated")
    if fail:
        print(f"FAIL ({a.mode}): {summary}")
        for f in fail:
            print("  " + f)
        return 1
    if de:
        summary += (f", drop-eligible: {de['received']} of {de['tolerant']} tolerant "
                    f"contributions, {de['short']} short slots of them alone")
    if short:
        print(f"OK ({a.mode}): {summary}, tolerant (bound {a.tolerant} ppm): the box completed "
              f"{short} packets short, so the sums are not the reference's; every rank "
              f"bit-identical to the others")
        return 0
    print(f"OK ({a.mode}): {summary}: every rank bit-identical to the single-process "
          f"reference ({order}-ordered sum; the {other} order would differ)" +
          (f"; every bucket tolerant (bound {a.tolerant} ppm), none completed short"
           if a.tolerant else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
