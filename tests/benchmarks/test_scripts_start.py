"""Every benchmark script still starts: its imports resolve and --help explains it (benchmarks
are run by hand, so nothing else would notice a module that moved)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from host.paths import REPO

SCRIPTS = sorted((REPO / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_help(script) -> None:
    proc = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout


MODEL_SCRIPTS = [
    "boards_bench",
    "models_bench",
    "overlap_bench",
    "record_bench",
    "runtime_bench",
    "speed_bench",
]


@pytest.mark.parametrize("name", MODEL_SCRIPTS)
def test_benchmark_without_models_says_so(name: str, tmp_path) -> None:
    """The scripts that measure the public corpus stop with one line where it is absent."""
    env = dict(os.environ, MICROARENA_SHARED_MODELS=str(tmp_path / "absent"))
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stderr.startswith(f"no models at {tmp_path / 'absent'}: the public corpus")
    assert "Traceback" not in proc.stderr and not proc.stdout
