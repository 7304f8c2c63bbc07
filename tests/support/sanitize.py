"""Environment for running the runtime's AddressSanitizer + UBSan build from a child Python.

libasan must be loaded before Python itself, hence a child process with LD_PRELOAD.
"""

from __future__ import annotations

import os
import subprocess
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
