"""docs/speed.md's table of instructions per invoke on five boards is speed_bench's output:
its TFLM columns are the figures measured by hand (tests/data/tflm_cmsis_nn/measured.json),
its ratios this runtime's figure over them, and it covers every board of `--boards all`."""

from __future__ import annotations

import importlib.util
import re
import sys

from host.paths import REPO

DOC = REPO / "docs" / "speed.md"
ROW = re.compile(r"^\| (\w+) \| ([\w-]+) \| ([\d,]+|error[^|]*) \| ([\d,-]+) \| ([\d,-]+) \|"
                 r" ([\d.-]+) \| ([\d.-]+) \| ([\d,-]+) \|$", re.M)  # fmt: skip


def _bench():
    if str(REPO / "benchmarks") not in sys.path:  # speed_bench imports its neighbours
        sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "speed_bench", REPO / "benchmarks" / "speed_bench.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _number(cell: str) -> int | None:
    return None if cell == "-" else int(cell.replace(",", ""))


def test_table_is_speed_bench_output_against_the_measured_tflm() -> None:
    bench = _bench()
    peers = bench.peer_instructions()
    rows = ROW.findall(DOC.read_text())
    assert {board for _, board, *_ in rows} == set(bench.ALL_BOARDS)
    for model, board, mine, ref, cmsis, vs_ref, vs_cmsis, _flash in rows:
        for kernels, cell, ratio in (("reference", ref, vs_ref), ("cmsis-nn", cmsis, vs_cmsis)):
            theirs = peers.get((model, board, kernels))
            assert _number(cell) == theirs, (model, board, kernels)
            if theirs and mine[0].isdigit():
                assert float(ratio) == round(_number(mine) / theirs, 3), (model, board, kernels)
            else:
                assert ratio == "-"
