# SPDX-License-Identifier: BSD-3-Clause
"""Who stopped?  Heartbeats through the c10d store, read when a call fails.

libnetreduce can say what it waited for, but not always who is to blame: on
the box ring every rank waits for the box, which waits for the slowest
contributor.  So every rank keeps one key in the job's c10d store,
"netreduce/JOB/beat/RANK" = "BEAT SEQ FAILED", rewritten every PERIOD seconds
by a daemon thread: BEAT counts up while the process lives, SEQ is the last
collective it entered, FAILED the collective that failed on it (0: none).
When a call fails, diagnose() compares two readings of every rank's key, GAP
seconds apart, and says for each other rank whether it is dead (BEAT stood
still), failed too, or lives but never entered the collective.  The first
reading is taken while the collective still runs, once it has lasted
max(GAP, timeout / 2): so the diagnosis of a collective that times out costs
no extra wait.  No store traffic per collective.
"""
import threading
import time

PERIOD = 0.25
GAP = 1.5


class Watch:
    def __init__(self, store, rank, world, job, timeout_s):
        self.store, self.rank, self.world, self.job = store, rank, world, job
        self.prefix = f"netreduce/{job}/beat/"
        self.beat = 0
        self.seq = 0          # last collective entered (set by the worker)
        self.failed = 0       # collective that failed here
        self._early = max(GAP, timeout_s / 2)
        self._started = None  # monotonic start of the running collective
        self._first = None    # (seq, monotonic time, reading) taken while it ran
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._publish()       # before the collective init: every rank's key exists after it
        self._thread = threading.Thread(target=self._run, name=f"netreduce-beat-{rank}",
                                        daemon=True)
        self._thread.start()

    def _publish(self):
        with self._lock:
            self.beat += 1
            value = f"{self.beat} {self.seq} {self.failed}"
        self.store.set(self.prefix + str(self.rank), value)

    def _run(self):
        while not self._stop.wait(PERIOD):
            try:
                self._publish()
                started, seq = self._started, self.seq
                if started is not None and time.monotonic() - started > self._early and \
                        (self._first is None or self._first[0] != seq):
                    self._first = (seq, time.monotonic(), self._read())
            except Exception:     # the store is gone (rank 0 exited): nothing to tell
                return

    def started(self, seq):
        """The worker enters collective seq."""
        self.seq = seq
        self._started = time.monotonic()

    def finished(self):
        self._started = None

    def fail(self, seq):
        """Mark collective seq as failed here, at once (others may be diagnosing)."""
        self.failed = seq
        try:
            self._publish()
        except Exception:
            pass

    def stop(self):
        self._stop.set()

    def _read(self):
        out = {}
        for r in range(self.world):
            if r != self.rank:
                beat, seq, failed = self.store.get(self.prefix + str(r)).decode().split()
                out[r] = (int(beat), int(seq), int(failed))
        return out

    def diagnose(self, seq, timeout):
        """What the other ranks were doing when collective seq failed here: a
        sentence, within GAP (+ at most 5 s if the store does not answer)."""
        result = []

        def run():
            try:
                early = self._first
                if early is not None and early[0] == seq:
                    _, t_first, first = early
                else:
                    t_first, first = time.monotonic(), self._read()
                while True:
                    second = self._read()
                    # done early once every other rank failed as well
                    if time.monotonic() - t_first >= GAP or \
                            all(f > 0 for _, _, f in second.values()):
                        break
                    time.sleep(PERIOD / 2)
                result.append(self._explain(seq, first, second, time.monotonic() - t_first))
            except Exception as e:   # noqa: BLE001 - any store failure is the answer
                result.append(f"the c10d store (served by rank 0) does not answer ({e}): "
                              "rank 0 died or its host is unreachable")

        bound = GAP + min(timeout, 5.0)
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(bound)
        if not result:
            return (f"the c10d store (served by rank 0) did not answer within {bound:.1f} s: "
                    "rank 0 hangs or its host is unreachable")
        return result[0]

    def _explain(self, seq, first, second, interval):
        dead, absent, failed, waiting = [], [], [], []
        for r in sorted(second):
            beat0, _, _ = first[r]
            beat1, rseq, rfailed = second[r]
            if rfailed:
                failed.append(f"{r} (#{rfailed})")
            elif beat1 == beat0:
                dead.append(f"rank {r} (no heartbeat for {interval:.1f} s: it died or hangs; "
                            f"its last heartbeat was at collective #{rseq})")
            elif rseq < seq:
                absent.append(f"rank {r} (alive, but its last collective is #{rseq}: it "
                              f"stopped calling all_reduce)")
            else:
                waiting.append(f"{r} (#{rseq})")
        parts = []
        if dead:
            parts.append("waited for " + ", ".join(dead))
        if absent:
            parts.append("waited for " + ", ".join(absent))
        if failed:
            parts.append("ranks that failed too: " + ", ".join(failed))
        if waiting:
            parts.append("ranks alive and still in the collective: " + ", ".join(waiting))
        if not dead and not absent:
            parts.append("every other rank is alive and entered the collective: the box or "
                         "the network stopped forwarding")
        return "; ".join(parts)
