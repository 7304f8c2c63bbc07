"""python -m host.run: report, outputs, JSON and exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from host.paths import SHARED_MODELS
from host.runtime.binding import Interpreter

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
    assert mismatch.returncode == 2 and "needs 1 elements" in mismatch.stderr
    assert "Traceback" not in small.stderr + bad.stderr + missing.stderr + mismatch.stderr
