"""The firmware core's files call each other without a cycle (issue 28).

Each file of firmware/src/core that firmware/build.mk lists is compiled on its own; `nm` names
the functions its object defines and the ones it calls into other files (its undefined
symbols), and those make a graph of files. A cycle in it (a file that calls, through others,
back into itself) would mean the core's layers are not layers: the operator loop and the
operators that run subgraphs share control.c, and the arena arithmetic is arena.c's.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.cycles import find_cycle

from host.paths import FIRMWARE
from host.runtime.sources import read_build_mk, runtime_build

CORE = FIRMWARE / "src" / "core"


def _symbols(obj: Path) -> tuple[set[str], set[str]]:
    """Functions and data the object defines globally, and those it needs from elsewhere."""
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    defined: set[str] = set()
    needed: set[str] = set()
    for line in out.splitlines():
        *_, kind, name = line.split()
        if kind == "U":
            needed.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, needed


def call_graph(tmp: Path) -> dict[str, set[str]]:
    """Core file -> the core files whose functions it calls (itself left out)."""
    sources = [FIRMWARE / s for s in read_build_mk()["MA_CORE_SRC"]]
    inc = [f"-I{d}" for d in runtime_build().include_dirs]
    symbols = {}
    for src in (s for s in sources if s.parent == CORE):
        obj = tmp / f"{src.stem}.o"
        subprocess.run(["gcc", "-std=c11", "-O0", *inc, "-c", str(src), "-o", str(obj)], check=True)
        symbols[src.name] = _symbols(obj)
    owner = {name: f for f, (defined, _) in symbols.items() for name in defined}
    return {
        f: {owner[n] for n in needed if n in owner and owner[n] != f}
        for f, (_, needed) in symbols.items()
    }


def test_cycle_finder_finds_the_cycle_that_was() -> None:
    """The graph before issue 28's move: control.c -> interp.c -> planner.c -> interp.c."""
    before = {
        "interp.c": {"control.c", "planner.c", "arena.c"},
        "control.c": {"interp.c", "arena.c"},
        "planner.c": {"interp.c", "arena.c"},
        "arena.c": set(),
    }
    assert find_cycle(before) == ["control.c", "interp.c", "control.c"]
    del before["control.c"]
    before["interp.c"].discard("control.c")
    assert find_cycle(before) == ["interp.c", "planner.c", "interp.c"]
    before["planner.c"] = {"arena.c"}
    assert find_cycle(before) == []


def test_core_files_call_each_other_without_a_cycle(tmp_path: Path) -> None:
    if shutil.which("gcc") is None or shutil.which("nm") is None:
        pytest.skip("gcc and nm are needed to read the core's calls")
    graph = call_graph(tmp_path)
    # The graph is read, not empty: the open path calls the planner and the operator loop.
    assert {"control.c", "planner.c", "model.c", "arena.c"} <= graph["interp.c"]
    assert find_cycle(graph) == [], f"core files call each other in a circle: {graph}"
