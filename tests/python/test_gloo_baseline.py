#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Gloo baseline of make bench-e2e (bench/e2e/gloo_allreduce.py): its
contributions are nr-mpi-allreduce's, its check finds a wrong element and
takes any summation order, and two ranks on loopback print checked rows."""
import importlib.util
import json
import os
import socket
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "e2e", "gloo_allreduce.py")

try:
    import numpy as np
    import torch
    import torch.distributed  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

spec = importlib.util.spec_from_file_location("gloo_allreduce", SCRIPT)
ga = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ga)


def c_elem(rank, i):
    """nr-mpi-allreduce.c's elem(), one element, in integer arithmetic."""
    m = 0xFFFFFFFF
    x = ((i * 2654435761) & m) ^ ((rank * 40503 + 1) & m)
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & m
    x ^= x >> 12
    v = np.float32(x & 0xFFFFFF) / np.float32(0x1000000) - np.float32(0.5)
    return v * np.float32(3.0) + np.float32(0.001) * np.float32(rank)


class Check(unittest.TestCase):
    def test_contributions_are_mpi_baselines(self):
        for rank in (0, 1, 7):
            v = ga.elem(rank, 1000)
            for i in (0, 1, 2, 999):
                self.assertEqual(v[i].view(np.uint32), c_elem(rank, i).view(np.uint32), (rank, i))

    def test_rank_order_and_other_orders_pass(self):
        world, n = 3, 4096
        ordered = torch.from_numpy(ga.elem(0, n) + ga.elem(1, n) + ga.elem(2, n))
        self.assertEqual(ga.wrong_elements(ordered, ordered.clone(), world, "fp32"), 0)
        reversed_ = torch.from_numpy(ga.elem(2, n) + ga.elem(1, n) + ga.elem(0, n))
        self.assertEqual(ga.wrong_elements(reversed_, reversed_.clone(), world, "fp32"), 0)

    def test_wrong_element_and_disagreement_counted(self):
        world, n = 2, 1024
        good = torch.from_numpy(ga.elem(0, n) + ga.elem(1, n))
        bad = good.clone()
        bad[17] += 0.01
        self.assertEqual(ga.wrong_elements(bad, bad.clone(), world, "fp32"), 1)
        self.assertEqual(ga.wrong_elements(good, bad, world, "fp32"), 1)

    def test_16bit_hops_pass_a_wrong_element_does_not(self):
        # a 16-bit ring's sum, rounded at every hop, passes; an element off by far more fails
        world, n = 4, 4096
        for dt in ("fp16", "bf16"):
            hop = ga.contributions(0, n, dt)
            for r in range(1, world):
                hop = hop + ga.contributions(r, n, dt)   # rounded to dt at each add
            self.assertEqual(ga.wrong_elements(hop, hop.clone(), world, dt), 0, dt)
            bad = hop.clone()
            bad[5] += 1.0
            self.assertEqual(ga.wrong_elements(bad, bad.clone(), world, dt), 1, dt)


class TwoRanks(unittest.TestCase):
    def two_ranks(self, *args):
        """Rank 0's JSON rows of gloo_allreduce.py run by two ranks on loopback."""
        with socket.socket() as s:
            s.bind(("", 0))   # the store listens on every address
            port = s.getsockname()[1]
        procs = []
        for r in range(2):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                       WORLD_SIZE="2", GLOO_SOCKET_IFNAME="lo")
            procs.append(subprocess.Popen([sys.executable, SCRIPT, *args, "--check", "--json"],
                                          env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        outs = [p.communicate(timeout=120) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err[-2000:])
        self.assertEqual(outs[1][0].strip(), "")
        return [json.loads(line) for line in outs[0][0].splitlines() if line.startswith("{")]

    def test_loopback(self):
        rows = self.two_ranks("-b", "4", "-e", "64K", "-f", "16", "--iters", "2", "--warmup", "1")
        self.assertEqual([r["bytes"] for r in rows], [4, 64, 1024, 16384, 65536])
        for r in rows:
            self.assertEqual((r["algo"], r["ranks"], r["wrong"]), ("gloo", 2, 0))
            self.assertGreater(r["algbw_gbps"], 0)

    def test_loopback_fp16(self):
        # torch 1.13's Gloo sums float16 (bfloat16 from torch 2.x): 2-byte elements
        rows = self.two_ranks("-b", "2", "-e", "64K", "-f", "32", "--iters", "1", "--warmup", "0",
                              "--dtype", "fp16")
        self.assertEqual([r["bytes"] for r in rows], [2, 64, 2048, 65536])
        for r in rows:
            self.assertEqual((r["dtype"], r["wrong"]), ("fp16", 0))


if __name__ == "__main__":
    unittest.main()
