"""The planner's command line: reports, JSON, checks of bad plans, CSV problems, plots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.tflm_oracle import shared_model

from host.planning.cli import main
from host.planning.model import metadata
from host.planning.model.lifetimes import walk
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

REPO = Path(__file__).resolve().parents[2]


def _copy(tmp_path: Path, name: str) -> Path:
    p = tmp_path / f"{name}.tflite"
    p.write_bytes(shared_model(name).read_bytes())
    return p


def test_help_explains() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "host.plan", "--help"], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0
    for word in ("--embed", "--check", "--buffers", "--json", "--plot", "OfflineMemoryAllocation"):
        assert word in out.stdout


def test_json_report(tmp_path: Path, capsys) -> None:
    p = _copy(tmp_path, "tiny_vww_mobilenet_int8")
    assert main([str(p), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["head"] == r["lower_bound"] < r["tflm_greedy_head"]
    assert r["saving"] == r["tflm_greedy_head"] - r["head"]
    assert len(r["tensors"]) == len(walk(Model.load(p)).lifetimes)
    assert all(t["offset"] % 16 == 0 for t in r["tensors"])


def test_text_report_names_the_numbers(tmp_path: Path, capsys) -> None:
    p = _copy(tmp_path, "tflm_person_detect_int8")
    assert main([str(p), "-q"]) == 0
    out = capsys.readouterr().out
    for word in ("arena head", "lower bound", "TFLM greedy", "saving"):
        assert word in out


def _with_plan(tmp_path: Path, name: str, edit) -> Path:
    p = _copy(tmp_path, name)
    m = Model.load(p)
    offsets = [-1] * len(m.tensors)
    edit(m, offsets)
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode(offsets, len(m.subgraphs)))
    m.save(p)
    return p


def _overlap(m: Model, offsets: list[int]) -> None:
    sg = m.subgraphs[0]  # the model input and the first operator's output are live together
    offsets[sg.inputs[0]] = offsets[sg.operators[0].outputs[0]] = 0


def _misaligned(m: Model, offsets: list[int]) -> None:
    offsets[walk(m).lifetimes[0].tensor.global_index] = 8


def _negative(m: Model, offsets: list[int]) -> None:
    # A planned tensor's: TFLM and the runtime ignore the entries of constants.
    offsets[walk(m).lifetimes[0].tensor.global_index] = -5


def _short(m: Model, offsets: list[int]) -> None:
    offsets.pop()


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (_overlap, "overlaps"),
        (_misaligned, "16-aligned"),
        (_negative, "-5"),
        (_short, "tensors"),
    ],
)
def test_check_rejects_bad_plans(tmp_path: Path, capsys, edit, words: str) -> None:
    p = _with_plan(tmp_path, "tflm_micro_speech_int8", edit)
    assert main(["--check", str(p)]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out and words in out
    if edit is _overlap:
        assert "tensor " in out and "'" in out  # names the tensors


def test_check_accepts_our_plan(tmp_path: Path, capsys) -> None:
    p = _copy(tmp_path, "tiny_ic_resnet8_int8")
    assert main([str(p), "--embed", "-q"]) == 0
    capsys.readouterr()
    assert main(["--check", str(p), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True


def test_check_without_plan_is_an_error(tmp_path: Path, capsys) -> None:
    assert main(["--check", str(_copy(tmp_path, "tflm_hello_world_int8"))]) == 2
    assert "no OfflineMemoryAllocation" in capsys.readouterr().err


def test_buffers_csv(tmp_path: Path, capsys) -> None:
    csv = tmp_path / "p.csv"
    csv.write_text("id,lower,upper,size\n0,0,2,100\n1,1,3,50\n2,2,4,100\n")
    out_csv = tmp_path / "o.csv"
    assert main(["--buffers", str(csv), "--json", "--out-csv", str(out_csv)]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["arena"] == r["lower_bound"] == 150
    assert "offset" in out_csv.read_text().splitlines()[0]


def test_bad_csv_is_a_clear_error(tmp_path: Path, capsys) -> None:
    csv = tmp_path / "p.csv"
    csv.write_text("id,lower,upper,size\n0,0,two,100\n")
    assert main(["--buffers", str(csv)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_plot(tmp_path: Path, ext: str) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the plot extra)")
    p = _copy(tmp_path, "tflm_magic_wand_float")
    out = tmp_path / f"layout.{ext}"
    assert main([str(p), "--plot", str(out), "-q"]) == 0
    head = out.read_bytes()[:8]
    assert head.startswith(b"\x89PNG") if ext == "png" else b"<?xml" in head or b"<svg" in head


def test_missing_file(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "nope.tflite")]) == 2
    assert "cannot read" in capsys.readouterr().err


FUZZ_DATA = Path(__file__).resolve().parents[1] / "data" / "fuzz"


def test_tensor_written_twice_is_refused(capsys) -> None:
    """libFuzzer's mutated GRU writes tensor 43 by two operators: planning its lifetime from
    the later writer would leave the earlier one's unreserved. The runtime refuses the model
    (tests/runtime/test_runtime_malformed.py); the planner says the same, for every target."""
    crash = FUZZ_DATA / "gru_split_output_written_twice.tflite"
    assert main([str(crash)]) == 2
    err = capsys.readouterr().err
    assert "tensor 43 of subgraph 0 is written twice" in err and "Traceback" not in err
    from host.runtime.arena import predict

    with pytest.raises(ModelError, match="tensor 43 of subgraph 0 is written twice"):
        predict(crash.read_bytes(), requests=[])  # the model of the core alone
