"""An exact re-implementation of TFLM's GreedyMemoryPlanner (greedy_memory_planner.cc).

Behaviour replicated on purpose, because callers use this to predict where TFLM itself puts
buffers:
- fixed ("offline planned") buffers go first, at their offsets, in the order given;
- the others are sorted by size, largest first. TFLM fills its sort array from the tail and
  bubble-sorts it stably, so among equal sizes the buffer given LATER comes first;
- each is placed first-fit: walking the already placed buffers in offset order (a buffer placed
  at an offset already taken goes after the earlier ones), it takes the first gap below a
  simultaneously live buffer that is large enough, else the top of the live ones.
TFLM sees sizes the allocator has already rounded up to the buffer alignment; we round the same
way, so a caller that passes unrounded sizes still gets TFLM's layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .problem import Buffer, PlanError, align_up


def tflm_order(buffers: Sequence[Buffer], alignment: int = 16) -> list[int]:
    """Indices into `buffers` in the order TFLM's planner places them."""
    fixed = [i for i, b in enumerate(buffers) if b.offset is not None]
    online = [i for i, b in enumerate(buffers) if b.offset is None]
    # sorted() is stable; reversing first reproduces TFLM's tail-filled bubble sort. TFLM sorts
    # the sizes its allocator has already rounded up.
    return fixed + sorted(reversed(online), key=lambda i: -align_up(buffers[i].size, alignment))


def plan_greedy(buffers: Sequence[Buffer], alignment: int = 16) -> dict[int, int]:
    """Offsets exactly as TFLM's GreedyMemoryPlanner assigns them (fixed buffers keep theirs)."""
    return first_fit(buffers, tflm_order(buffers, alignment), alignment)


def first_fit(buffers: Sequence[Buffer], order: Sequence[int], alignment: int) -> dict[int, int]:
    """Place buffers in `order` with TFLM's first-fit rule; fixed ones stay where they are.

    The placed buffers are kept in offset order (one placed at a taken offset after the others)
    as arrays, so each placement is a few array operations over them rather than a Python loop:
    20,000 buffers take a second, not a minute.
    """
    sizes = [align_up(b.size, alignment) for b in buffers]
    highest = max((b.offset for b in buffers if b.offset is not None), default=0)
    if sum(sizes) + highest >= 2**62:  # offsets and tops must fit the int64 arrays
        raise PlanError("buffer sizes and offsets add up to over 2**62 bytes")
    placed = _Placed(len(buffers))
    offsets: dict[int, int] = {}
    for i in order:
        b = buffers[i]
        at = b.offset if b.offset is not None else placed.first_gap(b.start, b.end, sizes[i])
        placed.add(at, align_up(at + sizes[i], alignment), b.start, b.end)
        offsets[b.id] = at
    return offsets


class _Placed:
    """Placed buffers in offset order: offset, aligned top and lifetime [start, end)."""

    def __init__(self, capacity: int) -> None:
        self.cols = np.zeros((4, capacity), dtype=np.int64)
        self.count = 0

    def first_gap(self, start: int, end: int, size: int) -> int:
        """TFLM's rule: walking the buffers live at the same time in offset order, the first
        gap below one that holds `size` bytes, else the top of them all. The lowest free offset
        below buffer k is the highest (aligned) top of those before it."""
        off, top, s, e = self.cols[:, : self.count]
        live = (s < end) & (start < e)
        off, top = off[live], top[live]
        if not off.size:
            return 0
        below = np.maximum.accumulate(np.concatenate(([0], top)))
        fits = off - below[:-1] >= size
        return int(below[np.argmax(fits)] if fits.any() else below[-1])

    def add(self, offset: int, top: int, start: int, end: int) -> None:
        at = int(np.searchsorted(self.cols[0, : self.count], offset, side="right"))
        self.cols[:, at + 1 : self.count + 1] = self.cols[:, at : self.count]
        self.cols[:, at] = (offset, top, start, end)
        self.count += 1
