"""The tests' tables of one-operator cases, loaded for tools and other tests to reuse: the
conformance suite's CASES (tests/runtime/test_conformance_*.py) and the kernel tests'
SINGLE_OPS (tests/runtime/test_kernels_single_ops.py). One loader, so every reader sees the
same cases."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

RUNTIME_TESTS = Path(__file__).resolve().parents[1] / "runtime"
SINGLE_OPS_FILE = RUNTIME_TESTS / "test_kernels_single_ops.py"


def load_test_module(path: Path) -> ModuleType:
    """A test module, loaded for its case tables (not registered in sys.modules)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def conformance_cases() -> list[tuple[str, Any]]:
    """(test file name, case) for every conformance case."""
    paths = sorted(RUNTIME_TESTS.glob("test_conformance_*.py"))
    return [(path.name, c) for path in paths for c in load_test_module(path).CASES]
