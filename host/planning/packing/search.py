"""Branch-and-bound search for a plan that fits a given capacity (after MiniMalloc).

The search builds "canonical" plans: buffers are placed in non-decreasing offset order, each at
the lowest offset above every already placed buffer it is live with (its floor). Every plan can be
pushed down into such a form, so searching the placement order is enough. Pruning:
- dominance: a buffer is not placed at or above the lowest top any unplaced buffer could reach,
  since that would leave a gap which that buffer fills in a better plan;
- symmetry: at equal offsets, buffers go in a fixed preorder;
- section inference: at each maximal set of simultaneously live buffers (a section), the floor
  plus the unplaced bytes of the section must fit in the capacity.
- forced placements: when no unplaced buffer is live with the one just placed, no sibling
  choice can work either (MiniMalloc's "hatless" rule).
Buffers that never share time with each other fall into independent partitions, solved apart;
during the search, a placement that leaves no unplaced buffer across a section boundary splits
the rest into groups searched apart the same way (MiniMalloc's dynamic decomposition).
Fixed (pre-placed) buffers are obstacles: a buffer's floor skips past any it would collide with.
Allowed overlaps (an operator's input over its output, problem.Overlap) lower the floor of the
input once its output is placed: it may start `overlap_rise` above the output's offset. Every
bound then subtracts the bytes the overlaps of a section can save, so pruning stays sound.
The work is bounded by a count of work units (nodes, candidates, inference steps), so results
do not depend on the machine; a wall-clock deadline is only a safety cap.
"""

from __future__ import annotations

import random
import sys
import time
from bisect import bisect_right
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field

from .problem import Buffer, Overlap, align_up, overlap_rise, overlap_saving

try:  # the optional compiled core (setup.py builds it where a C compiler is found)
    from . import _search_core as _core
except ImportError:  # pragma: no cover - depends on the installation
    _core = None  # type: ignore[assignment]

JITTER = 0.5  # relative noise on the main preorder key in restarts


