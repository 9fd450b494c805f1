# SPDX-License-Identifier: BSD-3-Clause
"""The exact float32 sums netreduce computes, for checking results bit for bit.

box_sum: the box's ordered mode adds the ranks' contributions in rank order,
element by element: ((x0 + x1) + x2) + ... (dataplane/README.md).

ring_sum: nr_ring_allreduce splits the buffer into world chunks (count // world
elements each, the first count % world chunks one more) and sums chunk c in
ring order starting at rank c: ((x_c + x_{c+1}) + x_{c+2}) + ... + x_{c+world-1}
(host/netreduce.h).

group_sum(xs, group): nr_allreduce on hosts of `group` ranks (NR_LOCAL_SIZE,
ranks host by host): each host's ranks in local-rank order, then the hosts'
sums in host order: ((x0 + x1) + ...) + ((x_G + x_{G+1}) + ...) + ...
(host/netreduce.h); with group 1, box_sum.  Also the order across 2 racks of
2 hosts (docs/racks.md): each rack's two terms, then the two racks' sums
(two terms commute, so a rack on its ring and the racks' ring add the same).

All take a list of equally long 1-D float32 torch tensors (rank order) and
return a new tensor.
"""
import torch


def _check(xs):
    if not xs:
        raise ValueError("need one tensor per rank")
    n = xs[0].numel()
    for r, x in enumerate(xs):
        if x.dtype != torch.float32 or x.dim() != 1 or x.numel() != n:
            raise ValueError(f"rank {r}: need a 1-D float32 tensor of {n} elements, got "
                             f"{x.dtype} {tuple(x.shape)}")
    return n


def box_sum(xs):
    _check(xs)
    out = xs[0].clone()
    for x in xs[1:]:
        out = out + x   # one float32 rounding per addition, in rank order
    return out


def ring_chunks(count, world):
    """[(start, length)] of the world chunks of a count-element buffer."""
    base, extra = divmod(count, world)
    chunks, start = [], 0
    for c in range(world):
        n = base + (1 if c < extra else 0)
        chunks.append((start, n))
        start += n
    return chunks


def ring_sum(xs):
    n = _check(xs)
    world = len(xs)
    out = torch.empty(n, dtype=torch.float32)
    for c, (start, length) in enumerate(ring_chunks(n, world)):
        acc = xs[c][start:start + length].clone()
        for k in range(1, world):
            acc = acc + xs[(c + k) % world][start:start + length]
        out[start:start + length] = acc
    return out


def group_sum(xs, group):
    _check(xs)
    if group < 1 or len(xs) % group:
        raise ValueError(f"{len(xs)} ranks do not split into hosts of {group}")
    return box_sum([box_sum(xs[h:h + group]) for h in range(0, len(xs), group)])
