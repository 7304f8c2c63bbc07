"""Packing with allowed overlaps (an operator's input over its output at offset >= d)."""

from __future__ import annotations

import random

import pytest

from host.planning.packing import (
    Buffer,
    Overlap,
    PlanError,
    arena_size,
    lower_bound,
    plan,
    validate,
)

# A chain like a CNN: each buffer is the input of the next operator, whose output it may
# overlap from `d` bytes above the output's start.
CHAIN = [Buffer(0, 0, 2, 1024), Buffer(1, 1, 3, 2048), Buffer(2, 2, 4, 512), Buffer(3, 3, 5, 256)]
RULES = [Overlap(0, 1, 1040), Overlap(1, 2, 0), Overlap(2, 3, 64)]


def test_validate_allows_an_overlap_only_at_its_offsets() -> None:
    bufs = CHAIN[:2]
    assert validate(bufs, {0: 1040, 1: 0}, overlaps=RULES) == []
    assert validate(bufs, {0: 1024, 1: 0}, overlaps=RULES) != []  # 16 bytes too low
    assert validate(bufs, {0: 1040, 1: 0}) != []  # no rule given: a plain collision
    assert validate(bufs, {0: 0, 1: 16}, overlaps=RULES) != []  # input below its output


def test_lower_bound_takes_off_what_overlaps_can_save() -> None:
    assert lower_bound(CHAIN) == 3072
    # At time 1 buffers 0 and 1 are live: 2048 + 1024 - min(1024, 2048 - 1040) = 2064.
    assert lower_bound(CHAIN, RULES) == 2064


def test_best_reaches_the_overlap_bound_and_greedy_ignores_overlaps() -> None:
    offsets = plan(CHAIN, overlaps=RULES)
    assert validate(CHAIN, offsets, overlaps=RULES) == []
    assert arena_size(CHAIN, offsets) == lower_bound(CHAIN, RULES)
    assert offsets[0] - offsets[1] >= 1040
    assert plan(CHAIN, planner="greedy", overlaps=RULES) == plan(CHAIN, planner="greedy")


def test_fixed_buffers_may_overlap_by_a_rule() -> None:
    fixed = [Buffer(0, 0, 2, 1024, offset=1040), Buffer(1, 1, 3, 2048, offset=0)]
    with pytest.raises(PlanError, match="collide"):
        plan(fixed)
    assert plan(fixed, overlaps=RULES[:1]) == {0: 1040, 1: 0}


def test_bad_overlaps_are_refused() -> None:
    with pytest.raises(PlanError, match="unknown"):
        plan(CHAIN, overlaps=[Overlap(0, 9, 0)])
    with pytest.raises(PlanError, match="identical"):
        plan(CHAIN, overlaps=[Overlap(1, 1, 0)])


@pytest.mark.parametrize("seed", range(12))
def test_random_chains_never_worse_and_always_valid(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(4, 30)
    bufs, rules = [], []
    for i in range(n):  # operator i reads buffer i (and sometimes a skip) and writes i + 1
        end = i + 2 if rng.random() < 0.8 else min(n + 1, i + rng.randint(2, 5))
        bufs.append(Buffer(i, i, end, 16 * rng.randint(1, 64)))
        if end == i + 2 and i + 1 < n:
            rules.append(Overlap(i, i + 1, rng.randint(-64, 1100)))
    plain = plan(bufs, time_limit=0.2)
    shared = plan(bufs, time_limit=0.2, overlaps=rules)
    assert validate(bufs, shared, overlaps=rules) == []
    assert arena_size(bufs, shared) <= arena_size(bufs, plain)
    assert arena_size(bufs, shared) >= lower_bound(bufs, rules)
