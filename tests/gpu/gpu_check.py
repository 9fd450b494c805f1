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
  phase local    NR_TORCH_LOCAL=group, each rank a host of one
                 (LOCAL_WORLD_SIZE=1): the local phases on a local group
                 of one (NCCL for CUDA tensors, Gloo for host ones), the
                 shares over the columns' communicators, chunked
                 (NR_STAGE_CHUNK_KB=256); fp32, an odd size, AVG, bf16
                 (rounded once), all exact and the same bits on every
                 rank, counted (each all-reduce, its local phases on
                 the device's backend, its column shares), none
                 delegated; the SIZE all-reduce timed.  A group of one
                 shows the composition's calls and its streams' order,
                 not NVLink: nothing crosses between GPUs
  phase fsdp2    FSDP2 (fully_shard, every Linear and the root) on a 1-D
                 DeviceMesh of the netreduce backend, STEPS steps of a
                 global batch cut by rank: the parameters (full_tensor)
                 against one unsharded model trained on the whole batch
                 (float noise), the same bits on every rank; every
                 reduce-scatter through libnetreduce; every all-gather
                 through it, or Gloo's (no box: all-gathers are Gloo's
                 by design) or delegated with its reason.  FSDP2 needs a
                 stream with record_event: CUDA, or the CPU on a torch
                 whose torch.cpu.Stream has one (torch 2.6's has not:
                 the phase is skipped, said; with it and wait_event
                 stubbed, FSDP2 on 2.6's CPU fails in backward with Gloo
                 as with netreduce, "modified by an inplace operation")

    gpu_check.py [--ranks 4] [--steps 10] [--size-mb 64] [--reps 7] [--device cuda|cpu]
                 [--phases backend,hook,local,fsdp2] [--json FILE]

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


PHASES = ("backend", "hook", "local", "fsdp2")


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--size-mb", type=float, default=64.0, help="the timed all-reduce's size")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--phases", default=",".join(PHASES),
                   help=f"the phases to run, of {','.join(PHASES)}")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.phases = [x for x in a.phases.split(",") if x]
    bad = [x for x in a.phases if x not in PHASES]
    if bad or not a.phases:
        p.error(f"--phases {','.join(bad) or '(none)'}: of {','.join(PHASES)}")
    return a


