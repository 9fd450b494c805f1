#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One rank of e2e torch-collectives (tests/python/e2e_torch.sh): the backend
"netreduce" through the box on FSDP's collectives, each checked against what it
must give (every rank computes every rank's data):
  - all_gather_into_tensor of float32 with -0.0, a signalling NaN and Inf in its
    shard, of bfloat16 and of uint8 (FSDP's mixed-type parameters go as bytes),
    and the list form all_gather: every rank's bytes, byte for byte;
  - reduce_scatter_tensor of float32 SUM and AVG, bfloat16 SUM: this rank's share
    of the sum in rank order (float32) and rounded once (bfloat16), the input
    left as it was;
and every one of them counted through netreduce (netreduce.torch.stats()), none
delegated or handed to Gloo, with the library's box calls grown by as many.
--refused: on a box without reduce bor (refused() says what it checks).
Prints a line "RESULT {json}"; exits 1 on a wrong result.  Environment: the
testbed's (NR_*, MASTER_ADDR, RANK, WORLD_SIZE)."""
import json
import struct
import sys

import torch
import torch.distributed as dist

import netreduce.torch


def data(rank, n, dtype, seed):
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    x = (torch.randn(n, generator=g) * 2.0 ** torch.randint(-8, 8, (n,), generator=g)).to(dtype)
    return x


def fp32_specials(rank, n):
    """A float32 shard whose first words a float sum would not give back."""
    x = data(rank, n, torch.float32, 7)
    raw = [0x80000000, 0x7F800001, 0x7F800000, 0xFF800000]   # -0.0, sNaN, +Inf, -Inf
    head = torch.tensor(struct.unpack("<4f", struct.pack("<4I", *raw)), dtype=torch.float32)
    x[:4] = head
    return x


def same_bytes(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and \
        bytes(a.contiguous().view(torch.uint8).numpy()) == bytes(b.contiguous().view(torch.uint8).numpy())


def box_calls():
    lib = netreduce.torch.stats()["library"]
    return lib.get("box_calls", 0)


def refused():
    """--refused: a box whose aggregator has no reduce bor (the RTL's): the first
    all-gather finds the job refused and goes to Gloo, counted with the box's
    reason, and so do the later ones; the communicator goes on (an all-reduce
    through the box after them, exact)."""
    dist.init_process_group("netreduce")
    rank, world = dist.get_rank(), dist.get_world_size()
    fails = []
    for _ in range(2):
        mine = fp32_specials(rank, 6)
        out = torch.empty(6 * world, dtype=torch.float32)
        dist.all_gather_into_tensor(out, mine)
        if not same_bytes(out, torch.cat([fp32_specials(r, 6) for r in range(world)])):
            fails.append("all_gather_into_tensor through Gloo: not every rank's bytes")
    calls0 = box_calls()
    t = torch.arange(16, dtype=torch.float32) * (rank + 1)
    dist.all_reduce(t)
    if not torch.equal(t, torch.arange(16, dtype=torch.float32) * (world * (world + 1) // 2)):
        fails.append("the all-reduce after the refused all-gathers is wrong")
    if box_calls() - calls0 != 1:
        fails.append("the all-reduce after the refused all-gathers did not reach the library")
    st = netreduce.torch.stats()
    why = [v.get("why", "") for k, v in st.get("delegated", {}).items() if k.startswith("allgather")]
    got = [v["calls"] for k, v in st.get("delegated", {}).items() if k.startswith("allgather")]
    if got != [2] or not any("takes no all-gather job" in w and "bor" in w for w in why):
        fails.append(f"the all-gathers were not delegated with the box's reason: {st.get('delegated')}")
    print("RESULT " + json.dumps({"rank": rank, "delegated": st.get("delegated"), "fails": fails}),
          flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 1 if fails else 0


def main():
    if "--refused" in sys.argv:
        return refused()
    dist.init_process_group("netreduce")
    rank, world = dist.get_rank(), dist.get_world_size()
    fails, calls0 = [], box_calls()
    issued = 0

    # all-gathers, any type, byte for byte
    for name, make in (("fp32", lambda r: fp32_specials(r, 1001)),
                       ("bf16", lambda r: data(r, 777, torch.bfloat16, 8)),
                       ("uint8", lambda r: torch.arange(333, dtype=torch.int64).add(r * 7)
                        .remainder(256).to(torch.uint8))):
        mine = make(rank)
        out = torch.empty(mine.numel() * world, dtype=mine.dtype)
        dist.all_gather_into_tensor(out, mine)
        issued += 1
        want = torch.cat([make(r) for r in range(world)])
        if not same_bytes(out, want):
            fails.append(f"all_gather_into_tensor {name}: not every rank's bytes")
    parts = [torch.empty(5, dtype=torch.float32) for _ in range(world)]
    dist.all_gather(parts, fp32_specials(rank, 5))
    issued += 1
    for r, p in enumerate(parts):
        if not same_bytes(p, fp32_specials(r, 5)):
            fails.append(f"all_gather (list) part {r}: not rank {r}'s bytes")

    # reduce-scatters: the share of the rank-ordered sum, the input untouched
    n = 4099   # a share that splits the box's messages
    for name, dtype, op in (("fp32 SUM", torch.float32, dist.ReduceOp.SUM),
                            ("fp32 AVG", torch.float32, dist.ReduceOp.AVG),
                            ("bf16 SUM", torch.bfloat16, dist.ReduceOp.SUM)):
        src = data(rank, n * world, dtype, 9)
        keep = src.clone()
        out = torch.empty(n, dtype=dtype)
        dist.reduce_scatter_tensor(out, src, op=op)
        issued += 1
        acc = torch.zeros(n * world, dtype=torch.float32)
        for r in range(world):           # rank order in FP32, rounded once
            acc = acc + data(r, n * world, dtype, 9).float()
        if op == dist.ReduceOp.AVG:
            acc = acc / world
        want = acc.to(dtype)[rank * n:(rank + 1) * n]
        if not same_bytes(out, want):
            bad = int((out.float() != want.float()).sum())
            fails.append(f"reduce_scatter_tensor {name}: {bad} of {n} elements differ")
        if not same_bytes(src, keep):
            fails.append(f"reduce_scatter_tensor {name}: the input changed")

    st = netreduce.torch.stats()
    calls = box_calls() - calls0
    if calls != issued:
        fails.append(f"the library's box calls grew by {calls}, {issued} collectives issued")
    if st.get("delegated") or st.get("gloo", {}).get("allgather") or \
            st.get("gloo", {}).get("allgather_into_tensor"):
        fails.append(f"handed to Gloo: {st.get('delegated')} {st.get('gloo')}")
    out = {"rank": rank, "issued": issued, "box_calls": calls,
           "netreduce": st["netreduce"], "fails": fails}
    print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
