#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""netreduce.reference: the summation orders of the box, of the ring and of
hosts with several ranks, on values where the order changes the float32
result."""
import sys
import unittest

try:
    import torch
except ImportError:
    print("SKIP: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

from netreduce.reference import box_sum, group_sum, ring_chunks, ring_sum

BIG = 2.0 ** 24   # float32 spacing is 2 here: BIG + 1 rounds back to BIG


def f32(*v):
    return torch.tensor(v, dtype=torch.float32)


class Reference(unittest.TestCase):
    def test_box_sums_in_rank_order(self):
        # ((BIG + 1) + 1) + (-BIG) = 0 in float32; any order that adds 1 + 1 first gives 2
        xs = [f32(BIG), f32(1.0), f32(1.0), f32(-BIG)]
        self.assertEqual(box_sum(xs).item(), 0.0)
        self.assertEqual(box_sum(xs[::-1]).item(), 2.0)   # ((-BIG + 1) + 1) + BIG

    def test_box_sum_does_not_touch_inputs(self):
        xs = [f32(1.0, 2.0), f32(3.0, 4.0)]
        box_sum(xs)
        self.assertTrue(torch.equal(xs[0], f32(1.0, 2.0)))

    def test_ring_chunks(self):
        self.assertEqual(ring_chunks(10, 4), [(0, 3), (3, 3), (6, 2), (8, 2)])
        self.assertEqual(ring_chunks(3, 4), [(0, 1), (1, 1), (2, 1), (3, 0)])
        self.assertEqual(ring_chunks(8, 4), [(0, 2), (2, 2), (4, 2), (6, 2)])

    def test_ring_sums_chunk_c_from_rank_c(self):
        # 4 ranks, 4 elements: one element per chunk.  Element c gets BIG from
        # rank c, 1 from ranks c+1 and c+2, -BIG from rank c+3 (mod 4): summed from
        # rank c that is ((BIG + 1) + 1) - BIG = 0, from any other start 2 or -2 ...
        world = 4
        xs = [torch.zeros(world) for _ in range(world)]
        for c in range(world):
            for k, v in enumerate((BIG, 1.0, 1.0, -BIG)):
                xs[(c + k) % world][c] = v
        self.assertTrue(torch.equal(ring_sum(xs), torch.zeros(world)))
        # ... and the box (rank order) gives a different answer on the same data
        self.assertFalse(torch.equal(box_sum(xs), torch.zeros(world)))

    def test_ring_uneven_chunks(self):
        world, n = 3, 7   # chunks of 3, 2, 2
        xs = [torch.zeros(n) for _ in range(world)]
        for c, (start, length) in enumerate(ring_chunks(n, world)):
            for k, v in enumerate((BIG, 1.0, -BIG)):
                xs[(c + k) % world][start:start + length] = v
        # from rank c: (BIG + 1) - BIG = 0
        self.assertTrue(torch.equal(ring_sum(xs), torch.zeros(n)))

    def test_group_sums_hosts_first(self):
        # hosts of 2: (BIG + 1) + (1 + -BIG) = BIG + (1 - BIG) = 1 (1 - BIG is exact);
        # rank order: ((BIG + 1) + 1) - BIG = (BIG + 1) - BIG = 0
        xs = [f32(BIG), f32(1.0), f32(1.0), f32(-BIG)]
        self.assertEqual(group_sum(xs, 2).item(), 1.0)
        self.assertEqual(box_sum(xs).item(), 0.0)
        self.assertTrue(torch.equal(group_sum(xs, 1), box_sum(xs)))
        self.assertTrue(torch.equal(group_sum(xs, 4), box_sum(xs)))
        with self.assertRaisesRegex(ValueError, "4 ranks do not split into hosts of 3"):
            group_sum(xs, 3)

    def test_bad_input(self):
        with self.assertRaisesRegex(ValueError, "rank 1: need a 1-D float32 tensor of 2"):
            box_sum([f32(1.0, 2.0), f32(1.0)])
        with self.assertRaisesRegex(ValueError, "rank 0: need a 1-D float32"):
            ring_sum([torch.zeros(2, dtype=torch.float64)])
        with self.assertRaisesRegex(ValueError, "one tensor per rank"):
            ring_sum([])


if __name__ == "__main__":
    unittest.main(verbosity=2)
