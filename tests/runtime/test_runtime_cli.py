"""python -m host.run: report, outputs, JSON and exit statuses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from host.paths import SHARED_MODELS
from host.runtime.binding import Interpreter, TensorInfo
from host.runtime.cli import load_input

REPO = Path(__file__).resolve().parents[2]
MODEL = SHARED_MODELS / "tflm_hello_world_float.tflite"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "host.run", *args], cwd=REPO, capture_output=True, text=True
    )


@pytest.fixture
def model() -> Path:
    if not MODEL.exists():
        pytest.skip(f"shared model {MODEL} is absent (tests read ../shared/models)")
    return MODEL


def test_json_matches_the_binding(model: Path, tmp_path: Path) -> None:
    x = np.array([[1.25]], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    proc = _run(str(model), "--input", str(tmp_path / "x.npy"), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    it = Interpreter(model.read_bytes())
    it.set_input(0, x)
    it.invoke()
    assert out["outputs"][0]["values"] == it.get_output(0).ravel().tolist()
    s = it.stats()
    assert (out["head"], out["tail"], out["required"]) == (s.head, s.tail, s.required)
    assert out["arena_size"] == s.required
    assert out["report"] == it.report()


def test_text_report(model: Path) -> None:
    proc = _run(str(model))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("[RecordingMicroAllocator] Arena allocation total ")
    assert "[microarena] Arena required" in proc.stdout and "output 0: shape [1, 1]" in proc.stdout


def test_errors_and_exit_statuses(model: Path, tmp_path: Path) -> None:
    small = _run(str(model), "--arena-size", "600", "--json")
    assert small.returncode == 1
    assert json.loads(small.stdout)["error"] == "MA_ERR_ARENA"
    assert "needs at least" in small.stderr
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"not a model at all")
    bad = _run(str(junk))
    assert bad.returncode == 1 and "malformed model" in bad.stderr
    missing = _run(str(tmp_path / "absent.tflite"))
    assert missing.returncode == 2 and "error:" in missing.stderr
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros(5, np.float32))
    mismatch = _run(str(model), "--input", str(wrong))
    assert (
        mismatch.returncode == 2 and "shape (5,), but input 0 has shape (1, 1)" in mismatch.stderr
    )
    assert "Traceback" not in small.stderr + bad.stderr + missing.stderr + mismatch.stderr


def _info(dtype: type, shape: tuple[int, ...] = (1, 3)) -> TensorInfo:
    return TensorInfo(0, 0, shape, dtype, 3, 0, False, False, 0.5, -128)


@pytest.mark.parametrize(
    ("value", "dtype", "refusal"),
    [
        (
            np.array([[1.5, 0, 2]]),
            np.int8,
            "float64 value 1.5 at [0, 0] is not exactly representable in int8",
        ),
        (np.array([[300, 0, 2]], np.int32), np.int8, "int32 value 300 at [0, 0]"),
        (np.array([[1, 2, 16777217]], np.int64), np.float32, "value 16777217 at [0, 2]"),
        (np.array([[np.nan, 0, 0]]), np.int8, "value nan at [0, 0]"),
        (np.array([[1e300, 0, 0]]), np.float32, "value 1e+300 at [0, 0]"),
        (np.zeros((3,), np.int8), np.int8, "shape (3,), but input 0 has shape (1, 3)"),
        (np.array([["a", "b", "c"]]), np.int8, "<U1 values, but input 0 is int8"),
    ],
)
def test_input_is_refused_not_cast(
    tmp_path: Path, value: np.ndarray, dtype: type, refusal: str
) -> None:
    np.save(tmp_path / "x.npy", value)
    with pytest.raises(ValueError, match=re.escape(refusal)):
        load_input(str(tmp_path / "x.npy"), 0, _info(dtype))


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (np.array([[1, -128, 127]], np.int32), np.int8),  # held exactly
        (np.array([[0.1, 2.5, -1]], np.float64), np.float32),  # floats round to the input's
        (np.array([[True, False, True]]), np.int8),
    ],
)
def test_exact_values_are_converted(tmp_path: Path, value: np.ndarray, dtype: type) -> None:
    np.save(tmp_path / "x.npy", value)
    got = load_input(str(tmp_path / "x.npy"), 0, _info(dtype))
    assert got.dtype == dtype and np.array_equal(got, value.astype(dtype))


def test_not_a_npy_file(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("1 2 3\n")
    with pytest.raises(ValueError, match="not a .npy file"):
        load_input(str(tmp_path / "x.txt"), 0, _info(np.int8))
    np.save(tmp_path / "cut.npy", np.zeros((1, 3), np.int8))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "cut.npy").read_bytes()[:-1])
    with pytest.raises(ValueError, match=f"^{re.escape(str(tmp_path))}/cut.npy: "):
        load_input(str(tmp_path / "cut.npy"), 0, _info(np.int8))
