"""Untrusted text is escaped before it reaches a terminal (host/terminal.py; issue 26, class 6).
The recorder's side is tests/device/test_record.py::test_board_text_never_reaches_the_terminal_raw.
"""

from __future__ import annotations

import pytest

from host.planning.cli import main
from host.terminal import printable
from host.tflite.modelgen import build_demo_model


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("dw1/relu", "dw1/relu"),
        ("modèle 名前", "modèle 名前"),
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
        ("a\u202eb\u200bc", "a\\u202eb\\u200bc"),
        ("\x9b2J\x7f", "\\x9b2J\\x7f"),
        ("two\nlines\r", "two\\x0alines\\x0d"),
        ("\\x1b", "\\\\x1b"),  # an escape cannot be forged
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_console_stream_keeps_its_newlines() -> None:
    assert printable("a\nb\x1b[2J\n", keep_newlines=True) == "a\nb\\x1b[2J\n"


def test_model_tensor_names_are_escaped_by_host_plan(tmp_path, capsys) -> None:
    """A model's names are untrusted too: host.plan's table shows them escaped."""
    data = build_demo_model()
    assert data.count(b"dw1/relu") == 1
    path = tmp_path / "hostile.tflite"
    path.write_bytes(data.replace(b"dw1/relu", b"\x1b[2J\x1b]0;"))  # as long: the file stays whole
    assert main([str(path), "-q"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\\x1b[2J\\x1b]0;" in out
