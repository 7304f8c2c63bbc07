"""Where a banded model's rows live (host.rewrite.bands writes the model): which CONCATENATION
inputs sit exactly at their destination, and which bytes of a banded stage's input no later band
reads. The planner (host.planning.band_choice) places tensors by these facts and the checker
(host.planning.checker) accepts the overlaps they allow, so they sit below both."""

from __future__ import annotations

from host.planning.model import lifetimes
from host.planning.packing.problem import TFLM_ALIGNMENT
from host.rewrite.operators import _consts_i32, _options, concat_axis
from host.tflite.model import Model


def concat_destinations(model: Model) -> dict[tuple[int, int], int]:
    """(input, output) global indices -> input offset - output offset at which a
    CONCATENATION's input sits exactly at its destination (copied onto itself)."""
    out: dict[tuple[int, int], int] = {}
    w = lifetimes.walk(model)
    last = {lt.tensor.global_index: lt.last for lt in w.lifetimes}
    scope = {(s.subgraph, s.op): s.first for s in w.op_scopes}
    for sub in model.subgraphs:
        for op in sub.operators:
            if op.name != "CONCATENATION" or len(op.outputs) != 1:
                continue
            t = sub.tensors[op.outputs[0]]
            axis = concat_axis(model, sub, op)
            if axis is None or any(d != 1 for d in t.shape[:axis]):
                continue  # more than one copy per input: its bytes are not contiguous
            if len(set(op.inputs)) != len(op.inputs):
                continue
            offset = 0
            for i in op.inputs:
                x = sub.tensors[i]
                gi = x.global_index
                if last.get(gi) == scope.get((sub.index, op.index)) and x.type == t.type:
                    out[(gi, t.global_index)] = offset
                offset += x.nbytes()
    return out


Piece = tuple[int, int, int]  # bytes [lo, hi) of a tensor, and the last scope reading them


def _slice_rows(model: Model, sub, op) -> tuple[int, int] | None:
    """Rows [a, b) a STRIDED_SLICE copies whole (all of batch 1, every column and channel)
    from a [1, H, W, C] map, or None for any other slice."""
    if op.name != "STRIDED_SLICE" or len(op.inputs) != 4:
        return None
    x = sub.tensors[op.inputs[0]]
    args = [sub.tensors[i] for i in op.inputs[1:]]
    if len(x.shape) != 4 or x.shape[0] != 1 or any(not a.is_const or a.type != 2 for a in args):
        return None
    opts = _options(model, op, sub.index)
    if opts is not None and any(opts.scalar(s, "i", 0) for s in range(5)):
        return None  # begin/end/ellipsis/new-axis/shrink masks change what is read
    begin, end, strides = (_consts_i32(model, a) for a in args)
    _, h, w, c = x.shape
    if (
        strides != [1, 1, 1, 1]
        or begin[0]
        or begin[2:] != [0, 0]
        or end[0] != 1
        or end[2:] != [w, c]
    ):
        return None
    a, b = begin[1], end[1]
    return (a, b) if 0 <= a < b <= h else None


def row_pieces(model: Model, w: lifetimes.Walk) -> dict[int, list[Piece]]:
    """Tensors of subgraph 0 read only by whole-row STRIDED_SLICEs (a banded stage's input):
    their bytes in 16-byte aligned pieces, each with the last scope that reads it. A piece's
    bytes may hold another tensor born after that scope: no later band reads them."""
    if not model.subgraphs:
        return {}
    sub = model.subgraphs[0]
    scope = {s.op: s.first for s in w.op_scopes if s.subgraph == 0}
    first = {lt.tensor.global_index: lt.first for lt in w.lifetimes}
    readers: dict[int, list] = {}
    for op in sub.operators:
        for i in op.inputs:
            if i >= 0:
                readers.setdefault(i, []).append(op)
    out = {}
    for ti, ops in readers.items():
        x = sub.tensors[ti]
        rows = [_slice_rows(model, sub, op) for op in ops]
        if ti in sub.outputs or x.global_index not in first or any(r is None for r in rows):
            continue
        death = [first[x.global_index]] * x.shape[1]  # rows no band reads are dead at once
        for op, (a, b) in zip(ops, rows, strict=True):  # type: ignore[misc]
            for r in range(a, b):
                death[r] = max(death[r], scope[op.index])
        out[x.global_index] = _aligned_pieces(death, x.nbytes() // x.shape[1])
    return out


def _aligned_pieces(death: list[int], row_bytes: int) -> list[Piece]:
    """Per-row deaths as 16-byte aligned pieces: a chunk dies with the last of its rows."""
    size = lifetimes.align_up(row_bytes * len(death))
    chunks = []
    for lo in range(0, size, TFLM_ALIGNMENT):
        rows = range(lo // row_bytes, min(len(death), -(-(lo + TFLM_ALIGNMENT) // row_bytes)))
        chunks.append(max((death[r] for r in rows), default=death[-1]))
    pieces: list[Piece] = []
    for k, d in enumerate(chunks):
        lo = k * TFLM_ALIGNMENT
        if pieces and pieces[-1][2] == d:
            pieces[-1] = (pieces[-1][0], lo + TFLM_ALIGNMENT, d)
        else:
            pieces.append((lo, lo + TFLM_ALIGNMENT, d))
    return pieces


def dead_under(pieces: list[Piece], lo: int, hi: int, born: int) -> bool:
    """Are bytes [lo, hi) of a pieced tensor all read for the last time before scope `born`?"""
    return all(d < born for a, b, d in pieces if a < hi and lo < b)
