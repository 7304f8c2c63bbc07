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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .problem import Buffer, Overlap, align_up, overlap_rise, overlap_saving

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


# Preorders tried in turn by the restarts (after MiniMalloc's heuristics): keys sorted descending.
PREORDERS = ("WAT", "TAW", "TWA")
# Preorders of the long runs at the lower bound (search_plan): MiniMalloc's own, by lifetime
# length, re-ranked at each split by the bytes still to place (DYNAMIC).
EXACT_PREORDERS = ("TLA+", "TAL+")
EXACT_SHARE = 0.8  # of the work budget, for those runs
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
        self._clock_at = 0  # work count at which to look at the clock next
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
        return sum(v for (a, b), v in self.saving.items() if a in members and b in members)

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
        preorders: Sequence[str] = (),
    ) -> dict[int, int] | bool:
        """A placement of the partition below capacity; else False if the search space is
        exhausted (no canonical plan fits), True if the budget ran out first.

        With `preorders`, one long run per preorder, each with an equal share of the budget:
        a hard problem at its lower bound is often solved by one long run in the right order
        while restarts never get deep enough.

        Restarts the search with node limits following the Luby sequence (a restart strategy
        that is within a log factor of the best fixed limit), cycling through the preorders and
        then through jittered versions of them: a deep search stuck under a bad early choice
        wastes its budget, while a fresh order often fits at once.
        """
        m = len(part.members)
        base = 4 * (8 * m + m * m // 8)  # a few dives' worth of work
        spent = 0
        restart = 0
        while spent < budget and time.monotonic() < deadline:
            if preorders:
                if restart == len(preorders):
                    break
                key, seed = preorders[restart], 0
                room = min(budget // len(preorders), budget - spent)
            else:
                key = PREORDERS[restart % len(PREORDERS)]
                seed = restart // len(PREORDERS)
                room = min(base * _luby(restart + 1), budget - spent)
            restart += 1
            start = self.work
            try:
                found = self._dfs_partition(part, capacity, key, seed, self.work + room, deadline)
            except OutOfBudget:
                found = None
            else:
                if found is None:
                    return False
            spent += self.work - start
            if found is not None:
                return found
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
        self._local[id(part)] = loc
        return loc

    def _dfs_partition(
        self, part: Partition, capacity: int, key: str, seed: int, work_cap: int, deadline: float
    ) -> dict[int, int] | None:
        loc = self._prepare(part)
        members = part.members
        size, overlaps, secs_of, sections = loc.size, loc.overlaps, loc.secs_of, loc.sections
        pre = self._preorder(loc.values, key, seed)
        dynamic = key.endswith(DYNAMIC)
        by_size = loc.by_size
        secs_per_buffer = loc.secs_per_buffer
        min_off = list(loc.start_off)
        if any(min_off[k] + size[k] > capacity for k in range(len(members))):
            return None
        nsec = len(sections)
        floor = [0] * nsec
        rem = [sum(size[k] for k in sec) - loc.slack[s] for s, sec in enumerate(sections)]
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
                        for k in sections[s]:  # a plain loop: this is the hot spot
                            if min_off[k] <= room and not placed[k]:
                                break
                        else:
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

        def split(group: set[int], lo: int, hi: int, cuts: list[int]) -> bool:
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
                ok = dfs(sub, bounds[p], bounds[p + 1], 0, -1, no_rise)
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
        ) -> bool:
            """Place the group `unplaced` (its buffers live only in sections [lo, hi)) in
            canonical order after a buffer at last_off; restores all state before returning."""
            self.work += 1
            if self.work >= work_cap:
                raise OutOfBudget
            if self.work >= self._clock_at:
                self._clock_at = self.work + 256
                if time.monotonic() > deadline:
                    raise OutOfBudget
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
                            found = split(unplaced, lo, hi, cuts)
                        else:
                            found = dfs(unplaced, lo, hi, o, p, rises)
                    finally:
                        for s in range(first, last):
                            cut[s] += 1
                for s, f in zip(secs_i, old_floors, strict=True):
                    rem[s] += size[i]
                    floor[s] = f
                for j, m in off_changes:
                    min_off[j] = m
                placed[i] = False
                unplaced.add(i)
                if found:
                    return True
                if hatless:
                    # i must sit at o in any plan of this node, and in canonical order nothing
                    # else can go first (i could then no longer be placed): no sibling can fit.
                    break
            return False

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 6 * len(members) + 200))
        try:
            if not dfs(set(range(len(members))), 0, nsec, 0, -1, no_rise):
                return None
        finally:
            sys.setrecursionlimit(limit)
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

    last_attempt_ran_out = False

    def attempt(
        capacity: int, budget: int, preorders: Sequence[str] = (), until: float = deadline
    ) -> dict[int, int] | None:
        """Every partition placed below capacity, or None."""
        nonlocal last_attempt_ran_out
        last_attempt_ran_out = False
        per_part: dict[int, int] = {}
        for part in sorted(solver.partitions, key=lambda p: -p.lower):
            if part.lower > capacity or part.proven > capacity:
                return None
            if part.best_height is not None and part.best_height <= capacity:
                per_part.update(part.best)
                continue
            left = work_budget - solver.work
            found = solver.solve_partition(part, capacity, min(budget, left), until, preorders)
            if not isinstance(found, dict):
                if found is False:  # exhausted: no canonical plan of this partition fits
                    part.proven = max(part.proven, capacity + 1)
                else:
                    last_attempt_ran_out = True
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

    n = max(1, len(buffers))
    per_attempt = 4 * (8 * n + n * n // 8)
    finest = max(1, lower // 1000, alignment)  # 0.1% of the bound, or one alignment unit

    def descend(per_attempt: int, until: int) -> bool:
        """Try capacities a little below the best plan. A success (cheap: the first restarts
        usually fit) often lands well below the target; a failure costs the whole attempt
        budget, so the step is halved. Returns whether any failure ran out of budget."""
        cut_short = False
        step = max(finest, lower // 50)
        while step >= finest and best_arena > lower and solver.work < until:
            if time.monotonic() >= deadline:
                return True
            found = attempt(max(lower, best_arena - step), min(per_attempt, until - solver.work))
            if found is None:
                cut_short = cut_short or last_attempt_ran_out
                step //= 2
            elif not adopt(found):
                return False  # cannot happen while `lower` covers the fixed buffers
        return cut_short

    # 1. The bound, briefly (many problems fit at once), then a quick descent, so that a good
    #    plan exists early even if a slow machine hits the clock cap.
    found = attempt(lower, 4 * per_attempt)
    if found is not None:
        adopt(found)
    descend(per_attempt, work_budget)
    # 2. The bound again, most of the budget in a few long runs (one per exact preorder): some
    #    problems reach it only after long searches. Elsewhere more budget gains little.
    #    On a machine too slow for the budget the clock cap ends them at the same share of the
    #    time left, so the descent still gets its turn.
    if best_arena > lower:
        share = EXACT_SHARE * max(0.0, deadline - time.monotonic())
        found = attempt(
            lower, int(EXACT_SHARE * work_budget), EXACT_PREORDERS, time.monotonic() + share
        )
        if found is not None:
            adopt(found)
    # 3. Descend in rounds, doubling the budget per attempt.
    while best_arena > lower and solver.work < work_budget and time.monotonic() < deadline:
        before = best_arena
        per_attempt *= 2
        if not descend(per_attempt, work_budget) and best_arena == before:
            break  # every failure was a complete search: more budget cannot help
    return best
