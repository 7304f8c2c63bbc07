"""Every "needs at least N bytes" names the model's full arena requirement.

Set-up stops where the arena runs out, so without help the runtime only knows how far it got
(issue 12: 1040, then 1072, 2704, 3072 for a model that needs 48576). ma_arena_shortfall
measures the whole requirement; the number it names must be an arena that works, and that
number less one alignment step must fail, whatever the arena was when it failed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from host.runtime import arena
from host.runtime.binding import MA_ERR_ARENA, Interpreter, MicroarenaError

KERAS = Path(__file__).resolve().parents[1] / "data" / "keras"
MODELS = ("mlp_int8", "lstm_float", "gru_int8", "mobilenet_v3ish_int8", "transformer_float")
STEP = arena.ALIGN


def _needed(data: bytes, arena_size: int, misalign: int = 0) -> int:
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data, arena_size, arena_misalign=misalign)
    assert e.value.status == MA_ERR_ARENA
    m = re.search(r"needs at least (\d+) bytes, has (\d+)", e.value.message)
    assert m, e.value.message
    assert int(m.group(2)) == arena_size
    return int(m.group(1))


@pytest.mark.parametrize("name", MODELS)
def test_every_shortfall_names_the_full_requirement(name: str) -> None:
    data = (KERAS / f"{name}.tflite").read_bytes()
    required = arena.predict(data, "host")["required"]
    # From the first table to the planner's last step: always the same, full figure.
    for size in (0, 100, 1000, required // 4, required // 2, required - STEP):
        assert _needed(data, size) == required, size
    Interpreter(data, required)  # the named size works
    assert _needed(data, required, misalign=1) == required  # said with the usable part too


def test_misaligned_arena_says_what_is_usable() -> None:
    data = (KERAS / "mlp_int8.tflite").read_bytes()
    required = arena.predict(data, "host")["required"]
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data, required, arena_misalign=1)
    assert f"({required - STEP} from its first 16-byte aligned address)" in e.value.message


def test_a_model_that_fails_anyway_says_why_not_how_much() -> None:
    """Too small an arena for a model the runtime refuses: the refusal, not "needs more than
    64 MiB" (the measurement fails for the model's own reason)."""
    from support.tflm_oracle import shared_model

    from host.runtime.binding import MA_ERR_UNSUPPORTED

    data = shared_model("tiny_kws_dscnn_float").read_bytes()  # hybrid convolutions
    for size in (1000, 1 << 16):
        with pytest.raises(MicroarenaError) as e:
            Interpreter(data, size)
        assert e.value.status == MA_ERR_UNSUPPORTED, e.value.message
        assert "operators unsupported" in e.value.message
