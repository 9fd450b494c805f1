# SPDX-License-Identifier: BSD-3-Clause
"""GPU tensors through a host library: staged through pinned host memory in
chunks, pipelined.

libnetreduce reads and writes host memory (the soft transport; the verbs
transport registers host memory: see host/README.md, "GPU memory").  A CUDA
tensor of n bytes is cut into chunks of NR_STAGE_CHUNK_KB (default 4096) and
goes through a ring of SLOTS pinned host buffers of one chunk each:

    copy stream  D2H k+2  D2H k+3 ...        (waits for the caller's stream first)
    worker       all-reduce k  (host memory)
    back stream  H2D k-1, divide (AVG)

so the copy of chunk k+1 and the copy back of chunk k-1 overlap chunk k on
the wire; only the first chunk's copy and the last one's copy back are added
to the all-reduce.  The copies run on two streams of their own (both copy
workers), after what the caller queued on its current stream when it
submitted (an event); the request completes once the last copy back is done,
so whoever waits on it may use the tensor on any stream.  Pinned memory is
SLOTS chunks per worker, whatever the tensor's size.

Chunks are all-reduced one by one, so every rank cuts a tensor the same way
(same size, same NR_STAGE_CHUNK_KB).  The box sums element by element in
rank order: chunking does not change a bit of the result.  The ring's order
depends on where an element falls in the message, as the ring's reference
(netreduce.reference.ring_sum) says for each chunk.

Stager is written against a small device interface (CudaOps) so the chunking
and the pipeline run on the CPU in the tests (HostOps) as they do on a GPU.
"""
import os

import torch

SLOTS = 3


def chunk_bytes():
    kb = os.environ.get("NR_STAGE_CHUNK_KB", "4096")
    try:
        v = int(kb)
    except ValueError:
        v = 0
    if v < 4 or v > (1 << 20):
        raise ValueError(f"NR_STAGE_CHUNK_KB={kb!r}: the staging chunk in KiB, 4 to 1048576 "
                         "(default 4096)")
    return v * 1024


def chunks(numel, chunk_elems):
    """[(offset, count), ...] covering numel elements, chunk_elems at a time."""
    return [(o, min(chunk_elems, numel - o)) for o in range(0, numel, chunk_elems)]


class CudaOps:
    """The device side of staging for one CUDA device: pinned slots, two copy
    streams, events.  Created lazily by the worker for the device of the first
    CUDA tensor it is handed."""

    def __init__(self, device, chunk):
        self.device = device
        self.chunk = chunk
        with torch.cuda.device(device):
            self.d2h = torch.cuda.Stream(device)
            self.h2d = torch.cuda.Stream(device)
        # raw bytes, viewed as the tensor's type (float32, bfloat16, float16)
        self.slots = [torch.empty(chunk, dtype=torch.uint8, pin_memory=True)
                      for _ in range(SLOTS)]
        self.copied = [None] * SLOTS    # event: the slot holds chunk's data on the host
        self.freed = [None] * SLOTS     # event: the slot's copy back is done

    def ready(self):
        """In the caller's thread: an event after what its current stream queued."""
        ev = torch.cuda.Event()
        ev.record(torch.cuda.current_stream(self.device))
        return ev

    def to_host(self, ready, tensor, off, n, slot):
        """Queue the copy of tensor[off:off+n] into slot (after ready and the slot's last use)."""
        with torch.cuda.stream(self.d2h):
            if ready is not None:
                self.d2h.wait_event(ready)
            if self.freed[slot] is not None:
                self.d2h.wait_event(self.freed[slot])
            self.slots[slot].view(tensor.dtype)[:n].copy_(tensor[off:off + n], non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(self.d2h)
            self.copied[slot] = ev

    def host(self, slot, dtype):
        """Wait (this thread) until slot holds its chunk; the host buffer, as dtype."""
        self.copied[slot].synchronize()
        return self.slots[slot].view(dtype)

    def to_device(self, tensor, off, n, slot, divide):
        """Queue the copy of slot back into tensor[off:off+n], divided by divide if set."""
        with torch.cuda.stream(self.h2d):
            self.h2d.wait_event(self.copied[slot])
            dst = tensor[off:off + n]
            dst.copy_(self.slots[slot].view(tensor.dtype)[:n], non_blocking=True)
            if divide:
                dst.div_(divide)
            ev = torch.cuda.Event()
            ev.record(self.h2d)
            self.freed[slot] = ev

    def finish(self):
        """Wait (this thread) until every copy back is done."""
        self.h2d.synchronize()


class HostOps:
    """The same interface over host memory (the tests: the pipeline on a CPU).
    Copies are immediate; slot reuse is checked: a slot is never refilled
    before its copy back."""

    def __init__(self, chunk):
        self.chunk = chunk
        self.slots = [torch.empty(chunk, dtype=torch.uint8) for _ in range(SLOTS)]
        self.state = ["free"] * SLOTS
        self.log = []

    def ready(self):
        return None

    def to_host(self, ready, tensor, off, n, slot):
        assert self.state[slot] == "free", f"slot {slot} refilled before its copy back"
        self.slots[slot].view(tensor.dtype)[:n].copy_(tensor[off:off + n])
        self.state[slot] = "host"
        self.log.append(("d2h", off, n, slot))

    def host(self, slot, dtype):
        assert self.state[slot] == "host"
        return self.slots[slot].view(dtype)

    def to_device(self, tensor, off, n, slot, divide):
        dst = tensor[off:off + n]
        dst.copy_(self.slots[slot].view(tensor.dtype)[:n])
        if divide:
            dst.div_(divide)
        self.state[slot] = "free"
        self.log.append(("h2d", off, n, slot))

    def finish(self):
        pass


class Stager:
    """All-reduce of a device tensor as a pipeline of host chunks."""

    def __init__(self, ops):
        self.ops = ops

    def run(self, tensor, ready, allreduce, divide):
        """allreduce(host_chunk) sums a host chunk in place; the result lands in
        tensor, divided by divide (AVG) when set.  Returns the chunks run."""
        ops = self.ops
        flat = tensor.view(-1)
        parts = chunks(flat.numel(), ops.chunk // flat.element_size())
        ahead = min(SLOTS - 1, len(parts))   # copies queued ahead of the wire
        for k in range(ahead):
            off, n = parts[k]
            ops.to_host(ready if k == 0 else None, flat, off, n, k % SLOTS)
        for k, (off, n) in enumerate(parts):
            slot = k % SLOTS
            if k + ahead < len(parts):
                o2, n2 = parts[k + ahead]
                ops.to_host(None, flat, o2, n2, (k + ahead) % SLOTS)
            host = ops.host(slot, flat.dtype)
            allreduce(host[:n])
            ops.to_device(flat, off, n, slot, divide)
        ops.finish()
        return len(parts)
