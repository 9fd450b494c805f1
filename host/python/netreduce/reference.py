# SPDX-License-Identifier: BSD-3-Clause
"""The exact float32 sums netreduce computes, for checking results bit for bit.

box_sum: the box's ordered mode adds the ranks' contributions in rank order,
element by element: ((x0 + x1) + x2) + ... (dataplane/README.md).

ring_sum: nr_ring_allreduce splits the buffer into world chunks (count // world
elements each, the first count % world chunks one more) and sums chunk c in
ring order starting at rank c: ((x_c + x_{c+1}) + x_{c+2}) + ... + x_{c+world-1}
(host/netreduce.h).

Both take a list of equally long 1-D float32 torch tensors (rank order) and
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
