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

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from host.planning.libraries.base import KernelLibrary
from host.planning.libraries.reference import REFERENCE
from host.planning.model import lifetimes, metadata
from host.planning.model.macs import model_macs
from host.planning.model.rows import Piece, row_pieces
from host.planning.packing.problem import TFLM_ALIGNMENT, Buffer, collisions, lower_bound
from host.planning.plan import CLOCK_SLACK, Layout, PlanResult, plan_model, problem
from host.planning.targets.target import target_arena
from host.rewrite import bands as rw
from host.rewrite import graph_check
from host.tflite.model import Model

CONCATENATION_AXIS_SLOT = 0
DEFAULT_COUNTS = (2, 3, 4, 6, 8, 10, 12, 16, 24)
# Seconds of search per choice weighed; a band search of T seconds plans T / 0.3 of them (a
# choice's search and its rewrite take about that on the reference machine).
CHOICE_TIME_LIMIT = 0.3


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
    arena: int | None = None  # arena to set on the target (head + tail), where predicted
    start: int = 0  # the stage's first operator (after a prefix such as a QUANTIZE)
    estimate: int = 0  # a rough head of its banded stage (search's order)

    @property
    def bands(self) -> int:
        return len(self.bounds) - 1

    @property
    def added_fraction(self) -> float:
        return self.added_macs / self.model_macs if self.model_macs else 0.0

    def to_json(self) -> dict:
        return {
            "first_operator": self.start,
            "cut_operator": self.cut,
            "bands": self.bands,
            "bounds": self.bounds,
            "head": self.head,
            "added_macs": self.added_macs,
            "added_fraction": round(self.added_fraction, 4),
            "stage_macs": self.stage_macs,
            "model_macs": self.model_macs,
            "arena": self.arena,
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


def aliases(model: Model, bp: rw.BandPlan) -> dict[int, tuple[int, int]]:
    """Every band part and partial join inside T: tensor -> (T, byte offset), global indices."""
    sub = model.subgraphs[0]
    gi = [t.global_index for t in sub.tensors]
    out: dict[int, tuple[int, int]] = {}

    def place(tensor: int, offset: int) -> None:
        for part in bp.joins.get(tensor, []):
            out[gi[part]] = (gi[bp.t], offset)
            place(part, offset)
            offset += sub.tensors[part].nbytes()

    place(bp.t, 0)
    return out


def plan_banded(
    model: Model,
    cut: int,
    bounds: list[int],
    lib: KernelLibrary,
    overlap: bool,
    time_limit: float,
) -> tuple[Model, PlanResult]:
    banded, bp = rw.rewrite(model, cut, bounds)
    result = plan_model(
        banded,
        "best",
        time_limit,
        lib,
        None,
        overlap=overlap,
        clock_slack=CLOCK_SLACK,
        **placement(banded, bp, lib),
    )
    return banded, result


def placement(model: Model, bp: rw.BandPlan, lib: KernelLibrary) -> dict:
    """plan_model's arguments for a banded model (see layouts), run with the library `lib`."""
    tflm = lib.runtime == "tflm"
    pieces = row_pieces(model, lifetimes.walk(model)) if tflm else {}
    gi = [t.global_index for t in model.subgraphs[0].tensors]
    joins = {gi[o]: [gi[i] for i in ins] for o, ins in bp.joins.items()}
    return {"layouts": functools.partial(layouts, aliases(model, bp), joins, pieces)}


def layouts(
    parts: dict[int, tuple[int, int]],
    joins: dict[int, list[int]],
    pieces: dict[int, list[Piece]],
    tbufs: list[Buffer],
    first_id: int,
) -> list[Layout]:
    """Planning problems for a banded model: T reserved whole from its first band's birth, each
    band inside it; and where the stage input X is pieced (TFLM: its planner checks nothing,
    this project's runtime would refuse a tensor over another's dead rows), X and T fixed
    relative to each other, lowest valid gap first, so that the bands fill X's rows no later
    band reads."""
    by_id = {b.id: b for b in tbufs}
    hosts = {host for host, _ in parts.values()}
    start = {
        h: min([by_id[h].start] + [by_id[p].start for p, (x, _) in parts.items() if x == h])
        for h in hosts
    }
    merged = [
        Buffer(b.id, start.get(b.id, b.start), b.end, b.size) for b in tbufs if b.id not in parts
    ]
    out = [Layout(merged, {p: (h, off) for p, (h, off) in parts.items()})]
    if len(hosts) != 1 or len(pieces) != 1:
        return out
    (t,), (x,) = hosts, pieces
    group = [(t, 0)] + [(p, off) for p, (_, off) in parts.items()]
    rest = [b for b in tbufs if b.id != x and b.id not in {g for g, _ in group}]
    # A join's bytes are its parts' until its CONCATENATION has run: it starts after that.
    for j, ins in joins.items():
        b = by_id[j]
        by_id[j] = Buffer(j, max(by_id[i].end for i in ins), b.end, b.size)
    for x_base, t_base in _gaps(by_id, group, x, pieces[x], first_id):
        fixed = [_at(by_id[g], t_base + off) for g, off in group]
        ids = range(first_id, first_id + len(pieces[x]))
        fixed += [
            Buffer(i, by_id[x].start, max(by_id[x].start + 1, last + 2), hi - lo, x_base + lo)
            for i, (lo, hi, last) in zip(ids, pieces[x], strict=True)
        ]
        out.append(Layout(rest + fixed, {x: (first_id, -pieces[x][0][0])}))
    return out


def _at(b: Buffer, offset: int) -> Buffer:
    return Buffer(b.id, b.start, b.end, b.size, offset)


def _gaps(by_id, group, x: int, pieces: list[Piece], first_id: int) -> list[tuple[int, int]]:
    """(X base, T base): the smallest gap with T below X, and with X below T, at which no band
    lands on rows of X a later band still reads.

    T's group and X's pieces are each fixed within themselves, so only a pair of one of each,
    live at once, depends on the gap: it rules out an open interval of gaps. The smallest
    16-byte multiple outside them all is found directly (not by trying every gap)."""
    ts = [_at(by_id[g], off) for g, off in group]
    xs = [
        Buffer(first_id + i, by_id[x].start, max(by_id[x].start + 1, last + 2), hi - lo, lo)
        for i, (lo, hi, last) in enumerate(pieces)
    ]
    if any(collisions(side, {b.id: b.offset for b in side}) for side in (ts, xs)):
        return []
    pairs = [
        (t, p)
        for t in ts
        for p in xs
        if t.size and t.end > t.start and t.start < p.end and p.start < t.end
    ]
    limit = by_id[x].size + by_id[group[0][0]].size
    out = []
    for t_below in (True, False):
        # T at t_base + t.offset and X at x_base + p.offset share bytes for these gaps:
        ruled_out = [
            (t.offset - p.offset - p.size, t.offset + t.size - p.offset)  # type: ignore[operator]
            if t_below
            else (p.offset - t.offset - t.size, p.offset + p.size - t.offset)  # type: ignore[operator]
            for t, p in pairs
        ]
        gap = _first_gap_outside(ruled_out)
        if gap <= limit:
            out.append((gap, 0) if t_below else (0, gap))
    return out


def _first_gap_outside(ruled_out: list[tuple[int, int]]) -> int:
    """The smallest multiple of 16, at least 0, in none of the open intervals."""
    gap, moved = 0, True
    while moved:
        moved = False
        for lo, hi in ruled_out:
            if lo < gap < hi:
                gap = lifetimes.align_up(hi)
                moved = True
    return gap


def cuts(model: Model) -> list[int]:
    """Operators after which the model can be cut (the stage before them can run in bands)."""
    out = []
    first_error = None
    for cut in range(len(model.subgraphs[0].operators) - 1):
        try:
            st = rw.find_stage(model, cut)
        except rw.OperatorRefused as e:
            first_error = first_error or e
            break  # the stage only grows: once an operator is refused, every later cut is
        except rw.BandError as e:
            first_error = first_error or e
            continue
        if st.t_tensor.shape[1] >= 2:
            out.append(cut)
    if not out and first_error is not None:
        raise first_error
    if not out:
        raise rw.BandError("no operator of subgraph 0 has a later one: nothing to cut")
    return out


def candidates(
    model: Model, counts: tuple[int, ...] = DEFAULT_COUNTS, budget: float | None = None
) -> list[Choice]:
    """Every (cut, band count) within the MAC budget (a fraction of the model's MACs; None: no
    limit), not yet planned (head -1); BandError if no cut is possible."""
    total = model_macs(model)
    out = []
    for cut in cuts(model):
        st = rw.find_stage(model, cut)
        t = st.t_tensor
        base = rw.stage_macs(st)
        tried: set[tuple[int, ...]] = set()
        for n in counts:
            bounds = aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], n)
            if bounds is None:
                continue
            bounds = rw.merge_empty(st, bounds)  # no band may read rows of padding only
            if len(bounds) < 3 or tuple(bounds) in tried:
                continue
            tried.add(tuple(bounds))
            added = rw.band_macs(st, bounds) - base
            if budget is None or added <= budget * total:
                c = Choice(cut, bounds, -1, base, added, total, start=st.start)
                c.estimate = _stage_estimate(st, bounds)
                out.append(c)
    return out


