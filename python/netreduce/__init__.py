# SPDX-License-Identifier: BSD-3-Clause
"""netreduce: all-reduce through an in-network aggregation box, from Python.

netreduce.Config and netreduce.Communicator wrap libnetreduce (loaded with ctypes);
netreduce.torch is the PyTorch c10d backend and DDP hook;
netreduce.reference gives the exact sums the box and the ring compute.
"""
from .comm import Communicator, Config, NetreduceError

__all__ = ["Communicator", "Config", "NetreduceError"]
