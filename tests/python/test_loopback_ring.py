#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""4 ranks train through the backend "netreduce" with NR_ALGO=ring over
loopback (127.0.1.1-4, no root, no box); NR_ROOT is unset, so the ranks find
rank 0's rendezvous through the c10d store.  Every rank's parameters must
equal the single-process reference with ring-ordered sums bit for bit
(check_train.py)."""
import os
import random
import socket
import subprocess
import sys
import tempfile

try:
    import torch  # noqa: F401 - only checking that they are there
    import sklearn  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e.name} is not installed (apt-get install python3-torch python3-sklearn)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
WORLD = 4
MODEL = ["--hidden", "64,32", "--batch", "16", "--lr", "0.05", "--bucket-cap-mb", "0.001",
         "--eval-every", "10", "--steps", "20"]


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))   # the store listens on every address
        return s.getsockname()[1]


def main():
    with tempfile.TemporaryDirectory() as out:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NR_")}
        env.update(MASTER_ADDR="127.0.1.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(WORLD),
                   GLOO_SOCKET_IFNAME="lo", NR_UDP_PORT=str(random.randint(20000, 30000)),
                   NR_TIMEOUT_MS="20000")
        procs = []
        for r in range(WORLD):
            renv = dict(env, RANK=str(r), NR_ADDR=f"127.0.1.{r + 1}")
            procs.append(subprocess.Popen([sys.executable, os.path.join(here, "train_rank.py"),
                                           "--mode", "ring", "--out", out, "--quiet"] + MODEL,
                                          env=renv, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        bad = False
        for r, p in enumerate(procs):
            try:
                text, _ = p.communicate(timeout=150)
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                text, _ = p.communicate()
                print(f"rank {r}: still running after 150 s")
            print(f"---- rank {r} (exit {p.returncode})\n{text.strip()}")
            bad |= p.returncode != 0
        if bad:
            print("FAIL: a rank failed")
            return 1
        check = subprocess.run([sys.executable, os.path.join(here, "check_train.py"), "--mode",
                                "ring", "--dir", out, "--world", str(WORLD)] + MODEL)
        return check.returncode


if __name__ == "__main__":
    sys.exit(main())
