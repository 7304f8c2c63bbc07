"""Plan a model's arena head: tensors and kernel scratch, predicted as TFLM will lay them out.

TFLM places every buffer without an offline offset (kernel scratch always, tensors marked -1)
with its GreedyMemoryPlanner around the offline ones. So a plan is judged by simulating that
placement, and the plan written is the best of a few candidates, never worse than TFLM's own.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from host.planning import aliasing
from host.planning.libraries.base import KernelLibrary
from host.planning.libraries.reference import REFERENCE
from host.planning.model import lifetimes
from host.planning.model.lifetimes import tensor_buffers
from host.planning.packing import Buffer, Overlap, arena_size, lower_bound, plan
from host.planning.packing.greedy import plan_greedy
from host.planning.scratch import scratch_requests, unknown_scratch_ops
from host.planning.tflm.refusal import TflmRefusal, registrations, tflm_refusal
from host.tflite.model import Model

Progress = Callable[[str], None]
# A search must end on its work budget, not on the clock, so that a loaded machine plans as an
# idle one (a clock-bounded search chose another band split, and a larger final head, at a
# load average of 10). The clock only caps a machine far slower than the reference one, at
# this multiple of the budget.
CLOCK_SLACK = 20.0


@dataclass
class Scratch:
    subgraph: int
    op: int
    op_name: str
    size: int  # rounded up to 16
    first: int
    last: int
    offset: int = -1  # where TFLM's greedy will put it


@dataclass
class PlannedTensor:
    global_index: int
    subgraph: int
    index: int
    name: str
    size: int
    first: int
    last: int
    offset: int


@dataclass
class SharedBytes:
    """An operator's input placed over its output, as its kernel's rule allows."""

    op: int
    op_name: str
    subgraph: int
    input: int  # global tensor index
    output: int
    bytes: int  # bytes the two share
    delta: int  # input offset - output offset
    min_delta: int  # the rule's smallest safe delta


@dataclass
class PlanResult:
    model: str
    planner: str
    lib: KernelLibrary  # whose kernels' scratch (and overlap rules) it plans around
    tensors: list[PlannedTensor]
    scratch: list[Scratch]
    head: int  # head TFLM will use with the embedded plan (exact, if TFLM loads the model)
    tflm_head: int  # head TFLM uses without a plan (its greedy, exact)
    lower_bound: int  # max live bytes: tensors and scratch
    offline: bool  # False if no plan beat TFLM's own: nothing to embed
    seconds: float
    warnings: list[str] = field(default_factory=list)
    overlap_bound: int | None = None  # lower bound with the allowed overlaps (--overlap)
    shared: list[SharedBytes] = field(default_factory=list)  # overlaps the plan uses
    tflm_refusal: TflmRefusal | None = None  # why TFLM will not load the model, if it will not
    # Why the microarena runtime will not open the model (or "not checked (...)"), if so.
    microarena_refusal: str | None = None

    @property
    def head_reported(self) -> bool:
        """Whether the runtime the head was planned for loads the model and so reports it."""
        if self.lib.runtime == "tflm":
            return self.tflm_refusal is None
        return self.microarena_refusal is None

    @property
    def saving(self) -> int:
        return self.tflm_head - self.head

    def tensor_offsets(self) -> dict[int, int]:
        return {t.global_index: t.offset for t in self.tensors} if self.offline else {}


def _scratch(
    model: Model, w: lifetimes.Walk, lib: KernelLibrary
) -> tuple[list[Scratch], list[str]]:
    spans = {(s.subgraph, s.op): s for s in w.op_scopes}
    out = []
    for r in scratch_requests(model, lib):
        span = spans.get((r.subgraph, r.op))
        if span is None:  # an operator of a subgraph no walk reaches: TFLM never plans it
            continue
        op = model.subgraphs[r.subgraph].operators[r.op]
        out.append(
            Scratch(r.subgraph, r.op, op.name, lifetimes.align_up(r.bytes), span.first, span.last)
        )
    unknown = unknown_scratch_ops(model, lib)
    warns = [f"scratch needs of {', '.join(unknown)} are not modelled"] if unknown else []
    return out, warns


def _scratch_buffers(scratch: list[Scratch], first_id: int) -> list[Buffer]:
    return [Buffer(first_id + i, s.first + 1, s.last + 2, s.size) for i, s in enumerate(scratch)]


def _tflm_place(
    tensors: list[Buffer],
    scratch: list[Buffer],
    fixed: dict[int, int],
    overlaps: list[Overlap] | None = None,
    checked: bool = True,
) -> dict[int, int]:
    """Where TFLM's greedy puts everything given offline offsets for some tensors. checked:
    refuse fixed tensors that share bytes where no overlap allows it; a banded model's plan
    shares bytes by rules of its own (host.planning.band_choice), which TFLM does not check."""
    bufs = [Buffer(b.id, b.start, b.end, b.size, fixed.get(b.id)) for b in tensors] + scratch
    if not checked:
        return plan_greedy(bufs)
    return plan(bufs, planner="greedy", overlaps=overlaps or ())


def _shared(pairs: list[aliasing.Pair], offsets: dict[int, int], sizes: dict[int, int]):
    out = []
    for p in pairs:
        lo = max(offsets[p.input], offsets[p.output])
        hi = min(offsets[p.input] + sizes[p.input], offsets[p.output] + sizes[p.output])
        if hi > lo:
            delta = offsets[p.input] - offsets[p.output]
            out.append(
                SharedBytes(
                    p.op, p.op_name, p.subgraph, p.input, p.output, hi - lo, delta, p.min_delta
                )  # fmt: skip
            )
    return out


def problem(
    model: Model, lib: KernelLibrary = REFERENCE, overlap: bool = False
) -> tuple[list[Buffer], list[Overlap]]:
    """The model's planning problem as plan_model poses it: tensors and kernel scratch, and
    the overlaps the kernels allow (with overlap=True)."""
    w = lifetimes.walk(model)
    pairs = aliasing.overlap_pairs(model, w, lib) if overlap else []
    scratch, _ = _scratch(model, w, lib)
    buffers = tensor_buffers(w) + _scratch_buffers(scratch, len(model.tensors))
    return buffers, [Overlap(p.input, p.output, p.min_delta) for p in pairs]


@dataclass
class Layout:
    """A planning problem standing for the model's tensors, some of them replaced by buffers
    fixed relative to one another (host.planning.band_choice), and where each replaced tensor's
    offset is read back from: tensor -> (buffer id, bytes to add)."""

    buffers: list[Buffer]
    offsets_of: dict[int, tuple[int, int]] = field(default_factory=dict)


LayoutMaker = Callable[[list[Buffer], int], list[Layout]]  # (tensor buffers, first free id)


def plan_model(
    model: Model,
    planner: str = "best",
    time_limit: float = 10.0,
    lib: KernelLibrary = REFERENCE,
    progress: Progress | None = None,
    overlap: bool = False,
    layouts: LayoutMaker | None = None,
    clock_slack: float = CLOCK_SLACK,
) -> PlanResult:
    """Plan the model around the scratch of the kernel library `lib`; with
    overlap=True an operator's input may share bytes with its output where that library's
    loops (host.planning.libraries.loops) prove it safe.

    layouts: other planning problems to try (a banded model's, host.planning.band_choice); their
    plans are judged as TFLM will lay them out, which checks nothing (--check does).
    clock_slack: the wall-clock cap of each search, as a multiple of its time budget."""
    t0 = time.monotonic()
    w = lifetimes.walk(model)
    pairs = aliasing.overlap_pairs(model, w, lib) if overlap else []
    overlaps = [Overlap(p.input, p.output, p.min_delta) for p in pairs]
    scratch, warnings = _scratch(model, w, lib)
    tbufs = tensor_buffers(w)
    first_scratch_id = len(model.tensors)
    sbufs = _scratch_buffers(scratch, first_scratch_id)
    everything = tbufs + sbufs
    place = functools.partial(_tflm_place, checked=layouts is None)
    tried = layouts(tbufs, first_scratch_id + len(sbufs)) if layouts else [Layout(tbufs)]

    online = _tflm_place(tbufs, sbufs, {})
    tflm_head = arena_size(everything, online)
    candidates = []
    problems = [
        (lay, bufs)
        for lay in tried
        for bufs in ([lay.buffers + sbufs, lay.buffers] if sbufs else [lay.buffers])
    ]
    for lay, problem in problems:  # the time budget is shared, so the total stays within it
        share = time_limit / len(problems)
        ids = {b.id for b in problem}
        offsets = plan(
            problem,
            planner=planner,
            time_limit=share,
            clock_limit=share * clock_slack,
            progress=progress,
            overlaps=[o for o in overlaps if o.input in ids and o.output in ids],
        )
        offsets.update({gi: offsets[i] + d for gi, (i, d) in lay.offsets_of.items()})
        candidates.append({b.id: offsets[b.id] for b in tbufs})
    # TFLM's own tensor placement, replayed as an offline plan, is the fallback candidate.
    candidates.append({b.id: online[b.id] for b in tbufs})
    best_head, best_fixed = tflm_head, {}
    for fixed in candidates:
        head = arena_size(everything, place(tbufs, sbufs, fixed, overlaps))
        if head < best_head or (head == best_head and not best_fixed):
            best_head, best_fixed = head, fixed
    final = place(tbufs, sbufs, best_fixed, overlaps)
    for i, s in enumerate(scratch):
        s.offset = final[first_scratch_id + i]
    tensors = [
        PlannedTensor(
            lt.tensor.global_index,
            lt.tensor.subgraph,
            lt.tensor.index,
            lt.tensor.name,
            lt.size,
            lt.first,
            lt.last,
            final[lt.tensor.global_index],
        )
        for lt in w.lifetimes
    ]
    return PlanResult(
        model=model.source,
        planner=planner,
        lib=lib,
        tensors=tensors,
        scratch=scratch,
        head=best_head,
        tflm_head=tflm_head,
        lower_bound=lower_bound(everything),
        offline=bool(best_fixed),
        seconds=time.monotonic() - t0,
        warnings=warnings,
        overlap_bound=lower_bound(everything, overlaps) if overlap else None,
        shared=_shared(pairs, final, {b.id: b.size for b in tbufs}) if best_fixed else [],
        tflm_refusal=tflm_refusal(model, *registrations(lib.name)),
    )
