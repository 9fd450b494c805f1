#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The c10d backend "netreduce" and the DDP hook in one process (world 1, no
network), on whichever torch runs it (1.13 or 2.x: tests/python/torch-env):
which collectives go through libnetreduce and which to Gloo, counted by
netreduce.torch.stats() and checked against libnetreduce's own counters;
the fallback warning and NR_STRICT; errors raised by dist.all_reduce,
work.wait() and DDP; the GPU staging pipeline on host memory; the
communication-share report; the configuration errors, each naming the
variable and the fix."""
import datetime
import os
import socket
import sys
import tempfile
import time
import unittest
import warnings

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("SKIP: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

import netreduce
import netreduce.torch
from netreduce import _lib
from netreduce.torch import counters, staging
from netreduce.torch.backend import ProcessGroupNetreduce

os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
for var in [v for v in os.environ if v.startswith("NR_") or v.startswith("LOCAL_")]:
    del os.environ[var]
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
print(f"torch {torch.__version__}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))   # the store listens on every address
        return s.getsockname()[1]


def through(kind):
    return netreduce.torch.stats()["netreduce"].get(kind, {"calls": 0, "bytes": 0})


def library():
    return netreduce.torch.stats()["library"]


def delegated_calls(kind):
    """The calls of kind that went to Gloo, counted with a reason."""
    return netreduce.torch.stats()["delegated"].get(kind, {"calls": 0})["calls"]


def lib_sum(lib):
    return lib.get("ring_calls", 0) + lib.get("box_calls", 0), \
        lib.get("ring_bytes", 0) + lib.get("box_bytes", 0)


class Backend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        dist.init_process_group("netreduce", init_method=f"tcp://127.0.0.1:{free_port()}",
                                rank=0, world_size=1, timeout=datetime.timedelta(seconds=60))
        cls.pg = dist.distributed_c10d._get_default_group()

    @classmethod
    def tearDownClass(cls):
        dist.destroy_process_group()

    def setUp(self):
        os.environ.pop("NR_STRICT", None)
        warnings.simplefilter("always", netreduce.torch.NetreduceFallbackWarning)

    def test_registered(self):
        self.assertIsInstance(self.pg, ProcessGroupNetreduce)
        self.assertEqual(dist.get_backend(), "netreduce")
        self.assertEqual(self.pg.worker.algo, "ring")   # no NR_BOX: our ring

    def test_float32_sum_and_avg_through_netreduce(self):
        kinds = ["all_reduce SUM float32 cpu contiguous", "all_reduce AVG float32 cpu contiguous"]
        before = [through(k) for k in kinds]
        lib0 = lib_sum(library())
        t = torch.arange(10, dtype=torch.float32)
        dist.all_reduce(t)
        self.assertTrue(torch.equal(t, torch.arange(10, dtype=torch.float32)))
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        work = dist.all_reduce(t, async_op=True)
        self.assertIsInstance(work, netreduce.torch.work.Work)
        work.wait()
        self.assertTrue(work.is_success())
        self.assertEqual(work.get_future().value()[0].data_ptr(), t.data_ptr())
        self.assertEqual(work.result()[0].data_ptr(), t.data_ptr())
        after = [through(k) for k in kinds]
        self.assertEqual(after[0]["calls"] - before[0]["calls"], 2)
        self.assertEqual(after[0]["bytes"] - before[0]["bytes"], 80)
        self.assertEqual(after[1]["calls"] - before[1]["calls"], 1)
        # the library saw exactly these three calls and 120 bytes
        lib1 = lib_sum(library())
        self.assertEqual((lib1[0] - lib0[0], lib1[1] - lib0[1]), (3, 120))

    def test_every_claimed_allreduce_reached_the_library(self):
        # DDP steps, dist.all_reduce and the hook: the backend's and the hook's
        # counts, summed, equal libnetreduce's calls and bytes exactly
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        for _ in range(3):
            ddp(torch.randn(4, 5)).sum().backward()
        dist.all_reduce(torch.ones(1000))
        snap = netreduce.torch.stats()
        calls = sum(v["calls"] for v in snap["netreduce"].values())
        nbytes = sum(v["bytes"] for v in snap["netreduce"].values())
        self.assertGreaterEqual(calls, 4)
        self.assertEqual(lib_sum(snap["library"]), (calls, nbytes))
        self.assertEqual(snap["library"]["failed_calls"], 0)
        self.assertFalse({k for k in snap["delegated"] if "float32" in k and ("SUM" in k or "AVG" in k)
                          and "contiguous" in k and "cpu" in k})

    def test_entry_points_refuse_what_they_cannot_take(self):
        # the worker and the communicator are public: what they cannot take is a
        # TypeError or ValueError, before the library sees a pointer
        eng, comm = self.pg.worker, self.pg.worker.comm
        n, lib0 = comm.seq, lib_sum(library())
        m = torch.arange(12, dtype=torch.float32).view(3, 4).t()
        for bad, exc, words in [
                (torch.arange(4), TypeError, "float32"),
                (torch.ones(4, dtype=torch.float64), TypeError, "float32"),
                (m, ValueError, "contiguous"),
                (torch.ones(4)[::2], ValueError, "contiguous"),
                ([1.0, 2.0], TypeError, "torch.Tensor"),
                (torch.ones(4).to_sparse(), TypeError, "dense")]:
            with self.assertRaisesRegex(exc, words):
                eng.submit(bad)
        with self.assertRaisesRegex(ValueError, "SUM, AVG and MAX, not MIN"):
            eng.submit(torch.ones(4), "MIN")
        for args, exc in [((None, 4), TypeError), ((0, 4), ValueError), ((1 << 20, -1), ValueError),
                          ((1 << 20, 4.0), TypeError), ((1 << 20, 4, "min"), ValueError)]:
            with self.assertRaises(exc):
                comm.allreduce(*args)
        self.assertEqual(comm.seq, n)                      # nothing reached the library
        self.assertEqual(lib_sum(library()), lib0)

    def test_others_go_to_gloo_with_one_warning_per_kind(self):
        n = self.pg.worker.comm.seq
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):
                t = torch.arange(6, dtype=torch.int64)
                dist.all_reduce(t)                                   # dtype
                self.assertTrue(torch.equal(t, torch.arange(6)))
            m = torch.arange(12, dtype=torch.float32).view(3, 4).t()   # not contiguous
            dist.all_reduce(m)
            dist.all_reduce(torch.ones(3), op=dist.ReduceOp.MIN)       # op
        fallback = [str(x.message) for x in w
                    if issubclass(x.category, netreduce.torch.NetreduceFallbackWarning)]
        self.assertEqual(sum("int64" in x for x in fallback), 1, fallback)
        self.assertTrue(any("strided" in x and "not contiguous" in x for x in fallback), fallback)
        self.assertTrue(any("MIN" in x and "SUM, AVG and MAX" in x for x in fallback), fallback)
        d = netreduce.torch.stats()["delegated"]
        self.assertGreaterEqual(d["all_reduce SUM int64 cpu contiguous"]["calls"], 3)
        self.assertEqual(d["all_reduce SUM int64 cpu contiguous"]["why"],
                         "netreduce sums float32, bfloat16 and float16, this is int64")
        dist.broadcast(torch.ones(2), 0)
        out = [torch.zeros(2)]
        dist.all_gather(out, torch.ones(2))
        self.assertTrue(torch.equal(out[0], torch.ones(2)))
        dist.barrier()
        self.assertEqual(self.pg.worker.comm.seq, n)
        gloo = netreduce.torch.stats()["gloo"]
        self.assertGreaterEqual(gloo.get("broadcast", 0), 1)
        self.assertGreaterEqual(gloo.get("barrier", 0), 1)

    def test_strict_raises_instead(self):
        os.environ["NR_STRICT"] = "1"
        before = netreduce.torch.stats()["delegated"].get(
            "all_reduce MIN float32 cpu contiguous", {"calls": 0})["calls"]
        with self.assertRaisesRegex(netreduce.torch.NetreduceUnsupported,
                                    r"rank 0: all_reduce MIN float32 cpu contiguous failed: "
                                    r"netreduce cannot take it \(.*SUM, AVG and MAX.*\) and "
                                    r"NR_STRICT=1"):
            dist.all_reduce(torch.ones(3), op=dist.ReduceOp.MIN)
        after = netreduce.torch.stats()["delegated"].get(
            "all_reduce MIN float32 cpu contiguous", {"calls": 0})["calls"]
        self.assertEqual(before, after)
        dist.all_reduce(torch.ones(3))   # what netreduce takes still works
        # collectives that are Gloo's by design are not refused
        dist.barrier()

    def test_16bit_through_netreduce(self):
        # bfloat16 and float16 SUM and AVG go through libnetreduce as 16-bit
        # elements (2 bytes each), counted by type; MAX of them goes to Gloo
        lib0 = library()
        for dt, name in ((torch.bfloat16, "bfloat16"), (torch.float16, "float16")):
            k = f"all_reduce SUM {name} cpu contiguous"
            before = through(k)
            t = torch.tensor([1.5, -2.25, 1e-3, 3.0], dtype=dt)
            want = t.clone()
            dist.all_reduce(t)
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            self.assertTrue(torch.equal(t, want))
            after = through(k)
            self.assertEqual((after["calls"] - before["calls"], after["bytes"] - before["bytes"]),
                             (1, 8))
        lib1 = library()
        self.assertEqual(lib1["bf16_calls"] - lib0["bf16_calls"], 2)
        self.assertEqual(lib1["fp16_calls"] - lib0["fp16_calls"], 2)
        self.assertEqual(lib1["ring_bytes"] - lib0["ring_bytes"], 32)
        r = netreduce.torch.report()
        self.assertIn("bfloat16", r["types"])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = torch.tensor([1.0, 2.0], dtype=torch.float16)   # (torch 1.13's Gloo has no bf16)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
        self.assertTrue(any("MAX of float32 only, this is float16" in str(x.message) for x in w))
        with self.assertRaisesRegex(ValueError, "MAX of float32 only"):
            self.pg.worker.submit(torch.ones(2, dtype=torch.float16), "MAX")
        with self.assertRaisesRegex(ValueError, "max is fp32 only"):
            self.pg.worker.comm.allreduce(1 << 20, 4, "max", dtype="bf16")
        with self.assertRaisesRegex(ValueError, "dtype 'fp64'"):
            self.pg.worker.comm.allreduce(1 << 20, 4, dtype="fp64")

    def test_16bit_hooks(self):
        # bf16_hook and fp16_hook: the float32 gradients rounded once to the
        # type, summed (one rank: as they are), written back as float32
        for hook, dt, name in ((netreduce.torch.bf16_hook, torch.bfloat16, "bfloat16"),
                               (netreduce.torch.fp16_hook, torch.float16, "float16")):
            torch.manual_seed(1)
            model = torch.nn.Linear(5, 3)
            ref = torch.nn.Linear(5, 3)
            ref.load_state_dict(model.state_dict())
            ddp = torch.nn.parallel.DistributedDataParallel(model)
            ddp.register_comm_hook(None, hook)
            x = torch.randn(4, 5)
            k = f"ddp_bucket SUM {name} cpu contiguous"
            n = through(k)["calls"]
            ddp(x).sum().backward()
            ref(x).sum().backward()
            self.assertEqual(through(k)["calls"] - n, 1)
            for p, q in zip(model.parameters(), ref.parameters()):
                self.assertEqual(p.grad.dtype, torch.float32)
                self.assertTrue(torch.equal(p.grad, q.grad.to(dt).float()))

    def test_max_through_netreduce(self):
        # MAX: over the ring here (no box; a box job of NR_REDUCE=max takes it too)
        k = "all_reduce MAX float32 cpu contiguous"
        before, lib0 = through(k), library()
        t = torch.tensor([1.0, -2.0, float("inf"), -0.0])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        self.assertTrue(torch.equal(t, torch.tensor([1.0, -2.0, float("inf"), -0.0])))
        after, lib1 = through(k), library()
        self.assertEqual((after["calls"] - before["calls"], after["bytes"] - before["bytes"]),
                         (1, 16))
        self.assertEqual(lib1["ring_calls"] - lib0["ring_calls"], 1)

    def test_empty_tensor(self):
        t = torch.zeros(0)
        dist.all_reduce(t)
        self.assertEqual(t.numel(), 0)

    def test_allreduce_coalesced_is_one_call(self):
        k = "all_reduce_coalesced SUM float32 cpu contiguous"
        before = through(k)
        a, b = torch.arange(3, dtype=torch.float32), torch.ones(2, 2)
        opts = dist.AllreduceCoalescedOptions()
        opts.reduceOp = dist.ReduceOp.SUM
        self.pg.allreduce_coalesced([a, b], opts).wait()
        self.assertTrue(torch.equal(a, torch.arange(3, dtype=torch.float32)))
        self.assertTrue(torch.equal(b, torch.ones(2, 2)))
        after = through(k)
        self.assertEqual((after["calls"] - before["calls"], after["bytes"] - before["bytes"]),
                         (1, 28))

    @unittest.skipUnless(TORCH2, "the coalescing manager's fast paths are torch 2.x's")
    def test_coalescing_manager(self):
        before = netreduce.torch.stats()["netreduce"]
        a, b = torch.full((3,), 2.0), torch.full((5,), 3.0)
        with dist._coalescing_manager():
            dist.all_reduce(a)
            dist.all_reduce(b)
        self.assertTrue(torch.equal(a, torch.full((3,), 2.0)))
        o1, o2 = torch.zeros(1), torch.zeros(2)
        with dist._coalescing_manager():
            dist.reduce_scatter_tensor(o1, torch.ones(1))
            dist.reduce_scatter_tensor(o2, torch.full((2,), 3.0))
        self.assertTrue(torch.equal(o2, torch.full((2,), 3.0)))
        g1, g2 = torch.zeros(1), torch.zeros(2)
        with dist._coalescing_manager():
            dist.all_gather_into_tensor(g1, torch.ones(1) * 7)
            dist.all_gather_into_tensor(g2, torch.ones(2) * 5)
        self.assertTrue(torch.equal(g2, torch.full((2,), 5.0)))
        # with a device: _start_coalescing / _end_coalescing
        c = torch.full((4,), 1.5)
        with dist._coalescing_manager(device=torch.device("cpu"), async_ops=True) as cm:
            dist.all_reduce(c)
        cm.wait()
        self.assertTrue(torch.equal(c, torch.full((4,), 1.5)))
        after = netreduce.torch.stats()["netreduce"]
        grew = {k for k in after if after[k]["calls"] > before.get(k, {"calls": 0})["calls"]}
        self.assertIn("all_reduce_coalesced SUM float32 cpu contiguous", grew)
        self.assertIn("reduce_scatter SUM float32 cpu contiguous", grew)

    def test_reduce_scatter_through_netreduce(self):
        before = through("reduce_scatter SUM float32 cpu contiguous")
        out = torch.zeros(4)
        self.pg._reduce_scatter_base(out, torch.arange(4, dtype=torch.float32)).wait()
        self.assertTrue(torch.equal(out, torch.arange(4, dtype=torch.float32)))
        after = through("reduce_scatter SUM float32 cpu contiguous")
        self.assertEqual(after["calls"] - before["calls"], 1)

    def test_reduce_scatter_refused_is_delegated_with_why(self):
        k = "reduce_scatter SUM int64 cpu contiguous"
        before = delegated_calls(k)
        out = torch.zeros(4, dtype=torch.int64)
        try:
            self.pg._reduce_scatter_base(out, torch.arange(4)).wait()
            self.assertTrue(torch.equal(out, torch.arange(4)))
        except RuntimeError as e:   # Gloo of torch 1.13 has no reduce-scatter
            self.assertIn("support", str(e))
        d = netreduce.torch.stats()["delegated"][k]
        self.assertEqual(d["calls"] - before, 1)
        self.assertEqual(d["why"], "netreduce sums float32, bfloat16 and float16, this is int64")

    def test_avg_delegated_as_sum_then_divided(self):
        # Gloo has no AVG ("Cannot use ReduceOp.AVG with Gloo"): a float64 AVG
        # (refused by netreduce) is Gloo's SUM, then divided by the group's size
        k = "all_reduce AVG float64 cpu contiguous"
        before = delegated_calls(k)
        t = torch.arange(6, dtype=torch.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", netreduce.torch.NetreduceFallbackWarning)
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            w = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
            w.get_future().wait()
        self.assertTrue(torch.equal(t, torch.arange(6, dtype=torch.float64) / self.pg.size()))
        self.assertEqual(delegated_calls(k) - before, 2)

    def test_reduce_delegated_every_form(self):
        # Gloo's reduce binding has two forms, ([tensors], ReduceOptions) and
        # (tensor, root, op); AVG in either is Gloo's SUM, divided on the root,
        # and the Work says it is completed without being waited for first
        t = torch.arange(4.0)
        self.pg.reduce(t, 0).wait()
        self.pg.reduce(t, 0, dist.ReduceOp.AVG).wait()
        self.pg.reduce([t]).wait()
        self.pg.reduce(t, root=0).wait()
        self.assertTrue(torch.equal(t, torch.arange(4.0)))
        w = dist.reduce(t, 0, op=dist.ReduceOp.AVG, async_op=True)
        deadline = time.monotonic() + 30
        while not w.is_completed():
            self.assertLess(time.monotonic(), deadline, "is_completed() never became true")
            time.sleep(0.01)
        self.assertTrue(torch.equal(t, torch.arange(4.0) / self.pg.size()))

    def test_reduce_scatter_list_refused_is_delegated(self):
        k = "reduce_scatter SUM int64 cpu contiguous"
        before = delegated_calls(k)
        out = torch.zeros(3, dtype=torch.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", netreduce.torch.NetreduceFallbackWarning)
            try:
                dist.reduce_scatter(out, [torch.arange(3)])
                self.assertTrue(torch.equal(out, torch.arange(3)))
            except RuntimeError as e:   # Gloo has no list-form reduce-scatter
                self.assertIn("reduce_scatter", str(e))
        d = netreduce.torch.stats()["delegated"][k]
        self.assertEqual(d["calls"] - before, 1)
        self.assertIn("int64", d["why"])

    def test_local_phases_counted_by_backend(self):
        from netreduce.torch.counters import STATS
        before = netreduce.torch.stats()
        STATS.count("nccl", "local reduce_scatter", 3)
        STATS.gloo("local allgather", 2)
        after = netreduce.torch.stats()
        self.assertEqual(after["nccl"]["local reduce_scatter"] -
                         before["nccl"].get("local reduce_scatter", 0), 3)
        self.assertEqual(after["gloo"]["local allgather"] -
                         before["gloo"].get("local allgather", 0), 2)
        self.assertNotIn("local allgather", after["nccl"])

    def test_ddp(self):
        torch.manual_seed(0)
        model = torch.nn.Linear(5, 3)
        ref = torch.nn.Linear(5, 3)
        ref.load_state_dict(model.state_dict())
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        x = torch.randn(4, 5)
        n = through("all_reduce SUM float32 cpu contiguous")["calls"]
        for _ in range(3):
            model.zero_grad()
            ref.zero_grad()
            ddp(x).sum().backward()
            ref(x).sum().backward()
        # DDP's reducer (C++) reached the Python Work's get_future every step
        self.assertEqual(through("all_reduce SUM float32 cpu contiguous")["calls"] - n, 3)
        for p, q in zip(model.parameters(), ref.parameters()):
            self.assertTrue(torch.equal(p.grad, q.grad))

    def test_hook(self):
        torch.manual_seed(0)
        model = torch.nn.Linear(5, 3)
        ref = torch.nn.Linear(5, 3)
        ref.load_state_dict(model.state_dict())
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        ddp.register_comm_hook(None, netreduce.torch.allreduce_hook)
        x = torch.randn(4, 5)
        n = through("ddp_bucket AVG float32 cpu contiguous")["calls"]
        ddp(x).sum().backward()
        ref(x).sum().backward()
        self.assertIsNotNone(netreduce.torch.hook_state())
        self.assertEqual(through("ddp_bucket AVG float32 cpu contiguous")["calls"] - n, 1)
        for p, q in zip(model.parameters(), ref.parameters()):
            self.assertTrue(torch.equal(p.grad, q.grad))


class Errors(unittest.TestCase):
    """A failed request raises netreduce's error from dist.all_reduce, from
    work.wait() and from DDP's backward, on every torch version."""

    MSG = r"netreduce job nr-[0-9a-f]+, rank 0: all_reduce failed: the netreduce worker is closed"

    @classmethod
    def setUpClass(cls):
        if not dist.is_initialized():
            dist.init_process_group("netreduce", init_method=f"tcp://127.0.0.1:{free_port()}",
                                    rank=0, world_size=1)
        cls.group = dist.new_group([0], backend="netreduce")
        cls.group.worker.close()   # every later request fails

    def test_all_reduce_raises(self):
        with self.assertRaisesRegex(netreduce.NetreduceError, self.MSG):
            dist.all_reduce(torch.ones(4), group=self.group)

    def test_wait_raises(self):
        work = dist.all_reduce(torch.ones(4), group=self.group, async_op=True)
        with self.assertRaisesRegex(netreduce.NetreduceError, self.MSG):
            work.wait()
        self.assertTrue(work.is_completed())
        self.assertFalse(work.is_success())
        self.assertRegex(str(work.exception()), "worker is closed")
        with self.assertRaisesRegex(RuntimeError, "worker is closed"):
            work.get_future().wait()

    def test_ddp_raises(self):
        model = torch.nn.Linear(5, 3)
        # DDP's constructor runs Gloo's collectives (broadcast, all-gather), which work
        ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=self.group)
        with self.assertRaisesRegex(RuntimeError, "netreduce job nr-[0-9a-f]+, rank 0: "
                                    "all_reduce failed: the netreduce worker is closed"):
            ddp(torch.randn(2, 5)).sum().backward()

    def test_hook_future_raises(self):
        fut = self.group.worker.submit(torch.ones(4), as_list=False)
        with self.assertRaisesRegex(RuntimeError, "worker is closed"):
            fut.wait()


