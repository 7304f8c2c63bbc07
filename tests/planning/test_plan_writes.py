"""host.plan's outputs (model, plot, CSV) are written all or nothing, checked before they land,
and never re-read from where they went (issue 18, findings 5, 10 and 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from host.planning import checker
from host.planning import cli as plan_cli
from host.tflite import modelgen
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds: these commands take about two; a hang is the failure being tested


@pytest.fixture
def model(tmp_path: Path) -> Path:
    p = tmp_path / "m.tflite"
    assert modelgen.main([str(p)]) == 0
    return p


def _plan(*args: str, stdin: int | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "host.plan", *args],
        cwd=REPO,
        capture_output=True,
        stdin=stdin,
        timeout=TIMEOUT,
    )


def _no_temporaries(folder: Path) -> None:
    assert not [p.name for p in folder.rglob(".*.tmp")]


def test_failed_self_check_leaves_the_model_as_it_was(model: Path, monkeypatch, capsys) -> None:
    """Finding 5: 'written plan failed its own check' came after the model was replaced."""
    before = model.read_bytes()
    monkeypatch.setattr(checker, "check", lambda *_: ["injected fault"])
    assert plan_cli.main([str(model), "--embed", "-q"]) == 2
    assert "injected fault" in capsys.readouterr().err
    assert model.read_bytes() == before
    _no_temporaries(model.parent)


def test_unwritable_plot_leaves_the_model_as_it_was(model: Path, capsys) -> None:
    """Finding 5: `--embed --plot missing/p.svg` rewrote the model, then failed on the plot."""
    pytest.importorskip("matplotlib")
    before = model.read_bytes()
    plot = model.parent / "missing" / "p.svg"
    assert plan_cli.main([str(model), "--embed", "--plot", str(plot), "-q"]) == 2
    assert str(plot) in capsys.readouterr().err
    assert model.read_bytes() == before and not plot.parent.exists()
    _no_temporaries(model.parent)


def test_outputs_land_together(model: Path) -> None:
    """Model and plot both written when both can be."""
    pytest.importorskip("matplotlib")
    out, plot = model.parent / "out.tflite", model.parent / "p.svg"
    assert plan_cli.main([str(model), "-o", str(out), "--plot", str(plot), "-q"]) == 0
    assert not checker.check(Model.load(out)) and plot.read_bytes().startswith(b"<?xml")
    _no_temporaries(model.parent)


def test_output_to_a_pipe_is_checked_from_the_bytes_written(model: Path) -> None:
    """Finding 10: `-o /dev/stdout | cat` hung re-reading its own output from the pipe.

    The planned model is the whole of stdout (the report goes to stderr), so it can be piped on.
    """
    r = _plan(str(model), "-o", "/dev/stdout")
    assert r.returncode == 0, r.stderr
    assert not checker.check(Model(r.stdout)), "stdout holds exactly the planned model"
    assert b"plan embedded in /dev/stdout" in r.stderr


def test_output_to_dev_null_is_fine(model: Path) -> None:
    """Finding 11: `-o /dev/null` said 'corrupt or truncated model' (it re-read /dev/null)."""
    r = _plan(str(model), "-o", "/dev/null", "-q")
    assert r.returncode == 0, r.stderr
    assert b"corrupt" not in r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifo_model_is_refused_without_blocking(tmp_path: Path) -> None:
    """Finding 10: a FIFO as the model blocked forever waiting for a writer."""
    fifo = tmp_path / "m.tflite"
    os.mkfifo(fifo)
    for args in ([str(fifo)], ["--check", str(fifo)]):
        r = _plan(*args, "-q")
        assert r.returncode == 2 and b"not a regular file" in r.stderr, r.stderr
