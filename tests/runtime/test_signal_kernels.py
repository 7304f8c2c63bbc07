"""TFLM's Signal* custom operators (firmware/src/kernels/signal_*.c) against the real TFLM.

The audio preprocessor (tflm_audio_preprocessor_int8) is cut into its two Signal segments
(Window .. Energy, FilterBank .. FilterBankLog) whose every intermediate tensor is made a
subgraph output; each segment runs on this runtime with the inputs the real TFLM's full model
gave that segment (kPreserveAllTensors) and must reproduce every tensor TFLM computed, bit
for bit, over three invocations (the spectral subtraction carries state). The custom options
are read by a bounded flexbuffer reader: damaged options fail at open with a message.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from support.audio_segments import ENERGY_BINS, ENERGY_OUT, MODEL, SEGMENTS, cut
from support.tflm_oracle import oracle, shared_model

from host.runtime.binding import MA_ERR_MODEL, MA_ERR_UNSUPPORTED, Interpreter, MicroarenaError
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]


def frames(kind: str, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(len(kind))
    if kind == "silence":
        return [np.zeros((1, 480), np.int16)] * count
    if kind == "full scale":  # saturates the window and the auto-scale (-32768 present)
        return [rng.integers(-32768, 32768, (1, 480)).astype(np.int16) for _ in range(count)]
    t = np.arange(480)
    return [
        (3000 * np.sin(2 * np.pi * (200 + 300 * k) * t / 16000) + rng.normal(0, 200, 480))
        .astype(np.int16)
        .reshape(1, 480)
        for k in range(count)
    ]


@pytest.mark.parametrize("kind", ["speech-like", "silence", "full scale"])
def test_signal_segments_match_tflm_bit_exact(kind: str) -> None:
    runtime = oracle()
    data = shared_model(MODEL).read_bytes()
    full = runtime.Interpreter.from_bytes(
        data, arena_size=1 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )  # fmt: skip
    ours = {name: Interpreter(cut(data, *seg)) for name, seg in SEGMENTS.items()}
    for step, x in enumerate(frames(kind, 3)):
        full.set_input(x, 0)
        full.invoke()
        for name, (ins, outs, _) in SEGMENTS.items():
            it = ours[name]
            for k, t in enumerate(ins):
                it.set_input(k, np.asarray(full.GetTensor(t, 0)["tensor_data"]))
            it.invoke()
            for k, t in enumerate(outs):
                want = np.asarray(full.GetTensor(t, 0)["tensor_data"])
                got = it.get_output(k).reshape(want.shape)
                if t == ENERGY_OUT:
                    got, want = got[ENERGY_BINS], want[ENERGY_BINS]
                assert got.dtype == want.dtype, f"{name} tensor {t}"
                bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
                assert bad.size == 0, (
                    f"{kind}, invocation {step}, {name} tensor {t}: {bad.size} values differ, "
                    f"first at {bad[0]}: ours {got.reshape(-1)[bad[0]]}, TFLM "
                    f"{want.reshape(-1)[bad[0]]}"
                )


def test_rfft_needs_no_scratch_and_less_tail_than_tflm() -> None:
    """Our SignalRfft computes in place: no scratch (TFLM: fft_length x 2 bytes) and only
    its twiddle tables in the tail."""
    from host.runtime.binding import kernel_requests

    data = cut(shared_model(MODEL).read_bytes(), *SEGMENTS["spectrum"])
    requests = kernel_requests(data)
    assert not [r for r in requests if r.kind == 1], "no kernel scratch"
    rfft = [r for r in requests if r.kind == 0 and r.node == 3]
    assert len(rfft) == 1 and rfft[0].nbytes < 2048  # TFLM: 2.8 KB of state + 1 KB scratch


def test_log_table_is_the_log2_correction() -> None:
    """The table in signal_filter_bank.c is round(65536 (log2(1 + i/128) - i/128))."""
    src = (REPO / "firmware/src/kernels/signal_filter_bank.c").read_text()
    body = re.search(r"LOG2_CORRECTION\[129\] = \{(.*?)\};", src, re.S)
    assert body is not None
    table = [int(v) for v in body.group(1).replace("\n", " ").split(",") if v.strip()]
    assert table == [round(65536 * (math.log2(1 + i / 128) - i / 128)) for i in range(129)]


def _with_custom_options(data: bytes, op: int, options: bytes) -> bytes:
    m = Model(data)
    table = m.root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_OPERATORS)[op]
    set_child(table, 5, options)  # Operator.custom_options
    return m.to_bytes()


def test_damaged_custom_options_fail_at_open_with_a_message() -> None:
    data = cut(shared_model(MODEL).read_bytes(), *SEGMENTS["spectrum"])
    model = Model(data)
    sg = model.root.get(S.MODEL_SUBGRAPHS)[0]
    rfft_options = bytes(sg.get(S.SUBGRAPH_OPERATORS)[3].get(5))
    cases = {
        "empty": b"",
        "truncated": rfft_options[:-3],
        "root offset out of range": rfft_options[:-3] + b"\xff" + rfft_options[-2:],
        "not a map": rfft_options[:-2] + b"\x04\x01",
    }
    for what, options in cases.items():
        with pytest.raises(MicroarenaError) as e:
            Interpreter(_with_custom_options(data, 3, options))
        assert e.value.status == MA_ERR_MODEL, what
        assert "SignalRfft" in e.value.message and "custom options" in e.value.message, what
    # Every single-byte change of the options opens or fails cleanly (never reads outside).
    for i in range(len(rfft_options)):
        for flip in (0x01, 0x80, 0xFF):
            damaged = bytearray(rfft_options)
            damaged[i] ^= flip
            try:
                Interpreter(_with_custom_options(data, 3, bytes(damaged)))
            except MicroarenaError as err:
                assert err.status in (MA_ERR_MODEL, MA_ERR_UNSUPPORTED), err.message


def test_unsupported_rfft_type_and_length_are_named() -> None:
    data = cut(shared_model(MODEL).read_bytes(), *SEGMENTS["spectrum"])
    sg = Model(data).root.get(S.MODEL_SUBGRAPHS)[0]
    options = bytes(sg.get(S.SUBGRAPH_OPERATORS)[3].get(5))
    assert options[:2] == b"T\x00"  # key "T" first; its int8 value sits in the value vector
    float_rfft = options.replace(b"\x07\x00\x00\x02\x05\x05", b"\x00\x00\x00\x02\x05\x05")
    assert float_rfft != options
    with pytest.raises(MicroarenaError) as e:
        Interpreter(_with_custom_options(data, 3, float_rfft))
    assert e.value.status == MA_ERR_UNSUPPORTED and "only int16" in e.value.message