def _stage_estimate(st: rw.Stage, bounds: list[int]) -> int:
    """A rough head of the banded stage, to plan the likeliest choices first: per band and
    operator, its band's input and output rows, the rows of X later bands still read and,
    after the first band, T whole."""
    sub = st.sub

    def row_bytes(t: int) -> int:
        tensor = sub.tensors[t]
        return tensor.nbytes() // max(1, tensor.shape[1])

    needs = [rw.needs(st, lo, hi) for lo, hi in zip(bounds, bounds[1:], strict=False)]
    peak = 0
    for k, need in enumerate(needs):
        later = [n[st.x] for n in needs[k + 1 :] if st.x in n]
        x_rows = max(b for _, b in later) - min(a for a, _ in later) if later else 0
        kept = x_rows * row_bytes(st.x) + (st.t_tensor.nbytes() if k else 0)
        for s in st.ops:
            band = sum(
                (need[t][1] - need[t][0]) * row_bytes(t)
                for t in (s.op.inputs[0], s.op.outputs[0])
                if t in need
            )
            peak = max(peak, kept + band)
    return peak


def choices(
    model: Model,
    lib: KernelLibrary = REFERENCE,
    overlap: bool = False,
    time_limit: float = CHOICE_TIME_LIMIT,
    counts: tuple[int, ...] = DEFAULT_COUNTS,
    progress: Callable[[str], None] | None = None,
    budget: float | None = None,
) -> list[Choice]:
    """Every (cut, band count) within the MAC budget, planned; the caller picks."""
    options = candidates(model, counts, budget)
    for c in options:
        _plan_choice(model, c, lib, overlap, time_limit, progress)
    return options


