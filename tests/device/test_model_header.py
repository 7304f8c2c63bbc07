"""host.device.model_header, the generation step of the library recipes (docs/library.md): the
header holds the model's exact bytes and host.runtime.arena's arena for them, a model's
embedded plan is kept, and bad input is one clear line."""

from __future__ import annotations

import re

import pytest

from host.device import model_header
from host.paths import BUILD

MODEL = BUILD / "demo_int8.tflite"  # built by .ci/setup

pytestmark = pytest.mark.skipif(not MODEL.is_file(), reason="needs build/demo_int8.tflite")


def _array(header: str) -> bytes:
    body = re.search(r"ma_model_data\[\d+\] = \{(.*?)\};", header, re.S)[1]
    return bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", body))


@pytest.mark.parametrize("target", sorted(model_header.TARGETS))
def test_header_holds_the_model_and_its_arena(tmp_path, target):
    args = [str(MODEL), "--out-dir", str(tmp_path), "--plan", "none", "--target", target]
    assert model_header.main(args) == 0
    header = (tmp_path / model_header.HEADER).read_text()
    assert _array(header) == MODEL.read_bytes()  # unplanned, as asked
    arena = int(re.search(r"MA_MODEL_ARENA_BYTES (\d+)u", header)[1])
    assert arena == model_header.arena_size(MODEL.read_bytes(), model_header.TARGETS[target])[0]
    ops = (tmp_path / model_header.OPS_HEADER).read_text()
    assert "case 3: /* CONV_2D */" in ops
    assert "case 0: /* ADD */" not in ops  # the demo model has no ADD: its kernel is dropped


def test_embedded_plan_is_kept(tmp_path, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    assert model_header.main([str(MODEL), "--out-dir", str(first)]) == 0
    planned = _array((first / model_header.HEADER).read_text())
    assert planned != MODEL.read_bytes()  # a plan was added
    again = tmp_path / "planned.tflite"
    again.write_bytes(planned)
    assert model_header.main([str(again), "--out-dir", str(second)]) == 0
    assert _array((second / model_header.HEADER).read_text()) == planned
    assert "keeping" in capsys.readouterr().out


def test_bad_model_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    assert model_header.main([str(bad), "--out-dir", str(tmp_path / "gen")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: microarena:") and "\n" not in err
    assert not (tmp_path / "gen").exists()
