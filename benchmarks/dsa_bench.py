"""Benchmark the planners on MiniMalloc's "challenging" dynamic storage allocation problems.

Prints, per problem: buffers, lower bound, TFLM greedy arena and ratio, best-planner arena,
ratio and seconds (wall and CPU), then the mean ratios beside the peers' published ones from the
problem set's README. Ratios are arena / lower bound (1.000 = provably optimal).

If OmniMalloc is installed (`pip install omnimalloc`; an optional extra, never required), its
allocators run in the same process on the same problems, each time-bounded one at its own
default budget and at ours (--time-limit), and a second table gives per problem the arena,
ratio and seconds of each, of ours and of MiniMalloc as published in the problem set's README.

    .venv/bin/python benchmarks/dsa_bench.py                 # all 11 problems, 10 s each
    .venv/bin/python benchmarks/dsa_bench.py --only AB --time-limit 2
    .venv/bin/python benchmarks/dsa_bench.py --json > out.json
    .venv/bin/python benchmarks/dsa_bench.py --no-clock-cap  # same work budget, no wall cap
    .venv/bin/python benchmarks/dsa_bench.py --peers supermalloc,omni  # these peers only
    .venv/bin/python benchmarks/dsa_bench.py --peers none    # ours only

With --no-clock-cap the search gets exactly the work budget of the time limit but no wall-clock
cap, so the plans are the deterministic ones any machine computes (a loaded or slow machine
takes longer instead of stopping early).
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from host.paths import DSA_PROBLEMS  # noqa: E402
from host.planning import packing  # noqa: E402
from host.planning.packing import (  # noqa: E402
    Buffer,
    PlanError,
    arena_size,
    lower_bound,
    plan,
    read_csv,
    validate,
)

DEFAULT_DIR = DSA_PROBLEMS
DEFAULT_TIME_LIMIT = 10.0


def peers(readme: Path) -> list[tuple[str, str, str]]:
    """(planner, mean ratio, time) rows of the README's results table."""
    rows = []
    if not readme.exists():
        return rows
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("planner", "---") and not cells[0].startswith("-"):
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def minimalloc_published(readme: Path) -> dict[str, tuple[int, float]]:
    """Problem letter -> (arena, seconds) from the README's per-problem MiniMalloc table (rows
    `| problem | A | ...`, `| arena | ...`, `| seconds | ...`); {} if it has none."""
    if not readme.exists():
        return {}
    rows: dict[str, list[str]] = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in ("problem", "arena", "seconds"):
            rows[cells[0]] = cells[1:]
    if set(rows) != {"problem", "arena", "seconds"}:
        return {}
    return {
        p: (int(a), float(s))
        for p, a, s in zip(rows["problem"], rows["arena"], rows["seconds"], strict=True)
    }


def run(path: Path, time_limit: float, clock_cap: bool = True) -> dict[str, Any]:
    bufs = read_csv(path)
    lb = lower_bound(bufs)
    greedy = plan(bufs, planner="greedy")
    wall, cpu = time.perf_counter(), time.process_time()
    clock = time_limit * (1 if clock_cap else 1000)  # the same work budget, a far later cap
    best = plan(bufs, planner="best", time_limit=time_limit, clock_limit=clock)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    capacity = int(re.search(r"\.(\d+)\.csv$", path.name).group(1)) if "." in path.stem else None
    problems = validate(bufs, best, alignment=16)
    if problems:
        raise PlanError(f"{path.name}: invalid plan: {problems[0]}")
    g, b = arena_size(bufs, greedy), arena_size(bufs, best)
    return {
        "problem": path.stem,
        "buffers": len(bufs),
        "lower_bound": lb,
        "capacity": capacity,
        "greedy": g,
        "greedy_ratio": g / lb,
        "best": b,
        "best_ratio": b / lb,
        "fits_capacity": capacity is None or b <= capacity,
        "seconds": wall,
        "cpu_seconds": cpu,
        "clock_capped": clock_cap and wall >= time_limit * 0.98,
    }