def _plan_choice(
    model: Model,
    c: Choice,
    lib: KernelLibrary,
    overlap: bool,
    time_limit: float,
    progress: Callable[[str], None] | None,
) -> None:
    """Fill the choice's head (or its error)."""
    try:
        _, r = plan_banded(model, c.cut, c.bounds, lib, overlap, time_limit)
    except rw.BandError as e:
        c.error = str(e)
        return
    c.head = r.head
    if progress:
        progress(
            f"cut after operator {c.cut}, {c.bands} bands: head {r.head} B, +{c.added_macs} MACs"
        )


@dataclass
class Search:
    """The choices a band search planned, and those it did not."""

    planned: list[Choice]
    pruned: int = 0  # could not beat the best head found (their bound says so)
    unplanned: int = 0  # left when the clock cap ran out


def search(
    model: Model,
    lib: KernelLibrary,
    overlap: bool,
    beat: int,
    time_limit: float,
    progress: Callable[[str], None] | None = None,
    budget: float | None = None,
    prune: bool = True,
    deadline: float | None = None,
) -> Search:
    """Plan the choices within the MAC budget, those whose rough head is smallest first, at
    most time_limit / CHOICE_TIME_LIMIT of them, skipping (prune=True) each whose bound
    shows it cannot give a head below `beat` nor below the best found (at an equal head, with
    fewer added MACs). Work decides: each plan's search ends on its work budget, and the
    number planned is fixed, so a machine busy with other work makes the same choice, later.
    The clock only caps the whole (this process's CPU time; deadline: a time.process_time(),
    default time_limit from now). The choices left unplanned are counted."""
    deadline = time.process_time() + time_limit if deadline is None else deadline
    options = candidates(model, DEFAULT_COUNTS, budget)
    floor = rest_bounds(model, lib, overlap, {c.cut for c in options}) if prune else {}
    # Likeliest first, so that a good head found early lets the bounds skip the rest.
    options.sort(
        key=lambda c: (max(floor.get(c.cut, 0), c.estimate), c.estimate, c.added_macs, c.cut)
    )
    # Work, not the clock, decides how many are planned: the same choice on a loaded machine.
    room = max(1, int(time_limit / CHOICE_TIME_LIMIT))
    best = (beat, -1)
    out = Search([])
    for c in options:
        if len(out.planned) >= room or time.process_time() > deadline:
            out.unplanned += 1
            continue
        if prune and (floor[c.cut], c.added_macs) >= best:
            out.pruned += 1
            continue
        _plan_choice(model, c, lib, overlap, CHOICE_TIME_LIMIT, progress)
        out.planned.append(c)
        if not c.error and (c.head, c.added_macs) < best:
            best = (c.head, c.added_macs)
    return out