def digest(model):
    h = hashlib.sha256()
    for q in model.parameters():
        h.update(q.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def fsdp2_refusal(torch, device):
    """Why FSDP2 cannot run on device with this torch, or None."""
    try:
        from torch.distributed.fsdp import fully_shard   # noqa: F401 - torch 2.6+
    except Exception as e:   # noqa: BLE001 - ImportError; torch 1.13 on Python 3.11: ValueError
        return (f"torch {torch.__version__} has no torch.distributed.fsdp.fully_shard "
                f"({type(e).__name__}: {str(e)[:80]})")
    if device == "cpu" and not hasattr(torch.cpu.Stream, "record_event"):
        return (f"FSDP2 on the CPU needs torch.cpu.Stream.record_event, which torch "
                f"{torch.__version__} lacks (it runs with CUDA)")
    return None


def exact_cases(torch):
    """The local phase's all-reduces: integers, so any order sums them exactly."""
    return (("fp32 1 MiB", 1 << 18, torch.float32, "sum"),
            ("fp32 odd", 262147, torch.float32, "sum"),
            ("fp32 avg", 4099, torch.float32, "avg"),
            ("bf16 1 MiB", 1 << 19, torch.bfloat16, "sum"))


def timed_allreduce(torch, dist, n, rank, world, dev):
    """The all-reduce of n float32 of rank + 1 on dev, after a barrier: (seconds,
    elements off the sum)."""
    t = torch.full((n,), float(rank + 1), device=dev)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    dist.all_reduce(t)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    return dt, int((t != world * (world + 1) / 2).sum())


def stream_order(torch, dist, rank, world, dev):
    """On CUDA: the input written on the caller's stream behind a spinning
    kernel, the all-reduce issued at once, the result read on that stream
    without a host synchronization: right only if the all-reduce read the input
    after the caller's stream got there and the caller's stream waited for its
    result.  Whether it was right."""
    x = torch.zeros(1 << 20, device=dev)
    torch.cuda._sleep(200_000_000)    # some 0.1 s of the GPU's clock on the current stream
    x.fill_(float(rank + 1))
    dist.all_reduce(x)
    return bool((x.cpu() == world * (world + 1) / 2).all())


def worker_local(a, torch, dist, nt, dev, out):
    rank, world = a.rank, a.ranks
    out["checks"], out["digests"] = {}, {}
    for name, n, dtype, op in exact_cases(torch):
        base = (torch.arange(n) % 97).double()
        want = base * world + world * (world - 1) / 2
        if op == "avg":
            want = want / world
        x = (base + rank).to(dtype).to(dev)
        dist.all_reduce(x, op=dist.ReduceOp.AVG if op == "avg" else dist.ReduceOp.SUM)
        got = x.cpu()
        out["checks"][name] = bool(torch.equal(got, want.to(dtype)))
        out["digests"][name] = hashlib.sha256(got.view(torch.uint8).numpy().tobytes()).hexdigest()
    if dev.type == "cuda":
        out["checks"]["stream order"] = stream_order(torch, dist, rank, world, dev)
    # FSDP's reduce-scatter through the composition (the column's, staged on CUDA)
    n = 4099
    base = (torch.arange(n * world) % 89).double()
    got = torch.empty(n, device=dev)
    dist.reduce_scatter_tensor(got, (base + rank).float().to(dev))
    want = (base * world + world * (world - 1) / 2)[rank * n:(rank + 1) * n].float()
    out["checks"]["reduce-scatter"] = bool(torch.equal(got.cpu(), want))
    n = int(a.size_mb * 2**20) // 4
    times = []
    for rep in range(a.reps + 1):     # the first is a warm-up
        dt, bad = timed_allreduce(torch, dist, n, rank, world, dev)
        if rep:
            times.append(dt)
        out["checks"]["timed"] = out["checks"].get("timed", True) and not bad
    out["timing"] = {"local": statistics.median(times)}
    out["timing_bytes"] = n * 4
    out["allreduces"] = len(exact_cases(torch)) + (dev.type == "cuda") + a.reps + 1


def worker_fsdp2(a, torch, dist, nt, dev, out):
    import copy
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    rank, world = a.rank, a.ranks
    mesh = init_device_mesh(a.device, (world,))
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10)).to(dev)
    ref = copy.deepcopy(model)   # unsharded, trained on the whole batch
    units = 0                    # those with parameters: the root has none of its own
    for m in model:
        if isinstance(m, torch.nn.Linear):
            fully_shard(m, mesh=mesh)
            units += 1
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(7)      # the same global batch on every rank
    per = 16
    losses = []
    for _ in range(a.steps):
        x = torch.randn(world * per, 64, generator=gen).to(dev)
        y = torch.randint(0, 10, (world * per,), generator=gen).to(dev)
        mine = slice(rank * per, (rank + 1) * per)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[mine]), y[mine]).backward()
        opt.step()
        ropt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ref(x), y)
        loss.backward()
        ropt.step()
        losses.append(float(loss))
    full = [p.full_tensor().detach().cpu() for p in model.parameters()]
    h = hashlib.sha256()
    for q in full:
        h.update(q.numpy().tobytes())
    out["digest"] = h.hexdigest()
    out["max_diff"] = max(float((q - r.detach().cpu()).abs().max())
                          for q, r in zip(full, ref.parameters()))
    out["losses"] = losses
    out["units"] = units


