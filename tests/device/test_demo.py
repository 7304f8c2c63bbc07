"""The README's main job works: demo model planned, built, run on QEMU, recorded over UART."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The board's build plans with this project's kernels (boards/platform/builder/main.py).
BUILD_TARGET = ("--target", "microarena-cortex-m")


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
    # The demo plans for the kernels the board runs: the head it plans is the head reported.
    planned = re.search(r"^arena head\s+(\d+) bytes", out.stdout, re.M)
    board = re.search(r"^  head\s+(\d+)\s+(\d+)$", out.stdout, re.M)
    assert planned and board, out.stdout[-3000:]
    assert planned[1] == board[1] == board[2]
    assert "[RecordingMicroAllocator]" not in out.stderr


@pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")),
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)
def test_default_pio_upload_reports_the_demo_model() -> None:
    """After set-up, `pio run -e mps2-an386 -t upload` prints the default model's report."""
    demo = REPO / "build" / "demo_int8.tflite"
    if not demo.exists():
        subprocess.run([sys.executable, "-m", "host.modelgen", str(demo)], cwd=REPO, check=True)
    pio = Path(sys.executable).with_name("pio")
    out = subprocess.run(
        [str(pio), "run", "-e", "mps2-an386", "-t", "upload"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = out.stdout + out.stderr
    assert out.returncode == 0, log[-4000:]
    planned = json.loads(
        subprocess.run(
            [sys.executable, "-m", "host.plan", str(demo), "--json", *BUILD_TARGET],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    # platformio.ini embeds the best plan at build time: the board's head is the planned one,
    # below TFLM's own greedy placement for this model.
    assert planned["head"] < planned["tflm_greedy_head"]
    assert f"[RecordingMicroAllocator] Arena allocation head {planned['head']} bytes" in log
    assert "@MA1 E" in log and "status=ok" in log
    assert "model=demo_int8" in bytes.fromhex(
        "".join(line.split()[3] for line in log.splitlines() if line.startswith("@MA1 D"))
    ).decode("latin-1")
