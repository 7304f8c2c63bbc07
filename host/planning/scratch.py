"""Kernel scratch-buffer requests: which operators ask for scratch memory, how much, in what order.

TFLM kernels call `RequestScratchBufferInArena(bytes)` in Prepare. TFLM's planner places those
buffers online (greedy first-fit, never from the offline plan) after all tensors, in request
order, each live for its operator's allocation scopes. To predict TFLM's head, or to leave
room for the scratch in an offline plan, the planner needs the same list of requests.

Each kernel library (host/planning/libraries/) states its operators' requests; this module lists
them for a whole model, in TFLM's request order, and turns them into planning buffers.

Operators whose scratch behaviour is not modelled are named by `unknown_scratch_ops`, so a
caller can warn that a prediction may be short.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from host.planning.libraries.base import KernelLibrary
from host.planning.model import lifetimes, metadata
from host.planning.model.lifetimes import TFLM, Walk, align_up, mark, walk
from host.planning.packing.greedy import plan_greedy
from host.planning.packing.problem import Buffer, arena_size
from host.tflite.model import Model, ModelError


@dataclass(frozen=True)
class ScratchRequest:
    """One RequestScratchBufferInArena call: by operator `op` of `subgraph`, of `bytes`."""

    subgraph: int
    op: int
    bytes: int  # as requested; the planner rounds it up to 16


# --------------------------------------------------------------------------- entry points


def scratch_requests(model: Model, lib: KernelLibrary) -> list[ScratchRequest]:
    """Every scratch request the library's kernels make, in TFLM's request order.

    TFLM prepares subgraph 0's operators in order, then subgraph 1's, and so on; a kernel's
    requests keep the order it makes them in. That order is the order of scratch handles and
    so decides ties in the greedy planner's sort. Operators whose behaviour is not modelled
    contribute nothing (see `unknown_scratch_ops`).
    """
    out = []
    for sg in model.subgraphs:
        for op in sg.operators:
            for size in lib.scratch(model, sg, op) or []:
                if size < 0:  # only a dynamic (-1) dimension can make a size negative
                    raise ModelError(
                        f"{model.source}: subgraph {sg.index} op {op.index} ({op.name}) has "
                        "dynamic shapes; its scratch size is unknown until run time"
                    )
                out.append(ScratchRequest(sg.index, op.index, size))
    return out


def unknown_scratch_ops(model: Model, lib: KernelLibrary) -> list[str]:
    """Operators (as 'subgraph S op I NAME') whose scratch requests are not modelled."""
    return [
        f"subgraph {sg.index} op {op.index} {op.name}"
        for sg in model.subgraphs
        for op in sg.operators
        if lib.scratch(model, sg, op) is None
    ]


# --------------------------------------------------------------------------- planning problem


def scratch_buffers(model: Model, w: Walk, requests: list[ScratchRequest]) -> list[Buffer]:
    """One Buffer per request, live for its operator's scopes, as TFLM hands them to its planner.

    Lifetimes use the same one-step shift as `host.planning.checker.tensor_buffers`; sizes are
    rounded up to 16 as TFLM does before planning. Ids follow the tensors' global indices (the
    first scratch buffer gets id = number of tensors), in request order. An operator the walk
    visits more than once spans from its first visit to its last (TFLM's UpdateFirstCreated /
    UpdateLastUsed). Requests of operators the walk never reaches are left out: TFLM never sets
    their size, so no prediction is possible (they occur only in unreachable subgraphs).
    """
    spans = {(s.subgraph, s.op): (s.first, s.last) for s in w.op_scopes}  # merged by walk()
    base = len(model.tensors)
    out = []
    for k, r in enumerate(requests):
        span = spans.get((r.subgraph, r.op))
        if span is not None:
            out.append(Buffer(base + k, span[0] + 1, span[1] + 2, align_up(r.bytes)))
    return out


def tflm_buffers(model: Model, lib: KernelLibrary) -> list[Buffer]:
    """TFLM's whole head planning problem for a model, in the order TFLM adds the buffers.

    Tensors first (global index order; those with an offset in the model's embedded
    OfflineMemoryAllocation are fixed there), then the kernels' scratch buffers in request
    order, always planned online.
    """
    w = walk(model)
    plan = metadata.read(model)
    tensors = lifetimes.tensor_buffers(w)
    if plan is not None:
        if len(plan.offsets) != len(model.tensors):
            raise ModelError(
                f"{model.source}: offline plan has {len(plan.offsets)} offsets for "
                f"{len(model.tensors)} tensors"
            )
        tensors = [
            replace(b, offset=plan.offsets[b.id]) if plan.offsets[b.id] >= 0 else b for b in tensors
        ]
        tensors += _planned_variables(model, plan.offsets)
    return tensors + scratch_buffers(model, w, scratch_requests(model, lib))


def _planned_variables(model: Model, offsets: list[int]) -> list[Buffer]:
    """Variable tensors with an offset: TFLM then plans them in the head like any tensor, live
    from the first operator that touches them to the last (not for the whole walk, which is
    why the runtime refuses plans that let other tensors share their bytes)."""
    planned = [
        t for t in model.tensors if t.is_variable and offsets[t.global_index] >= 0 and t.nbytes()
    ]
    if not planned:
        return []  # the usual case: no second walk of the model
    first, last, _, _ = mark(model, TFLM)
    out = []
    for t in planned:
        gi = t.global_index
        start, end = first.get(gi, -1) + 1, last.get(gi, -1) + 2
        out.append(Buffer(gi, start, end, align_up(t.nbytes()), offsets[gi]))
    return out


def predict_tflm_head(model: Model, lib: KernelLibrary) -> int:
    """Bytes of arena head TFLM's GreedyMemoryPlanner will use for this model."""
    buffers = tflm_buffers(model, lib)
    return arena_size(buffers, plan_greedy(buffers))