def worker(a):
    import torch
    import torch.distributed as dist
    import netreduce.torch as nt

    rank, world = a.rank, a.ranks
    dev = torch.device(a.device, 0) if a.device == "cuda" else torch.device("cpu")
    if a.device == "cuda":
        torch.cuda.set_device(dev)
    if a.phase in ("local", "fsdp2"):
        dist.init_process_group("netreduce")
        out = {"rank": rank, "phase": a.phase, "torch": str(torch.__version__),
               "device": torch.cuda.get_device_name(dev) if a.device == "cuda" else "cpu"}
        (worker_local if a.phase == "local" else worker_fsdp2)(a, torch, dist, nt, dev, out)
        if a.device == "cuda":
            torch.cuda.synchronize()
        out["stats"] = nt.stats()
        with open(os.path.join(a.out, f"{a.phase}{rank}.json"), "w") as f:
            json.dump(out, f)
        dist.destroy_process_group()
        return
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
        if a.device == "cuda" and not stream_order(torch, dist, rank, world, dev):
            raise SystemExit(f"rank {rank}: a staged all-reduce read its input before the "
                             "caller's stream wrote it, or the caller read the result early")
        n = int(a.size_mb * 2**20) // 4
        times = {"staged": [], "host": []}
        for rep in range(a.reps + 1):     # the first is a warm-up
            for where in ("staged", "host") if rep % 2 else ("host", "staged"):
                dt, bad = timed_allreduce(torch, dist, n, rank, world,
                                          dev if where == "staged" else torch.device("cpu"))
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
    if phase == "local":
        env.update(NR_TORCH_LOCAL="group", LOCAL_WORLD_SIZE="1", NR_STAGE_CHUNK_KB="256")
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
        fail += lib_matches(r)
    return fail


def lib_matches(r, stats=None):
    """A failure if libnetreduce's own count differs from what the backend counted:
    the same bytes, at least as many calls (a CUDA tensor is staged in chunks
    of NR_STAGE_CHUNK_KB, a library call each)."""
    st = stats or r["stats"]
    lib, ours = st["library"], st["netreduce"]
    mine = {k: v for k, v in ours.items() if not k.endswith(" local group")}
    calls = sum(v["calls"] for v in mine.values())
    nbytes = sum(v["bytes"] for v in mine.values())
    if lib["ring_bytes"] != nbytes or lib["ring_calls"] < calls:
        return [f"{r['phase']} rank {r['rank']}: libnetreduce counted {lib['ring_calls']} "
                f"calls of {lib['ring_bytes']} bytes against the backend's {calls} of {nbytes} "
                f"({ours})"]
    return []


def calls(counts, prefix="", suffix=""):
    return sum(v["calls"] if isinstance(v, dict) else v for k, v in counts.items()
               if k.startswith(prefix) and k.endswith(suffix))


def check_local(rows, a):
    """Failures of the local phase: a sum not exact, ranks differ, a call not counted."""
    fail = []
    backend = "nccl" if a.device == "cuda" else "gloo"
    for name in rows[0]["digests"]:
        if len({r["digests"][name] for r in rows}) != 1:
            fail.append(f"local: {name}: the ranks' results differ")
    for r in rows:
        st, want, who = r["stats"], r["allreduces"], f"local rank {r['rank']}"
        bad = [k for k, ok in r["checks"].items() if not ok]
        if bad:
            fail.append(f"{who}: not exact: {', '.join(bad)}")
        got = calls(st["netreduce"], "all_reduce", " local group")
        rsg = calls(st["netreduce"], "reduce_scatter", " local group")
        col = calls(st["netreduce"], "all_reduce SUM float32 " + a.device, " column")
        rs = calls(st[backend], "local reduce_scatter") + calls(st[backend], "local all_reduce")
        ag = calls(st[backend], "local allgather")
        if got != want or rsg != 1 or col < want or rs < want + 1 or ag < want:
            fail.append(f"{who}: {got} all-reduces through the local group of {want} and {rsg} "
                        f"reduce-scatters of 1, {col} "
                        f"{a.device} column shares, {rs} local reduce-scatters and {ag} "
                        f"all-gathers on {backend}: {st['netreduce']} {st[backend]}")
        if st["delegated"]:
            fail.append(f"{who}: delegated: {st['delegated']}")
        fail += lib_matches(r)
    return fail