def omnimalloc_allocators(names: str) -> dict[str, type] | None:
    """OmniMalloc's allocator classes by name (those asked for, 'all' = every one), or None if
    OmniMalloc is not installed."""
    try:
        import omnimalloc
        from omnimalloc.allocators.base import BaseAllocator
    except ImportError:
        return None
    registry = BaseAllocator.registry()
    wanted = list(omnimalloc.available_allocators()) if names == "all" else names.split(",")
    unknown = [n for n in wanted if n not in registry]
    if unknown:
        raise PlanError(f"unknown OmniMalloc allocators {unknown}; choose from {list(registry)}")
    return {n: registry[n] for n in wanted}


def run_peer(cls: type, bufs: list[Buffer], timeout: float | None) -> dict[str, Any]:
    """One OmniMalloc allocator on one problem (timeout None = its default budget, for
    allocators that have one). Its plan is checked with our validator."""
    import omnimalloc

    kwargs = {} if timeout is None else {"timeout": timeout}
    allocations = [omnimalloc.Allocation(b.id, b.size, b.start, b.end) for b in bufs]
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        placed = omnimalloc.allocate(allocations, cls(**kwargs))
    except ImportError as e:  # an allocator needing a package not installed (deap, minimalloc)
        return {"error": str(e).splitlines()[0]}
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    offsets = {a.id: a.offset for a in placed}
    problems = validate(bufs, offsets)
    if problems:
        return {"error": f"invalid plan: {problems[0]}"}
    return {"arena": arena_size(bufs, offsets), "seconds": wall, "cpu_seconds": cpu}


def timed(cls: type) -> bool:
    """Does the allocator take a time budget?"""
    return "timeout" in inspect.signature(cls).parameters


