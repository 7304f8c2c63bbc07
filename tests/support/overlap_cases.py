"""Random window shapes and the check that a closed-form overlap rule is exact to the byte,
shared by the overlap rules' tests (tests/planning/libraries/test_loops.py, test_cmsis_nn.py)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from support import overlap_sim

from host.planning.libraries import loops

SIZES = [(1, 1), (1, 4), (4, 1), (4, 4), (1, 2), (2, 1)]  # (input bytes, output bytes)


def agree(
    trace_fn: Callable[[], Iterable[overlap_sim.Access]],
    rule: int | None,
    slot: int,
    ib: int,
    ob: int,
) -> None:
    """The rule is the simulation's smallest safe offset: at it no read sees an overwritten
    byte, and one byte tighter one does."""
    sim = overlap_sim.min_safe_delta(trace_fn(), slot, ib, ob)
    assert rule == sim
    if rule is None:
        return
    assert overlap_sim.corrupted_read(trace_fn(), slot, rule, ib, ob) is None
    assert overlap_sim.corrupted_read(trace_fn(), slot, rule - 1, ib, ob) is not None


def window_case(rng: random.Random, depthwise: bool):
    """(input shape, output shape, kernel, stride, dilation, padding) of a random CONV_2D or
    DEPTHWISE_CONV_2D (or pool) with SAME or VALID padding."""
    b = rng.choice([1, 1, 2])
    kh, kw = rng.randint(1, 4), rng.randint(1, 4)
    sh, sw = rng.randint(1, 3), rng.randint(1, 3)
    dh, dw = (1, 1) if rng.random() < 0.6 else (rng.randint(1, 3), rng.randint(1, 3))
    ih, iw, ic = rng.randint(1, 7), rng.randint(1, 7), rng.randint(1, 4)
    same = rng.random() < 0.5
    oc = ic * rng.randint(1, 3) if depthwise else rng.randint(1, 5)

    def out(n: int, k: int, s: int, d: int) -> int:
        eff = (k - 1) * d + 1
        return -(-n // s) if same else max(1, (n - eff) // s + 1)

    oh, ow = out(ih, kh, sh, dh), out(iw, kw, sw, dw)
    pad = (
        loops._padding(0 if same else 1, ih, oh, kh, sh, dh),
        loops._padding(0 if same else 1, iw, ow, kw, sw, dw),
    )
    return (b, ih, iw, ic), (b, oh, ow, oc), (kh, kw), (sh, sw), (dh, dw), pad