class Staging(unittest.TestCase):
    """The GPU staging pipeline (staging.Stager) on host memory: chunks, slot
    reuse, the division of AVG, and every chunk through the all-reduce once."""

    def run_stager(self, numel, chunk_elems, divide=None, dtype=torch.float32):
        es = torch.tensor([], dtype=dtype).element_size()
        ops = staging.HostOps(chunk_elems * es)
        seen = []

        def allreduce(host):
            self.assertEqual(host.dtype, dtype)
            seen.append(host.numel())
            host.mul_(3)      # stands for the sum over 3 ranks
        t = torch.arange(numel, dtype=dtype)
        n = staging.Stager(ops).run(t, None, allreduce, divide)
        return t, n, seen, ops.log

    def test_chunks_cover_the_tensor(self):
        for numel, chunk in ((10, 4), (12, 4), (3, 4), (1000, 7), (1, 1)):
            t, n, seen, log = self.run_stager(numel, chunk)
            want = torch.arange(numel, dtype=torch.float32) * 3
            self.assertTrue(torch.equal(t, want), (numel, chunk))
            self.assertEqual(n, -(-numel // chunk))
            self.assertEqual(sum(seen), numel)
            self.assertEqual(sorted(off for op, off, _, _ in log if op == "h2d"),
                             list(range(0, numel, chunk)))

    def test_16bit_chunks(self):
        # 16-bit tensors staged as themselves: chunks of as many bytes, twice the elements
        for dt in (torch.bfloat16, torch.float16):
            t, n, seen, _ = self.run_stager(100, 8, dtype=dt)
            self.assertTrue(torch.equal(t, torch.arange(100, dtype=dt) * 3))
            self.assertEqual(n, 13)
            self.assertEqual(sum(seen), 100)

    def test_copies_run_ahead(self):
        _, n, _, log = self.run_stager(40, 4)
        self.assertEqual(n, 10)
        # the first SLOTS-1 chunks are copied before the first copy back
        first_back = next(i for i, e in enumerate(log) if e[0] == "h2d")
        self.assertEqual(first_back, staging.SLOTS)

    def test_average(self):
        t, _, _, _ = self.run_stager(9, 4, divide=3)
        self.assertTrue(torch.equal(t, torch.arange(9, dtype=torch.float32)))

    def test_chunk_setting(self):
        os.environ["NR_STAGE_CHUNK_KB"] = "64"
        self.assertEqual(staging.chunk_bytes(), 65536)
        os.environ["NR_STAGE_CHUNK_KB"] = "lots"
        with self.assertRaisesRegex(ValueError, "NR_STAGE_CHUNK_KB='lots'"):
            staging.chunk_bytes()
        del os.environ["NR_STAGE_CHUNK_KB"]
        self.assertEqual(staging.chunk_bytes(), 4 << 20)


class Tolerant(unittest.TestCase):
    """Tolerance is asked for in words: with NR_SHORT_PPM, DDP's buckets go
    tolerant through tolerant_hook only; the backend's own all-reduces (DDP's
    reducer without a hook, dist.all_reduce, an autograd Function's backward,
    the application's) stay exact, and so do the other hooks.  One rank: the
    library copies, so every tolerant call is counted exact there."""

    @classmethod
    def setUpClass(cls):
        if not dist.is_initialized():
            dist.init_process_group("netreduce", init_method=f"tcp://127.0.0.1:{free_port()}",
                                    rank=0, world_size=1)
        os.environ["NR_SHORT_PPM"] = "150000"
        try:
            cls.group = dist.new_group([0], backend="netreduce")
        finally:
            del os.environ["NR_SHORT_PPM"]

    @staticmethod
    def tolerant(k):
        return netreduce.torch.stats()["tolerant"].get(k, {"calls": 0})["calls"]

    def test_backend_exact_whatever_calls_it(self):
        self.assertTrue(self.group.worker.tolerant)   # the job has a bound
        k = "all_reduce SUM float32 cpu contiguous"
        t0, n0 = self.tolerant(k), through(k)["calls"]
        torch.manual_seed(0)
        ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(5, 3),
                                                        process_group=self.group)
        for _ in range(3):
            ddp(torch.randn(4, 5)).sum().backward()            # DDP's reducer: exact
        dist.all_reduce(torch.ones(7), group=self.group)     # a loss, a metric: exact
        self.group.allreduce([torch.ones(7)]).wait()           # the application's own: exact

        class Summed(torch.autograd.Function):   # a tensor-parallel layer's all-reduce
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                g = g.contiguous()
                dist.all_reduce(g, group=Tolerant.group)
                return g
        Summed.apply(torch.ones(3, requires_grad=True)).sum().backward()
        self.assertEqual(through(k)["calls"] - n0, 6)
        self.assertEqual(self.tolerant(k), t0)               # none of them tolerant

    def test_tolerant_hook(self):
        k = "ddp_bucket AVG float32 cpu contiguous"
        t0, n0 = self.tolerant(k), through(k)["calls"]
        ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(5, 3),
                                                        process_group=self.group)
        ddp.register_comm_hook(self.group.worker, netreduce.torch.tolerant_hook)
        ddp(torch.randn(4, 5)).sum().backward()
        self.assertEqual(self.tolerant(k) - t0, 1)
        # the exact hook on the same communicator: counted, not tolerant
        ddp2 = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(5, 3),
                                                         process_group=self.group)
        ddp2.register_comm_hook(self.group.worker, netreduce.torch.allreduce_hook)
        ddp2(torch.randn(4, 5)).sum().backward()
        self.assertEqual(self.tolerant(k) - t0, 1)
        self.assertEqual(through(k)["calls"] - n0, 2)
        r = netreduce.torch.report()
        self.assertGreaterEqual(r["tolerant"]["asked_calls"], 1)
        self.assertIsNone(r["tolerant"]["short_slots"])   # no box to ask
        self.assertEqual(netreduce.torch.health(), {"qp_errors": 0, "qp_error": "",
                                                    "failed": False})

    def test_hook_state_is_the_backends(self):
        # with the netreduce backend, the hooks use its communicator (one a process)
        self.assertIs(netreduce.torch.hook_state(),
                      dist.distributed_c10d._get_default_group().worker)

    def test_binding(self):
        # the flags and the counters through ctypes, on one rank with a box configured
        saved = dict(os.environ)
        os.environ.update(NR_BOX="127.0.0.1:9", NR_TOKEN="t", NR_SHORT_PPM="1000",
                          NR_SHORT_DSCP="12")
        try:
            cfg = netreduce.Config(0, 1, "job-t", "box")
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.assertEqual((cfg.struct.short_ppm, cfg.struct.short_dscp), (1000, 12))
        comm = netreduce.Communicator(cfg)
        try:
            t = torch.arange(5, dtype=torch.float32)
            comm.allreduce(t.data_ptr(), 5, tolerant=True)
            comm.allreduce(t.data_ptr(), 5)
            self.assertTrue(torch.equal(t, torch.arange(5, dtype=torch.float32)))
            st = comm.stats()
            self.assertEqual((st["box_calls"], st["tolerant_calls"], st["tolerant_exact_calls"]),
                             (2, 0, 1))
            self.assertIsNone(comm.box_counters())   # one rank registers no job
            self.assertEqual(comm.qp_errors(), (0, ""))
        finally:
            comm.close()

    def test_text(self):
        snap = {"library": {"tolerant_calls": 40, "tolerant_bytes": 40 << 20,
                            "tolerant_exact_calls": 0},
                "tolerant": {"all_reduce SUM float32 cpu contiguous": {"calls": 40, "bytes": 1}},
                "box": {"short_ppm": 150000, "short_slots": 12, "short_denied": 3,
                        "left_out": [3, 4, 5, 0],
                        "short_why": {"bound": 2, "naked": 1, "first": 0}}}
        text = counters.tolerant_text(snap)
        self.assertIn("40 gradient all-reduces tolerant, 40 of them sent so (40.0 MiB)", text)
        self.assertIn("the box completed 12 packets short (bound 150000 ppm), 3 waited "
                      "instead, left out per rank [3, 4, 5, 0] (waited: bound 2, naked 1)", text)
        self.assertNotIn("drop-eligible", text)
        snap["de_thresh"] = 0.5
        snap["box"]["drop_eligible"] = {"tolerant": 800, "received": 200, "short": 9}
        self.assertIn("drop-eligible (under 0.5 x a bucket's RMS): 200 of 800 tolerant packets "
                      "(25.0%), 9 short slots of them alone", counters.tolerant_text(snap))
        self.assertEqual(counters.tolerant_text({"library": {}, "tolerant": {}}), "")


