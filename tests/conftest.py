"""Markers for the whole suite, in one table, so `pytest -m "not slow"` is a fast loop.

- oracle: runs the real TFLM interpreter (pip tflite-micro, Linux x86_64 only), or TFLite's
          (pip ai-edge-litert) for an operator TFLM lacks
- qemu:   runs firmware on an emulated Cortex-M board (qemu-system-arm)
- pio:    builds firmware with PlatformIO (offline, .ci/setup prepares it)
- slow:   takes more than a few seconds per test (board builds, QEMU runs, fuzzing)

Shared helpers live in tests/support/ (importable as `support.*`, since this folder is on
sys.path for every test); test files mirror the packages: tflite/, planning/, runtime/, device/.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

MARKERS = {
    "oracle": "runs the real TFLM (pip tflite-micro) or TFLite (pip ai-edge-litert) interpreter",
    "qemu": "runs firmware on an emulated Cortex-M board",
    "pio": "builds firmware with PlatformIO",
    "slow": "takes more than a few seconds per test",
}

# Test file (relative to tests/) -> its markers. `oracle` needs no entry: a test file that uses
# the TFLM interpreter (directly or through support.tflm_oracle / support.conformance) gets it.
FILE_MARKERS: dict[str, tuple[str, ...]] = {
    "device/test_an547_model_memory.py": ("pio", "qemu", "slow"),
    "device/test_boards.py": ("pio", "qemu", "slow"),
    "device/test_boards_models.py": ("pio", "qemu", "slow"),
    "device/test_converter_models_board.py": ("pio", "qemu", "slow"),
    "device/test_demo.py": ("pio", "qemu", "slow"),
    "device/test_emulate.py": ("pio", "qemu", "slow"),
    "device/test_library_cmake.py": ("qemu", "slow"),
    "device/test_library_cmake_boards.py": ("slow",),
    "device/test_library_pio.py": ("pio", "qemu", "slow"),
    "device/test_library_tflm.py": ("pio", "qemu", "slow"),
    "device/test_record_board.py": ("pio", "qemu", "slow"),
    "device/test_record_upload.py": ("slow",),  # fault injection waits out its timeouts
    "planning/test_overlap_plan.py": ("slow",),
    "runtime/test_bands_qemu.py": ("qemu",),
    "runtime/test_fast_m3_qemu.py": ("pio", "qemu", "slow"),
    "runtime/test_fast_m0_qemu.py": ("pio", "qemu", "slow"),
    "runtime/test_overlap_runtime.py": ("slow",),
    "runtime/test_runtime_fuzz.py": ("slow",),
    "runtime/test_runtime_mve_qemu.py": ("pio", "qemu", "slow"),
    "runtime/test_runtime_mve_recurrent_qemu.py": ("pio", "qemu", "slow"),
    "runtime/test_runtime_qemu.py": ("qemu", "slow"),
    "runtime/test_runtime_sanitized.py": ("slow",),
    "test_package.py": ("pio", "qemu", "slow"),  # builds, installs and runs the package
}
# Single tests that are slow in files that are otherwise quick.
SLOW_TESTS = {
    "test_corpus_under_address_and_undefined_sanitizers",
    "test_dsa_table_best_is_the_deterministic_run",
    "test_every_smaller_arena_fails_cleanly",
    "test_endless_while_is_stopped",
    "test_every_shared_model_plots",
    "test_kernels_code_size",
    "test_example_builds_unchanged_with_the_cmake_library",
    "test_models_under_sanitizers_match_tflm",
    "test_offline_plan_gives_tflm_head_and_outputs",
    "test_operator_table_matches_the_code",
    "test_signal_kernels_under_sanitizers_match_tflm",
    "test_text_only_report_from_stock_tflm",
    "test_truncated_models_fail_cleanly",
    "test_kernels_compile_warning_free_without_mutable_globals",
    "test_random_byte_flips_never_crash",
    "test_rules_of_shared_model_operators_match_simulation",
    "test_stored_tflm_operators_are_the_installed_tflms",
}
ORACLE_USES = (
    "tflite_micro", "support.tflm_oracle", "support.conformance", "support.litert_oracle",
)  # fmt: skip

HERE = Path(__file__).resolve().parent

# Under pytest-xdist (`-n auto`, the README's test command) each file runs whole on one worker,
# so its module fixtures build once. The files that build with PlatformIO build into the
# checkout's shared folders (build/pio, its object cache, the PlatformIO core): they form one
# unit of work, which one worker runs in turn while the others take the rest. The QEMU files
# that link their own images do so in their tmp_path, from the controller's `make arm`.
SHARED_BUILD_MARKERS = {"pio"}
SHARED_BUILD_FILES = {
    f"tests/{f}" for f, m in FILE_MARKERS.items() if SHARED_BUILD_MARKERS & set(m)
}
# `make -C firmware` targets that files on several workers use: built once by the controller
# before the workers start, so no two workers compile into one folder at once.
SHARED_MAKE_TARGETS = ("host", "asan", "kernels", "arm")


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        # -k: a target whose compiler is missing fails here quietly; its tests say why.
        cmd = ["make", "-s", "-k", "-C", str(HERE.parent / "firmware"), *SHARED_MAKE_TARGETS]
        subprocess.run(cmd, capture_output=True, check=False)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent without xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if any(a.startswith("--dist") for a in config.invocation_params.args):
        return None  # the mode asked for
    from xdist.scheduler import LoadScopeScheduling  # only under xdist

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return "shared builds" if file in SHARED_BUILD_FILES else file

        def _assign_work_unit(self, node: object) -> None:
            # Longest first, so that no long file starts last while the other workers idle.
            first = max(self.workqueue, key=lambda scope: _weight(scope, self.workqueue[scope]))
            self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return ByFile(config, log)


def _weight(scope: str, nodeids: Iterable[str]) -> tuple[bool, int, int]:
    """How long a unit of work takes, roughly: the shared builds (the longest), then by its
    slow tests, then by its tests."""
    ids = list(nodeids)
    return scope == "shared builds", sum(map(_is_slow, ids)), len(ids)


def _is_slow(nodeid: str) -> bool:
    file, *_, name = nodeid.split("::")
    rel = file.removeprefix(f"{HERE.name}/")
    return "slow" in FILE_MARKERS.get(rel, ()) or name.split("[", 1)[0] in SLOW_TESTS


@functools.cache
def _file_markers(path: Path) -> tuple[str, ...]:
    rel = path.relative_to(HERE).as_posix() if path.is_relative_to(HERE) else path.name
    marks = FILE_MARKERS.get(rel, ())
    if any(use in path.read_text(encoding="utf-8") for use in ORACLE_USES):
        marks += ("oracle",)
    return marks


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in _file_markers(Path(str(item.fspath)).resolve()):
            item.add_marker(name)
        if item.originalname in SLOW_TESTS:
            item.add_marker("slow")
