#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""16-bit accuracy side by side (tests/python/accuracy.py --check) with 4 ranks on
loopback, no box: our ring and Gloo's, each rounding at every hop, against the
exact sum, and the rounded-once reference the box gives (tests/e2e/e2e.sh half
and torch-train-bf16 hold the box to it bit for bit): the reference is at least
as exact as both rings, mean and max; the rows are printed."""
import json
import os
import random
import socket
import subprocess
import sys

try:
    import torch  # noqa: F401 - only checking that it is there
except ImportError:
    print("SKIP: torch is not installed (apt-get install python3-torch)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
WORLD = 4


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))   # the store listens on every address
        return s.getsockname()[1]


def run(dtype, dist_):
    """Every combination of dtype and dist_ (comma lists): True when all passed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NR_")}
    env.update(MASTER_ADDR="127.0.1.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(WORLD),
               GLOO_SOCKET_IFNAME="lo", NR_UDP_PORT=str(random.randint(20000, 30000)),
               NR_REPORT="0")
    procs = [subprocess.Popen([sys.executable, os.path.join(here, "accuracy.py"), "--dtype",
                               dtype, "--dist", dist_, "--check"],
                              env=dict(env, RANK=str(r), NR_ADDR=f"127.0.1.{r + 1}"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(WORLD)]
    outs = [p.communicate(timeout=200) for p in procs]
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        if p.returncode:
            print(f"---- rank {r} exit {p.returncode}\n{out}{err[-3000:]}")
            return False
    rows = [json.loads(line) for line in outs[0][0].splitlines() if line.startswith("{")]
    for row in rows:
        print(json.dumps(row))
    return len(rows) == len(dtype.split(",")) * len(dist_.split(","))


def main():
    # bf16: Gloo has it from torch 2.x (1.13's rows say why it is missing)
    return 0 if run("fp16,bf16", "normal,wide") else 1


if __name__ == "__main__":
    sys.exit(main())
