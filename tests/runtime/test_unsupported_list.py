"""Opening a model names every operator the runtime cannot run, not only the first (issue 12),
in the caller's bounded message buffer (no heap): missing kernels found at load and refusals
found in a kernel's prepare alike."""

from __future__ import annotations

import re

import pytest
from support.tflm_oracle import shared_model

from host.runtime.binding import MA_ERR_UNSUPPORTED, MSG_SIZE, Interpreter, MicroarenaError
from host.tflite.model import Model
from host.tflite.modelgen import FULLY_CONNECTED, INT8, Graph, assemble, scalar_options
from host.tflite.ops import BUILTIN_CODES


def _chain(codes: list[int | str]) -> bytes:
    """x -> op_0 -> ... -> op_n-1 -> y, each int8 [1, 4]; FULLY_CONNECTED ones get weights."""
    g = Graph()
    prev = first = g.tensor("x", (1, 4), INT8, [0.1], [0])
    for i, code in enumerate(codes):
        out = g.tensor(f"t{i}", (1, 4), INT8, [0.1], [0])
        ins = [prev]
        if code == FULLY_CONNECTED:
            ins.append(g.tensor(f"w{i}", (4, 4), INT8, [0.1], [0], bytes(16)))
        g.op(code, ins, [out], 8 if code == FULLY_CONNECTED else 0, scalar_options({}, 5))
        prev = out
    return assemble(g, [first], [prev])


def _refusal(data: bytes) -> str:
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data, 1 << 20)
    assert e.value.status == MA_ERR_UNSUPPORTED
    return e.value.message


def test_every_unsupported_operator_is_named() -> None:
    codes: list[int | str] = [
        FULLY_CONNECTED,
        "NOT_AN_OP_A",
        BUILTIN_CODES["LSH_PROJECTION"],
        FULLY_CONNECTED,
        "NOT_AN_OP_B",
    ]
    msg = _refusal(_chain(codes))
    assert msg.startswith("3 operators unsupported: "), msg
    assert "CUSTOM:NOT_AN_OP_A (subgraph 0, operator 1)" in msg
    assert "LSH_PROJECTION (code 15, subgraph 0, operator 2)" in msg
    assert "CUSTOM:NOT_AN_OP_B (subgraph 0, operator 4)" in msg


def test_one_unsupported_operator_reads_as_before() -> None:
    msg = _refusal(_chain([FULLY_CONNECTED, "NOT_AN_OP_A"]))
    assert msg == "unsupported operator CUSTOM:NOT_AN_OP_A (subgraph 0, operator 1)"


def test_a_long_list_stays_in_the_buffer_and_counts_the_rest() -> None:
    n = 60
    msg = _refusal(_chain([f"NOT_AN_OP_{i}" for i in range(n)]))
    assert len(msg) < MSG_SIZE
    assert msg.startswith(f"{n} operators unsupported: ")
    named = len(re.findall(r"CUSTOM:NOT_AN_OP_\d+ \(subgraph 0, operator \d+\)", msg))
    more = re.search(r"; and (\d+) more$", msg)
    assert more and named >= 3 and named + int(more.group(1)) >= n - 1  # one may be cut short


def test_prepare_refusals_are_all_named() -> None:
    """The hybrid DS-CNN: every hybrid convolution is refused, each one named."""
    path = shared_model("tiny_kws_dscnn_float")
    model = Model(path.read_bytes())
    msg = _refusal(path.read_bytes())
    count = int(re.match(r"(\d+) operators unsupported: ", msg).group(1))  # type: ignore[union-attr]
    assert count > 1
    listed = re.findall(r"(\w+) prepare \(subgraph 0, operator (\d+)\) failed: \1: hybrid", msg)
    assert listed and all(model.subgraphs[0].operators[int(k)].name == name for name, k in listed)


def test_list_ops_names_what_the_runtime_runs(capsys) -> None:
    from host.device.firmware import runtime_operators
    from host.runtime.cli import main

    assert main(["--list-ops"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == runtime_operators()
    by_op = {line.split()[0]: line for line in lines}
    assert "INT8" in by_op["CONV_2D"] and "LSH_PROJECTION" not in by_op


def test_plan_report_says_whether_the_runtime_runs_the_model(tmp_path, capsys) -> None:
    import json

    from host.planning.cli import main

    path = tmp_path / "m.tflite"
    path.write_bytes(_chain([FULLY_CONNECTED, "NOT_AN_OP_A", FULLY_CONNECTED, "NOT_AN_OP_B"]))
    assert main([str(path), "-q"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("microarena runtime cannot run this model: 2 operators unsupported")
    assert "NOT_AN_OP_A" in line and "NOT_AN_OP_B" in line
    ok = tmp_path / "ok.tflite"
    ok.write_bytes(_chain([FULLY_CONNECTED]))
    assert main([str(ok), "-q", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["microarena_runtime"] == {
        "runs": True,
        "message": None,
    }
