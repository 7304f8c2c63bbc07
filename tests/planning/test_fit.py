"""host.plan MODEL --ram SIZE|BOARD: the fit table's figures are host.plan's for each option,
and this runtime's rows are what the host runtime reports when it runs that plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from host.planning import cli, fit
from host.runtime import arena

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "build" / "demo_int8.tflite"


@pytest.fixture(scope="module")
def model() -> Path:
    if not DEMO.exists():
        pytest.skip(f"{DEMO} is absent (bash .ci/setup builds it)")
    return DEMO


def _json(capsys, argv: list[str]) -> dict:
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_table_rows_are_host_plan_figures(model: Path, capsys, tmp_path: Path) -> None:
    table = _json(capsys, [str(model), "--ram", "nucleo_f746zg", "--json"])
    board = json.loads((REPO / "boards" / "nucleo_f746zg" / "board.json").read_text())
    assert table["ram"] == board["upload"]["maximum_ram_size"]
    assert table["flash"] == board["upload"]["maximum_size"]
    rows = {r["option"]: r for r in table["options"]}
    assert list(rows) == [name for name, _, _ in fit.OPTIONS]
    for row in rows.values():
        alone = _json(capsys, [str(model), *row["host_plan_args"], "-q", "--json"])
        assert (row["arena"], row["head"]) == (alone["min_arena"], alone["head"])
        assert row["verdict"].startswith("fits") == (row["arena"] <= table["ram"])
        assert row["peak_operator"]
        assert "--cpu" in row["host_plan_args"]  # the board's core: cortex-m7
    assert rows["microarena overlap"]["head"] < rows["microarena"]["head"]
    # This runtime's row: the host runtime, running the planned model, reports that head and
    # the arena the same layout predicts for the host's pointer size.
    planned = tmp_path / "planned.tflite"
    args = rows["microarena overlap"]["host_plan_args"]
    assert cli.main([str(model), *args, "-o", str(planned), "-q"]) == 0
    capsys.readouterr()
    run = subprocess.run(
        [sys.executable, "-m", "host.run", str(planned), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    reported = json.loads(run.stdout)
    assert reported["head"] == rows["microarena overlap"]["head"]
    host = arena.predict(planned.read_bytes(), abi="host")
    assert reported["required"] == host["required"]
    assert arena.predict(planned.read_bytes())["required"] == rows["microarena overlap"]["arena"]


def test_too_little_ram_and_text_table(model: Path, capsys) -> None:
    assert cli.main([str(model), "--ram", "4K"]) == 0
    text = capsys.readouterr().out
    assert "RAM 4096 B, flash not known" in text
    assert "model size only" in text
    assert text.count("does not fit: arena") == len(fit.OPTIONS)


def test_bad_ram_is_a_clear_error(model: Path, capsys) -> None:
    for bad in ("foo", "../nucleo_f746zg", "12Q"):
        assert cli.main([str(model), "--ram", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --ram") and "nucleo_f746zg" in err
    with pytest.raises(SystemExit):
        cli.main(["--buffers", str(model), "--ram", "4K"])