def rest_bounds(
    model: Model, lib: KernelLibrary, overlap: bool, cut_after: set[int]
) -> dict[int, int]:
    """Per cut, a head no banded plan goes below: the live bytes of the operators after the
    cut (their tensors, T included, and scratch), which the rewrite leaves as they are."""
    buffers, overlaps = problem(model, lib, overlap)
    scopes = {s.op: s.first for s in lifetimes.walk(model).op_scopes if s.subgraph == 0}
    out = {}
    for cut in cut_after:
        t0 = scopes[cut + 1] + 1  # buffer times are scopes shifted by one
        rest = [Buffer(b.id, max(b.start, t0), b.end, b.size) for b in buffers if b.end > t0]
        ids = {b.id for b in rest}
        out[cut] = lower_bound(rest, [o for o in overlaps if o.input in ids and o.output in ids])
    return out


def graph_problems(model: Model) -> list[str]:
    """--check: a model the band rewrite wrote passes the graph check the rewrite ran before
    writing it (host.rewrite.graph_check), or it is not called OK."""
    if not graph_check.is_banded(model):
        return []
    return [f"band rewrite: {p}" for p in graph_check.problems(model)]


def best(options: list[Choice], budget: float) -> Choice | None:
    """The smallest head whose added MACs stay within budget x the model's MACs."""
    ok = [c for c in options if not c.error and c.added_macs <= budget * c.model_macs]
    return min(ok, key=lambda c: (c.head, c.added_macs), default=None)


@dataclass
class Banding:
    """The rewrite host.plan --bands chose (None: no split lowers the objective), and the
    alternatives it weighed."""

    model: Model
    placement: dict  # plan_model's keyword arguments (layouts)
    chosen: Choice | None
    options: list[Choice]
    budget: float
    unbanded_head: int
    objective: str = "head"
    target: str | None = None
    unbanded_arena: int | None = None  # arena to set on the target without bands
    reason: str = ""  # why no split is possible (the model is planned as it is)
    pruned: int = 0  # choices not planned: their bound shows they cannot win
    unplanned: int = 0  # choices not planned: the time limit ran out first

    def to_json(self) -> dict:
        return {
            "mac_budget": self.budget,
            "objective": self.objective,
            "target": self.target,
            "unbanded_head": self.unbanded_head,
            "unbanded_arena": self.unbanded_arena,
            "chosen": self.chosen.to_json() if self.chosen else None,
            "reason": self.reason or None,
            "pruned": self.pruned,
            "unplanned": self.unplanned,
            "choices": [c.to_json() for c in self.options if not c.error],
        }

    def text(self) -> str:
        c = self.chosen
        if self.reason:
            return f"bands: none possible ({self.reason}): the model is planned as it is"
        if c is None:
            what = "head" if self.objective == "head" else f"arena to set on {self.target}"
            lines = [
                f"bands: no split within the budget lowers the {what}: the model is planned "
                "as it is"
            ]
        else:
            lines = [
                f"bands: operators {c.start}..{c.cut} run in {c.bands} "
                f"bands of rows {c.bounds} of the cut tensor; +{c.added_macs} MACs "
                f"({100 * c.added_fraction:.1f}% of {c.model_macs}, budget "
                f"{100 * self.budget:.0f}%); head {c.head} B, {self.unbanded_head} B unbanded",
            ]
            if c.arena is not None and self.unbanded_arena is not None:
                grows = c.arena > self.unbanded_arena
                lines.append(
                    f"  arena to set on {self.target}: {c.arena} B, {self.unbanded_arena} B "
                    "unbanded"
                    + (
                        " (every band's operators add to TFLM's tail: --bands-objective arena "
                        "weighs it)"
                        if grows
                        else ""
                    )
                )
        ranked = sorted((o for o in self.options if not o.error), key=lambda o: o.head)[:6]
        if ranked:
            lines.append("  choices (cut after operator, bands: head, added MACs):")
        lines += [
            f"    {o.cut:3d}, {o.bands:2d}: {o.head:8d} B  +{100 * o.added_fraction:.1f}% MACs"
            + (f", arena to set {o.arena} B" if o.arena is not None else "")
            for o in ranked
        ]
        if self.pruned:
            lines.append(f"  {self.pruned} more not planned: their bounds show none does better")
        if self.unplanned:
            lines.append(f"  {self.unplanned} more not planned: the time limit ran out first")
        return "\n".join(lines)


