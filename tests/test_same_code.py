"""tools/same_code.py, which backs "this refactoring changed no instruction" claims: its text of
an object ignores where functions sit, and shows any change to a function's code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.case_tables import load_test_module

from host.paths import REPO

same_code = load_test_module(REPO / "tools" / "same_code.py")

FIRST = "int f(int a) { return a * 3 + 1; }\n"
SECOND = "int g(int a, int b) { return a > b ? a - b : b; }\n"


def text_of(tmp_path: Path, name: str, source: str) -> str:
    src, obj = tmp_path / f"{name}.c", tmp_path / f"{name}.o"
    src.write_text(source)
    subprocess.run(["gcc", "-O2", "-ffunction-sections", "-c", src, "-o", obj], check=True)
    return same_code.normalised("objdump", obj)


@pytest.mark.skipif(not shutil.which("objdump"), reason="binutils' objdump is not installed")
def test_order_does_not_count_but_code_does(tmp_path: Path) -> None:
    one = text_of(tmp_path, "one", FIRST + SECOND)
    assert "<f>:" in one and "<g>:" in one
    assert text_of(tmp_path, "swapped", SECOND + "\n\n" + FIRST) == one
    assert text_of(tmp_path, "changed", FIRST.replace("3", "5") + SECOND) != one


def test_compare_names_changed_and_missing_objects(tmp_path: Path) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    for side, texts in ((before, {"a": "x", "b": "y", "c": "z"}), (after, {"a": "x", "b": "w"})):
        (side / "m4").mkdir(parents=True)
        for name, text in texts.items():
            (side / "m4" / f"{name}.dis").write_text(text)
    assert same_code.differing(before, after, ["m4"]) == ["m4/b.dis", "m4/c.dis"]
    assert same_code.differing(before, before, ["m4"]) == []
