#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""torchrun (python3 -m torch.distributed.run) as the tests run it on Debian's
builds of torch, with the defaults those builds cannot take turned off:

- torch 1.13 on Python 3.11 (Debian 12): --redirects and --tee default to
  "0", which its parser maps to None (an IntFlag of value 0 is no longer
  iterated); they default to 2 here (stderr to --log_dir and to the console).
- torch 2.6 (Debian 13) is built without libuv, and torchrun's static
  rendezvous (in the launcher) and the workers' connection to its store make
  TCPStores with use_libuv left at True, which that build refuses: with
  USE_LIBUV=0 both default to False here (each worker starts through this
  file, --worker, which then runs the training script).

Neither touches netreduce: torchrun from a pip wheel needs neither.  Usage:
torchrun.py [torchrun options] SCRIPT [ARGS].
"""
import importlib
import os
import runpy
import sys

import torch
import torch.distributed as dist

NO_LIBUV = os.environ.get("USE_LIBUV") == "0" and not torch.__version__.startswith("1.")


def no_libuv(*modules):
    """TCPStore made in these modules defaults to use_libuv=False."""
    real = dist.TCPStore

    def store(*args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        return real(*args, **kwargs)
    for m in modules:
        m.TCPStore = store


def main():
    args = sys.argv[1:]
    if args[:1] == ["--worker"]:
        if NO_LIBUV:   # (the module: torch.distributed.rendezvous is also a function)
            no_libuv(importlib.import_module("torch.distributed.rendezvous"))
        sys.argv = args[1:]
        runpy.run_path(args[1], run_name="__main__")
        return
    from torch.distributed import run
    if torch.__version__.startswith("1."):
        for flag in ("--redirects", "--tee"):
            if not any(a == flag or a.startswith(flag + "=") for a in args):
                args = [flag, "2"] + args
    if NO_LIBUV:
        from torch.distributed.elastic.rendezvous import static_tcp_rendezvous
        no_libuv(static_tcp_rendezvous)
        script = run.get_args_parser().parse_args(args).training_script
        i = args.index(script)
        args = args[:i] + [os.path.abspath(__file__), "--worker"] + args[i:]
    sys.argv = ["torchrun"] + args
    run.main()


if __name__ == "__main__":
    main()
