"""Branch-and-bound search for a plan that fits a given capacity (after MiniMalloc).

The search builds "canonical" plans: buffers are placed in non-decreasing offset order, each at
the lowest offset above every already placed buffer it is live with (its floor). Every plan can be
pushed down into such a form, so searching the placement order is enough. Pruning:
- dominance: a buffer is not placed at or above the lowest top any unplaced buffer could reach,
  since that would leave a gap which that buffer fills in a better plan;
- symmetry: at equal offsets, buffers go in a fixed preorder;
- section inference: at each maximal set of simultaneously live buffers (a section), the floor
  plus the unplaced bytes of the section must fit in the capacity.
Buffers that never share time with each other fall into independent partitions, solved apart.
Fixed (pre-placed) buffers are obstacles: a buffer's floor skips past any it would collide with.
The work is bounded by a node count, so results do not depend on the machine; a wall-clock
deadline is only a safety cap.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .problem import Buffer


class OutOfBudget(Exception):
    """The node budget or the wall-clock deadline ran out."""


def _round_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass
class Partition:
    """Buffers (indices into the solver's lists) that interact only among themselves."""

    members: list[int]
    sections: list[list[int]]  # maximal sets of members live at one time
    section_fixed: list[list[tuple[int, int]]]  # fixed [offset, end) ranges live in each section
    lower: int = 0  # max over sections of their total size
    best: dict[int, int] = field(default_factory=dict)  # best placement found: index -> offset
    best_height: int | None = None
    proven: int = 0  # every capacity below this failed within budget (not a proof)


@dataclass
class _Local:
    """A partition's tables in local indices (0..m-1)."""

    size: list[int]
    overlaps: list[list[int]]  # members live at the same time as each member
    secs_of: list[list[int]]  # sections each member is in
    sections: list[list[int]]
    pre: dict[str, list[int]]  # rank of each member in each preorder
    start_off: list[int]  # lowest offset of each member with nothing planned yet


# Preorders tried in turn (MiniMalloc's heuristics): keys sorted descending.
PREORDERS = ("WAT", "TAW", "TWA")


class Solver:
    """Decision search: fit the planned buffers below a capacity, within a node budget."""

    def __init__(self, buffers: Sequence[Buffer], alignment: int) -> None:
        self.alignment = alignment
        self.buffers = list(buffers)
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
        self.nodes = 0
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
                lower = max(sum(self.size[j] for j in s) for s in sections)
                parts.append(Partition(members, sections, sec_fixed, lower))
                members, sections, sec_fixed = [], [], []
        return parts

    def _preorder(self, part: Partition, key: str) -> dict[int, int]:
        bufs = self.buffers
        width = dict.fromkeys(part.members, 0)
        total = dict.fromkeys(part.members, 0)
        for sec in part.sections:
            t = sum(self.size[j] for j in sec)
            for j in sec:
                width[j] += 1
                total[j] = max(total[j], t)
        values = {
            "W": width,
            "A": {j: self.size[j] * (bufs[j].end - bufs[j].start) for j in part.members},
            "T": total,
        }
        order = sorted(part.members, key=lambda j: tuple(-values[k][j] for k in key) + (j,))
        return {j: r for r, j in enumerate(order)}

    # ---- search ----------------------------------------------------------------------------

    def _fit(self, i: int, base: int) -> int:
        """Lowest aligned offset >= base where buffer i avoids every fixed buffer it meets."""
        base = _round_up(base, self.alignment)
        size = self.size[i]
        for fo, fe in self.fixed_of.get(i, ()):
            if base < fe and fo < base + size:
                base = _round_up(fe, self.alignment)
        return base

    def solve_partition(
        self, part: Partition, capacity: int, budget: int, deadline: float
    ) -> dict[int, int] | None:
        """A placement of the partition below capacity, or None (infeasible or out of budget).

        Tries each preorder in turn with a node limit that doubles each round, as MiniMalloc does,
        so an easy ordering finishes early.
        """
        limit = 2 * len(part.members)
        spent = 0
        while spent < budget:
            for key in PREORDERS:
                room = min(limit, budget - spent)
                if room <= 0:
                    return None
                start = self.nodes
                try:
                    found = self._dfs_partition(part, capacity, key, self.nodes + room, deadline)
                except OutOfBudget:
                    found = None
                    if time.monotonic() > deadline:
                        return None
                spent += self.nodes - start
                if found is not None:
                    return found
                if found is None and self.nodes - start < room:
                    return None  # search space exhausted: infeasible with these prunings
            limit *= 2
        return None

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
        overlaps = [
            [
                k
                for k, g in enumerate(members)
                if g != gi and bufs[g].start < bufs[gi].end and bufs[gi].start < bufs[g].end
            ]
            for gi in members
        ]
        sections = [[local[g] for g in sec] for sec in part.sections]
        pre = {key: self._preorder(part, key) for key in PREORDERS}
        loc = _Local(
            size=[self.size[g] for g in members],
            overlaps=overlaps,
            secs_of=secs_of,
            sections=sections,
            pre={key: [p[g] for g in members] for key, p in pre.items()},
            start_off=[self._fit(g, 0) for g in members],
        )
        self._local[id(part)] = loc
        return loc

    def _dfs_partition(
        self, part: Partition, capacity: int, key: str, node_cap: int, deadline: float
    ) -> dict[int, int] | None:
        loc = self._prepare(part)
        members = part.members
        size, overlaps, secs_of, sections = loc.size, loc.overlaps, loc.secs_of, loc.sections
        pre = loc.pre[key]
        min_off = list(loc.start_off)
        if any(min_off[k] + size[k] > capacity for k in range(len(members))):
            return None
        nsec = len(sections)
        floor = [0] * nsec
        rem = [sum(size[k] for k in sec) for sec in sections]
        sec_fixed = part.section_fixed
        fixed_secs = [s for s in range(nsec) if sec_fixed[s]]
        placed = [False] * len(members)
        unplaced = set(range(len(members)))
        offset = [0] * len(members)
        align = self.alignment
        fixed_of = [self.fixed_of.get(g) for g in members]
        fit = self._fit

        def infeasible(o: int, i: int, touched: set[int]) -> bool:
            """Section inference after placing i at o (floors and remainders already updated)."""
            if o + max(rem) > capacity:
                return True
            for s in touched:
                f = floor[s]
                if f < o:
                    f = o
                room = capacity - rem[s]
                if f > room:
                    return True
                # Fails if every unplaced buffer of the section has its floor above the room.
                if rem[s] and all(placed[k] or min_off[k] > room for k in sections[s]):
                    return True
            for s in fixed_secs:
                f = max(floor[s], o)
                above = sum(fe - max(fo, f) for fo, fe in sec_fixed[s] if fe > f)
                if f + rem[s] + above > capacity:
                    return True
            return False

        def dfs(last_off: int, last_pre: int) -> bool:
            self.nodes += 1
            if self.nodes >= node_cap:
                raise OutOfBudget
            if not self.nodes & 255 and time.monotonic() > deadline:
                raise OutOfBudget
            if not unplaced:
                return True
            min_height = min([min_off[k] + size[k] for k in unplaced])
            cands = []
            for k in unplaced:
                o = min_off[k]
                if o >= min_height or o < last_off or (o == last_off and pre[k] < last_pre):
                    continue
                cands.append((o, pre[k], k))
            cands.sort()
            for o, p, i in cands:
                h = o + size[i]
                unplaced.discard(i)
                placed[i] = True
                offset[i] = o
                off_changes = []
                touched = set(secs_of[i])
                ok = True
                for j in overlaps[i]:
                    if not placed[j] and min_off[j] < h:
                        off_changes.append((j, min_off[j]))
                        m = fit(members[j], h) if fixed_of[j] else -(-h // align) * align
                        min_off[j] = m
                        if m + size[j] > capacity:
                            ok = False
                        touched.update(secs_of[j])
                old_floors = [floor[s] for s in secs_of[i]]
                for s in secs_of[i]:
                    floor[s] = h
                    rem[s] -= size[i]
                if ok and not infeasible(o, i, touched) and dfs(o, p):
                    return True
                for s, f in zip(secs_of[i], old_floors, strict=True):
                    rem[s] += size[i]
                    floor[s] = f
                for j, m in off_changes:
                    min_off[j] = m
                placed[i] = False
                unplaced.add(i)
            return False

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * len(members) + 200))
        try:
            if not dfs(0, -1):
                return None
        finally:
            sys.setrecursionlimit(limit)
        return {g: offset[k] for k, g in enumerate(members)}


