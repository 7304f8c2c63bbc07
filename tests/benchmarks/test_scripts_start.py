"""Every benchmark script still starts: its imports resolve and --help explains it (benchmarks
are run by hand, so nothing else would notice a module that moved)."""

from __future__ import annotations

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
