"""docs/operators.md is what tools/gen_operators_doc.py generates from the code, and its
stored list of TFLM's operators is what the installed pip TFLM registers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.tflm_oracle import oracle

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import gen_operators_doc as gen  # noqa: E402

FIX = "regenerate it: python tools/gen_operators_doc.py"


def test_operator_table_matches_the_code() -> None:
    current = gen.DOC.read_text()
    assert gen.render(*gen.stored_tflm(current)) == current, f"docs/operators.md is stale: {FIX}"


def test_stored_tflm_operators_are_the_installed_tflms() -> None:
    oracle()
    from tflite_micro.python.tflite_micro import _version

    version, names = gen.stored_tflm(gen.DOC.read_text())
    if _version.__version__ != version:
        pytest.skip(f"installed tflite-micro {_version.__version__}, the table is for {version}")
    assert gen.tflm_operators() == (version, names), f"TFLM's operators changed: {FIX}"
