"""Markers for the whole suite, in one table, so `pytest -m "not slow"` is a fast loop.

- oracle: runs the real TFLM interpreter (pip tflite-micro, Linux x86_64 only)
- qemu:   runs firmware on an emulated Cortex-M board (qemu-system-arm)
- pio:    builds firmware with PlatformIO (offline, .ci/setup prepares it)
- slow:   takes more than a few seconds per test (board builds, QEMU runs, fuzzing)

Shared helpers live in tests/support/ (importable as `support.*`, since this folder is on
sys.path for every test); test files mirror the packages: tflite/, planning/, runtime/, device/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

MARKERS = {
    "oracle": "runs the real TFLM interpreter (pip tflite-micro)",
    "qemu": "runs firmware on an emulated Cortex-M board",
    "pio": "builds firmware with PlatformIO",
    "slow": "takes more than a few seconds per test",
}

# Test file (relative to tests/) -> its markers.
FILE_MARKERS: dict[str, tuple[str, ...]] = {
    "device/test_boards.py": ("pio", "qemu", "slow"),
    "device/test_boards_models.py": ("pio", "qemu", "oracle", "slow"),
    "device/test_demo.py": ("pio", "qemu", "slow"),
    "device/test_emulate.py": ("pio", "qemu", "slow"),
    "device/test_record_board.py": ("qemu", "oracle", "slow"),
    "device/test_record_tflm.py": ("oracle",),
    "planning/test_overlap_plan.py": ("oracle",),
    "planning/test_overlap_tflm.py": ("oracle",),
    "planning/test_plan_cli.py": ("oracle",),
    "planning/test_plan_tflm.py": ("oracle",),
    "planning/test_scratch.py": ("oracle",),
    "planning/test_tflm_tail.py": ("oracle",),
    "runtime/test_conformance_math.py": ("oracle",),
    "runtime/test_converter_models.py": ("oracle",),
    "runtime/test_kernels.py": ("oracle",),
    "runtime/test_runtime_fuzz.py": ("slow",),
    "runtime/test_runtime_models.py": ("oracle",),
    "runtime/test_runtime_qemu.py": ("qemu", "slow"),
    "runtime/test_runtime_sanitized.py": ("oracle", "slow"),
    "runtime/test_signal_kernels.py": ("oracle",),
    "tflite/test_model_io.py": ("oracle",),
    "tflite/test_modelgen.py": ("oracle",),
}
# Single tests that are slow in files that are otherwise quick.
SLOW_TESTS = {"test_corpus_under_address_and_undefined_sanitizers"}

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath)).resolve()
        rel = path.relative_to(HERE).as_posix() if path.is_relative_to(HERE) else path.name
        for name in FILE_MARKERS.get(rel, ()):
            item.add_marker(name)
        if item.originalname in SLOW_TESTS:
            item.add_marker("slow")
