#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The c10d backend "netreduce" and the DDP hook in one process (world 1, no
network): which collectives go through libnetreduce and which to Gloo, SUM
and AVG, DDP on top; and the configuration errors, each naming the variable
and the fix."""
import datetime
import os
import socket
import sys
import tempfile
import unittest

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("SKIP: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

import netreduce
import netreduce.torch
from netreduce import _lib

os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
for var in [v for v in os.environ if v.startswith("NR_")]:
    del os.environ[var]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Backend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        dist.init_process_group("netreduce", init_method=f"tcp://127.0.0.1:{free_port()}",
                               rank=0, world_size=1, timeout=datetime.timedelta(seconds=60))
        cls.pg = dist.distributed_c10d._get_default_group()

    @classmethod
    def tearDownClass(cls):
        dist.destroy_process_group()

    def calls(self):
        return self.pg.engine.comm.seq   # collectives that went through libnetreduce

    def test_registered(self):
        self.assertIsInstance(self.pg, netreduce.torch.ProcessGroupNetreduce)
        self.assertEqual(dist.get_backend(), "netreduce")
        self.assertEqual(self.pg.engine.algo, "ring")   # no NR_SWITCH: our ring

    def test_float32_sum_and_avg_through_netreduce(self):
        n = self.calls()
        t = torch.arange(10, dtype=torch.float32)
        dist.all_reduce(t)
        self.assertTrue(torch.equal(t, torch.arange(10, dtype=torch.float32)))
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        work = dist.all_reduce(t, async_op=True)
        self.assertIsInstance(work, netreduce.torch.backend.PyWork)
        work.wait()
        self.assertTrue(work.is_success())
        self.assertEqual(work.get_future().value()[0].data_ptr(), t.data_ptr())
        self.assertEqual(work.result()[0].data_ptr(), t.data_ptr())
        self.assertEqual(self.calls(), n + 3)

    def test_others_go_to_gloo(self):
        n = self.calls()
        t = torch.arange(6, dtype=torch.int64)
        dist.all_reduce(t)                                   # dtype
        self.assertTrue(torch.equal(t, torch.arange(6)))
        m = torch.arange(12, dtype=torch.float32).view(3, 4).t()   # not contiguous
        dist.all_reduce(m)
        dist.all_reduce(torch.ones(3), op=dist.ReduceOp.MAX)       # op
        dist.broadcast(torch.ones(2), 0)
        out = [torch.zeros(2)]
        dist.all_gather(out, torch.ones(2))
        self.assertTrue(torch.equal(out[0], torch.ones(2)))
        dist.barrier()
        self.assertEqual(self.calls(), n)

    def test_empty_tensor(self):
        t = torch.zeros(0)
        dist.all_reduce(t)
        self.assertEqual(t.numel(), 0)

    def test_ddp(self):
        torch.manual_seed(0)
        model = torch.nn.Linear(5, 3)
        ref = torch.nn.Linear(5, 3)
        ref.load_state_dict(model.state_dict())
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        x = torch.randn(4, 5)
        n = self.calls()
        ddp(x).sum().backward()
        ref(x).sum().backward()
        self.assertGreater(self.calls(), n)
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
        ddp(x).sum().backward()
        ref(x).sum().backward()
        self.assertIsNotNone(netreduce.torch.hook_state())
        self.assertGreater(netreduce.torch.hook_state().comm.seq, 0)
        for p, q in zip(model.parameters(), ref.parameters()):
            self.assertTrue(torch.equal(p.grad, q.grad))


class Errors(unittest.TestCase):
    """A failed request reaches a C++ Work (what DDP and dist.all_reduce wait on)
    as an error with netreduce's message, not as a result."""

    def test_closed_engine(self):
        from torch._C._distributed_c10d import HashStore, _create_work_from_future
        engine = netreduce.torch.Engine(HashStore(), 0, 1, "t")
        engine.close()
        work = _create_work_from_future(engine.submit(torch.ones(4)))
        # a C++ Work made from a future returns from wait() even when it failed (torch
        # 1.13's FutureWrappingWork): the error is in its future's value, where DDP looks
        work.wait()
        with self.assertRaisesRegex(RuntimeError, r"netreduce job nr-[0-9a-f]+, rank 0: "
                                    r"all_reduce failed: the netreduce engine is closed"):
            work.get_future().value()
        fut = engine.submit(torch.ones(4), as_list=False)
        with self.assertRaisesRegex(RuntimeError, "engine is closed"):
            fut.wait()
        # what dist.all_reduce gets from the backend: wait() raises
        work = netreduce.torch.backend.PyWork(engine.submit(torch.ones(4)), [])
        self.assertTrue(work.is_completed())
        self.assertFalse(work.is_success())
        self.assertRegex(str(work.exception()), "engine is closed")
        with self.assertRaisesRegex(RuntimeError, "rank 0: all_reduce failed: the netreduce "
                                    "engine is closed"):
            work.wait()


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

    def test_library_message_with_rank_and_job(self):
        with self.assertRaises(netreduce.NetreduceError) as e:
            self.config(NR_MTU="1000")
        self.assertRegex(str(e.exception), r"^netreduce job job-x, rank 1: configuration.*NR_MTU")
        self.assertEqual(e.exception.code, _lib.ERR_CONFIG)

    def test_algo(self):
        with self.assertRaisesRegex(ValueError, "NR_ALGO='bogus': use box"):
            self.config(NR_ALGO="bogus")
        with self.assertRaisesRegex(ValueError, "NR_ALGO=box needs NR_SWITCH"):
            self.config(NR_ALGO="box")
        self.assertEqual(self.config(NR_SWITCH="127.0.0.1:7100", NR_TOKEN="t").algo, "box")

    def test_racks(self):
        # across racks every rank calls nr_allreduce, a rack without a box (no NR_SWITCH) too
        cfg = self.config(NR_RACKS="2,2")
        self.assertEqual(cfg.algo, "box")
        self.assertEqual(cfg.racks, "2,2")
        self.assertEqual(self.config(NR_RACKS="2,2", NR_ALGO="ring").algo, "ring")
        with self.assertRaisesRegex(netreduce.NetreduceError, "NR_RACKS"):
            self.config(NR_RACKS="2,3")   # 5 hosts for a world of 4

    def test_box_needs_token(self):
        # the environment alone says world 1, where no token is needed; torch says 4
        with self.assertRaisesRegex(netreduce.NetreduceError,
                                    r"NR_TOKEN: .*needs the shared token \(NR_SWITCH is set\)"):
            self.config(NR_SWITCH="127.0.0.1:7100")

    def test_bad_addr(self):
        with self.assertRaisesRegex(netreduce.NetreduceError,
                                    r'NR_ADDR="host-a": need this host\'s IPv4 address'):
            self.config(NR_ADDR="host-a")

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
        _lib.lib().nr_config_default(_lib.ctypes.byref(cfg))
        self.assertEqual((cfg.mtu, cfg.udp_port, cfg.gid_index), (1024, 4791, -1))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        unittest.main(verbosity=2)
