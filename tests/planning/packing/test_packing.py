"""Buffer-packing planners: validator, TFLM greedy exactness, best planner quality, CSV I/O."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest

from host.paths import DSA_PROBLEMS, SHARED_MODELS
from host.planning import packing
from host.planning.packing import (
    PLANNERS,
    Buffer,
    PlanError,
    arena_size,
    lower_bound,
    plan,
    read_csv,
    search,
    validate,
    write_csv,
)
from host.planning.packing.greedy import first_fit, plan_greedy, tflm_order

MODELS = SHARED_MODELS


def dsa_problems() -> list[Path]:
    files = sorted(DSA_PROBLEMS.glob("*.csv"))
    if not files:
        pytest.skip(f"DSA benchmark problems not found in {DSA_PROBLEMS}")
    return files


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A work budget far below the clock cap, so results cannot depend on machine load."""
    monkeypatch.setattr(packing, "WORK_PER_SECOND", 20_000)  # 200,000 units at the default 10 s
    monkeypatch.setattr(packing, "PYTHON_WORK_PER_SECOND", 20_000)


def random_problem(
    rng: random.Random, n: int, fixed: int = 0, zero: bool = False, align: int = 16
) -> list[Buffer]:
    bufs: list[Buffer] = []
    for i in range(n):
        start = rng.randrange(0, 30)
        end = start + rng.randrange(1, 12)
        size = (
            rng.choice([0, 16, 48]) if zero and rng.random() < 0.1 else align * rng.randint(1, 40)
        )
        bufs.append(Buffer(id=1000 + 7 * i, start=start, end=end, size=size))
    # Fix some buffers at offsets from a valid plan, as an offline plan would.
    if fixed:
        offsets = plan_greedy(bufs, align)
        chosen = set(rng.sample(range(n), fixed))
        bufs = [
            Buffer(b.id, b.start, b.end, b.size, offsets[b.id] if k in chosen else None)
            for k, b in enumerate(bufs)
        ]
    return bufs


