"""Environment for running the runtime's AddressSanitizer + UBSan build from a child Python.

libasan must be loaded before Python itself, hence a child process with LD_PRELOAD.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from host.runtime.binding import build

REPO = Path(__file__).resolve().parents[2]


def sanitized_env() -> dict[str, str]:
    """The child's environment; skips the calling test where gcc has no ASan runtime."""
    libasan = subprocess.run(
        ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not os.path.isabs(libasan):
        pytest.skip("gcc has no libasan.so (install the gcc ASan runtime)")
    return dict(
        os.environ,
        LD_PRELOAD=libasan,
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        MICROARENA_LIB=str(build("asan")),
        PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'tests'}",
    )


def child_tensors(script: str, out: Path, timeout: float = 900) -> dict[str, dict[str, object]]:
    """Run `python script --child OUT` on the sanitized build and return the tensors it saved in
    OUT (an .npz keyed "model/tensor"), grouped by model: the sanitized twin of a test that
    compares every intermediate tensor with TFLM's."""
    import numpy as np

    proc = subprocess.run(
        [sys.executable, script, "--child", str(out)],
        env=sanitized_env(), capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    grouped: dict[str, dict[str, object]] = {}
    for key, value in dict(np.load(out)).items():
        model, tensor = key.split("/", 1)
        grouped.setdefault(model, {})[tensor] = value
    return grouped