class Report(unittest.TestCase):
    def snap(self, busy, wall, nbytes=1 << 30, calls=100):
        return {"busy_s": busy, "wall_s": wall,
                "netreduce": {"all_reduce SUM float32 cpu contiguous":
                              {"calls": calls, "bytes": nbytes}}}

    def test_communication_bound(self):
        r = counters.share_report(self.snap(6.0, 10.0), 4, "box")
        self.assertAlmostEqual(r["share"], 0.6)
        self.assertAlmostEqual(r["gain"], 0.4 + 0.6 * 1.5)
        self.assertIn("60%", r["text"])
        self.assertNotIn("little to gain", r["text"])

    def test_compute_bound(self):
        r = counters.share_report(self.snap(0.5, 10.0), 8, "box")
        self.assertIn("little to gain", r["text"])
        self.assertIn("5%", r["text"])

    def test_measured_on_the_ring(self):
        r = counters.share_report(self.snap(6.0, 10.0), 4, "ring")
        self.assertAlmostEqual(r["gain"], 1 / (0.4 + 0.6 / 1.5), places=4)
        self.assertIn("a box would bring", r["text"])

    def test_nothing(self):
        self.assertIsNone(counters.share_report(self.snap(0, 0, 0, 0), 4, "box")["share"])


class Config(unittest.TestCase):
    """netreduce.Config: every bad setting is an error naming the variable."""

    def setUp(self):
        self.saved = dict(os.environ)

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved)

    def config(self, **env):
        os.environ.update(env)
        return netreduce.Config(1, 4, "job-x", netreduce.comm.algo_from_env(),
                                root="127.0.0.1:1234", addr="127.0.0.2")

    def test_good(self):
        cfg = self.config(NR_TIMEOUT_MS="2500")
        self.assertEqual(cfg.timeout_ms, 2500)
        self.assertEqual(cfg.root, "127.0.0.1:1234")
        self.assertEqual(cfg.struct.rank, 1)
        self.assertEqual(cfg.struct.world, 4)

    def test_torchrun_local_ranks(self):
        cfg = self.config(LOCAL_WORLD_SIZE="2", LOCAL_RANK="1")
        self.assertEqual((cfg.struct.local_size, cfg.struct.local_rank), (2, 1))
        # NR_LOCAL_SIZE wins over torchrun's
        self.assertEqual(self.config(NR_LOCAL_SIZE="1").struct.local_size, 1)
        del os.environ["NR_LOCAL_SIZE"]
        with self.assertRaisesRegex(netreduce.NetreduceError,
                                    r"NR_LOCAL_SIZE.*taken from torchrun's LOCAL_WORLD_SIZE=3"):
            self.config(LOCAL_WORLD_SIZE="3", LOCAL_RANK="1")

    def test_addr_per_local_rank(self):
        # under torchrun a host's workers share one environment: NR_ADDR lists theirs
        cfg = self.config(NR_ADDR="127.0.0.5, 127.0.0.6", LOCAL_WORLD_SIZE="2", LOCAL_RANK="1")
        self.assertEqual(cfg.struct.addr, b"127.0.0.6")
        del os.environ["LOCAL_RANK"]   # rank 1 of hosts of 2: local rank 1
        self.assertEqual(self.config().struct.addr, b"127.0.0.6")
        with self.assertRaisesRegex(ValueError, r"lists 2 addresses, one per local rank, and "
                                    r"rank 1 is local rank 3"):
            self.config(LOCAL_WORLD_SIZE="4", LOCAL_RANK="3")

    def test_library_message_with_rank_and_job(self):
        with self.assertRaises(netreduce.NetreduceError) as e:
            self.config(NR_MTU="1000")
        self.assertRegex(str(e.exception), r"^netreduce job job-x, rank 1: configuration.*NR_MTU")
        self.assertEqual(e.exception.code, _lib.ERR_CONFIG)

    def test_algo(self):
        with self.assertRaisesRegex(ValueError, "NR_ALGO='bogus': use box"):
            self.config(NR_ALGO="bogus")
        with self.assertRaisesRegex(ValueError, "NR_ALGO=box needs NR_BOX"):
            self.config(NR_ALGO="box")
        self.assertEqual(self.config(NR_BOX="127.0.0.1:7100", NR_TOKEN="t").algo, "box")

    def test_racks(self):
        # across racks every rank calls nr_allreduce, a rack without a box (no NR_BOX) too
        cfg = self.config(NR_RACKS="2,2")
        self.assertEqual(cfg.algo, "box")
        self.assertEqual(cfg.racks, "2,2")
        self.assertEqual(self.config(NR_RACKS="2,2", NR_ALGO="ring").algo, "ring")
        with self.assertRaisesRegex(netreduce.NetreduceError, "NR_RACKS"):
            self.config(NR_RACKS="2,3")   # 5 hosts for a world of 4

    def test_box_needs_token(self):
        # the environment alone says world 1, where no token is needed; torch says 4
        with self.assertRaisesRegex(netreduce.NetreduceError,
                                    r"NR_TOKEN: .*needs the shared token \(NR_BOX is set\)"):
            self.config(NR_BOX="127.0.0.1:7100")

    def test_bad_addr(self):
        with self.assertRaisesRegex(netreduce.NetreduceError,
                                    r'NR_ADDR="host-a": need this host\'s IPv4 address'):
            self.config(NR_ADDR="host-a")

    def test_secret(self):
        # a secret from the launcher's store goes to the library when the environment has none
        secret = "ab" * 32
        cfg = netreduce.Config(1, 4, "job-x", "ring", root="127.0.0.1:1234", addr="127.0.0.2",
                               secret=secret)
        self.assertEqual(cfg.struct.job_secret, secret.encode())
        err = cfg.error("init", _lib.ERR_CONFIG, "this rank's secret is job_secret of struct "
                        "nr_config: every rank needs the same")
        self.assertIn("the secret rank 0 made and shared through the launcher's store", str(err))
        # NR_JOB_SECRET, or NR_TOKEN, wins: the store's is not used
        os.environ["NR_JOB_SECRET"] = "cd" * 16
        cfg = netreduce.Config(1, 4, "job-x", "ring", root="127.0.0.1:1234", addr="127.0.0.2",
                               secret=secret)
        self.assertEqual(cfg.struct.job_secret, b"cd" * 16)
        del os.environ["NR_JOB_SECRET"]
        os.environ["NR_TOKEN"] = "t"
        cfg = netreduce.Config(1, 4, "job-x", "ring", root="127.0.0.1:1234", addr="127.0.0.2",
                               secret=secret)
        self.assertIsNone(cfg.struct.job_secret)
        with self.assertRaisesRegex(netreduce.NetreduceError,
                                    r"NR_JOB_SECRET: 6 hex digits: give an even number, at least 32"):
            self.config(NR_JOB_SECRET="abcdef")

    def test_secret_through_the_store(self):
        # rank 0 makes 32 random bytes and sets them in the store; rank 1 gets the same
        from netreduce.torch.worker import _rendezvous_secret
        os.environ.pop("NR_JOB_SECRET", None)
        os.environ.pop("NR_TOKEN", None)
        store = dist.HashStore()
        mine = _rendezvous_secret(store, "nr/job/secret", 0)
        self.assertRegex(mine, r"^[0-9a-f]{64}$")
        self.assertEqual(_rendezvous_secret(store, "nr/job/secret", 1), mine)
        self.assertNotEqual(_rendezvous_secret(dist.HashStore(), "nr/job/secret", 0), mine)
        os.environ["NR_TOKEN"] = "t"
        self.assertIsNone(_rendezvous_secret(store, "nr/job/secret", 1))

    def test_rank_disagrees(self):
        with self.assertRaisesRegex(netreduce.NetreduceError, "NR_WORLD=8 but the framework says 4"):
            self.config(NR_WORLD="8", NR_ROOT="127.0.0.1:1", NR_ADDR="127.0.0.1")


