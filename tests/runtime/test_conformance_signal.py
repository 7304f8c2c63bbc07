"""Conformance of TFLM's streaming Signal* custom operators (SignalDelay, SignalFramer,
SignalStacker, SignalOverlapAdd) and of SignalIrfft with the real TFLM: one-operator models
whose options are a flexbuffer map, as TFLM's signal library writes them, run over several
invocations on the runtime's ASan+UBSan build and on TFLM with the same inputs; the state
these operators carry from one invocation to the next shows in every invocation's outputs,
compared bit for bit (float: within 1e-5). Cases vary what changes the stream: delays
shorter and longer than a frame, frame sizes and steps, prefill, stacker contexts and steps,
saturation, and the inverse FFT's radices (2, 3, 4, 5) on full-range spectra."""

from __future__ import annotations

import pytest
from flatbuffers import flexbuffers
from support.conformance import (
    BOOL,
    F32,
    I16,
    Case,
    Result,
    T,
    assert_same,
    check,
    f32,
    run_cases,
)

STEPS = 4  # invocations per case


def signal(op: str, name: str, ins: list[T], outs: list[T], options: dict[str, int],
           refuse: tuple[str, list[str]] | None = None) -> Case:  # fmt: skip
    return Case(f"{op} {name}", op, ins, outs, custom_options=flexbuffers.Dumps(options),
                invokes=STEPS, refuse=refuse)  # fmt: skip


def i16(*shape: int) -> T:
    return T(tuple(shape), I16)


def valid() -> T:
    return T((), BOOL)


def delay(name: str, shape: tuple[int, ...], length: int) -> Case:
    return signal("SignalDelay", name, [i16(*shape)], [i16(*shape)], {"delay_length": length})


def framer(name: str, shape: tuple[int, ...], size: int, step: int, prefill: bool,
           refuse: tuple[str, list[str]] | None = None) -> Case:  # fmt: skip
    frames = shape[-1] // step
    out = i16(*shape[:-1], frames, size)
    options = {"frame_size": size, "frame_step": step, "prefill": prefill}
    return signal("SignalFramer", name, [i16(*shape)], [out, valid()], options, refuse)


def stacker(name: str, channels: int, left: int, right: int, step: int) -> Case:
    out = i16(channels * (left + right + 1))
    options = {"num_channels": channels, "stacker_left_context": left,
               "stacker_right_context": right, "stacker_step": step}  # fmt: skip
    return signal("SignalStacker", name, [i16(channels)], [out, valid()], options)


def overlap_add(name: str, x: T, out: T, step: int) -> Case:
    return signal("SignalOverlapAdd", name, [x], [out], {"T": x.dtype, "frame_step": step})


def irfft(name: str, frames: int, length: int, bins: int | None = None) -> Case:
    spectrum = i16(frames, length + 2 if bins is None else bins)
    options = {"T": I16, "fft_length": length}
    return signal("SignalIrfft", name, [spectrum], [i16(frames, length)], options)


CASES = [
    delay("delay 3 frame 10 two rows", (2, 10), 3),
    delay("delay 5 longer than the frame", (3,), 5),
    delay("delay 0", (1, 4, 6), 0),
    delay("delay equal to the frame", (2, 7), 7),
    framer("size 4 step 2 prefill", (1, 8), 4, 2, True),
    framer("size 5 step 3 prefill two rows", (2, 6), 5, 3, True),
    framer("size 6 step 2 prefill 1-D", (6,), 6, 2, True),
    framer("size 3 step 3 no prefill", (2, 9), 3, 3, False),
    framer(
        "step not dividing the input refused",
        (1, 7),
        4,
        2,
        True,
        refuse=("MA_ERR_MODEL", ["SignalFramer", "frame_step"]),
    ),
    stacker("3 channels left 2 right 1 step 1", 3, 2, 1, 1),
    stacker("2 channels left 0 right 2 step 2", 2, 0, 2, 2),
    stacker("4 channels left 1 right 0 step 2", 4, 1, 0, 2),
    overlap_add("int16 step 4 saturating", i16(2, 3, 8), i16(2, 12), 4),
    overlap_add("int16 step equal to the frame", i16(3, 5), i16(15), 5),
    overlap_add("float step 2", f32((4, 6)), f32((8,)), 2),
    overlap_add("float 3-D step 3", f32((2, 2, 7)), f32((2, 6)), 3),
    irfft("length 16 (radix 4, 2)", 2, 16),
    irfft("length 24 (radix 4, 3)", 3, 24),
    irfft("length 40 (radix 4, 5)", 1, 40),
    irfft("length 6 (radix 3)", 2, 6),
    irfft("length 64 wider rows", 2, 64, 70),
    signal(
        "SignalIrfft",
        "float refused",
        [f32((1, 18))],
        [f32((1, 16))],
        {"T": F32, "fft_length": 16},
        refuse=("MA_ERR_UNSUPPORTED", ["SignalIrfft", "only int16"]),
    ),
]
assert all(c.inputs[0].dtype in (I16, F32) for c in CASES)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_signal"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    if case.op == "SignalStacker":
        check_stacker(case, results[case.name])
    else:
        check(case, results[case.name])


def check_stacker(case: Case, r: Result) -> None:
    """TFLM leaves the output of an invocation without a full stack unwritten (its content is
    whatever the arena held); this runtime zeroes it. Valid flags must agree, and valid stacks
    bit for bit."""
    assert r.status is None and r.ours is not None, f"{case}: {r.status} {r.message}"
    assert r.tflm is not None, f"{case}: TFLM cannot run the model: {r.tflm_error}"
    flags = [bool(v) for v in r.tflm[1::2]]
    assert True in flags and False in flags, f"{case}: a stack must be both full and not"
    for k, full in enumerate(flags):
        assert bool(r.ours[2 * k + 1]) == full, f"{case}: valid flag of invocation {k}"
        if full:
            assert_same(r.ours[2 * k], r.tflm[2 * k], f"{case} stack of invocation {k}")
        else:
            assert not r.ours[2 * k].any(), f"{case}: invocation {k}'s partial stack not zeroed"
