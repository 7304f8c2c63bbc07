"""Buffer-packing planners: place buffers with lifetimes in one arena using the least bytes.

`plan()` is the entry point; `PLANNERS` names the algorithms:
- "greedy": an exact re-implementation of TFLM's GreedyMemoryPlanner (predicts TFLM's layout);
- "best": the default; the best of several first-fit orderings (TFLM's included) and a
  MiniMalloc-style branch-and-bound search down towards the lower bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from . import search
from .csvio import read_csv, write_csv
from .greedy import first_fit, plan_greedy
from .problem import (
    Buffer,
    Overlap,
    PlanError,
    arena_size,
    check_buffers,
    lower_bound,
    validate,
)
from .search import CORE as SEARCH_CORE
from .search import search_plan

__all__ = [
    "PLANNERS",
    "Buffer",
    "Overlap",
    "PlanError",
    "SEARCH_CORE",
    "arena_size",
    "lower_bound",
    "plan",
    "read_csv",
    "validate",
    "work_per_second",
    "write_csv",
]

# Search work units per second of `time_limit`, per search core (search.py's depth-first run
# compiled, or its pure-Python fallback where no C compiler was found at install). This budget,
# not the clock, bounds the search, so a plan is the same on every machine that runs the same
# core (plans report it: SEARCH_CORE). The reference machine (2 cores shared) does 13-19 million
# units per CPU second in the compiled core, 0.3-0.6 million in the Python one: each budget
# takes at most some 40% of time_limit in CPU time there (the Python one 7-14%), leaving room
# for a loaded or slower machine (for the Python core, two to four times slower: the search's
# runs at the bound also stop at their share of the time left). Only if the clock cap hits
# first can the result depend on the machine (docs/planning.md, "Determinism").
WORK_PER_SECOND = 6_000_000  # the compiled core
PYTHON_WORK_PER_SECOND = 50_000  # the Python core


def work_per_second() -> int:
    """The work rate of the search core that runs here (read at each call: tests patch them)."""
    return PYTHON_WORK_PER_SECOND if search._core is None else WORK_PER_SECOND


Progress = Callable[[str], None]


def _plan_greedy(
    buffers: Sequence[Buffer],
    time_limit: float,
    alignment: int,
    progress: Progress | None,
    overlaps: Sequence[Overlap],
    clock_limit: float,
) -> dict[int, int]:
    return plan_greedy(buffers, alignment)


def _first_fit_orders(buffers: Sequence[Buffer]) -> dict[str, list[int]]:
    """Placement orders worth a try besides TFLM's: cheap, and each wins on some problems."""
    idx = range(len(buffers))

    def life(i: int) -> int:
        return buffers[i].end - buffers[i].start

    orders = {
        "area": sorted(idx, key=lambda i: (-buffers[i].size * life(i), i)),
        "size-long-first": sorted(idx, key=lambda i: (-buffers[i].size, -life(i), i)),
        "lifetime": sorted(idx, key=lambda i: (-life(i), -buffers[i].size, i)),
        "start": sorted(idx, key=lambda i: (buffers[i].start, -buffers[i].size, i)),
    }
    fixed = [i for i in idx if buffers[i].offset is not None]
    return {k: fixed + [i for i in v if buffers[i].offset is None] for k, v in orders.items()}


def _plan_best(
    buffers: Sequence[Buffer],
    time_limit: float,
    alignment: int,
    progress: Progress | None,
    overlaps: Sequence[Overlap],
    clock_limit: float,
) -> dict[int, int]:
    deadline = time.monotonic() + clock_limit
    best = plan_greedy(buffers, alignment)
    best_arena = arena_size(buffers, best)
    for name, order in _first_fit_orders(buffers).items():
        if time.monotonic() > deadline:
            break
        offsets = first_fit(buffers, order, alignment)
        arena = arena_size(buffers, offsets)
        if arena < best_arena:
            best, best_arena = offsets, arena
            if progress:
                progress(f"first-fit by {name}: arena {arena}")
    lower = max(
        [lower_bound(buffers, overlaps, alignment)]
        + [b.offset + b.size for b in buffers if b.offset is not None]
    )
    if best_arena <= lower or time.monotonic() >= deadline:
        return best  # optimal already, or the set-up has used the time
    budget = int(work_per_second() * time_limit)
    return search_plan(buffers, best, lower, alignment, budget, deadline, progress, overlaps)


Planner = Callable[
    [Sequence[Buffer], float, int, Progress | None, Sequence[Overlap], float], dict[int, int]
]
PLANNERS: dict[str, Planner] = {
    "greedy": _plan_greedy,
    "best": _plan_best,
}


def plan(
    buffers: Sequence[Buffer],
    *,
    planner: str = "best",
    time_limit: float = 10.0,
    alignment: int = 16,
    progress: Progress | None = None,
    overlaps: Sequence[Overlap] = (),
    clock_limit: float | None = None,
) -> dict[int, int]:
    """Offsets (by buffer id) for every buffer; fixed ones keep theirs.

    planner: a key of PLANNERS. time_limit: seconds; sets the deterministic search budget and is
    a safety cap on wall-clock time, unless clock_limit (seconds) sets another cap: a caller
    comparing plans wants them alike on a loaded machine too.
    alignment: every planned offset is a multiple of it.
    progress: called with a line of text on each improvement during long searches.
    overlaps: pairs of buffers that may share bytes at suitable offsets ("best" uses them;
    "greedy", like TFLM, does not, but accepts fixed buffers that overlap by them).
    Raises PlanError for malformed buffers or fixed buffers that collide.
    """
    if planner not in PLANNERS:
        raise PlanError(f"unknown planner {planner!r}; choose from {', '.join(PLANNERS)}")
    if not isinstance(alignment, int) or alignment < 1:
        raise PlanError(f"alignment must be an int >= 1, got {alignment!r}")
    if not time_limit > 0:
        raise PlanError(f"time_limit must be > 0, got {time_limit!r}")
    buffers = list(buffers)
    check_buffers(buffers)
    fixed = [b for b in buffers if b.offset is not None]
    ids = {b.id for b in buffers}
    for o in overlaps:
        if o.input not in ids or o.output not in ids or o.input == o.output:
            raise PlanError(f"overlap {o} names unknown or identical buffers")
    misaligned = [b.id for b in fixed if b.offset is not None and b.offset % alignment]
    if misaligned:
        raise PlanError(
            f"fixed offsets of buffers {misaligned[:10]} are not multiples of {alignment}"
        )
    clashes = validate(
        fixed, {b.id: b.offset for b in fixed if b.offset is not None}, overlaps=overlaps
    )
    if clashes:
        raise PlanError("fixed buffers collide: " + "; ".join(clashes))
    clock = time_limit if clock_limit is None else clock_limit
    offsets = PLANNERS[planner](buffers, time_limit, alignment, progress, overlaps, clock)
    problems = validate(buffers, offsets, overlaps=overlaps)
    if problems:  # a bug, never expected: refuse to hand out a corrupt plan
        raise PlanError(f"planner {planner!r} produced an invalid plan: " + "; ".join(problems[:5]))
    return offsets