def _luby(i: int) -> int:
    """The i-th term (from 1) of the Luby sequence 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while True:
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1


UNREACHABLE = 1 << 62  # above any capacity
CORE_LIMIT = 1 << 60  # sizes, offsets and capacities the compiled core takes (int64 sums)
CLOCK_UNITS = 50_000  # work units between the compiled core's looks at the clock
CORE = "c" if _core is not None else "python"  # which search core runs (reported by callers)
PAUSED = object()  # a search run paused at the end of its slice
SLICE = 2000  # work units a portfolio run gets before the next one's turn


def _csr(rows: list[list[int]]) -> tuple[list[int], list[int]]:
    """Rows of ints as (row offsets, their items in one list), for the compiled core."""
    offsets = [0]
    for row in rows:
        offsets.append(offsets[-1] + len(row))
    return offsets, [x for row in rows for x in row]


class OutOfBudget(Exception):
    """The work budget or the wall-clock deadline ran out."""


@dataclass
class Partition:
    """Buffers (indices into the solver's lists) that interact only among themselves."""

    members: list[int]
    sections: list[list[int]]  # maximal sets of members live at one time
    section_fixed: list[list[tuple[int, int]]]  # fixed [offset, end) ranges live in each section
    lower: int = 0  # max over sections of their total size, less what overlaps can save
    best: dict[int, int] = field(default_factory=dict)  # best placement found: index -> offset
    best_height: int | None = None
    proven: int = 0  # capacities below this were searched completely without a fit


@dataclass
class _Local:
    """A partition's tables in local indices (0..m-1)."""

    size: list[int]
    overlaps: list[list[int]]  # members live at the same time as each member
    secs_of: list[list[int]]  # sections each member is in
    sections: list[list[int]]
    start_off: list[int]  # lowest offset of each member with nothing planned yet
    values: dict[str, list[int]]  # preorder keys
    by_size: list[list[int]]  # overlaps, largest first
    secs_per_buffer: int  # mean number of sections a member is in (for work accounting)
    rise: list[dict[int, int]]  # rise[k][j]: j may start this far above k's offset (overlap)
    slack: list[int]  # per section: the bytes its overlaps can save
    cuts: list[int]  # cuts[s]: members live in both section s and section s + 1
    tables: object = None  # the compiled core's copy of these tables (None: not built)
    ranks: dict[tuple[str, int], list[int]] = field(default_factory=dict)  # preorders made
    rem: list[int] = field(default_factory=list)  # per section: its bytes, less the slack
    tallest: int = 0  # the highest top of a member placed alone (at its floor from 0)
    fits_int64: bool = False  # every sum the search forms fits the compiled core's int64


# Preorders tried in turn by the restarts (after MiniMalloc's heuristics): keys sorted descending.
PREORDERS = ("WAT", "TAW", "TWA")
# The quick portfolio of depth-first runs (Solver._interleave) every capacity gets first:
# (preorder key, jitter seed, weight = slices per turn). The keys are MiniMalloc's (T: largest
# section total, L: lifetime length, A: area, W: sections spanned), "+" = re-ranked at each split
# by the bytes still to place (DYNAMIC). Which order solves a problem quickly varies wildly
# (work units to a fit at the bound, "-" = none in 1,500,000): E needs TL+ (27k; TLA+ none),
# H TWA (74k), C TAL+ (18k), and D fits 1048576 only with WAT (264k).
PORTFOLIO = (("TLA+", 0, 1), ("TAL+", 0, 1), ("TWA", 0, 1), ("TL+", 0, 1), ("WAT", 0, 1))
# Long single runs at the bound after that, with their shares of the budget: A needs TLA+
# (532k), B TAL+ (1.17M); interleaved with the others, they would not fit the budget.
LONG_RUNS = (("TLA+", 0.18), ("TAL+", 0.40))
LONG_MIN = 500_000  # work units below which a long run is skipped: half its share goes to the
# quick portfolio, half to the descent (below a time_limit of about 0.5 s both are skipped)
# The descent's runs: each of these orders at each rung's capacity, goal x (1 + rung), and
# halfway between the goal and the best plan, at once. On D and J (the problems whose optimum is
# above the bound) the orders that fit a capacity quickly change from capacity to capacity
# (D, work units to a fit: LAT+ 92k at 1040000, TLA+ 131k at 1044000, WAT 264k at 1048576,
# none of the three within 2M at the other two), so three orders at three rungs are nine
# chances. Without LAT+, D ended at 1059840; more rungs (0.05-0.075 in 0.005 steps) gave J
# 1090560 instead of 1039360: the result is erratic (see lower_partition).
DESCENT_PORTFOLIO = (("TLA+", 0, 1), ("WAT", 0, 1), ("LAT+", 0, 1))
RUNGS = (0.055, 0.065, 0.075)
QUICK_SHARE = 0.13  # of the budget, for the quick portfolio at the bound (H needs 370k of 3M)
STEPS_SHARE = 0.05  # for capacities stepping down from the best plan, with restarts
DYNAMIC = "+"  # a preorder key ending in it is re-ranked within each independent group


class Solver:
    """Decision search: fit the planned buffers below a capacity, within a work budget."""

    def __init__(
        self, buffers: Sequence[Buffer], alignment: int, overlaps: Sequence[Overlap] = ()
    ) -> None:
        self.alignment = alignment
        self.buffers = list(buffers)
        index = {b.id: i for i, b in enumerate(buffers)}
        sizes = {b.id: b.size for b in buffers}
        # (output index, input index) -> rise, and what each such overlap can save.
        self.rise: dict[tuple[int, int], int] = {}
        self.saving: dict[tuple[int, int], int] = {}
        for o in overlaps:
            saving = overlap_saving(o, sizes, alignment)
            if saving > 0:
                key = (index[o.output], index[o.input])
                self.rise[key] = overlap_rise(o, alignment)
                self.saving[key] = saving
        self._saving_by_output: dict[int, list[tuple[int, int]]] = {}
        for (a, b), v in self.saving.items():
            self._saving_by_output.setdefault(a, []).append((b, v))
        planned = [
            i for i, b in enumerate(buffers) if b.offset is None and b.size > 0 and b.end > b.start
        ]
        fixed = [b for b in buffers if b.offset is not None and b.size > 0 and b.end > b.start]
        self.size = [b.size for b in buffers]
        self.fixed_of: dict[int, list[tuple[int, int]]] = {}
        for i in planned:
            b = buffers[i]
            hits = sorted(
                (f.offset, f.offset + f.size)  # type: ignore[operator]
                for f in fixed
                if f.start < b.end and b.start < f.end
            )
            if hits:
                self.fixed_of[i] = hits
        self.partitions = self._partition(planned, fixed)
        # Work done, in units of about a microsecond of search on the reference machine: nodes,
        # candidates tried and inference steps, weighted by their measured costs.
        self.work = 0
        self._check_at = 0  # work count at which to look at the clock (and the pause) next
        self._pause_at = 0  # work count at which the running search pauses
        self._local: dict[int, _Local] = {}

    # ---- static analysis -------------------------------------------------------------------

    def _partition(self, planned: list[int], fixed: list[Buffer]) -> list[Partition]:
        bufs = self.buffers
        events: list[tuple[int, int, int]] = []  # (time, 0=end/1=start, index)
        for i in planned:
            events.append((bufs[i].start, 1, i))
            events.append((bufs[i].end, 0, i))
        events.sort()
        parts: list[Partition] = []
        active: set[int] = set()
        members: list[int] = []
        sections: list[list[int]] = []
        sec_fixed: list[list[tuple[int, int]]] = []
        started = False
        last_start = 0
        for t, kind, i in events:
            if kind == 1:
                active.add(i)
                members.append(i)
                started, last_start = True, t
                continue
            if started:  # an end after a start: the active set is a maximal clique
                sections.append(sorted(active))
                sec_fixed.append(
                    sorted(
                        (f.offset, f.offset + f.size)  # type: ignore[operator]
                        for f in fixed
                        if f.start <= last_start < f.end
                    )
                )
                started = False
            active.discard(i)
            if not active:
                lower = max(sum(self.size[j] for j in s) - self._slack(s) for s in sections)
                parts.append(Partition(members, sections, sec_fixed, lower))
                members, sections, sec_fixed = [], [], []
        return parts

    def _slack(self, section: list[int]) -> int:
        """Bytes the overlaps among a section's buffers can save (0 without overlaps)."""
        if not self.saving:
            return 0
        members = set(section)
        by_output = self._saving_by_output
        return sum(v for a in section for b, v in by_output.get(a, ()) if b in members)

    def _preorder_values(self, part: Partition) -> dict[str, list[int]]:
        """Per member (local index): W = sections spanned, L = lifetime length, A = area
        (size x length), T = largest section total."""
        bufs = self.buffers
        m = len(part.members)
        local = {g: k for k, g in enumerate(part.members)}
        width, total = [0] * m, [0] * m
        for sec in part.sections:
            t = sum(self.size[g] for g in sec)
            for g in sec:
                k = local[g]
                width[k] += 1
                total[k] = max(total[k], t)
        length = [bufs[g].end - bufs[g].start for g in part.members]
        area = [self.size[g] * length[k] for k, g in enumerate(part.members)]
        return {"W": width, "L": length, "A": area, "T": total}

    @staticmethod
    def _preorder(values: dict[str, list[int]], key: str, seed: int) -> list[int]:
        """Rank of each member when sorted by `key`'s values, descending.

        seed > 0 jitters the main value (deterministically) to give restarts a different order.
        """
        columns: list[list[float]] = [list(map(float, values[c])) for c in key.rstrip(DYNAMIC)]
        if seed:
            rng = random.Random(seed)
            columns[0] = [v * (1.0 + JITTER * rng.random()) for v in columns[0]]
        m = len(columns[0])
        order = sorted(range(m), key=lambda k: tuple(-col[k] for col in columns) + (k,))
        rank = [0] * m
        for r, k in enumerate(order):
            rank[k] = r
        return rank

    # ---- search ----------------------------------------------------------------------------

    def _fit(self, i: int, base: int) -> int:
        """Lowest aligned offset >= base where buffer i avoids every fixed buffer it meets."""
        base = align_up(base, self.alignment)
        size = self.size[i]
        for fo, fe in self.fixed_of.get(i, ()):
            if base < fe and fo < base + size:
                base = align_up(fe, self.alignment)
        return base

    def solve_partition(
        self,
        part: Partition,
        capacity: int,
        budget: int,
        deadline: float,
        portfolio: Sequence[tuple[str, int, int]] = (),
    ) -> dict[int, int] | bool:
        """A placement of the partition below capacity; else False if the search space is
        exhausted (no canonical plan fits), True if the budget ran out first.

        With a `portfolio` of (preorder key, jitter seed, weight): one depth-first run each,
        interleaved in turns of weight x SLICE work units, each resumed where it paused. A hard
        problem is often solved by one long run in the right order, and which order is right
        differs from problem to problem: the portfolio costs a few times the best run, and no
        run repeats the work of an earlier one (as restarts would).

        Without one, restarts with node limits following the Luby sequence (a restart strategy
        within a log factor of the best fixed limit), cycling through PREORDERS and then
        jittered versions of them: cheap fits for the descent's easy capacities.
        """
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 8 * len(part.members) + 200))
        try:
            if portfolio:
                return self._interleave(part, capacity, budget, deadline, portfolio)
            return self._restarts(part, capacity, budget, deadline)
        finally:
            sys.setrecursionlimit(limit)

    def _step(self, run: Generator[None, None, dict[int, int] | None], room: int) -> object:
        """Resume a run for `room` work units: its result (a placement, or None once
        exhausted), or PAUSED."""
        self._pause_at = self.work + room
        self._check_at = min(self._check_at, self._pause_at)
        try:
            next(run)
        except StopIteration as stop:
            return stop.value
        return PAUSED

    def _interleave(
        self,
        part: Partition,
        capacity: int,
        budget: int,
        deadline: float,
        portfolio: Sequence[tuple[str, int, int]],
    ) -> dict[int, int] | bool:
        end = self.work + budget
        runs = [self._dfs_partition(part, capacity, k, seed, deadline) for k, seed, _ in portfolio]
        turns = [SLICE * weight for _, _, weight in portfolio]
        try:
            while self.work < end:
                for run, turn in zip(runs, turns, strict=True):
                    room = min(turn, end - self.work)
                    if room <= 0:
                        break
                    found = self._step(run, room)
                    if found is None:
                        return False  # one complete search suffices: nothing fits
                    if found is not PAUSED:
                        return found  # type: ignore[return-value]
        except OutOfBudget:
            pass
        finally:
            for run in runs:
                run.close()
        return True

    def lower_partition(
        self,
        part: Partition,
        goal: int,
        budget: int,
        deadline: float,
        portfolio: Sequence[tuple[str, int, int]],
    ) -> None:
        """Lower part.best_height towards `goal` with the portfolio's runs at several
        capacities at once (RUNGS above the goal, and halfway to the best plan), interleaved.
        Which capacity a run fits at quickly is erratic (D fits 1060000 within 41k units of
        WAT, 1100000 not within 300k), so several capacities are several chances. A fit drops
        every run at or above its height; a complete search that fails drops every run at or
        below its capacity."""
        end = self.work + budget
        halfway = (goal + (part.best_height or goal)) // 2
        capacities = sorted({int(goal * (1 + r)) for r in RUNGS} | {halfway})
        runs = [
            (c, self._dfs_partition(part, c, key, seed, deadline), SLICE * weight)
            for c in capacities
            if max(goal, part.proven) <= c < (part.best_height or 0)
            for key, seed, weight in portfolio
        ]
        try:
            while runs and self.work < end:
                for entry in list(runs):
                    room = min(entry[2], end - self.work)
                    if room <= 0:
                        break
                    if entry not in runs:
                        continue
                    found = self._step(entry[1], room)
                    if found is PAUSED:
                        continue
                    if isinstance(found, dict):
                        height = max(o + self.size[i] for i, o in found.items())
                        if height < (part.best_height or height + 1):
                            part.best, part.best_height = found, height
                        dropped = [e for e in runs if e[0] >= height]
                    else:
                        part.proven = max(part.proven, entry[0] + 1)
                        dropped = [e for e in runs if e[0] <= entry[0]]
                    for e in dropped:
                        e[1].close()
                        runs.remove(e)
        except OutOfBudget:
            pass
        finally:
            for e in runs:
                e[1].close()

    def _restarts(
        self, part: Partition, capacity: int, budget: int, deadline: float
    ) -> dict[int, int] | bool:
        m = len(part.members)
        base = 4 * (8 * m + m * m // 8)  # a few dives' worth of work
        spent = 0
        restart = 0
        while spent < budget and time.monotonic() < deadline:
            key = PREORDERS[restart % len(PREORDERS)]
            seed = restart // len(PREORDERS)
            room = min(base * _luby(restart + 1), budget - spent)
            restart += 1
            start = self.work
            run = self._dfs_partition(part, capacity, key, seed, deadline)
            try:
                found = self._step(run, room)
            except OutOfBudget:
                return True
            finally:
                run.close()
            if found is None:
                return False
            spent += self.work - start
            if found is not PAUSED:
                return found  # type: ignore[return-value]
        return True

    def _prepare(self, part: Partition) -> _Local:
        """Per-partition tables, indexed 0..m-1 for speed; built once and cached."""
        cached = self._local.get(id(part))
        if cached is not None:
            return cached
        bufs = self.buffers
        members = part.members
        local = {g: k for k, g in enumerate(members)}
        secs_of: list[list[int]] = [[] for _ in members]
        for s, sec in enumerate(part.sections):
            for g in sec:
                secs_of[local[g]].append(s)
        # Who is live with whom: a sweep in start order, keeping the members still live.
        overlaps: list[list[int]] = [[] for _ in members]
        active: list[int] = []
        for k in sorted(range(len(members)), key=lambda k: bufs[members[k]].start):
            start = bufs[members[k]].start
            active = [a for a in active if bufs[members[a]].end > start]
            for a in active:
                overlaps[a].append(k)
                overlaps[k].append(a)
            active.append(k)
        for ov in overlaps:
            ov.sort()
        sections = [[local[g] for g in sec] for sec in part.sections]
        cuts = [0] * max(0, len(sections) - 1)
        for secs in secs_of:  # a member's sections are consecutive
            for s in secs[:-1]:
                cuts[s] += 1
        loc = _Local(
            size=[self.size[g] for g in members],
            overlaps=overlaps,
            secs_of=secs_of,
            sections=sections,
            start_off=[self._fit(g, 0) for g in members],
            values=self._preorder_values(part),
            by_size=[sorted(ov, key=lambda j: -self.size[members[j]]) for ov in overlaps],
            secs_per_buffer=sum(map(len, secs_of)) // max(1, len(members)),
            rise=[
                {local[j]: r for (i, j), r in self.rise.items() if i == g and j in local}
                for g in members
            ],
            slack=[self._slack(sec) for sec in part.sections],
            cuts=cuts,
        )
        biggest = max(
            [sum(loc.size), *(fe for r in self.fixed_of.values() for _, fe in r)], default=0
        )
        loc.rem = [sum(loc.size[k] for k in sec) - loc.slack[s] for s, sec in enumerate(sections)]
        loc.tallest = max((o + z for o, z in zip(loc.start_off, loc.size, strict=True)), default=0)
        loc.fits_int64 = 4 * max(biggest, self.alignment) < CORE_LIMIT and all(
            v < CORE_LIMIT for vals in loc.values.values() for v in vals
        )
        self._local[id(part)] = loc
        return loc

    def _tables(self, part: Partition, loc: _Local) -> object:
        """The compiled core's tables of a partition (search._Local flattened), built once."""
        if loc.tables is None:
            fixed = [self.fixed_of.get(g, []) for g in part.members]
            rises = [sorted(r.items()) for r in loc.rise]
            arrays = [  # in the order of the core's T_* columns
                loc.size,
                *_csr(loc.secs_of),
                *_csr(loc.overlaps),
                _csr(loc.by_size)[1],
                *_csr(loc.sections),
                loc.start_off,
                *_csr([[j for j, _ in r] for r in rises]),
                [x for r in rises for _, x in r],
                *_csr([[fo for fo, _ in r] for r in fixed]),
                [fe for r in fixed for _, fe in r],
                *_csr([[fo for fo, _ in r] for r in part.section_fixed]),
                [fe for r in part.section_fixed for _, fe in r],
                loc.cuts,
            ]
            loc.tables = _core.Tables(
                len(part.members), len(loc.sections), self.alignment, loc.secs_per_buffer, arrays
            )
        return loc.tables

    def _dfs_partition(
        self, part: Partition, capacity: int, key: str, seed: int, deadline: float
    ) -> Generator[None, None, dict[int, int] | None]:
        """One depth-first run in the order of preorder `key`: a generator that pauses (yields)
        whenever the work count reaches self._pause_at, and returns the placement or None
        once the search space is exhausted. Raises OutOfBudget at the deadline."""
        loc = self._prepare(part)
        if loc.tallest > capacity:
            return None
        if (key, seed) not in loc.ranks:  # runs at many capacities share their preorders
            loc.ranks[key, seed] = self._preorder(loc.values, key, seed)
        pre, rem = list(loc.ranks[key, seed]), list(loc.rem)
        if _core is not None and loc.fits_int64 and capacity < CORE_LIMIT:
            return (yield from self._dfs_compiled(part, loc, capacity, key, pre, rem, deadline))
        return (yield from self._dfs_python(part, loc, capacity, key, pre, rem, deadline))

    def _dfs_compiled(
        self,
        part: Partition,
        loc: _Local,
        capacity: int,
        key: str,
        pre: list[int],
        rem: list[int],
        deadline: float,
    ) -> Generator[None, None, dict[int, int] | None]:
        """_dfs_python's run in the compiled core: the same nodes, work and result. It stops
        every CLOCK_UNITS of work for a look at the clock, which changes nothing."""
        cols = [None if c == "T" else loc.values[c] for c in key.rstrip(DYNAMIC)]
        run = _core.Run(
            self._tables(part, loc), capacity, pre, rem, int(key.endswith(DYNAMIC)), cols
        )
        while True:
            status, self.work = run.step(self.work, min(self._pause_at, self.work + CLOCK_UNITS))
            if status == 1:
                return dict(zip(part.members, run.offsets(), strict=True))
            if status == 2:
                return None
            if time.monotonic() > deadline:
                raise OutOfBudget
            if self.work >= self._pause_at:
                yield  # this run's slice is spent: the scheduler resumes it later

    def _dfs_python(
        self,
        part: Partition,
        loc: _Local,
        capacity: int,
        key: str,
        pre: list[int],
        rem: list[int],
        deadline: float,
    ) -> Generator[None, None, dict[int, int] | None]:
        """The depth-first run in Python (the fallback without the compiled core)."""
        members = part.members
        size, overlaps, secs_of, sections = loc.size, loc.overlaps, loc.secs_of, loc.sections
        dynamic = key.endswith(DYNAMIC)
        by_size = loc.by_size
        secs_per_buffer = loc.secs_per_buffer
        min_off = list(loc.start_off)  # each unplaced buffer's floor; UNREACHABLE once placed
        min_off_of = min_off.__getitem__
        nsec = len(sections)
        floor = [0] * nsec
        cut = list(loc.cuts)
        rise = loc.rise
        sec_fixed = part.section_fixed
        fixed_secs = [s for s in range(nsec) if sec_fixed[s]]
        placed = [False] * len(members)
        offset = [0] * len(members)  # the latest placement of each; final once all succeed
        align = self.alignment
        fixed_of = [self.fixed_of.get(g) for g in members]
        fit = self._fit

        def too_high(i: int, o: int, h: int) -> bool:
            """Would a buffer live with i no longer fit below the capacity above height h
            (above o + rise for an input allowed to overlap i)?"""
            rises = rise[i]
            for j in by_size[i]:
                if placed[j]:
                    continue
                if h + size[j] <= capacity:
                    return False  # nor will any smaller one
                hj = o + rises[j] if j in rises else h
                if min_off[j] < hj and hj + size[j] > capacity:  # j must go above, no room
                    return True
            return False

        def infeasible(
            o: int, h: int, secs_i: list[int], raised: list[tuple[int, int]], lo: int, hi: int
        ) -> bool:
            """Section inference after placing a buffer at [o, h) (state already updated).

            In each section of the group's range [lo, hi) the unplaced bytes must fit between
            the capacity and the section's floor: the top of its placed buffers, raised to the
            lowest offset any of its unplaced buffers can still take.
            """
            for s in secs_i:
                if h + rem[s] > capacity:
                    return True
            checked = set()
            self.work += (len(raised) * secs_per_buffer) >> 5
            for j, _ in raised:
                m = min_off[j]
                for s in secs_of[j]:
                    room = capacity - rem[s]
                    # Only if j's new floor is above the room can the section have failed.
                    if m > room and s not in checked:
                        checked.add(s)
                        if floor[s] > room or o > room:
                            return True
                        # Placed buffers have min_off UNREACHABLE: the lowest is an unplaced one.
                        if min(map(min_off_of, sections[s])) > room:
                            return True  # every unplaced buffer there starts above the room
            for s in fixed_secs:
                if not lo <= s < hi:
                    continue
                f = max(floor[s], o)
                above = sum(fe - max(fo, f) for fo, fe in sec_fixed[s] if fe > f)
                if f + rem[s] + above > capacity:
                    return True
            return False

        no_rise: dict[int, int] = {}

        def split(
            group: set[int], lo: int, hi: int, cuts: list[int]
        ) -> Generator[None, None, bool]:
            """Solve the group as independent subgroups, one per range of sections between the
            given cut points (no unplaced buffer spans one): all must fit, each on its own."""
            bounds = [lo, *sorted(cuts), hi]
            parts: list[set[int]] = [set() for _ in range(len(bounds) - 1)]
            for k in group:
                parts[bisect_right(bounds, secs_of[k][0]) - 1].add(k)
            self.work += len(group) >> 2
            for p, sub in enumerate(parts):
                if not sub:
                    continue
                saved = rerank(sub) if dynamic else []
                ok = yield from dfs(sub, bounds[p], bounds[p + 1], 0, -1, no_rise)
                for k, v in saved:
                    pre[k] = v
                if not ok:
                    return False
            return True

        def rerank(group: set[int]) -> list[tuple[int, int]]:
            """Rank the group afresh by the preorder key, T now counting only the bytes left
            to place (MiniMalloc's dynamic preorder); returns the old ranks to restore."""
            self.work += len(group) >> 1
            saved = [(k, pre[k]) for k in group]
            cols = [
                {k: max(rem[s] for s in secs_of[k]) for k in group}
                if c == "T"
                else {k: loc.values[c][k] for k in group}
                for c in key.rstrip(DYNAMIC)
            ]
            for r, k in enumerate(sorted(group, key=lambda k: (*(-c[k] for c in cols), k))):
                pre[k] = r
            return saved

        def dfs(
            unplaced: set[int],
            lo: int,
            hi: int,
            last_off: int,
            last_pre: int,
            last_rise: dict[int, int],
        ) -> Generator[None, None, bool]:
            """Place the group `unplaced` (its buffers live only in sections [lo, hi)) in
            canonical order after a buffer at last_off; restores all state before returning."""
            self.work += 1
            if self.work >= self._check_at:
                if time.monotonic() > deadline:
                    raise OutOfBudget
                if self.work >= self._pause_at:
                    yield  # this run's slice is spent: the scheduler resumes it later
                self._check_at = min(self.work + 256, self._pause_at)
            if not unplaced:
                return True
            min_height = min([min_off[k] + size[k] for k in unplaced])
            cands = []
            for k in unplaced:
                o = min_off[k]
                if o >= min_height or o < last_off:
                    continue
                # Equal offsets go in preorder, except an input right on its output (the order
                # matters there: the output must come first).
                if o == last_off and pre[k] < last_pre and k not in last_rise:
                    continue
                cands.append((o, pre[k], k))
            cands.sort()
            self.work += 3 + 2 * len(cands) + (len(unplaced) >> 2) + ((hi - lo) >> 3)
            max_rem = max(rem[lo:hi])
            for o, p, i in cands:
                h = o + size[i]
                if too_high(i, o, h):
                    continue
                secs_i = secs_of[i]
                for s in secs_i:
                    rem[s] -= size[i]
                # Some section can no longer fit above o (rem only fell, so test max_rem first).
                if o + max_rem > capacity and o + max(rem[lo:hi]) > capacity:
                    for s in secs_i:
                        rem[s] += size[i]
                    continue
                unplaced.discard(i)
                placed[i] = True
                offset[i] = o
                min_off[i] = UNREACHABLE
                old_floors = [floor[s] for s in secs_i]
                for s in secs_i:
                    floor[s] = h
                off_changes = []
                rises = rise[i]
                hatless = True  # no unplaced buffer is live with i: its placement is forced
                for j in overlaps[i]:
                    if placed[j]:
                        continue
                    hatless = False
                    hj = o + rises[j] if j in rises else h
                    if min_off[j] < hj:
                        off_changes.append((j, min_off[j]))
                        min_off[j] = fit(members[j], hj) if fixed_of[j] else -(-hj // align) * align
                found = False
                if not infeasible(o, h, secs_i, off_changes, lo, hi):
                    # Sections i alone joined may now fall apart into independent groups.
                    first, last = secs_i[0], secs_i[-1]
                    cuts = []
                    for s in range(first, last):
                        cut[s] -= 1
                        if not cut[s] and unplaced:
                            cuts.append(s + 1)
                    try:
                        if cuts:
                            found = yield from split(unplaced, lo, hi, cuts)
                        else:
                            found = yield from dfs(unplaced, lo, hi, o, p, rises)
                    finally:
                        for s in range(first, last):
                            cut[s] += 1
                for s, f in zip(secs_i, old_floors, strict=True):
                    rem[s] += size[i]
                    floor[s] = f
                for j, m in off_changes:
                    min_off[j] = m
                placed[i] = False
                min_off[i] = o
                unplaced.add(i)
                if found:
                    return True
                if hatless:
                    # i must sit at o in any plan of this node, and in canonical order nothing
                    # else can go first (i could then no longer be placed): no sibling can fit.
                    break
            return False

        if not (yield from dfs(set(range(len(members))), 0, nsec, 0, -1, no_rise)):
            return None
        return {g: offset[k] for k, g in enumerate(members)}


def search_plan(
    buffers: Sequence[Buffer],
    upper_offsets: dict[int, int],
    lower: int,
    alignment: int,
    work_budget: int,
    deadline: float,
    progress: Callable[[str], None] | None = None,
    overlaps: Sequence[Overlap] = (),
) -> dict[int, int]:
    """Lower the arena of the given plan towards `lower`; returns the best plan found.

    Tries the lower bound, then capacities stepping down from the best plan, in rounds whose
    per-attempt work budget doubles (early rounds find good plans fast, later ones dig deeper).
    Each partition keeps its best placement, so only partitions above the target capacity are
    searched again.
    """
    solver = Solver(buffers, alignment, overlaps)
    fixed = {b.id: upper_offsets[b.id] for b in buffers if b.offset is not None}
    # No plan goes below a fixed buffer's top or a planned buffer without lifetime (at 0).
    lower = max([lower] + [upper_offsets[b.id] + b.size for b in buffers if b.offset is not None])
    lower = max([lower] + [b.size for b in buffers if b.end <= b.start])
    best = dict(upper_offsets)
    best_arena = max((best[b.id] + b.size for b in buffers), default=0)
    for part in solver.partitions:  # seed each partition with its part of the given plan
        part.best = {i: upper_offsets[buffers[i].id] for i in part.members}
        part.best_height = max(o + solver.size[i] for i, o in part.best.items())

    def attempt(
        capacity: int, budget: int, portfolio: Sequence[tuple[str, int, int]], until: float
    ) -> dict[int, int] | None:
        """Every partition placed below capacity (each by the portfolio), or None."""
        per_part: dict[int, int] = {}
        for part in sorted(solver.partitions, key=lambda p: -p.lower):
            if part.lower > capacity or part.proven > capacity:
                return None
            if part.best_height is not None and part.best_height <= capacity:
                per_part.update(part.best)
                continue
            left = work_budget - solver.work
            found = solver.solve_partition(part, capacity, min(budget, left), until, portfolio)
            if not isinstance(found, dict):
                if found is False:  # exhausted: no canonical plan of this partition fits
                    part.proven = max(part.proven, capacity + 1)
                return None
            part.best = found
            part.best_height = max(o + solver.size[i] for i, o in found.items())
            per_part.update(found)
        return per_part

    def adopt(per_part: dict[int, int]) -> bool:
        nonlocal best_arena, best
        offsets = dict(fixed)
        for i, b in enumerate(buffers):
            if b.offset is None:
                offsets[b.id] = per_part.get(i, 0)
        arena = max((offsets[b.id] + b.size for b in buffers), default=0)
        if arena < best_arena:
            best_arena, best = arena, offsets
            if progress:
                progress(f"search: arena {arena} (lower bound {lower}, work {solver.work})")
            return True
        return False

    def descend(share: float) -> None:
        """Lower each partition (those with the highest bounds first) towards its bound or
        the height the ones before it reached, with a share of the budget."""
        until = min(work_budget, solver.work + int(share * work_budget))
        reached = 0
        for part in sorted(solver.partitions, key=lambda p: -p.lower):
            goal = max(part.lower, reached, lower)
            if (part.best_height or 0) > goal and solver.work < until:
                left = until - solver.work
                solver.lower_partition(part, goal, left, deadline, DESCENT_PORTFOLIO)
            reached = max(reached, part.best_height or 0)
        per_part = {i: o for part in solver.partitions for i, o in part.best.items()}
        adopt(per_part)

    n = max(1, len(buffers))
    per_step = 4 * (8 * n + n * n // 8)  # a few dives' worth of work
    finest = max(1, lower // 1000, alignment)  # 0.1% of the bound, or one alignment unit

    def step_down(share: float) -> None:
        """Capacities a little below the best plan, with restarts: cheap fits, so a good plan
        exists early (and on problems far above their bound, where the rungs fit nothing). A
        failure costs its whole attempt, so the step is then halved."""
        until = min(work_budget, solver.work + max(per_step, int(share * work_budget)))
        step = max(finest, lower // 50)
        while step >= finest and best_arena > lower and solver.work < until:
            if time.monotonic() >= deadline:
                return
            capacity = max(lower, best_arena - step)
            found = attempt(capacity, min(per_step, until - solver.work), (), deadline)
            if found is None or not adopt(found):
                step //= 2

    def at_bound(budget: int, portfolio: Sequence[tuple[str, int, int]], share: float) -> None:
        until = time.monotonic() + share * max(0.0, deadline - time.monotonic())
        found = attempt(lower, budget, portfolio, until)
        if found is not None:
            adopt(found)

    long_runs = [(key, share) for key, share in LONG_RUNS if share * work_budget >= LONG_MIN]
    quick = QUICK_SHARE + (sum(s for _, s in LONG_RUNS) - sum(s for _, s in long_runs)) / 2
    # 1. The bound, with the quick portfolio: many problems fit there at once.
    at_bound(int(quick * work_budget), PORTFOLIO, quick)
    # 2. A good plan early, stepping down from the best.
    if best_arena > lower:
        step_down(STEPS_SHARE)
    # 3. Long runs at the bound: some problems reach it only after one long run in one order.
    #    On a machine too slow for the budget the clock cap ends each at the same share of the
    #    time left, so the descent still gets its turn.
    for key, share in long_runs:
        if best_arena > lower:
            at_bound(int(share * work_budget), ((key, 0, 1),), share)
    # 4. The rest of the budget: the descent from the best plan towards the bound.
    if best_arena > lower:
        descend(1.0)
    return best