class Library(unittest.TestCase):
    def test_missing_library(self):
        saved, _lib._lib = _lib._lib, None
        os.environ["NETREDUCE_LIB"], path = "/nonexistent/libnetreduce.so", os.environ.get("NETREDUCE_LIB")
        try:
            with self.assertRaisesRegex(OSError, "NETREDUCE_LIB=/nonexistent.*no such file"):
                _lib.lib()
        finally:
            _lib._lib = saved
            if path is None:
                del os.environ["NETREDUCE_LIB"]
            else:
                os.environ["NETREDUCE_LIB"] = path

    def test_struct_layout_checked(self):
        self.assertEqual(_lib.lib().nr_comm_rank.restype, _lib.ctypes.c_int)
        cfg = _lib.NrConfig()
        _lib.lib().nr_config_init(_lib.ctypes.byref(cfg), _lib.ctypes.sizeof(cfg))
        self.assertEqual((cfg.size, cfg.mtu, cfg.udp_port, cfg.gid_index),
                         (_lib.ctypes.sizeof(cfg), 0, 4791, -1))

    def test_config_size_honoured(self):
        # the library writes no further than the caller's size and reads only that
        # much (fields past it take its defaults): a caller's struct of the first
        # version (ending at short_scale, before any padding) works; a smaller one,
        # or one never filled (size 0), is refused naming the size
        ct = _lib.ctypes
        first = _lib.NrConfig.short_scale.offset + 1
        buf = ct.create_string_buffer(b"\x5a" * 256, 256)
        as_cfg = ct.cast(buf, ct.POINTER(_lib.NrConfig))
        _lib.lib().nr_config_init(as_cfg, first)
        self.assertEqual(buf.raw[first:], b"\x5a" * (256 - first))
        self.assertEqual(as_cfg.contents.size, first)
        self.assertEqual(_lib.lib().nr_config_check(as_cfg), 0, _lib.last_error())
        _lib.lib().nr_config_init(as_cfg, first - 4)
        self.assertEqual(_lib.lib().nr_config_check(as_cfg), _lib.ERR_CONFIG)
        self.assertIn(f"struct nr_config: size {first - 4} is not one of a netreduce.h",
                      _lib.last_error())
        bad = _lib.NrConfig()     # never filled: size 0
        self.assertEqual(_lib.lib().nr_config_check(ct.byref(bad)), _lib.ERR_CONFIG)
        self.assertIn("struct nr_config: size 0", _lib.last_error())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        unittest.main(verbosity=2)
