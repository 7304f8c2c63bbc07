"""Every `host.…` name and repository path that README.md and docs/ mention exists: a module
(`host.runtime.arena`, a `python -m` entry such as `host.plan`), a module's attribute
(`host.runtime.arena.predict_model`) or a file, so the documentation follows the code when
modules move."""

from __future__ import annotations

import importlib
import re

import pytest

from host.paths import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# host.x.y inside a `code span`, at its start or after a space or bracket (not in a value such
# as `arena_source=predicted:host.runtime.arena.required`, which names no attribute).
NAME = re.compile(r"`(?:[^`]*?[\s(\[])?(host(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _found(pattern: re.Pattern[str]) -> list[str]:
    """Every match of the pattern's group in README.md and docs/*.md."""
    return sorted({m for doc in DOCS for m in pattern.findall(doc.read_text(encoding="utf-8"))})


def _resolves(name: str) -> bool:
    """A module, or an attribute of the longest importable prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("name", _found(NAME))
def test_documented_name_exists(name: str) -> None:
    assert _resolves(name), f"README.md or docs/ name {name}, which the code no longer has"


# A repository path in the documentation: `host/...`, `tests/...`, ..., possibly a glob
# (`tests/runtime/test_kernels*.py`); not one inside a longer path (`build/.../firmware/...`).
PATH = re.compile(r"(?<![\w./-])((?:host|tests|benchmarks|tools|firmware|boards|docs)/[\w./*-]*\w)")


@pytest.mark.parametrize("path", _found(PATH))
def test_documented_path_exists(path: str) -> None:
    here = [REPO, REPO / "docs"]  # docs link each other by bare names too
    assert any(any(base.glob(path)) for base in here), f"README.md or docs/ name {path}"


def test_test_files_named_in_code_exist() -> None:
    """Comments and messages that point at a test file point at one that exists."""
    named = re.compile(r"(?<![\w./-])(tests/[\w/]*test_\w+\.py)")
    sources = [
        p
        for folder in ("host", "tests", "benchmarks", "tools", "firmware", "boards")
        for p in (REPO / folder).rglob("*")
        if p.suffix in (".py", ".c", ".h", ".mk") and p.is_file()
    ]
    missing = {
        f"{p.relative_to(REPO)}: {m}"
        for p in sources
        for m in named.findall(p.read_text(encoding="utf-8", errors="replace"))
        if not (REPO / m).exists()
    }
    assert not missing, sorted(missing)
