# SPDX-License-Identifier: BSD-3-Clause
"""What netreduce takes from torch, said once: the backend and the hooks hand
what it refuses to Gloo (with the reason, counters.py), the worker raises on
it (worker.py).  The library's own checks of an address and a count are
Communicator.allreduce's (comm.py)."""
import torch

# torch's types netreduce sums, by libnetreduce's name (Communicator.allreduce)
DTYPES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


def why_not(t, op, topology=False):
    """(TypeError or ValueError, why) when netreduce cannot all-reduce tensor t
    with op ("SUM", "AVG", "MAX", ...), else None.  topology: hosts with
    several ranks or racks, whose phases sum float32 only."""
    if not isinstance(t, torch.Tensor):
        return TypeError, f"netreduce takes a torch.Tensor, not {type(t).__name__}"
    if t.layout != torch.strided:
        return TypeError, f"a {'sparse' if t.is_sparse else str(t.layout)} tensor: netreduce sums dense buffers"
    dt = str(t.dtype).replace("torch.", "")
    if t.dtype not in DTYPES:
        return TypeError, f"netreduce sums float32, bfloat16 and float16, this is {dt}"
    if op not in ("SUM", "AVG", "MAX"):
        return ValueError, f"netreduce does SUM, AVG and MAX, not {op}"
    if op == "MAX" and topology:
        return ValueError, ("MAX on hosts with several ranks or across racks: their local and "
                            "rack phases sum only")
    if t.dtype != torch.float32 and op == "MAX":
        return ValueError, f"netreduce takes MAX of float32 only, this is {dt}"
    if t.dtype != torch.float32 and topology:
        return ValueError, (f"{dt} on hosts with several ranks or across racks: their local "
                            "and rack phases sum float32 only")
    if t.device.type not in ("cpu", "cuda"):
        return ValueError, f"device {t.device.type}: netreduce takes CPU and CUDA tensors"
    if not t.is_contiguous():
        return ValueError, (f"not contiguous (strides {tuple(t.stride())}): netreduce sums one "
                            "flat buffer; reduce t.contiguous() and copy it back")
    return None


def refusal(tensors, op, topology=False):
    """Why netreduce cannot all-reduce the list tensors (one per device) with op;
    None if it can."""
    if len(tensors) != 1:
        return f"a list of {len(tensors)} tensors (one per device): netreduce takes one"
    why = why_not(tensors[0], op, topology)
    return why[1] if why else None


def flat_refusal(tensors, op, topology=False):
    """refusal() for several tensors summed as one flat buffer (coalesced)."""
    if not tensors:
        return "no tensors"
    for t in tensors:
        why = refusal([t], op, topology)
        if why:
            return why
    if len({t.device for t in tensors}) > 1:
        return "tensors on several devices"
    return None


def gather_refusal(tensors, topology=False, staged=False):
    """Why netreduce cannot all-gather into or from tensors (any type: bytes) on a
    communicator with a box, or None: host tensors, dense and contiguous, one rank
    a host (nr_allgather).  staged: CUDA tensors too, on one device (the caller
    stages them through host memory: NR_TORCH_LOCAL=group's all-gather)."""
    for t in tensors:
        if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
            return "not a dense tensor: netreduce gathers dense buffers"
        if t.device.type != "cpu" and not (staged and t.device.type == "cuda"):
            return (f"a {t.device.type} tensor: netreduce gathers host tensors (its staging "
                    "of GPU memory is the all-reduce's and NR_TORCH_LOCAL=group's)")
        if not t.is_contiguous():
            return "not contiguous: netreduce gathers one flat buffer"
    if topology:
        return "hosts with several ranks or racks: netreduce gathers on one rank a host"
    if len({t.dtype for t in tensors}) > 1:
        return "tensors of several types"
    if len({t.device for t in tensors}) > 1:
        return "tensors on several devices"
    return None


def check(t, op, topology=False):
    """Raise TypeError or ValueError saying why netreduce cannot take t with op."""
    why = why_not(t, op, topology)
    if why:
        raise why[0](f"netreduce: all_reduce: {why[1]}")
