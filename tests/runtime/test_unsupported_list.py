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
    body = msg.removeprefix(f"{n} operators unsupported: ")
    more = re.search(r"; and (\d+) more$", body)
    assert more, msg
    entries = body[: more.start()].split("; ")
    whole = re.compile(r"unsupported operator CUSTOM:NOT_AN_OP_\d+ \(subgraph 0, operator \d+\)")
    assert all(whole.fullmatch(e) for e in entries), entries  # none cut off mid-word
    assert len(entries) >= 3 and len(entries) + int(more.group(1)) == n


def test_prepare_refusals_are_all_named() -> None:
    """The hybrid DS-CNN: its hybrid convolutions, refused for one reason, read as one entry
    that counts them all."""
    path = shared_model("tiny_kws_dscnn_float")
    sg = Model(path.read_bytes()).subgraphs[0]
    hybrid = [
        op.index
        for op in sg.operators
        if op.name == "CONV_2D" and sg.tensors[op.inputs[0]].type_name == "FLOAT32"
        and sg.tensors[op.inputs[1]].type_name == "INT8"
    ]  # fmt: skip
    msg = _refusal(path.read_bytes())
    assert len(hybrid) > 1
    assert msg == (
        f"{len(hybrid)} operators unsupported: CONV_2D prepare ({len(hybrid)} operators, the "
        f"first subgraph 0, operator {hybrid[0]}) failed: CONV_2D: hybrid models (float "
        "activations, INT8 weights) are not supported"
    )


def test_identical_refusals_are_merged_with_a_count() -> None:
    """Same operator, same reason: one entry with the count and the first position; others
    keep their own entries, in order."""
    a, b = "NOT_AN_OP_A", "NOT_AN_OP_B"
    msg = _refusal(_chain([a, FULLY_CONNECTED, a, b, a]))
    assert msg == (
        "4 operators unsupported: unsupported operator CUSTOM:NOT_AN_OP_A (3 operators, the "
        "first subgraph 0, operator 0); unsupported operator CUSTOM:NOT_AN_OP_B (subgraph 0, "
        "operator 3)"
    )
    exp = BUILTIN_CODES["EXP"]  # int8 EXP is refused in prepare
    msg = _refusal(_chain([FULLY_CONNECTED, exp, exp, FULLY_CONNECTED, exp]))
    assert msg == (
        "3 operators unsupported: EXP prepare (3 operators, the first subgraph 0, operator 1) "
        "failed: EXP: input type INT8 is not supported (float32)"
    )


def _accounted(msg: str) -> int:
    """Operators a list accounts for: one per entry (a merged one its count; the last entry may
    be cut short at the buffer's end) and the unnamed rest."""
    entries = msg.split(": ", 1)[1].split("; ")
    more = re.fullmatch(r"and (\d+) more", entries[-1])
    if more:
        entries.pop()
    merged = [re.search(r"\((\d+) operators, the first subgraph", e) for e in entries]
    return sum(int(m[1]) if m else 1 for m in merged) + (int(more[1]) if more else 0)


def _long_lists() -> list[list[int | str]]:
    """A count that grows a digit twice (9 -> 10, 99 -> 100), and merges that grow entries
    while the list reaches the end of the buffer."""
    distinct = [f"NOT_AN_OP_{i}" for i in range(5)]
    return [["NOT_AN_OP_X"] * 150, distinct + ["NOT_AN_OP_0"] * 12 + distinct]


def test_long_merged_lists_stay_in_the_buffer_and_count_every_operator() -> None:
    for codes in _long_lists():
        msg = _refusal(_chain(codes))
        assert len(msg) < MSG_SIZE
        assert msg.startswith(f"{len(codes)} operators unsupported: ")
        assert _accounted(msg) == len(codes), msg
    msg = _refusal(_chain(["NOT_AN_OP_X"] * 150))
    assert msg.endswith("CUSTOM:NOT_AN_OP_X (150 operators, the first subgraph 0, operator 0)")


def test_merging_under_address_and_undefined_sanitizers(tmp_path) -> None:
    """The in-place rewriting of the list, on the ASan + UBSan build: same messages."""
    import subprocess
    import sys

    from support.sanitize import sanitized_env

    models = [_chain(codes) for codes in _long_lists()]
    models.append(_chain(["NOT_AN_OP_A", FULLY_CONNECTED, "NOT_AN_OP_A", "NOT_AN_OP_B"]))
    paths = []
    for i, data in enumerate(models):
        paths.append(tmp_path / f"{i}.tflite")
        paths[-1].write_bytes(data)
    code = (
        "import sys\n"
        "from host.runtime.binding import Interpreter, MicroarenaError\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        Interpreter(open(p, 'rb').read(), 1 << 20)\n"
        "    except MicroarenaError as e:\n"
        "        print(e.message)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *map(str, paths)],
        env=sanitized_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.splitlines() == [_refusal(data) for data in models]


def test_list_ops_names_what_the_runtime_runs(capsys) -> None:
    from host.runtime.cli import main
    from host.runtime.sources import runtime_operators

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


@pytest.mark.parametrize("n", [8, 20])
@pytest.mark.parametrize("k", range(1, 48, 2))
def test_no_entry_is_cut_off_mid_word(k: int, n: int) -> None:
    """Where the buffer ends inside an entry, the entry is counted, not shown in part (issue 30:
    "... (subgraph 0, oper" once ended the list)."""
    names = [f"OP{i}_" + "L" * k for i in range(n)]
    msg = _refusal(_chain(names))
    body = re.sub(r"^\d+ operators unsupported: ", "", msg)
    more = re.search(r"; and (\d+) more$", body)
    entries = body[: more.start() if more else len(body)].split("; ")
    whole = re.compile(r"unsupported operator CUSTOM:OP\d+_L+ \(subgraph 0, operator \d+\)")
    assert all(whole.fullmatch(e) for e in entries), msg
    assert len(entries) + (int(more.group(1)) if more else 0) == n, msg
