#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The GPU check (make gpu-check): netreduce.torch with CUDA tensors, RANKS
processes on one GPU, our ring over loopback (no box, no root: what a machine
with a GPU and nothing else can run).

  phase backend  init_process_group("netreduce"), DDP on the GPU for STEPS
                 steps: every rank's parameters bit-identical, every gradient
                 byte through libnetreduce (counters, none delegated); then
                 the staged all-reduce of SIZE bytes on the GPU against the
                 same bytes from host memory, interleaved, REPS each, medians,
                 every result checked
  phase hook     Gloo as the backend, DDP's buckets through
                 netreduce.torch.allreduce_hook: bit-identical, counted

    gpu_check.py [--ranks 4] [--steps 10] [--size-mb 64] [--reps 7] [--device cuda|cpu]
                 [--json FILE]

--device cpu runs the same on host tensors (make test runs it so: the
harness itself is tested where there is no GPU).  Without a CUDA device,
--device cuda skips (exit 77) and says why.  Exit 0 pass, 1 fail.
"""
import argparse
import hashlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(top, "python"))


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--size-mb", type=float, default=64.0, help="the timed all-reduce's size")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--phase", choices=("backend", "hook"), help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def digest(model):
    h = hashlib.sha256()
    for q in model.parameters():
        h.update(q.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def worker(a):
    import torch
    import torch.distributed as dist
    import netreduce.torch as nt

    rank, world = a.rank, a.ranks
    dev = torch.device(a.device, 0) if a.device == "cuda" else torch.device("cpu")
    if a.device == "cuda":
        torch.cuda.set_device(dev)
    dist.init_process_group("netreduce" if a.phase == "backend" else "gloo")
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    nparams = sum(q.numel() for q in model.parameters())
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1)
    if a.phase == "hook":
        ddp.register_comm_hook(nt.hook_state(), nt.allreduce_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + rank)
    for _ in range(a.steps):
        x = torch.randn(32, 256, generator=gen).to(dev)
        y = torch.randint(0, 10, (32,), generator=gen).to(dev)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
    if a.device == "cuda":
        torch.cuda.synchronize()
    out = {"rank": rank, "phase": a.phase, "torch": str(torch.__version__),
           "device": torch.cuda.get_device_name(dev) if a.device == "cuda" else "cpu",
           "params": nparams, "digest": digest(model), "train_stats": nt.stats()}
    if a.phase == "backend":
        n = int(a.size_mb * 2**20) // 4
        want = world * (world + 1) / 2
        times = {"staged": [], "host": []}
        for rep in range(a.reps + 1):     # the first is a warm-up
            for where in ("staged", "host") if rep % 2 else ("host", "staged"):
                t = torch.full((n,), float(rank + 1), device=dev if where == "staged" else "cpu")
                if a.device == "cuda":
                    torch.cuda.synchronize()
                dist.barrier()
                t0 = time.perf_counter()
                dist.all_reduce(t)
                if a.device == "cuda":
                    torch.cuda.synchronize()
                dt = time.perf_counter() - t0
                bad = int((t != want).sum())
                if bad:
                    raise SystemExit(f"rank {rank}: {where} all-reduce: {bad} wrong elements")
                if rep:
                    times[where].append(dt)
        out["timing"] = {k: statistics.median(v) for k, v in times.items()}
        out["timing_bytes"] = n * 4
    out["stats"] = nt.stats()
    with open(os.path.join(a.out, f"{a.phase}{rank}.json"), "w") as f:
        json.dump(out, f)
    dist.destroy_process_group()


PHASE_S = 120  # a phase's bound (it takes seconds; the suite allows 300)


def free_port(addr):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def run_phase(a, phase, out):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NR_")}
    env.update(MASTER_ADDR="127.0.1.1", MASTER_PORT=str(free_port("127.0.1.1")),
               WORLD_SIZE=str(a.ranks), GLOO_SOCKET_IFNAME="lo", NR_ALGO="ring",
               NR_UDP_PORT=str(random.randint(20000, 30000)), NR_TIMEOUT_MS="60000",
               NR_REPORT="0")
    procs, logs = [], []
    for r in range(a.ranks):
        cmd = [sys.executable, os.path.abspath(__file__), "--phase", phase, "--rank", str(r),
               "--out", out, "--ranks", str(a.ranks), "--steps", str(a.steps),
               "--size-mb", str(a.size_mb), "--reps", str(a.reps), "--device", a.device]
        # each rank's output to a file: a pipe nobody reads until its rank is
        # waited for would stop a talkative rank, and the collective with it
        logs.append(open(os.path.join(out, f"{phase}{r}.log"), "w+"))
        procs.append(subprocess.Popen(cmd, env=dict(env, RANK=str(r), NR_ADDR=f"127.0.1.{r + 1}"),
                                      stdout=logs[-1], stderr=subprocess.STDOUT, text=True))
    # every rank ends, or one fails (the others are stopped at once), or the
    # phase's bound passes: well inside the suite's timeout, so what each rank
    # said is printed rather than the suite killing the test in silence
    deadline = time.monotonic() + PHASE_S
    while any(p.poll() is None for p in procs):
        if any(p.returncode not in (None, 0) for p in procs) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    late = [r for r, p in enumerate(procs) if p.poll() is None]
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    failed = []
    for r, p in enumerate(procs):
        logs[r].seek(0)
        text = logs[r].read()
        logs[r].close()
        if p.returncode != 0:
            why = f"still running after {PHASE_S} s, stopped" if r in late else f"exited {p.returncode}"
            failed.append(f"{phase} rank {r} {why}:\n{text.strip()[-3000:]}")
    if failed:
        return None, failed
    return [json.load(open(os.path.join(out, f"{phase}{r}.json"))) for r in range(a.ranks)], []


def check(rows, kind, steps):
    """Failures of one phase: digests differ, bytes not through netreduce, delegated."""
    fail = []
    if len({r["digest"] for r in rows}) != 1:
        fail.append(f"{rows[0]['phase']}: parameters differ between ranks")
    for r in rows:
        st = r["train_stats"]
        through = st["netreduce"].get(kind, {"calls": 0, "bytes": 0})
        want = steps * 4 * r["params"]
        if through["bytes"] != want:
            fail.append(f"{r['phase']} rank {r['rank']}: {through['bytes']} bytes as '{kind}', "
                        f"expected {want} ({steps} steps of {r['params']} float32)")
        if st["delegated"]:
            fail.append(f"{r['phase']} rank {r['rank']}: delegated: {st['delegated']}")
        lib = r["stats"]["library"]
        ours = r["stats"]["netreduce"]
        if (lib["ring_calls"], lib["ring_bytes"]) != (sum(v["calls"] for v in ours.values()),
                                                      sum(v["bytes"] for v in ours.values())):
            fail.append(f"{r['phase']} rank {r['rank']}: libnetreduce counted {lib} against "
                        f"{ours}")
    return fail


def main():
    a = parse()
    if a.phase:
        worker(a)
        return 0
    try:
        import torch
    except ImportError:
        print("SKIP: gpu-check: torch is not installed")
        return 77
    if a.device == "cuda" and not torch.cuda.is_available():
        print(f"SKIP: gpu-check: no CUDA device (torch {torch.__version__}: "
              f"torch.cuda.is_available() is False{'; built without CUDA' if not torch.version.cuda else ''})")
        return 77
    results, fail = {}, []
    with tempfile.TemporaryDirectory() as out:
        for phase in ("backend", "hook"):
            rows, failed = run_phase(a, phase, out)
            if failed:
                fail += failed
                continue
            kind = ("all_reduce SUM" if phase == "backend" else "ddp_bucket AVG") + \
                f" float32 {a.device} contiguous"
            fail += check(rows, kind, a.steps)
            results[phase] = rows
    if "backend" in results:
        r0 = results["backend"][0]
        staged = statistics.median(r["timing"]["staged"] for r in results["backend"])
        host = statistics.median(r["timing"]["host"] for r in results["backend"])
        nbytes = r0["timing_bytes"]
        print(f"gpu-check: torch {r0['torch']}, {r0['device']}, {a.ranks} ranks on it, our ring "
              f"over loopback, {a.steps} DDP steps of {r0['params']} parameters")
        print(f"{'all-reduce of':>16} {'median s':>10} {'GB/s':>8}")
        for name, t in (("host memory", host), (f"{a.device} (staged)", staged)):
            print(f"{name:>16} {t:10.4f} {nbytes / t / 1e9:8.2f}")
        print(f"staging adds {100 * (staged - host) / host:+.1f}% to the all-reduce of "
              f"{nbytes / 2**20:.0f} MiB (medians of {a.reps}, interleaved)")
        results["summary"] = {"bytes": nbytes, "host_s": host, "staged_s": staged}
    for phase, rows in results.items():
        if phase != "summary":
            print(f"{phase}: {'bit-identical' if len({r['digest'] for r in rows}) == 1 else 'DIFFER'}"
                  f" on {len(rows)} ranks; rank 0 counted {rows[0]['stats']['netreduce']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if fail:
        print("FAIL: gpu-check:\n  " + "\n  ".join(fail))
        return 1
    print(f"PASS: gpu-check ({a.device}): backend and hook bit-identical on every rank, every "
          "gradient byte through libnetreduce, none delegated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