OBJECTIVES = ("head", "arena")
ARENA_CANDIDATES = 6  # choices with the smallest heads whose arena to set is predicted


PLAIN_SHARE = 0.2  # of apply's time limit: the unbanded plan's search, whose head is to beat


def apply(
    model: Model,
    budget: float,
    lib: KernelLibrary,
    overlap: bool,
    progress: Callable[[str], None] | None = None,
    target: str | None = None,
    objective: str = "head",
    time_limit: float = 6.0,
) -> Banding:
    """Choose the split with the smallest head (objective "arena": the smallest arena to set
    on `target`, head + TFLM's tail, among the few smallest heads) within the budget and
    rewrite the model; the model as it is where no split lowers the objective, or where none
    is possible (Banding.reason says why). time_limit: seconds for the whole choice, the
    unbanded plan's search included (its clock cap; the work budgets decide the choice)."""
    start = time.process_time()  # this process's CPU: other processes' load does not count
    plain = plan_model(
        model,
        "best",
        min(1.5, PLAIN_SHARE * time_limit),
        lib,
        None,
        overlap=overlap,
        clock_slack=CLOCK_SLACK,
    )
    unbanded_arena = _arena(model, plain.tensor_offsets(), target, lib) if target else None
    keep = (budget, plain.head, objective, target, unbanded_arena)
    try:
        found = search(
            model,
            lib,
            overlap,
            plain.head,
            (1 - PLAIN_SHARE) * time_limit,
            progress,
            budget,
            prune=objective == "head",
            deadline=start + time_limit,
        )
    except rw.BandError as e:
        return Banding(model, {}, None, [], *keep, reason=str(e))
    ok = sorted((c for c in found.planned if not c.error), key=lambda c: (c.head, c.added_macs))
    if target:
        for c in ok[:ARENA_CANDIDATES] if objective == "arena" else ok[:1]:
            banded, r = plan_banded(model, c.cut, c.bounds, lib, overlap, CHOICE_TIME_LIMIT)
            c.arena = _arena(banded, r.tensor_offsets(), target, lib)
    if objective == "arena" and unbanded_arena is not None:
        ranked = [c for c in ok if c.arena is not None and c.arena < unbanded_arena]
        chosen = min(ranked, key=lambda c: (c.arena, c.head), default=None)
    else:
        chosen = ok[0] if ok and ok[0].head < plain.head else None
    counts = {"pruned": found.pruned, "unplanned": found.unplanned}
    if chosen is None:
        return Banding(model, {}, None, found.planned, *keep, **counts)
    banded, bp = rw.rewrite(model, chosen.cut, chosen.bounds)
    return Banding(banded, placement(banded, bp, lib), chosen, found.planned, *keep, **counts)


def _arena(model: Model, offsets: dict[int, int], target: str, lib: KernelLibrary) -> int | None:
    """The arena to set on the target, run with `lib` (or, where `lib` cannot run there, the
    target's default kernels), for the model planned with these offsets."""
    planned = Model(model.to_bytes(), model.source)
    metadata.embed(planned, offsets)
    try:
        return target_arena(planned, target, lib if lib.runtime in target else None).min_arena
    except Exception:  # the prediction is extra information; the choice stands without it
        return None
