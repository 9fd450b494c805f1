#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tp_bench.py: the soft transport against Gloo's TCP, two ranks both ways, in
Gbit/s a core (make bench-transport; bench/README.md).

For each path and RoCE MTU (1024, 4096), --reps rounds of nr-tp-perf (our
transport) and gloo_stream.py (torch.distributed's Gloo on TCP), alternated so
both see the same machine, then a table of medians: Gbit/s a core each way
(bytes a rank sent / CPU seconds of its process: what a shared machine does
not blur), wall-clock Gbit/s beside it, and ours against Gloo's.

Paths (--paths, comma list):
  lo       two processes on 127.0.0.x (Gloo's TCP on lo, MTU 64 KiB)
  veth     two network namespaces joined by a veth whose MTU is the RoCE
           MTU's fabric (1500 for 1024, 4200 for 4096), the kernel's default
           offloads on (TSO/GRO for TCP, GSO/GRO for UDP): the same path for
           both (root)
  testbed  tests/testbed/run --hosts 2: each rank in a host namespace, every
           packet through the box (netreduce-switch, its ports on veth),
           unshaped (root)
--perf DIR: also a perf record of one lo run per MTU (ours), summed by what
the time goes to.  Figures only: exit 0 unless a run failed (2).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TORCH_PY = os.environ.get("TB_PYTHON", "/usr/bin/python3")

# what the time goes to: perf symbols by pattern, first match wins
CATEGORIES = [
    ("ICRC (ISA-L crc32)", ["crc32_gzip", "crc_small", "soft_icrc", "nr_crc32", "crc32_z"]),
    ("kernel copies (user <-> skb)", ["_copy_from_iter", "_copy_to_iter", "copy_user",
                                       "_copy_from_user", "rep_movs", "memcpy_orig"]),
    ("user copy to the target memory", ["__memmove", "__memcpy"]),
    ("our packet work (build, parse, PSN, ACK)", ["soft_", "nr_parse", "rx_one", "rx_pkt",
                                                   "progress", "nr_tp_", "rank_main", "handle",
                                                   "post_more", "tx_place", "msg_iovs"]),
    ("wakeups and scheduling", ["schedule", "finish_task_switch", "poll", "futex",
                                "_raw_spin_unlock_irq", "try_to_wake", "enqueue_task",
                                "dequeue", "pick_next", "update_curr"]),
]


def run(cmd, env=None, timeout=600, check=True):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:],
                                                  r.stderr[-2000:]))
    return r


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


# ---- one run on each path ------------------------------------------------------

def lo_run(kind, mtu, a, perf=None):
    if kind == "soft":
        cmd = [a.perf_bin, "--loopback", "--mtu", str(mtu), "--bytes", a.bytes, "--json"]
        if perf:
            cmd = ["perf", "record", "-F", "2000", "-g", "-q", "-o", perf, "--"] + cmd
    else:
        cmd = [TORCH_PY, os.path.join(HERE, "gloo_stream.py"), "--loopback", "--bytes", a.bytes,
               "--json"]
    return json_lines(run(cmd).stdout)


