"""TFLM's Signal* custom operators (firmware/src/kernels/signal_*.c) against the real TFLM.

The audio preprocessor (tflm_audio_preprocessor_int8) is cut into its two Signal segments
(Window .. Energy, FilterBank .. FilterBankLog) whose every intermediate tensor is made a
subgraph output; each segment runs on this runtime with the inputs the real TFLM's full model
gave that segment (kPreserveAllTensors) and must reproduce every tensor TFLM computed, bit
for bit, over three invocations (the spectral subtraction carries state), on the host build
and on the ASan + UBSan build. The custom options are read by a bounded flexbuffer reader:
damaged options fail at open with a message, never read outside the model.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
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


KINDS = ["speech-like", "silence", "full scale"]
STEPS = 3


def tflm_reference(kind: str) -> dict[str, np.ndarray]:
    """What the real TFLM's full model fed each segment and computed in it, per invocation:
    'step/segment/in<k>' and 'step/segment/<tensor>'."""
    runtime = oracle()
    full = runtime.Interpreter.from_bytes(
        shared_model(MODEL).read_bytes(), arena_size=1 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )  # fmt: skip
    ref = {}
    for step, x in enumerate(frames(kind, STEPS)):
        full.set_input(x, 0)
        full.invoke()
        for name, (ins, outs, _) in SEGMENTS.items():
            for k, t in enumerate([*ins, *outs]):
                key = f"{step}/{name}/" + (f"in{k}" if k < len(ins) else str(t))
                ref[key] = np.array(full.GetTensor(t, 0)["tensor_data"])
    return ref


def run_segments(ref: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """This runtime's segments (one interpreter each, state kept) on TFLM's segment inputs."""
    data = shared_model(MODEL).read_bytes()
    ours = {name: Interpreter(cut(data, *seg)) for name, seg in SEGMENTS.items()}
    got = {}
    for step in range(STEPS):
        for name, (ins, outs, _) in SEGMENTS.items():
            it = ours[name]
            for k in range(len(ins)):
                it.set_input(k, ref[f"{step}/{name}/in{k}"])
            it.invoke()
            for k, t in enumerate(outs):
                got[f"{step}/{name}/{t}"] = it.get_output(k)
    return got


def assert_segments_match(what: str, got: dict[str, np.ndarray], ref: dict[str, np.ndarray]):
    for key, want in ref.items():
        if "/in" in key:
            continue
        mine = got[key].reshape(want.shape)
        if key.endswith(f"/{ENERGY_OUT}"):
            mine, want = mine[..., ENERGY_BINS], want[..., ENERGY_BINS]
        assert mine.dtype == want.dtype, f"{what} {key}"
        bad = np.flatnonzero(mine.reshape(-1) != want.reshape(-1))
        assert bad.size == 0, (
            f"{what}, invocation/segment/tensor {key}: {bad.size} values differ, first at "
            f"{bad[0]}: ours {mine.reshape(-1)[bad[0]]}, TFLM {want.reshape(-1)[bad[0]]}"
        )


@pytest.mark.parametrize("kind", KINDS)
def test_signal_segments_match_tflm_bit_exact(kind: str) -> None:
    ref = tflm_reference(kind)
    assert_segments_match(kind, run_segments(ref), ref)


def _child(ref_path: str, out: str) -> int:
    """On the ASan + UBSan build: the segments on saved TFLM inputs, and damaged options."""
    saved = dict(np.load(ref_path))
    results = {}
    for kind in KINDS:
        ref = {k.split("|", 1)[1]: v for k, v in saved.items() if k.startswith(f"{kind}|")}
        results.update({f"{kind}|{k}": v for k, v in run_segments(ref).items()})
    opened = refused = 0
    for damaged in damaged_rfft_models():
        try:
            Interpreter(damaged)
            opened += 1
        except MicroarenaError as e:
            assert e.status in (MA_ERR_MODEL, MA_ERR_UNSUPPORTED), e.message
            refused += 1
    np.savez(out, **results)
    print(f"damaged options: {opened} opened, {refused} refused")
    return 0


def test_signal_kernels_under_sanitizers_match_tflm(tmp_path: Path) -> None:
    from support.sanitize import sanitized_env

    env = sanitized_env()
    refs = {kind: tflm_reference(kind) for kind in KINDS}
    ref_path, out = tmp_path / "ref.npz", tmp_path / "ours.npz"
    np.savez(ref_path, **{f"{kind}|{k}": v for kind, r in refs.items() for k, v in r.items()})
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(ref_path), str(out)],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert "refused" in proc.stdout
    saved = dict(np.load(out))
    for kind, ref in refs.items():
        got = {k.split("|", 1)[1]: v for k, v in saved.items() if k.startswith(f"{kind}|")}
        assert_segments_match(f"{kind} (ASan + UBSan)", got, ref)


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
    # Every single-byte change of the options opens or fails cleanly (never reads outside;
    # the sanitizer test runs the same changes on the ASan + UBSan build).
    for damaged in damaged_rfft_models():
        try:
            Interpreter(damaged)
        except MicroarenaError as err:
            assert err.status in (MA_ERR_MODEL, MA_ERR_UNSUPPORTED), err.message


def damaged_rfft_models() -> list[bytes]:
    """The spectrum segment with each byte of SignalRfft's options changed three ways."""
    data = cut(shared_model(MODEL).read_bytes(), *SEGMENTS["spectrum"])
    options = bytes(Model(data).root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_OPERATORS)[3].get(5))
    out = []
    for i in range(len(options)):
        for flip in (0x01, 0x80, 0xFF):
            damaged = bytearray(options)
            damaged[i] ^= flip
            out.append(_with_custom_options(data, 3, bytes(damaged)))
    return out


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


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    sys.exit(_child(sys.argv[2], sys.argv[3]))