def check_fsdp2(rows, a):
    """Failures of the fsdp2 phase: parameters off the reference or differing
    between ranks, a reduce-scatter not through libnetreduce, an all-gather
    unaccounted for."""
    fail = []
    if len({r["digest"] for r in rows}) != 1:
        fail.append("fsdp2: the full parameters differ between ranks")
    for r in rows:
        st, who = r["stats"], f"fsdp2 rank {r['rank']}"
        want = a.steps * r["units"]
        if r["max_diff"] > 1e-4:
            fail.append(f"{who}: parameters {r['max_diff']:.3g} off the unsharded reference")
        rs = calls(st["netreduce"], "reduce_scatter")
        off = {k: v for k, v in st["delegated"].items() if k.startswith("reduce_scatter")}
        if rs < want or off or calls(st["gloo"], "reduce_scatter"):
            fail.append(f"{who}: {rs} reduce-scatters through libnetreduce of at least {want}; "
                        f"delegated {off}; Gloo's {st['gloo']}")
        ag = calls(st["netreduce"], "allgather") + calls(st["delegated"], "allgather") + \
            calls(st["gloo"], "allgather")
        if ag < want:
            fail.append(f"{who}: {ag} all-gathers counted, at least {want} issued")
        fail += lib_matches(r)
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
    results, fail, skipped = {}, [], {}
    with tempfile.TemporaryDirectory() as out:
        for phase in a.phases:
            why = fsdp2_refusal(torch, a.device) if phase == "fsdp2" else None
            if why:
                skipped[phase] = why
                print(f"gpu-check: phase fsdp2 skipped: {why}")
                continue
            rows, failed = run_phase(a, phase, out)
            if failed:
                fail += failed
                continue
            if phase == "local":
                fail += check_local(rows, a)
            elif phase == "fsdp2":
                fail += check_fsdp2(rows, a)
            else:
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
    if "local" in results:
        rows = results["local"]
        t = statistics.median(r["timing"]["local"] for r in rows)
        nbytes = rows[0]["timing_bytes"]
        st = rows[0]["stats"]
        print(f"local: NR_TORCH_LOCAL=group, {a.ranks} hosts of one rank, local phases on "
              f"{'NCCL' if a.device == 'cuda' else 'Gloo'} (a group of one: no bytes cross "
              f"between GPUs), the shares over our ring: {nbytes / 2**20:.0f} MiB in "
              f"{t:.4f} s ({nbytes / t / 1e9:.2f} GB/s, median of {a.reps}); exact "
              f"{sorted(k for k, ok in rows[0]['checks'].items() if ok)}; rank 0 counted "
              f"{st['netreduce']}, local phases {st['nccl' if a.device == 'cuda' else 'gloo']}")
        results["summary_local"] = {"bytes": nbytes, "local_s": t}
    if "fsdp2" in results:
        rows = results["fsdp2"]
        st = rows[0]["stats"]
        print(f"fsdp2: {a.ranks} ranks, {a.steps} steps, {rows[0]['units']} sharded Linear "
              f"layers: full parameters {'bit-identical' if len({r['digest'] for r in rows}) == 1 else 'DIFFER'}"
              f" across ranks, at most {max(r['max_diff'] for r in rows):.2g} off the unsharded "
              f"reference (losses {rows[0]['losses'][0]:.4f} -> {rows[0]['losses'][-1]:.4f}); "
              f"rank 0 counted {st['netreduce']}, delegated {st['delegated']}, Gloo's {st['gloo']}")
    for phase in ("backend", "hook"):
        rows = results.get(phase)
        if rows:
            print(f"{phase}: {'bit-identical' if len({r['digest'] for r in rows}) == 1 else 'DIFFER'}"
                  f" on {len(rows)} ranks; rank 0 counted {rows[0]['stats']['netreduce']}")
    results["skipped"] = skipped
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if fail:
        print("FAIL: gpu-check:\n  " + "\n  ".join(fail))
        return 1
    ran = [p for p in a.phases if p not in skipped]
    print(f"PASS: gpu-check ({a.device}): {', '.join(ran)}: bit-identical on every rank, "
          "every collective counted" + (f"; skipped: {skipped}" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
