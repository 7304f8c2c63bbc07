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

from bisect import bisect_right
from collections.abc import Sequence

from .problem import Buffer, align_up


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
    """Place buffers in `order` with TFLM's first-fit rule; fixed ones stay where they are."""
    sizes = [align_up(b.size, alignment) for b in buffers]
    starts = [b.start for b in buffers]
    ends = [b.end for b in buffers]
    by_offset: list[int] = []  # offsets of placed buffers, ascending
    placed: list[int] = []  # buffer indices, parallel to by_offset
    offsets: dict[int, int] = {}
    for i in order:
        fixed = buffers[i].offset
        if fixed is not None:
            cand = fixed
        else:
            cand, size, s, e = 0, sizes[i], starts[i], ends[i]
            for o, j in zip(by_offset, placed, strict=True):
                if starts[j] >= e or s >= ends[j]:
                    continue  # not live at the same time
                if o - cand >= size:
                    break  # the gap below j is big enough
                top = o + sizes[j]
                if top > cand:
                    # Tops are aligned unless a fixed offset is not: only then round.
                    cand = top if top % alignment == 0 else align_up(top, alignment)
        at = bisect_right(by_offset, cand)
        by_offset.insert(at, cand)
        placed.insert(at, i)
        offsets[buffers[i].id] = cand
    return offsets