def guillotine_tiling(rng: random.Random, width: int, span: int, pieces: int) -> list[Buffer]:
    """Buffers that exactly tile a (time x address) rectangle: the lower bound is reachable."""
    rects = [(0, span, 0, width)]  # time [t0, t1), address [a0, a1)
    while len(rects) < pieces:
        k = max(
            range(len(rects)),
            key=lambda r: (rects[r][1] - rects[r][0]) * (rects[r][3] - rects[r][2]),
        )
        t0, t1, a0, a1 = rects.pop(k)
        if (rng.random() < 0.5 and t1 - t0 > 1) or a1 - a0 <= 16:
            cut = rng.randrange(t0 + 1, t1)
            rects += [(t0, cut, a0, a1), (cut, t1, a0, a1)]
        else:
            cut = a0 + 16 * rng.randrange(1, (a1 - a0) // 16)
            rects += [(t0, t1, a0, cut), (t0, t1, cut, a1)]
    rng.shuffle(rects)
    return [Buffer(i, t0, t1, a1 - a0) for i, (t0, t1, a0, a1) in enumerate(rects)]


# ---- validate ------------------------------------------------------------------------------


def test_validate_accepts_a_valid_plan_and_allows_sharing_at_the_boundary() -> None:
    bufs = [Buffer(1, 0, 5, 32), Buffer(2, 5, 9, 32), Buffer(3, 0, 9, 16)]
    # 1 and 2 touch in time (half-open) so may share bytes; 3 is live with both.
    assert validate(bufs, {1: 0, 2: 0, 3: 32}, capacity=48, alignment=16) == []


def test_validate_reports_overlap_naming_both_buffers_and_ranges() -> None:
    bufs = [Buffer(7, 0, 5, 32), Buffer(9, 4, 8, 32)]
    problems = validate(bufs, {7: 0, 9: 16})
    assert len(problems) == 1
    msg = problems[0]
    assert "buffer 7" in msg and "buffer 9" in msg
    assert "[0, 5)" in msg and "[4, 8)" in msg and "[0, 32)" in msg and "[16, 48)" in msg


def test_validate_reports_misalignment_capacity_negative_missing_and_moved_fixed() -> None:
    bufs = [Buffer(1, 0, 2, 16), Buffer(2, 3, 4, 16), Buffer(3, 5, 6, 16), Buffer(4, 7, 8, 16)]
    bufs.append(Buffer(5, 9, 10, 16, offset=32))
    problems = validate(bufs, {1: 8, 2: 112, 3: -16, 5: 0}, capacity=64, alignment=16)
    text = "\n".join(problems)
    assert "offset 8 is not a multiple of 16" in text
    assert "exceeds capacity 64" in text
    assert "negative offset -16" in text
    assert "buffer 4" in text and "has no offset" in text
    assert "fixed at 32 but placed at 0" in text
    assert len(problems) == 5


def test_validate_ignores_zero_size_buffers_and_disjoint_lifetimes() -> None:
    bufs = [Buffer(1, 0, 9, 0), Buffer(2, 0, 9, 64), Buffer(3, 9, 12, 64)]
    assert validate(bufs, {1: 16, 2: 0, 3: 0}) == []


def test_lower_bound_and_arena_size_match_a_brute_force_count() -> None:
    rng = random.Random(5)
    for _ in range(20):
        bufs = random_problem(rng, 25)
        brute = max(sum(b.size for b in bufs if b.start <= t < b.end) for t in range(0, 50))
        assert lower_bound(bufs) == brute
        offsets = plan(bufs, planner="greedy")
        assert arena_size(bufs, offsets) == max(offsets[b.id] + b.size for b in bufs)
        assert arena_size(bufs, offsets) >= brute


# ---- greedy: exact TFLM first-fit ----------------------------------------------------------


def brute_tflm_greedy(bufs: list[Buffer]) -> dict[int, int]:
    """An independent statement of TFLM's rules: fixed first in given order, then by size
    descending with later-given first on ties, each at the lowest offset (0 or the end of a
    buffer live at the same time) that collides with no live placed buffer."""
    n = len(bufs)
    fixed = [i for i in range(n) if bufs[i].offset is not None]
    online = sorted(
        (i for i in range(n) if bufs[i].offset is None), key=lambda i: (-bufs[i].size, -i)
    )
    placed: list[tuple[int, int]] = []  # (index, offset)
    out: dict[int, int] = {}
    for i in fixed + online:
        b = bufs[i]
        if b.offset is not None:
            x = b.offset
        else:
            live = [
                (bufs[j], o) for j, o in placed if bufs[j].start < b.end and b.start < bufs[j].end
            ]
            cands = sorted({0} | {o + p.size for p, o in live})
            x = next(
                c for c in cands if all(not (c < o + p.size and o < c + b.size) for p, o in live)
            )
        placed.append((i, x))
        out[b.id] = x
    return out


@pytest.mark.parametrize("seed", range(40))
def test_greedy_matches_independent_first_fit(seed: int) -> None:
    rng = random.Random(seed)
    bufs = random_problem(rng, rng.randint(2, 30), fixed=rng.choice([0, 0, 3]))
    # Equal sizes are common in real models: make ties likely so tie order is exercised.
    bufs = [Buffer(b.id, b.start, b.end, 16 * (b.size // 16 % 4 + 1), b.offset) for b in bufs]
    if any(b.offset is not None for b in bufs):
        fixed = [b for b in bufs if b.offset is not None]
        if validate(fixed, {b.id: b.offset for b in fixed if b.offset is not None}):
            pytest.skip("random fixed offsets collide after resizing")
    assert plan(bufs, planner="greedy") == brute_tflm_greedy(bufs)


def test_greedy_rounds_sizes_up_like_tflm() -> None:
    rng = random.Random(11)
    bufs = random_problem(rng, 30, align=1)
    rounded = [Buffer(b.id, b.start, b.end, -(-b.size // 16) * 16) for b in bufs]
    assert plan(bufs, planner="greedy") == plan(rounded, planner="greedy")


def test_greedy_reproduces_published_tflm_ratio_on_dsa() -> None:
    files = dsa_problems()
    readme = (DSA_PROBLEMS / "README.md").read_text()
    m = re.search(
        r"TFLM GreedyMemoryPlanner \(exact port\) \| ([0-9.]+) \(([0-9.]+)-([0-9.]+)\)", readme
    )
    assert m, "README no longer lists the TFLM greedy ratio"
    ratios = []
    for f in files:
        bufs = read_csv(f)
        ratios.append(arena_size(bufs, plan(bufs, planner="greedy")) / lower_bound(bufs))
    assert round(sum(ratios) / len(ratios), 3) == float(m.group(1))
    assert round(min(ratios), 3) == float(m.group(2))
    assert round(max(ratios), 3) == float(m.group(3))


# ---- every planner --------------------------------------------------------------------------


@pytest.mark.parametrize("planner", sorted(PLANNERS))
@pytest.mark.parametrize("seed", range(12))
def test_plans_validate_on_random_problems(planner: str, seed: int, small_budget: None) -> None:
    rng = random.Random(100 + seed)
    bufs = random_problem(rng, rng.randint(1, 60), fixed=rng.choice([0, 2, 5]), zero=True)
    offsets = plan(bufs, planner=planner, alignment=16)
    assert validate(bufs, offsets, alignment=16) == []
    assert set(offsets) == {b.id for b in bufs}
    for b in bufs:
        if b.offset is not None:
            assert offsets[b.id] == b.offset


@pytest.mark.parametrize("seed", range(12))
def test_best_never_worse_than_greedy_and_never_below_bound(seed: int, small_budget: None) -> None:
    rng = random.Random(200 + seed)
    bufs = random_problem(rng, rng.randint(5, 80), fixed=rng.choice([0, 3]))
    greedy = arena_size(bufs, plan(bufs, planner="greedy"))
    best = arena_size(bufs, plan(bufs, planner="best"))
    assert lower_bound(bufs) <= best <= greedy


@pytest.mark.parametrize("seed", range(10))
def test_best_reaches_the_bound_on_exact_tilings(seed: int) -> None:
    rng = random.Random(300 + seed)
    bufs = guillotine_tiling(
        rng, width=16 * rng.randint(20, 60), span=rng.randint(8, 30), pieces=30
    )
    lb = lower_bound(bufs)
    offsets = plan(bufs, planner="best", time_limit=5)
    assert validate(bufs, offsets, capacity=lb, alignment=16) == []
    assert arena_size(bufs, offsets) == lb


def test_best_reaches_the_bound_on_stacked_tilings() -> None:
    # Several tilings stacked in time (each one an independent partition) and side by side.
    rng = random.Random(77)
    bufs: list[Buffer] = []
    for k in range(4):
        tile = guillotine_tiling(rng, width=16 * 40, span=10, pieces=20)
        bufs += [
            Buffer(len(bufs) + i, b.start + 10 * k, b.end + 10 * k, b.size)
            for i, b in enumerate(tile)
        ]
    offsets = plan(bufs, time_limit=5)
    assert arena_size(bufs, offsets) == lower_bound(bufs)
    assert arena_size(bufs, plan(bufs, planner="greedy")) >= lower_bound(bufs)


def brute_optimum(bufs: list[Buffer], unit: int) -> int:
    """The least arena over every placement at multiples of `unit`: a plain backtracking over
    offsets, trying capacities upwards (shares nothing with the search under test)."""
    order = sorted(bufs, key=lambda b: -b.size)

    def fits(k: int, cap: int, placed: list[tuple[Buffer, int]]) -> bool:
        if k == len(order):
            return True
        b = order[k]
        for o in range(0, cap - b.size + 1, unit):
            free = all(
                a.end <= b.start or b.end <= a.start or oa + a.size <= o or o + b.size <= oa
                for a, oa in placed
            )
            if free and fits(k + 1, cap, [*placed, (b, o)]):
                return True
        return False

    cap = lower_bound(bufs)
    while not fits(0, cap, []):
        cap += unit
    return cap


def small_problems(count: int) -> list[list[Buffer]]:
    problems = []
    for seed in range(count):
        rng = random.Random(500 + seed)
        bufs = []
        for i in range(rng.randint(6, 9)):
            start = rng.randrange(0, 6)
            bufs.append(Buffer(i, start, start + rng.randint(1, 5), 16 * rng.randint(1, 6)))
        problems.append(bufs)
    return problems


def test_best_finds_the_optimum_of_small_problems() -> None:
    """Exact on problems small enough to enumerate, where the first-fit orders alone miss."""
    needed_search = 0
    for bufs in small_problems(200):
        optimum = brute_optimum(bufs, 16)
        offsets = plan(bufs, time_limit=5)
        assert validate(bufs, offsets, alignment=16) == []
        assert arena_size(bufs, offsets) == optimum
        orders = [tflm_order(bufs), *packing._first_fit_orders(bufs).values()]
        needed_search += min(arena_size(bufs, first_fit(bufs, o, 16)) for o in orders) > optimum
    assert needed_search >= 3


def test_complete_search_fits_at_the_optimum_and_proves_below_it() -> None:
    """Every preorder's complete search (no restarts to hide a miss) fits at the optimum and
    exhausts one step below: a pruning rule that cut off every optimal plan (dominance,
    decomposition, forced placements) or an unsound bound would fail one of the two."""
    for bufs in small_problems(60):
        optimum = brute_optimum(bufs, 16)
        keys = {*search.PREORDERS, *(k for k, _, _ in search.PORTFOLIO)}
        for key in sorted(keys | {k for k, _ in search.LONG_RUNS}):
            solver = search.Solver(bufs, 16)
            for capacity, fits in ((optimum, True), (optimum - 16, False)):
                found = [
                    solver.solve_partition(
                        part, capacity, 10**9, time.monotonic() + 60, [(key, 0, 1)]
                    )
                    for part in solver.partitions
                ]
                assert True not in found, "a complete search cannot run out of a huge budget"
                assert all(isinstance(f, dict) for f in found) == fits, (bufs, key, capacity)


def test_best_is_deterministic(small_budget: None) -> None:
    rng = random.Random(9)
    bufs = random_problem(rng, 120)
    assert plan(bufs) == plan(bufs) == plan(list(bufs))


def test_best_on_dsa_problems_validates_beats_greedy_and_is_deterministic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dsa_problems()
    # 200,000 units of work (about 0.2-0.5 s of CPU) under a far clock cap, so a loaded machine
    # cannot cut the search short and make the two runs differ.
    monkeypatch.setattr(packing, "WORK_PER_SECOND", 2_000)
    monkeypatch.setattr(packing, "PYTHON_WORK_PER_SECOND", 2_000)
    for name in ("A.1048576.csv", "C.1048576.csv"):
        bufs = read_csv(DSA_PROBLEMS / name)
        messages: list[str] = []
        cpu = time.process_time()
        first = plan(bufs, time_limit=100, progress=messages.append)
        assert time.process_time() - cpu < 5.0
        assert validate(bufs, first, capacity=1048576 * 2, alignment=16) == []
        greedy = arena_size(bufs, plan(bufs, planner="greedy"))
        assert lower_bound(bufs) <= arena_size(bufs, first) < greedy
        assert messages and all(isinstance(m, str) for m in messages)
        assert plan(bufs, time_limit=100) == first


def test_interleaved_runs_pause_and_resume_without_changing_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A portfolio run paused every few units (a generator resumed where it stopped) places
    every buffer where one unpaused run does, after the same work: interleaving costs nothing
    but the turns of the other runs."""
    dsa_problems()
    bufs = read_csv(DSA_PROBLEMS / "E.1048576.csv")
    results = []
    for slice_units in (10**9, 37):
        monkeypatch.setattr(search, "SLICE", slice_units)
        solver = search.Solver(bufs, 16)
        part = max(solver.partitions, key=lambda p: len(p.members))
        found = solver.solve_partition(
            part, 1048576, 200_000, time.monotonic() + 60, [("TL+", 0, 1)]
        )
        assert isinstance(found, dict)
        results.append((found, solver.work))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "name", ["C.1048576.csv", "E.1048576.csv", "F.1048576.csv", "H.1048576.csv"]
)
def test_best_reaches_the_lower_bound_on_dsa_problems(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The search reaches the bound on these within the default budget (3,000,000 units, here
    under a far clock cap so load cannot cut it short); a weaker search would stop above it."""
    dsa_problems()
    monkeypatch.setattr(packing, "WORK_PER_SECOND", 30_000)
    monkeypatch.setattr(packing, "PYTHON_WORK_PER_SECOND", 30_000)
    bufs = read_csv(DSA_PROBLEMS / name)
    cpu = time.process_time()
    offsets = plan(bufs, time_limit=100)
    assert time.process_time() - cpu < 5.0
    assert validate(bufs, offsets, alignment=16) == []
    assert arena_size(bufs, offsets) == lower_bound(bufs)


@pytest.mark.skipif(search._core is None, reason="the compiled search core is not built")
def test_dsa_problems_meet_issue_30_targets_within_a_second() -> None:
    """At the 1 s budget (its work, a far clock cap): every problem within what MiniMalloc
    fits at 1048576 (C within 1039360), mean ratio at most 1.011, plans valid, and each in
    about a second of CPU at most (0.6 s measured; the margin is for slower machines)."""
    ratios = []
    for path in dsa_problems():
        bufs = read_csv(path)
        cpu = time.process_time()
        offsets = plan(bufs, time_limit=1, clock_limit=120)
        assert time.process_time() - cpu < 1.5, path.name
        assert validate(bufs, offsets, alignment=16) == []
        arena = arena_size(bufs, offsets)
        assert arena <= (1039360 if path.name.startswith("C.") else 1048576), path.name
        ratios.append(arena / lower_bound(bufs))
    assert len(ratios) == 11 and sum(ratios) / len(ratios) <= 1.011


def test_every_dsa_problem_gets_a_valid_greedy_plan() -> None:
    for f in dsa_problems():
        bufs = read_csv(f)
        assert validate(bufs, plan(bufs, planner="greedy"), alignment=16) == []


def test_vww_model_problem_reaches_the_bound_fast() -> None:
    model_path = MODELS / "tiny_vww_mobilenet_int8.tflite"
    if not model_path.exists():
        pytest.skip(f"model not found: {model_path}")
    from host.planning.model import lifetimes
    from host.planning.model.lifetimes import tensor_buffers
    from host.tflite.model import Model

    bufs = tensor_buffers(lifetimes.walk(Model.load(str(model_path))))
    t0 = time.monotonic()
    offsets = plan(bufs, time_limit=10)
    assert time.monotonic() - t0 < 1.0
    assert (
        arena_size(bufs, offsets)
        == lower_bound(bufs)
        < arena_size(bufs, plan(bufs, planner="greedy"))
    )


# ---- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bufs", "kwargs", "needle"),
    [
        ([Buffer(1, 0, 2, 16), Buffer(1, 3, 4, 16)], {}, "duplicate buffer id 1"),
        ([Buffer(1, 0, 2, -16)], {}, "negative size"),
        ([Buffer(1, 5, 2, 16)], {}, "ends before it starts"),
        ([Buffer(1, 0, 2, 16, offset=-16)], {}, "fixed offset"),
        (
            [Buffer(1, 0, 4, 32, offset=0), Buffer(2, 2, 6, 32, offset=16)],
            {},
            "fixed buffers collide",
        ),
        ([Buffer(1, 0, 2, 16)], {"planner": "magic"}, "unknown planner 'magic'"),
        ([Buffer(1, 0, 2, 16)], {"alignment": 0}, "alignment"),
        ([Buffer(1, 0, 2, 16)], {"time_limit": 0}, "time_limit"),
    ],
)
def test_bad_problems_raise_plan_error(bufs: list[Buffer], kwargs: dict, needle: str) -> None:
    with pytest.raises(PlanError, match=re.escape(needle)):
        plan(bufs, **kwargs)


def test_empty_problem_plans_to_nothing() -> None:
    for name in PLANNERS:
        assert plan([], planner=name) == {}
    assert lower_bound([]) == 0 and arena_size([], {}) == 0


# ---- CSV ------------------------------------------------------------------------------------


def test_csv_round_trip(tmp_path: Path, small_budget: None) -> None:
    rng = random.Random(3)
    bufs = random_problem(rng, 40)
    offsets = plan(bufs)
    out = tmp_path / "plan.csv"
    write_csv(out, bufs, offsets)
    back = read_csv(out)
    assert [(b.id, b.start, b.end, b.size) for b in back] == [
        (b.id, b.start, b.end, b.size) for b in bufs
    ]
    assert {b.id: b.offset for b in back} == offsets
    assert validate(back, {b.id: b.offset for b in back if b.offset is not None}) == []


def test_csv_reads_minimalloc_problems() -> None:
    f = dsa_problems()[0]
    bufs = read_csv(f)
    rows = f.read_text().strip().splitlines()
    assert rows[0] == "id,lower,upper,size"
    assert len(bufs) == len(rows) - 1
    first = rows[1].split(",")
    assert (bufs[0].id, bufs[0].start, bufs[0].end, bufs[0].size) == tuple(map(int, first))
    assert all(b.offset is None for b in bufs)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty file"),
        ("id,lower,size\n1,0,16\n", "missing ['upper']"),
        ("id,lower,upper,size,gaps\n", "unsupported ['gaps']"),
        ("id,lower,upper,size\n1,0,4,16\n2,0,x,16\n", ":3: upper must be an integer, got 'x'"),
        ("id,lower,upper,size\n1,0,4\n", ":2: expected 4 fields, got 3"),
        ("id,lower,upper,size\n1,0,4,16\n1,2,3,16\n", ":3: duplicate buffer id 1"),
        ("id,lower,upper,size\n1,0,4,-16\n", ":2: size must be 0 to 4294967295, got -16"),
        ("id,lower,upper,size\n1,0,4,10" + "0" * 22 + "\n", ":2: size must be 0 to 4294967295"),
        ("id,lower,upper,size\n-5,0,4,16\n", ":2: id must be >= 0, got -5"),
        ("id,lower,upper,size,offset\n1,0,4,16,-16\n", ":2: offset must be 0 to"),
        ("id,lower,upper,size\n1,5,4,16\n", ":2: lower 5 must be below upper 4"),
        ("id,lower,upper,size\n1,0,4,16\n2,3,3,100\n", ":3: lower 3 must be below upper 3"),
    ],
)
def test_bad_csv_raises_plan_error_with_line(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(PlanError, match=re.escape(needle)):
        read_csv(f)


def test_misaligned_fixed_offset_is_refused() -> None:
    fixed = [Buffer(0, 0, 2, 16, offset=8), Buffer(1, 0, 2, 16)]
    with pytest.raises(PlanError, match=r"buffers \[0\] are not multiples of 16"):
        plan(fixed, alignment=16)
    assert plan(fixed, alignment=8)[0] == 8


def test_unreadable_csv_raises_plan_error(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="cannot read"):
        read_csv(tmp_path / "missing.csv")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(PlanError):
        read_csv(binary)


def test_write_csv_refuses_missing_offsets_and_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "plan.csv"
    with pytest.raises(PlanError, match="no offset"):
        write_csv(out, [Buffer(1, 0, 2, 16)], {})
    assert not out.exists()
    with pytest.raises(PlanError, match="cannot write"):
        write_csv(tmp_path / "no" / "such" / "dir.csv", [Buffer(1, 0, 2, 16)], {1: 0})
    (tmp_path / "is_a_dir.csv").mkdir()
    with pytest.raises(PlanError, match="cannot write"):
        write_csv(tmp_path / "is_a_dir.csv", [Buffer(1, 0, 2, 16)], {1: 0})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["is_a_dir.csv"]
