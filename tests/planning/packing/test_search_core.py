"""The compiled core of the packing search (host/planning/packing/_search_core.c) against the
pure-Python search it replaces: the same placements after the same work, paused or not, on
random problems (fixed buffers, empty buffers and allowed overlaps included) and on the 11 DSA
problems, so a plan never depends on which core ran."""

from __future__ import annotations

import random
import shutil
import sysconfig
import time
from types import SimpleNamespace

import pytest

from host.paths import DSA_PROBLEMS
from host.planning import packing
from host.planning.packing import Buffer, Overlap, plan, read_csv, search, validate

KEYS = ("TLA+", "TAL+", "TWA", "TL+", "WAT", "TAW")

needs_core = pytest.mark.skipif(search._core is None, reason="the compiled core is not built")


def problem(seed: int) -> tuple[list[Buffer], list[Overlap]]:
    """Chains of operators whose input and output may overlap, beside random buffers; some
    buffers fixed where a greedy plan put them, a few empty."""
    rng = random.Random(seed)
    bufs: list[Buffer] = []
    rules: list[Overlap] = []
    chain = rng.randint(0, 12)
    for i in range(chain):
        bufs.append(Buffer(i, i, i + 2, 16 * rng.randint(1, 40)))
        if i + 1 < chain and rng.random() < 0.6:
            rules.append(Overlap(i, i + 1, rng.randint(-64, 700)))
    for i in range(chain, chain + rng.randint(5, 40)):
        start = rng.randrange(0, 30)
        size = 0 if rng.random() < 0.05 else 16 * rng.randint(1, 40)
        bufs.append(Buffer(i, start, start + rng.randint(1, 12), size))
    if rng.random() < 0.4:
        greedy = plan(bufs, planner="greedy")
        fixed = set(rng.sample(range(len(bufs)), rng.randint(1, 3)))
        bufs = [
            Buffer(b.id, b.start, b.end, b.size, greedy[b.id] if k in fixed else None)
            for k, b in enumerate(bufs)
        ]
        rules = [r for r in rules if r.input not in fixed and r.output not in fixed]
    return bufs, rules


def runs(
    bufs: list[Buffer], rules: list[Overlap], key: str, slack: float
) -> list[tuple[object, int]]:
    """Each partition searched at its bound (plus `slack`) in one order, with a budget that
    some exhaust, some fill and some end early: (result, work) each."""
    solver = search.Solver(bufs, 16, rules)
    out = []
    for part in solver.partitions:
        capacity = int(part.lower * (1 + slack))
        found = solver.solve_partition(
            part, capacity, 3000, time.monotonic() + 60, [(key, 0, 1), ("TWA", 0, 1)]
        )
        out.append((found, solver.work))
    return out


@needs_core
@pytest.mark.parametrize("seed", range(0, 120, 20))
def test_compiled_and_python_runs_agree_on_random_problems(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = set()
    for s in range(seed, seed + 20):
        bufs, rules = problem(s)
        key, slack = KEYS[s % len(KEYS)], (0.0, 0.03, 0.1)[s % 3]
        monkeypatch.setattr(search, "SLICE", 7 + s % 50)  # pauses at many different nodes
        compiled = runs(bufs, rules, key, slack)
        with monkeypatch.context() as m:
            m.setattr(search, "_core", None)
            python = runs(bufs, rules, key, slack)
        assert compiled == python, (s, key, slack)
        outcomes |= {type(f).__name__ for f, _ in python}
    assert outcomes >= {"dict", "bool"}  # fits and misses both compared


@needs_core
def test_compiled_and_python_plans_agree_on_dsa_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    """plan() on each DSA problem with 40,000 units of work (a far clock cap): the same plan
    and the same progress (each line carries the work count) from both cores."""
    files = sorted(DSA_PROBLEMS.glob("*.csv"))
    if not files:
        pytest.skip(f"DSA benchmark problems not found in {DSA_PROBLEMS}")
    monkeypatch.setattr(packing, "WORK_PER_SECOND", 400)
    monkeypatch.setattr(packing, "PYTHON_WORK_PER_SECOND", 400)
    searched = 0
    for path in files:
        bufs = read_csv(path)
        plans = []
        for core in (search._core, None):
            monkeypatch.setattr(search, "_core", core)
            lines: list[str] = []
            plans.append((plan(bufs, time_limit=100, progress=lines.append), lines))
        assert plans[0] == plans[1], path.name
        searched += any(line.startswith("search:") for line in plans[0][1])
    assert searched >= 3  # the search improved on the first-fit plans, not only they ran


def test_the_core_is_built_where_a_compiler_is() -> None:
    """setup.py's extension is optional; where this Python's compiler exists it must build,
    or every plan would silently take the slow path."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here: the pure-Python search runs")
    assert search.CORE == "c"


def test_sizes_beyond_the_cores_int64_margin_plan_in_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sums the core's int64 could overflow go to the Python search (and still plan validly)."""
    ran = []
    python_run = search.Solver._dfs_python

    def spy(self: search.Solver, *args: object) -> object:
        ran.append(True)
        return python_run(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(search.Solver, "_dfs_python", spy)
    for seed in range(120):  # first-fit alone reaches the bound on all but 4
        rng = random.Random(seed)
        bufs = [
            Buffer(i, s, s + rng.randint(1, 5), 2**54 * rng.randint(1, 6))
            for i, s in enumerate(rng.randrange(6) for _ in range(rng.randint(6, 9)))
        ]
        offsets = plan(bufs, time_limit=0.05, clock_limit=60)
        assert validate(bufs, offsets, alignment=16) == []
    assert ran


class MachineClock:
    """time.monotonic for a machine running the Python search at `speed` work units per
    second, whatever the real time: the search looks at the clock every 256 units of its work
    (Solver.dfs), and each look advances this clock by that much of the machine's time."""

    def __init__(self, speed: float) -> None:
        self.now, self.step = 0.0, 256 / speed

    def monotonic(self) -> float:
        self.now += self.step
        return self.now


def _plan_on(machine: MachineClock, bufs: list[Buffer], monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        clock = SimpleNamespace(monotonic=machine.monotonic)
        m.setattr(search, "time", clock)
        m.setattr(packing, "time", clock)
        lines: list[str] = []
        return plan(bufs, time_limit=1, progress=lines.append), lines


def test_python_plans_do_not_depend_on_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python core's budget (PYTHON_WORK_PER_SECOND) ends its search well before the clock
    cap: a machine running it at 300,000 units per second (the slow end of this one's) and one
    twice as slow plan DSA problems alike, progress lines (work counts) included. With the
    compiled core's budget the Python search runs into the clock cap, where the two part."""
    files = [DSA_PROBLEMS / f"{p}.1048576.csv" for p in "AE"]
    if not all(f.exists() for f in files):
        pytest.skip(f"DSA benchmark problems not found in {DSA_PROBLEMS}")
    monkeypatch.setattr(search, "_core", None)
    machines = (300_000, 150_000)
    for path in files:
        bufs = read_csv(path)
        modest, slow = (_plan_on(MachineClock(s), bufs, monkeypatch) for s in machines)
        assert modest == slow, path.name
        assert any(line.startswith("search:") for line in modest[1])  # the search ran
    monkeypatch.setattr(packing, "PYTHON_WORK_PER_SECOND", packing.WORK_PER_SECOND)
    modest, slow = (_plan_on(MachineClock(s), bufs, monkeypatch) for s in machines)
    assert modest != slow
