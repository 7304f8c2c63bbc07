"""The operator and options tables (C and Python) are what tools/gen_schema_tables.py makes
from TFLite's schema today: regenerated and compared byte for byte."""

from __future__ import annotations

import subprocess
import sys

import pytest

from host.paths import REPO
from host.tflite.ops import BUILTIN_CODES, BUILTIN_NAMES

pytest.importorskip("tflite", reason="the `tflite` schema package (test extra) is not installed")


def test_generated_tables_are_up_to_date() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_schema_tables.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_c_enum_and_python_table_agree() -> None:
    text = (REPO / "firmware" / "include" / "ma_ops.h").read_text()
    for code, name in BUILTIN_NAMES.items():
        assert f"  MA_OP_{name} = {code},\n" in text
    assert BUILTIN_CODES["CUSTOM"] == 32 and BUILTIN_NAMES[BUILTIN_CODES["WHILE"]] == "WHILE"


def test_checker_notices_a_stale_table(tmp_path, monkeypatch) -> None:
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import gen_schema_tables as gen
    finally:
        sys.path.remove(str(REPO / "tools"))
    stale = tmp_path / "ops.py"
    stale.write_text("# edited by hand\n")
    monkeypatch.setitem(gen.OUTPUTS, "ops_py", stale)
    assert gen.main(["--check"]) == 1
    assert stale.read_text() == "# edited by hand\n"  # --check never writes
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
