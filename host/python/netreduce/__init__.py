# SPDX-License-Identifier: BSD-3-Clause
"""netreduce: all-reduce through an in-network aggregation box, from Python.

netreduce.Communicator wraps libnetreduce (loaded with ctypes);
netreduce.torch is the PyTorch c10d backend and DDP hook;
netreduce.reference gives the exact sums the box and the ring compute.
"""
from .comm import Communicator, NetreduceError

__all__ = ["Communicator", "NetreduceError"]
