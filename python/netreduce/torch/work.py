# SPDX-License-Identifier: BSD-3-Clause
"""The Works the backend returns: Python subclasses of c10d's Work.

dist.all_reduce calls wait(), DDP's reducer (C++) calls get_future(): both
reach these Python methods through c10d's pybind11 trampoline (torch 1.13 and
2.x alike), so wait() can raise netreduce's error and the future carries it
to DDP.  One rule makes that hold: pybind11 finds a Python override only
while the Python object lives, and a C++ caller keeps only the C++ side.  So
every Work stays referenced here until its future completes, and the last
KEEP_RECENT handed out stay as well: a request can complete before C++ asks
for its future (an empty tensor, a closed worker, a fast worker), and DDP's
reducer asks right after the call returns, before it issues the next one.
Few, since a Work holds its result's tensors.  This is the pattern of
PyTorch's own tests of Python process groups (test_c10d_pypg.py).
"""
import collections
import threading

import torch
import torch.distributed as dist

KEEP_RECENT = 4

_lock = threading.Lock()
_pending = {}                                    # id -> Work, until its future completes
_recent = collections.deque(maxlen=KEEP_RECENT)


def _keep(work, fut):
    key = id(work)
    with _lock:
        _pending[key] = work
        _recent.append(work)

    def release(_):
        with _lock:
            _pending.pop(key, None)
    fut.add_done_callback(release)   # no reference from the future back to the Work


class Work(dist.Work):
    """A collective's Work around a torch.futures.Future whose value is the
    result (a list of tensors) or whose error is netreduce's.  cause: the
    worker's own future of the request, whose error wait() raises as it is
    (a NetreduceError), not as the chained futures' RuntimeError around it."""

    def __init__(self, fut, result, cause=None, parts=()):
        super().__init__()
        self._fut, self._result, self._cause = fut, result, cause
        self._parts = list(parts)   # combine(): each waited for (its streams, its error)
        _keep(self, fut)

    def wait(self, timeout=None):
        for w in self._parts:
            w.wait()
        try:
            self._fut.wait()
        except Exception:
            if self._cause is not None and self._cause.done():
                self._cause.value()   # raises the request's NetreduceError
            raise
        return True

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        return self._fut

    def is_completed(self):
        return self._fut.done()

    def is_success(self):
        return self._fut.done() and self.exception() is None

    def exception(self):
        if not self._fut.done():
            return None
        try:
            self._fut.value()
            return None
        except Exception as e:  # noqa: BLE001 - that is the answer
            return e

    def synchronize(self):
        pass


def done(result):
    """A Work already complete with result (e.g. an empty tensor)."""
    fut = torch.futures.Future()
    fut.set_result(result)
    return Work(fut, result)


def combine(works, result):
    """One Work for several (coalesced collectives): done when all are; wait()
    waits for each (a CUDA one makes the caller's stream wait on its events,
    which the future of all, a CPU one, does not) and raises the first error."""
    futs = [w.get_future() for w in works]

    def settle(all_done):
        for f in all_done.value():
            f.value()            # raises the first failure
        return result
    return Work(torch.futures.collect_all(futs).then(settle), result, parts=works)


class Then(dist.Work):
    """Another backend's work, then after() once, when it is waited for: wait()
    waits for work (its streams: after() runs on the caller's, ordered), then
    runs after(); get_future() is work's future chained to after() where work
    has one (Gloo's reduce-scatter has none: then the future of a wait, here).
    Kept referenced (see _keep) until waited for."""

    def __init__(self, work, after, result):
        super().__init__()
        self._work, self._after, self._result = work, after, result
        self._ran = False
        self._lock = threading.Lock()
        with _lock:
            _pending[id(self)] = self
            _recent.append(self)

    def _run_after(self):
        with self._lock:     # a poller of is_completed() waits here until after() is done
            if not self._ran:
                try:
                    self._after()
                finally:
                    self._ran = True
        with _lock:
            _pending.pop(id(self), None)

    def wait(self, timeout=None):
        self._work.wait()
        self._run_after()
        return True

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        try:
            fut = self._work.get_future()
        except RuntimeError:   # "Work::getFuture not implemented"
            fut = None
        if fut is None:
            self.wait()
            fut = torch.futures.Future()
            fut.set_result(self._result)
            return fut

        def finish(f):
            f.value()
            self._run_after()
            return self._result
        return fut.then(finish)

    def is_completed(self):
        """Whether work is done and after() ran: host outputs' after() runs here
        once work is (CUDA ones' on the stream of whoever waits, in wait())."""
        if not self._ran and self._work.is_completed() and \
                not any(t.is_cuda for t in self._result if isinstance(t, torch.Tensor)):
            try:
                self.wait()      # after() runs: what the caller reads next is final
            except Exception:   # noqa: BLE001 - failed: completed; wait() raises it
                return True
        return self._ran

    def synchronize(self):
        pass
