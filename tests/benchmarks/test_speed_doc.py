"""docs/speed.md's table of instructions per invoke on five boards is speed_bench's output:
its TFLM columns are the figures measured by hand (tests/data/tflm_cmsis_nn/measured.json),
its ratios this runtime's figure over them, and it covers every board of `--boards all`. Its
"Models not given" table (`--set unseen`, TFLM's figures in unseen_m4.json) likewise, and the
output CRC-32 it states for this runtime is TFLM's."""

from __future__ import annotations

import importlib.util
import re
import sys
import zlib

import pytest

from host.paths import REPO
from host.tflite.model import Model

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
    for row in rows:
        _check_against_tflm(row, peers)


def _check_against_tflm(row: tuple[str, ...] | list[str], peers: dict) -> None:
    """A row's TFLM cells are the measured figures, its ratios this runtime's over them."""
    model, board, mine, ref, cmsis, vs_ref, vs_cmsis = row[:7]
    for kernels, cell, ratio in (("reference", ref, vs_ref), ("cmsis-nn", cmsis, vs_cmsis)):
        theirs = peers.get((model, board, kernels))
        assert _number(cell) == theirs, (model, board, kernels)
        if theirs and mine[0].isdigit():
            assert float(ratio) == round(_number(mine) / theirs, 3), (model, board, kernels)
        else:
            assert ratio == "-"


UNSEEN_SECTION = "## Models not given"


def _unseen_rows() -> list[list[str]]:
    """The 9-cell rows of docs/speed.md's "Models not given" table (`--set unseen`)."""
    text = DOC.read_text(encoding="utf-8")
    assert UNSEEN_SECTION in text, f"docs/speed.md has no {UNSEEN_SECTION!r}"
    section = text.split(UNSEEN_SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in section.splitlines()]
    return [r for r in rows if len(r) == 9 and r[0] not in ("model", "---")]


def test_unseen_table_is_speed_bench_output_against_the_measured_tflm() -> None:
    """Every model not given, on the M4F, M7, M33, M55, M3 and M0+, with TFLM's figures from
    the data and the ratios this runtime's figure over them."""
    bench = _bench()
    peers = bench.peer_instructions()
    rows = _unseen_rows()
    boards = bench.ALL_BOARDS  # one per core TFLM was measured on
    assert {(r[0], r[1]) for r in rows} == {(m, b) for m in bench.unseen_models() for b in boards}
    for row in rows:
        _check_against_tflm(row, peers)


def test_unseen_outputs_are_tflm_outputs() -> None:
    """The output CRC-32 the table states for this runtime is TFLM's on the same board, over
    all outputs as the runtime reports it (TFLM's per-output CRCs joined)."""
    bench = _bench()
    peers = bench.peer_runs()
    compared = 0
    for model, board, mine, *_, crc in _unseen_rows():
        run = peers.get((model, board, "cmsis-nn"))
        if run is None or not mine[0].isdigit():  # TFLM or this runtime did not run it
            continue
        path = bench.model_path(model)
        if not path.exists():
            pytest.skip(f"{path} is absent (tests read ../shared/zoo)")
        assert crc == f"{bench.peer_output_crc(Model.load(path), run):08x}", (model, board)
        compared += 1
    assert compared >= 48  # 8 models on each board


def test_joined_crc_is_the_crc_of_the_joined_bytes() -> None:
    parts = [b"", b"\x01\x02\x03", bytes(range(256)) * 3, b"x"]
    bench = _bench()
    assert bench.joined_crc([(zlib.crc32(p), len(p)) for p in parts]) == zlib.crc32(b"".join(parts))


OPS_SECTION = "## Per operator on the Cortex-M55"


def test_operator_table_is_op_bench_output_against_the_measured_tflm() -> None:
    """The M55's per-operator table (benchmarks/op_bench.py --by-op): each row's node count and
    CMSIS-NN figure are the model's nodes of that operator and the sum of their figures in
    measured.json, its ratio and MAC columns the runtime's figure against them and the model's
    multiply-accumulates."""
    _bench()  # benchmarks/ on sys.path
    import op_bench

    text = DOC.read_text(encoding="utf-8")
    assert OPS_SECTION in text, f"docs/speed.md has no {OPS_SECTION!r}"
    section = text.split(OPS_SECTION, 1)[1].split("\n## ", 1)[0]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in section.splitlines()]
    rows = [r for r in cells if len(r) == 9 and r[0] not in ("model", "---")]
    assert len(rows) >= 12
    board = "mps3-an547"
    for model, nodes, op, mine, cmsis, ratio, macs, per, limit in rows:
        path = op_bench.model_path(model)
        if not path.exists():
            pytest.skip(f"{path} is absent (tests read ../shared/models)")
        m = Model.load(path)
        ours = [o.index for o in m.subgraphs[0].operators if o.name == op]
        assert int(nodes) == len(ours), (model, op)
        peer = op_bench.peer_nodes(model, board)
        assert _number(cmsis) == sum(peer[i] for i in ours), (model, op)
        assert float(ratio) == round(_number(mine) / _number(cmsis), 3), (model, op)
        total = sum(op_bench.node_macs(m, i) for i in ours)
        assert _number(macs) == total, (model, op)
        if total:
            assert float(per) == round(total / _number(mine), 2), (model, op)
            assert float(limit) == round(total / _number(mine) / op_bench.MAC_LIMIT[board], 3)
        else:
            assert per == limit == "-", (model, op)
