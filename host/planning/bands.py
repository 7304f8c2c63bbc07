"""Plan a model rewritten into bands (host.rewrite.bands): choose the cut and the band count.

Each band's part of the cut tensor T is placed where the joining CONCATENATION would copy it,
inside T: the copy is then of every byte onto itself. TFLM's reference concatenation copies
each input with one memcpy per outer index (one, when joining on the height of a [1, H, W, C]
map); this project's copies with memmove. Both leave the bytes as they are when source and
destination are the same address (tests/planning/test_bands.py checks every byte of T on the
real TFLM). Any other overlap between a CONCATENATION's input and its output is refused.

The choice: for every cut (the output of one of the first operators) and band count, the head
of the rewritten model's plan, and the multiply-accumulates the bands add by recomputing their
halos; the smallest head within the compute budget wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from host.planning import lifetimes
from host.planning.packing.problem import TFLM_ALIGNMENT
from host.planning.plan import PlanResult, plan_model
from host.rewrite import bands as rw
from host.tflite.model import Model

CONCATENATION_AXIS_SLOT = 0
DEFAULT_COUNTS = (2, 3, 4, 6, 8, 10)
MAX_CONCAT_INPUTS = 10  # TFLM's kMaxInputNum (concatenation.cc): more fail to prepare


@dataclass
class Choice:
    """One way to split: cut after operator `cut` into the bands `bounds` (rows of T)."""

    cut: int
    bounds: list[int]
    head: int
    stage_macs: int
    added_macs: int
    model_macs: int
    error: str = ""

    @property
    def bands(self) -> int:
        return len(self.bounds) - 1

    @property
    def added_fraction(self) -> float:
        return self.added_macs / self.model_macs if self.model_macs else 0.0

    def to_json(self) -> dict:
        return {
            "cut_operator": self.cut,
            "bands": self.bands,
            "bounds": self.bounds,
            "head": self.head,
            "added_macs": self.added_macs,
            "added_fraction": round(self.added_fraction, 4),
            "stage_macs": self.stage_macs,
            "model_macs": self.model_macs,
        }


def aligned_bounds(height: int, row_bytes: int, count: int) -> list[int] | None:
    """Row bounds of `count` near-equal bands whose starts in T are 16-byte aligned (a band's
    part is placed at its destination inside T, and TFLM aligns every buffer), or None."""
    step = next(r for r in range(1, TFLM_ALIGNMENT + 1) if r * row_bytes % TFLM_ALIGNMENT == 0)
    units = height // step
    if count > units:
        return None
    bounds = [round(i * units / count) * step for i in range(count)] + [height]
    return bounds if all(a < b for a, b in zip(bounds, bounds[1:], strict=False)) else None


def model_macs(model: Model) -> int:
    """Multiply-accumulates of the model's convolutions (the denominator of the budget)."""
    sub = model.subgraphs[0]
    total = 0
    for op in sub.operators:
        if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            s = rw.describe_op(model, sub, op)
            total += s.macs * sub.tensors[op.outputs[0]].shape[1]
        elif op.name == "FULLY_CONNECTED":
            w = sub.tensors[op.inputs[1]]
            out = sub.tensors[op.outputs[0]]
            total += (
                out.nbytes() // max(1, out.shape[-1]) * w.shape[0] * w.shape[1] if out.shape else 0
            )
    return total


def aliases(model: Model, bp: rw.BandPlan) -> dict[int, tuple[int, int]]:
    """Each band part inside T, at its rows' byte offset (global tensor indices)."""
    sub = model.subgraphs[0]
    t = sub.tensors[bp.t].global_index
    return {sub.tensors[p].global_index: (t, lo * bp.row_bytes) for p, lo, _ in bp.parts}


def plan_banded(
    model: Model, cut: int, bounds: list[int], runtime: str, overlap: bool, time_limit: float
) -> tuple[Model, PlanResult]:
    banded, bp = rw.rewrite(model, cut, bounds)
    result = plan_model(
        banded, "best", time_limit, runtime, None, overlap=overlap, aliases=aliases(banded, bp)
    )
    return banded, result