def run_peers(
    files: list[Path], allocators: dict[str, type], time_limit: float
) -> dict[str, dict[str, dict[str, Any]]]:
    """Allocator label -> problem -> result; each time-bounded allocator at its default budget
    and at ours."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for f in files:
        bufs = read_csv(f)
        for name, cls in allocators.items():
            budgets = [
                (name + " (default budget)", None),
                (f"{name} ({time_limit:g} s)", time_limit),
            ]
            for label, timeout in budgets if timed(cls) else [(name, None)]:
                out.setdefault(label, {})[f.stem] = run_peer(cls, bufs, timeout)
    return out


def print_side_by_side(
    results: list[dict[str, Any]],
    peer_results: dict[str, dict[str, dict[str, Any]]],
    published: dict[str, tuple[int, float]],
    time_limit: float,
) -> None:
    """Per problem and allocator: arena, ratio, wall and CPU seconds; then per allocator the
    mean ratio and on how many problems ours is smaller or equal, and strictly smaller."""
    columns: list[tuple[str, dict[str, dict[str, Any]]]] = [
        (
            f"microarena best ({time_limit:g} s)",
            {
                r["problem"]: {k: r[k] for k in ("seconds", "cpu_seconds")} | {"arena": r["best"]}
                for r in results
            },
        )
    ]
    if published:
        columns.append(
            (
                "MiniMalloc (published, capacity 1048576)",
                {
                    r["problem"]: {"arena": a, "seconds": s}
                    for r in results
                    for a, s in [published.get(r["problem"][0], (0, 0.0))]
                    if a
                },
            )
        )
    columns += list(peer_results.items())
    bounds = {r["problem"]: r["lower_bound"] for r in results}
    ours = {r["problem"]: r["best"] for r in results}
    print("\narena / ratio to the lower bound / wall seconds / CPU seconds, per problem\n")
    print(
        "| allocator | "
        + " | ".join(p[0] for p in bounds)
        + " | mean ratio | ours <= it | ours < it |"
    )
    print("|---|" + "---:|" * (len(bounds) + 3))
    for label, by_problem in columns:
        cells, ratios, beaten, smaller = [], [], 0, 0
        for p, lb in bounds.items():
            r = by_problem.get(p)
            if r is None or "error" in r:
                cells.append("-" if r is None else "error")
                continue
            ratios.append(r["arena"] / lb)
            beaten += ours[p] <= r["arena"]
            smaller += ours[p] < r["arena"]
            cpu = f"{r['cpu_seconds']:.2f}" if "cpu_seconds" in r else "-"
            cells.append(f"{r['arena']} / {r['arena'] / lb:.3f} / {r['seconds']:.2f} / {cpu}")
        mean = f"{sum(ratios) / len(ratios):.3f}" if len(ratios) == len(bounds) else "-"
        n = len(ratios)
        print(
            f"| {label} | "
            + " | ".join(cells)
            + f" | {mean} | {beaten} of {n} | {smaller} of {n} |"
        )
    errors = {
        label: r["error"]
        for label, by_problem in peer_results.items()
        for r in by_problem.values()
        if "error" in r
    }
    for label, message in errors.items():
        print(f"\n{label}: {message}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="folder of *.csv problems")
    ap.add_argument("--only", default="", help="problem name initials to run, e.g. ABK")
    ap.add_argument(
        "--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="seconds per problem"
    )
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument(
        "--no-clock-cap",
        action="store_true",
        help="keep the work budget of --time-limit but no wall-clock cap (deterministic)",
    )
    ap.add_argument(
        "--peers",
        default="all",
        help="OmniMalloc allocators to run if it is installed: 'all', 'none' or names "
        "separated by commas (e.g. supermalloc,omni)",
    )
    args = ap.parse_args(argv)
    files = sorted(args.dir.glob("*.csv"))
    if args.only:
        files = [f for f in files if f.name[0] in args.only]
    if not files:
        print(f"error: no problems (*.csv) in {args.dir}", file=sys.stderr)
        return 2
    try:
        allocators = None if args.peers == "none" else omnimalloc_allocators(args.peers)
        results = [run(f, args.time_limit, not args.no_clock_cap) for f in files]
        peer_results = run_peers(files, allocators, args.time_limit) if allocators else {}
    except PlanError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    published = minimalloc_published(args.dir / "README.md")
    n = len(results)
    mean_g = sum(r["greedy_ratio"] for r in results) / n
    mean_b = sum(r["best_ratio"] for r in results) / n
    if args.json:
        print(
            json.dumps(
                {
                    "time_limit": args.time_limit,
                    "search_core": packing.SEARCH_CORE,
                    "results": results,
                    "mean_greedy_ratio": mean_g,
                    "mean_best_ratio": mean_b,
                    "peers": peer_results,
                    "minimalloc_published": published,
                },
                indent=1,
            )
        )
        return 0
    budget = packing.work_per_second() * args.time_limit
    cap = "no wall-clock cap" if args.no_clock_cap else f"wall-clock cap {args.time_limit:g} s"
    print(
        f"work budget {budget:.0f} units ({cap}) per problem, search core "
        f"{packing.SEARCH_CORE}; ratio = arena / lower bound\n"
    )
    print("| problem | buffers | lower bound | greedy | ratio | best | ratio | wall s | cpu s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cap = " (clock cap)" if r["clock_capped"] else ""
        print(
            f"| {r['problem']} | {r['buffers']} | {r['lower_bound']} | {r['greedy']} "
            f"| {r['greedy_ratio']:.3f} | {r['best']} | {r['best_ratio']:.3f} "
            f"| {r['seconds']:.2f}{cap} | {r['cpu_seconds']:.2f} |"
        )
    fits = sum(bool(r["fits_capacity"]) for r in results)
    at_lb = sum(r["best"] == r["lower_bound"] for r in results)
    print(f"\nbest: {at_lb} of {n} at the lower bound, {fits} of {n} within the named capacity\n")
    print("| planner | mean ratio | time per problem |")
    print("|---|---|---|")
    print(f"| microarena greedy (TFLM exact) | {mean_g:.3f} | measured above |")
    print(f"| microarena best | {mean_b:.3f} | measured above |")
    for name, ratio, t in peers(args.dir / "README.md"):
        print(f"| {name} (published) | {ratio} | {t} |")
    if allocators is None and args.peers != "none":
        print("\nOmniMalloc is not installed (pip install omnimalloc): no peers run.")
    print_side_by_side(results, peer_results, published, args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
