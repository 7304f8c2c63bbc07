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
