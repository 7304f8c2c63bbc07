"""The README's main job works: demo model planned, built, run on QEMU, recorded over UART."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")),
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)
def test_demo_end_to_end() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "host.demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "plan embedded in" in out.stdout
    assert "status: ok" in out.stdout
    assert "[RecordingMicroAllocator]" not in out.stderr