def search_plan(
    buffers: Sequence[Buffer],
    upper: int,
    upper_offsets: dict[int, int],
    lower: int,
    alignment: int,
    node_budget: int,
    deadline: float,
    progress: Callable[[str], None] | None = None,
) -> dict[int, int]:
    """Lower the arena below `upper` (whose plan is given) towards `lower` by bisection on the
    capacity; each partition keeps its best placement, so only partitions above the target are
    searched again. Returns the best plan found (the given one if nothing better)."""
    solver = Solver(buffers, alignment)
    others = {
        b.id: o for b, o in ((b, upper_offsets[b.id]) for b in buffers) if b.offset is not None
    }
    best_arena, best = upper, dict(upper_offsets)
    index_of = {b.id: i for i, b in enumerate(buffers)}
    for part in solver.partitions:  # seed each partition with its part of the given plan
        part.best = {i: upper_offsets[buffers[i].id] for i in part.members}
        part.best_height = max(o + solver.size[i] for i, o in part.best.items())
    del index_of

    def attempt(capacity: int, budget: int) -> dict[int, int] | None:
        """Every partition below capacity, or None."""
        per_part: dict[int, int] = {}
        for part in sorted(solver.partitions, key=lambda p: -p.lower):
            if part.lower > capacity or part.proven > capacity:
                return None
            if part.best_height is not None and part.best_height <= capacity:
                per_part.update(part.best)
                continue
            left = node_budget - solver.nodes
            found = solver.solve_partition(part, capacity, min(budget, left), deadline)
            if found is None:
                part.proven = max(part.proven, capacity + 1)
                return None
            part.best = found
            part.best_height = max(o + solver.size[i] for i, o in found.items())
            per_part.update(found)
        return per_part

    def adopt(per_part: dict[int, int]) -> None:
        nonlocal best_arena, best
        offsets = dict(others)
        for i, b in enumerate(buffers):
            if b.offset is None:
                offsets[b.id] = per_part.get(i, 0)
        arena = max((offsets[b.id] + b.size for b in buffers), default=0)
        if arena < best_arena:
            best_arena, best = arena, offsets
            if progress:
                progress(f"search: arena {arena} (lower bound {lower}, {solver.nodes} nodes)")

    lo = lower - 1  # largest capacity known (or assumed) not to work
    first = True
    while best_arena - lo > 1 and solver.nodes < node_budget and time.monotonic() < deadline:
        # Try the lower bound first with a big share of the budget: it is the common outcome.
        target = lower if first else (lo + best_arena) // 2
        share = node_budget // 3 if first else node_budget // 8
        first = False
        found = attempt(target, share)
        if found is None:
            lo = target
        else:
            adopt(found)
    return best