class Veth:
    """Two namespaces nrtpA, nrtpB joined by a veth of the given MTU."""

    def __init__(self, mtu):
        self.ns = ["nrtp%dA" % os.getpid(), "nrtp%dB" % os.getpid()]
        self.ip = ["10.79.0.1", "10.79.0.2"]
        self.dev = ["nrtpv%da" % (os.getpid() % 10000), "nrtpv%db" % (os.getpid() % 10000)]
        for n in self.ns:
            run(["ip", "netns", "add", n])
        run(["ip", "link", "add", self.dev[0], "netns", self.ns[0], "mtu", str(mtu), "type", "veth",
             "peer", "name", self.dev[1], "netns", self.ns[1], "mtu", str(mtu)])
        for n, d, ip in zip(self.ns, self.dev, self.ip):
            run(["ip", "-n", n, "addr", "add", ip + "/24", "dev", d])
            run(["ip", "-n", n, "link", "set", d, "up"])
            run(["ip", "-n", n, "link", "set", "lo", "up"])

    def close(self):
        for n in self.ns:
            run(["ip", "netns", "del", n], check=False)

    def pair(self, kind, mtu, a):
        procs = []
        for r in (0, 1):
            env = dict(os.environ, NR_RANK=str(r), NR_ROOT=self.ip[0] + ":29611",
                       NR_ADDR=self.ip[r], MASTER_ADDR=self.ip[0], MASTER_PORT="29613",
                       RANK=str(r), WORLD_SIZE="2", GLOO_SOCKET_IFNAME=self.dev[r])
            if kind == "soft":
                cmd = [a.perf_bin, "--mtu", str(mtu), "--bytes", a.bytes, "--json"]
            else:
                cmd = [TORCH_PY, os.path.join(HERE, "gloo_stream.py"), "--bytes", a.bytes, "--json"]
            procs.append(subprocess.Popen(["ip", "netns", "exec", self.ns[r]] + cmd, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        outs = [p.communicate(timeout=600) for p in procs]
        for p, (o, e) in zip(procs, outs):
            if p.returncode:
                raise RuntimeError("veth %s run: exit %d: %s" % (kind, p.returncode, e[-2000:]))
        return json_lines(outs[0][0])


def testbed_run(kind, mtu, a):
    if kind == "soft":
        cmd = "%s --mtu %d --bytes %s --json" % (os.path.abspath(a.perf_bin), mtu, a.bytes)
    else:
        cmd = "%s %s --bytes %s --json" % (TORCH_PY, os.path.join(HERE, "gloo_stream.py"), a.bytes)
    r = run([os.path.join(ROOT, "tests", "testbed", "run"), "--build", a.build, "--hosts", "2",
             "--mtu", str(mtu), "--timeout", "600", "--json", "--cmd", cmd], timeout=900)
    rows, seen = [], set()
    for x in json_lines(r.stdout):      # a rank's line once (the testbed may repeat them)
        if x.get("bench") == "tp" and x.get("rank") not in seen:
            seen.add(x.get("rank"))
            rows.append(x)
    return rows


# ---- the profile -------------------------------------------------------------------

def profile(path):
    rep = run(["perf", "report", "-i", path, "--no-children", "--sort", "symbol", "--stdio",
               "-g", "none"], check=False).stdout
    share = {name: 0.0 for name, _ in CATEGORIES}
    share["kernel network stack and system calls"] = 0.0
    share["other"] = 0.0
    top = []
    for line in rep.splitlines():
        f = line.split()
        if len(f) < 3 or not f[0].endswith("%"):
            continue
        try:
            pct = float(f[0][:-1])
        except ValueError:
            continue
        kernel = f[1] == "[k]"
        sym = f[2]
        top.append((pct, sym))
        for name, pats in CATEGORIES:
            if any(p in sym for p in pats):
                share[name] += pct
                break
        else:
            share["kernel network stack and system calls" if kernel else "other"] += pct
    return share, top[:12]


# ---- the table ---------------------------------------------------------------------------

def per_rank(rows):
    """Mean over the ranks of one run."""
    return (statistics.mean(r["gbps_core"] for r in rows),
            statistics.mean(r["gbps_wall"] for r in rows),
            sum(r.get("wrong", 0) for r in rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--paths", default="lo,veth")
    p.add_argument("--mtu", default="1024,4096")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--bytes", default="1G", help="bytes each way a run (1G)")
    p.add_argument("--perf", metavar="DIR", help="perf profiles of our lo runs into DIR")
    p.add_argument("--out", help="also write every run's JSON lines to this file")
    p.add_argument("--tp-bin", help="another nr-tp-perf (an older build's, for before/after)")
    a = p.parse_args()
    a.perf_bin = a.tp_bin or os.path.join(a.build, "bench", "transport", "nr-tp-perf")
    if not os.access(a.perf_bin, os.X_OK):
        sys.exit("tp_bench: %s not built (ninja -C %s bench/transport/nr-tp-perf)"
                 % (a.perf_bin, a.build))
    paths = a.paths.split(",")
    mtus = [int(m) for m in a.mtu.split(",")]
    if any(x != "lo" for x in paths) and os.geteuid() != 0:
        sys.exit("tp_bench: --paths veth and testbed need root (network namespaces); "
                 "--paths lo runs without")
    results, status, lines = {}, 0, []
    for path in paths:
        for mtu in mtus:
            veth = Veth(mtu + 104 if mtu > 1024 else 1500) if path == "veth" else None
            try:
                for rep in range(a.reps):
                    for kind in ("soft", "gloo"):
                        try:
                            if path == "lo":
                                rows = lo_run(kind, mtu, a)
                            elif path == "veth":
                                rows = veth.pair(kind, mtu, a)
                            else:
                                rows = testbed_run(kind, mtu, a)
                        except (RuntimeError, subprocess.TimeoutExpired) as e:
                            print("tp_bench: %s %s MTU %d: %s" % (path, kind, mtu, e),
                                  file=sys.stderr)
                            status = 2
                            continue
                        for r in rows:
                            r.update(path=path, path_mtu=mtu, rep=rep)
                        lines += rows
                        if len(rows) >= 2:
                            results.setdefault((path, mtu, kind), []).append(per_rank(rows))
                        print("%-8s MTU %4d %-4s rep %d: %s" % (
                            path, mtu, kind, rep, " ".join("%.2f" % r["gbps_core"] for r in rows)),
                            file=sys.stderr, flush=True)
            finally:
                if veth:
                    veth.close()
    if a.out:
        with open(a.out, "w") as f:
            for r in lines:
                f.write(json.dumps(r) + "\n")
    print()
    print("Gbit/s a core each way (bytes a rank sent / CPU seconds of its process; medians "
          "of %d runs, both ranks' mean; wall-clock Gbit/s in brackets)" % a.reps)
    print("%-8s %5s %18s %18s %8s" % ("path", "MTU", "soft transport", "Gloo TCP", "ours/Gloo"))
    for path in paths:
        for mtu in mtus:
            s, g = results.get((path, mtu, "soft")), results.get((path, mtu, "gloo"))
            cell = lambda v: ("%6.2f [%6.2f]" % (statistics.median(x[0] for x in v),
                                                 statistics.median(x[1] for x in v))) if v else "-"
            ratio = (statistics.median(x[0] for x in s) / statistics.median(x[0] for x in g)
                     if s and g else 0)
            print("%-8s %5d %18s %18s %8.2f" % (path, mtu, cell(s), cell(g), ratio))
            if any(x[2] for x in (s or []) + (g or [])):
                print("  WRONG stamps in some run")
                status = 2
    if a.perf:
        os.makedirs(a.perf, exist_ok=True)
        for mtu in mtus:
            f = os.path.join(a.perf, "lo-%d.data" % mtu)
            try:
                lo_run("soft", mtu, a, perf=f)
            except RuntimeError as e:
                print("tp_bench: perf: %s" % e, file=sys.stderr)
                continue
            share, top = profile(f)
            print("\nwhere the CPU time goes, lo, MTU %d (perf record, both ranks; %s):" % (mtu, f))
            for name, pct in sorted(share.items(), key=lambda x: -x[1]):
                print("  %5.1f%%  %s" % (pct, name))
            print("  top symbols: " + ", ".join("%s %.1f%%" % (s, pct) for pct, s in top[:8]))
    return status


if __name__ == "__main__":
    sys.exit(main())
