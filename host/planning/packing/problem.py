"""The buffer-packing problem: buffers with lifetimes and sizes, and checks on a plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral

TFLM_ALIGNMENT = 16  # MicroArenaBufferAlignment(): every TFLM arena buffer starts on it


def align_up(value: int, alignment: int = TFLM_ALIGNMENT) -> int:
    """The smallest multiple of `alignment` not below `value`."""
    return -(-value // alignment) * alignment


@dataclass(frozen=True)
class Buffer:
    """One buffer to place in the arena.

    Lifetimes are half-open: the buffer is live in [start, end), so a buffer ending at t and one
    starting at t may share addresses. TFLM's inclusive [first_time_used, last_time_used] is
    start=first, end=last + 1.
    """

    id: int
    start: int
    end: int
    size: int
    offset: int | None = None  # pre-placed (fixed) offset, or None = to be planned


@dataclass(frozen=True)
class Overlap:
    """Buffers `input` and `output` (ids) may share bytes when
    offset(input) - offset(output) >= min_delta: a kernel's proven overlap rule
    (host.planning.libraries.loops). They are live together at one operator only."""

    input: int
    output: int
    min_delta: int


def overlap_rise(o: Overlap, alignment: int) -> int:
    """How far above the output's offset the input may start in the planners' plans: the
    rule's delta rounded up to the alignment, never negative (inputs go at or above their
    output, which keeps plans in the search's canonical order)."""
    return max(0, -(-o.min_delta // alignment) * alignment)


def overlap_saving(o: Overlap, sizes: Mapping[int, int], alignment: int) -> int:
    """The most bytes an allowed overlap can save at its operator."""
    rise = overlap_rise(o, alignment)
    return max(0, min(sizes[o.input], sizes[o.output] - rise))


class PlanError(ValueError):
    """A problem or plan that cannot be handled; the message names the buffers involved."""


def _describe(b: Buffer) -> str:
    return f"buffer {b.id} (live [{b.start}, {b.end}), {b.size} B)"


def check_buffers(buffers: Sequence[Buffer]) -> None:
    """Raise PlanError for malformed buffers: duplicate ids, negative sizes, reversed lifetimes."""
    seen: set[int] = set()
    for b in buffers:
        if not isinstance(b, Buffer):
            raise PlanError(f"expected a Buffer, got {type(b).__name__}: {b!r}")
        for name in ("id", "start", "end", "size"):
            if not isinstance(getattr(b, name), Integral) or isinstance(getattr(b, name), bool):
                raise PlanError(f"buffer {b.id!r}: {name} must be an int, got {getattr(b, name)!r}")
        if b.id in seen:
            raise PlanError(f"duplicate buffer id {b.id}")
        seen.add(b.id)
        if b.size < 0:
            raise PlanError(f"{_describe(b)}: negative size")
        if b.end < b.start:
            raise PlanError(f"{_describe(b)}: lifetime ends before it starts")
        if b.offset is not None and (not isinstance(b.offset, Integral) or b.offset < 0):
            raise PlanError(f"{_describe(b)}: fixed offset must be an int >= 0, got {b.offset!r}")


def arena_size(buffers: Sequence[Buffer], offsets: Mapping[int, int]) -> int:
    """Bytes the plan needs: the highest end address of any buffer (0 for no buffers)."""
    return max((offsets[b.id] + b.size for b in buffers), default=0)


def lower_bound(
    buffers: Sequence[Buffer], overlaps: Sequence[Overlap] = (), alignment: int = 16
) -> int:
    """Max over time of the total size of live buffers: no plan can use less. With overlaps,
    the bytes each allowed overlap can save are taken off while both its buffers are live."""
    events: list[tuple[int, int]] = []
    for b in buffers:
        if b.end > b.start and b.size > 0:
            events.append((b.start, b.size))
            events.append((b.end, -b.size))
    by_id = {b.id: b for b in buffers}
    sizes = {b.id: b.size for b in buffers}
    for o in overlaps:
        a, b = by_id[o.input], by_id[o.output]
        start, end = max(a.start, b.start), min(a.end, b.end)
        saving = overlap_saving(o, sizes, alignment)
        if start < end and saving:
            events.append((start, -saving))
            events.append((end, saving))
    # At equal times the ends (negative) sort first: half-open lifetimes may share a time step.
    events.sort()
    live = best = 0
    for _, delta in events:
        live += delta
        best = max(best, live)
    return best


def validate(
    buffers: Sequence[Buffer],
    offsets: Mapping[int, int],
    capacity: int | None = None,
    alignment: int = 1,
    overlaps: Sequence[Overlap] = (),
) -> list[str]:
    """Problems with a plan, one message each; [] when the plan is valid.

    Checks: every buffer has an offset, fixed buffers kept theirs, no negative or misaligned
    offsets, nothing beyond `capacity`, and no two buffers live at the same time share bytes
    unless an overlap allows it at their offsets.
    """
    problems: list[str] = []
    placed: list[Buffer] = []
    for b in buffers:
        off = offsets.get(b.id)
        if off is None:
            problems.append(f"{_describe(b)} has no offset")
            continue
        placed.append(b)
        if b.offset is not None and off != b.offset:
            problems.append(f"{_describe(b)} is fixed at {b.offset} but placed at {off}")
        if off < 0:
            problems.append(f"{_describe(b)} has negative offset {off}")
        if alignment > 1 and off % alignment:
            problems.append(f"{_describe(b)} offset {off} is not a multiple of {alignment}")
        if capacity is not None and off + b.size > capacity:
            problems.append(
                f"{_describe(b)} at [{off}, {off + b.size}) exceeds capacity {capacity}"
            )
    for a, b in collisions(placed, offsets, overlaps):
        oa, ob = offsets[a.id], offsets[b.id]
        problems.append(
            f"{_describe(a)} at [{oa}, {oa + a.size}) overlaps {_describe(b)} at "
            f"[{ob}, {ob + b.size})"
        )
    return problems


def collisions(
    buffers: Sequence[Buffer], offsets: Mapping[int, int], overlaps: Sequence[Overlap] = ()
) -> list[tuple[Buffer, Buffer]]:
    """Pairs live at the same time that share bytes where no overlap allows it (earlier
    starting buffer first)."""
    allowed = {(o.input, o.output): o.min_delta for o in overlaps}
    found = []
    # Sweep in start order, keeping the buffers still live: O(n * live), no pair list.
    order = sorted((b for b in buffers if b.end > b.start and b.size), key=lambda b: b.start)
    active: list[tuple[int, int, int, Buffer]] = []  # (end time, offset, top, buffer)
    for b in order:
        ob = offsets[b.id]
        top = ob + b.size
        active = [x for x in active if x[0] > b.start]
        for _, oa, ta, a in active:
            if oa < top and ob < ta and not _allowed(allowed, a.id, oa, b.id, ob):
                found.append((a, b))
        active.append((b.end, ob, top, b))
    return found


def _allowed(allowed: Mapping[tuple[int, int], int], a: int, oa: int, b: int, ob: int) -> bool:
    """Does an overlap rule let buffers a and b share bytes at offsets oa and ob?"""
    if (a, b) in allowed:
        return oa - ob >= allowed[(a, b)]
    if (b, a) in allowed:
        return ob - oa >= allowed[(b, a)]
    return False