def cuts(model: Model) -> list[int]:
    """Operators after which the model can be cut (the stage before them can run in bands)."""
    out = []
    first_error = None
    for cut in range(len(model.subgraphs[0].operators) - 1):
        try:
            st = rw.find_stage(model, cut)
        except rw.BandError as e:
            if out:
                break  # the stage only grows: once an operator is refused, every later cut is
            first_error = first_error or e
            continue
        if st.t_tensor.shape[1] >= 2:
            out.append(cut)
    if not out and first_error is not None:
        raise first_error
    return out


def choices(
    model: Model,
    runtime: str = "tflm",
    overlap: bool = False,
    time_limit: float = 0.3,
    counts: tuple[int, ...] = DEFAULT_COUNTS,
    progress: Callable[[str], None] | None = None,
    budget: float | None = None,
) -> list[Choice]:
    """Every (cut, band count) within the MAC budget (a fraction of the model's MACs; None: no
    limit), planned; the caller picks."""
    total = model_macs(model)
    out = []
    for cut in cuts(model):
        st = rw.find_stage(model, cut)
        t = st.t_tensor
        base = rw.stage_macs(st)
        for n in counts:
            bounds = aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], n)
            if bounds is None:
                continue
            added = rw.band_macs(st, bounds) - base
            if budget is not None and added > budget * total:
                continue
            try:
                _, r = plan_banded(model, cut, bounds, runtime, overlap, time_limit)
            except rw.BandError as e:
                out.append(Choice(cut, bounds, -1, base, added, total, str(e)))
                continue
            out.append(Choice(cut, bounds, r.head, base, added, total))
            if progress:
                progress(f"cut after operator {cut}, {n} bands: head {r.head} B, +{added} MACs")
    return out


def best(options: list[Choice], budget: float) -> Choice | None:
    """The smallest head whose added MACs stay within budget x the model's MACs."""
    ok = [c for c in options if not c.error and c.added_macs <= budget * c.model_macs]
    return min(ok, key=lambda c: (c.head, c.added_macs), default=None)


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
            axis = rw.concat_axis(model, sub, op)
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


@dataclass
class Banding:
    """The rewrite host.plan --bands chose, and the alternatives it weighed."""

    model: Model
    aliases: dict[int, tuple[int, int]]
    chosen: Choice
    options: list[Choice]
    budget: float

    def to_json(self) -> dict:
        return {
            "mac_budget": self.budget,
            "chosen": self.chosen.to_json(),
            "choices": [c.to_json() for c in self.options if not c.error],
        }

    def text(self) -> str:
        c = self.chosen
        lines = [
            f"bands: operators 0..{c.cut} run in {c.bands} bands of rows {c.bounds} of the cut "
            f"tensor; +{c.added_macs} MACs ({100 * c.added_fraction:.1f}% of {c.model_macs}, "
            f"budget {100 * self.budget:.0f}%)",
            "  other choices (cut after operator, bands: head, added MACs):",
        ]
        ranked = sorted((o for o in self.options if not o.error), key=lambda o: o.head)[:6]
        lines += [
            f"    {o.cut:3d}, {o.bands:2d}: {o.head:8d} B  +{100 * o.added_fraction:.1f}% MACs"
            for o in ranked
        ]
        return "\n".join(lines)


def apply(
    model: Model,
    budget: float,
    runtime: str,
    overlap: bool,
    progress: Callable[[str], None] | None = None,
) -> Banding:
    """Choose the cheapest split within the budget and rewrite the model; BandError if none."""
    options = choices(model, runtime, overlap, progress=progress, budget=budget)
    chosen = best(options, budget)
    if chosen is None:
        reasons = {c.error for c in options if c.error}
        why = f" ({'; '.join(sorted(reasons))})" if reasons else ""
        raise rw.BandError(f"no way to split {model.source} into bands within a MAC budget of "
                           f"{budget}{why}")  # fmt: skip
    banded, bp = rw.rewrite(model, chosen.cut, chosen.bounds)
    return Banding(banded, aliases(banded, bp), chosen, options, budget)
