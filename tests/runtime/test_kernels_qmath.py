"""Quantization arithmetic of the kernels against an independent Python transcription of
TFLite's documented rounding, and int8 LOGISTIC/SOFTMAX over every input value."""

from __future__ import annotations

import ctypes
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from support.kernel_harness import (
    KERNELS,
    REPO,
    Graph,
    assert_same,
    q8,
    run_op_on_tflm_tensors,
    single_op_model,
    tflm_run,
)

# ----------------------------------------------------------------------------- quantization math
# An independent transcription of TFLite's documented integer rounding (common.h,
# quantization_util.cc), in Python's exact integers.

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def wrap32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def py_srdhm(a: int, b: int) -> int:
    if a == b == I32_MIN:
        return I32_MAX
    ab = a * b
    num = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    q = abs(num) // 2**31  # C division truncates toward zero
    return q if num >= 0 else -q


def py_rdbpot(x: int, e: int) -> int:
    mask = (1 << e) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if (x & mask) > threshold else 0)


def py_mbqm(x: int, m: int, shift: int) -> int:
    left, right = max(shift, 0), max(-shift, 0)
    return py_rdbpot(py_srdhm(wrap32(x << left), m), right)


def py_quantize_multiplier(d: float) -> tuple[int, int]:
    if d == 0.0:
        return 0, 0
    frac, e = math.frexp(d)
    q = int(math.floor(abs(frac) * 2**31 + 0.5)) * (1 if frac >= 0 else -1)  # half away
    if q == 2**31:
        q, e = q // 2, e + 1
    if e < -31:
        q, e = 0, 0
    if e > 30:
        q, e = 2**31 - 1, 30
    return q, e


@pytest.fixture(scope="module")
def qmath(lib: ctypes.CDLL) -> ctypes.CDLL:
    i32 = ctypes.c_int32
    for name, args in {"mak_srdhm": [i32, i32], "mak_rdbpot": [i32, ctypes.c_int],
                       "mak_mbqm": [i32, i32, ctypes.c_int],
                       "mak_exp_on_negative_values": [i32, ctypes.c_int],
                       "mak_one_over_one_plus_x": [i32],
                       "mak_logistic_fp": [i32, ctypes.c_int],
                       "mak_input_radius": [ctypes.c_int, ctypes.c_int]}.items():  # fmt: skip
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, i32
    lib.mak_q15_multiplier.argtypes, lib.mak_q15_multiplier.restype = [i32], ctypes.c_int16
    lib.mak_quantize_multiplier.argtypes = [
        ctypes.c_double, ctypes.POINTER(i32), ctypes.POINTER(ctypes.c_int)
    ]  # fmt: skip
    return lib


EDGE32 = [I32_MIN, I32_MIN + 1, -(2**30), -65536, -3, -2, -1, 0, 1, 2, 3, 2**30, I32_MAX - 1,
          I32_MAX]  # fmt: skip


def test_rounding_primitives_match_tflite_rules(qmath: ctypes.CDLL) -> None:
    rng = np.random.default_rng(11)
    xs = EDGE32 + [int(v) for v in rng.integers(I32_MIN, I32_MAX, 400, endpoint=True)]
    ms = [I32_MAX, 2**30, 1 << 30 | 12345] + [int(v) for v in rng.integers(2**30, I32_MAX, 60)]
    for a in xs:
        for b in ms[:8] + [a]:
            assert qmath.mak_srdhm(a, b) == py_srdhm(a, b), (a, b)
        for e in (0, 1, 2, 7, 15, 23, 30, 31):
            assert qmath.mak_rdbpot(a, e) == py_rdbpot(a, e), (a, e)
    for x in xs[:120]:
        for m in ms[:20]:
            for shift in (-31, -20, -9, -1, 0, 1, 3, 8):
                assert qmath.mak_mbqm(x, m, shift) == py_mbqm(x, m, shift), (x, m, shift)


def test_depthwise_fast_requantization_is_tflites(qmath: ctypes.CDLL) -> None:
    """fast_depthwise_s8.c folds the two roundings into one multiply-add for negative shifts:
    equal to TFLite's for every shift mak_quantize_multiplier gives and its multipliers (0 or
    2^30 to 2^31 - 1), at the edges of int32 and at rounding ties."""
    fn = qmath.mak_fast_dw_requant
    fn.argtypes, fn.restype = [ctypes.c_int32] * 3, ctypes.c_int32
    rng = np.random.default_rng(20)
    xs = EDGE32 + [int(v) for v in rng.integers(I32_MIN, I32_MAX, 300, endpoint=True)]
    xs += [s * (k << e) for s in (1, -1) for e in (0, 5, 17, 30) for k in (1, 3)]  # ties
    ms = [0, 2**30, 2**30 + 1, I32_MAX] + [int(v) for v in rng.integers(2**30, I32_MAX, 12)]
    for shift in range(-31, 31):
        for m in ms:
            for x in xs:
                assert fn(x, m, shift) == py_mbqm(x, m, shift), (x, m, shift)


def test_input_radius_is_tflites_and_defined_for_any_shift(qmath: ctypes.CDLL) -> None:
    """CalculateInputRadius, exact where it fits int32 (any shift >= 0); beyond (a negative
    shift, undefined in TFLite; found by libFuzzer with UBSan on the kernels) it saturates.
    The library is built with -fsanitize=float-cast-overflow, so an overflowing conversion
    would stop the test."""
    for bits in range(-2, 34):
        b = min(max(bits, 0), 31)
        for shift in (*range(-70, 70), -(2**31), 2**31 - 1):
            exact = ((2**b - 1) * 2 ** (31 - b)) / 2.0**shift if -1100 < shift < 1100 else None
            if exact is None:
                want = 0 if shift > 0 else (I32_MAX if b > 0 else 0)
            else:
                want = min(math.floor(exact), I32_MAX)
            assert qmath.mak_input_radius(bits, shift) == want, (bits, shift)


def test_q15_multiplier_is_both_tflite_roundings(qmath: ctypes.CDLL) -> None:
    """One rounding of a Q0.31 multiplier to Q0.15 serves HARD_SWISH (TFLite's
    DownScaleInt32ToInt16Multiplier) and the 64-bit MultiplyByQuantizedMultiplier, whose
    thresholds differ (INT32_MAX - 2^15 and 0x7FFF0000) but not their results."""
    rng = np.random.default_rng(15)
    ms = [0, 1, 2**15 - 1, 2**15, 2**30, 0x7FFEFFFF, 0x7FFF0000, 0x7FFF7FFF, 0x7FFF8000,
          I32_MAX - 2**15 - 1, I32_MAX - 2**15, I32_MAX]  # fmt: skip
    ms += [int(v) for v in rng.integers(0, I32_MAX, 2000, endpoint=True)]
    for m in ms:
        down = 32767 if m >= I32_MAX - 2**15 else (m + 2**15) >> 16
        reduced = (m + 2**15) >> 16 if m < 0x7FFF0000 else 0x7FFF
        assert down == reduced == qmath.mak_q15_multiplier(m), m


def test_quantize_multiplier_matches_tflite_rules(qmath: ctypes.CDLL) -> None:
    rng = np.random.default_rng(5)
    values = [0.0, 1.0, 0.5, 2.0**-31, 2.0**-32, 2.0**-40, 2.0**31, 3.0e12, 1 - 2.0**-33,
              0.999999999999, 1.5e-5, 0.0003921568627]  # fmt: skip
    values += [float(v) for v in 10.0 ** rng.uniform(-12, 6, 300)]
    m, s = ctypes.c_int32(), ctypes.c_int()
    for d in values:
        qmath.mak_quantize_multiplier(d, ctypes.byref(m), ctypes.byref(s))
        assert (m.value, s.value) == py_quantize_multiplier(d), d


def test_fixed_point_functions_approximate_their_real_values(qmath: ctypes.CDLL) -> None:
    """gemmlowp's exp, 1/(1+x) and logistic stay within a few ulps of Q0.31 of the truth."""
    for ib in (0, 4, 5, 8):
        for v in np.linspace(-min(2.0**ib - 1e-6, 30.0), 0.0, 2001):
            raw = int(round(v * 2.0 ** (31 - ib)))
            got = qmath.mak_exp_on_negative_values(raw, ib) / 2.0**31
            assert abs(got - math.exp(raw / 2.0 ** (31 - ib))) < 3e-7, (ib, v)
    for v in np.linspace(0.0, 1.0, 2001):
        raw = min(int(round(v * 2.0**31)), I32_MAX)
        got = qmath.mak_one_over_one_plus_x(raw) / 2.0**31
        assert abs(got - 1.0 / (1.0 + raw / 2.0**31)) < 3e-8, v
    for v in np.linspace(-15.9, 15.9, 4001):
        raw = int(round(v * 2.0**27))
        got = qmath.mak_logistic_fp(raw, 4) / 2.0**31
        assert abs(got - 1.0 / (1.0 + math.exp(-raw / 2.0**27))) < 3e-7, v


@pytest.mark.parametrize("scale,zp", [(0.004, 0), (0.02, 10), (0.09, -7), (0.25, 100), (1.5, 0)])
def test_logistic_int8_every_input_value(lib: ctypes.CDLL, tmp_path: Path, scale: float,
                                         zp: int) -> None:  # fmt: skip
    """All 256 int8 inputs, for input scales that put the radius inside and outside int8."""
    path = tmp_path / "logistic.tflite"
    path.write_bytes(single_op_model("LOGISTIC", [q8((2, 128), scale, zp)],
                                     [q8((2, 128), 1 / 256, -128)], None, {}))  # fmt: skip
    x = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
    it, _ = tflm_run(path, [x])
    g = Graph(path.read_bytes())
    ours, want, _ = run_op_on_tflm_tensors(lib, g, it, 0, g.subgraphs[0]["ops"][0])
    assert_same(ours[0], want[0].reshape(ours[0].shape), f"LOGISTIC scale {scale}")


@pytest.mark.parametrize("scale,beta", [(0.01, 1.0), (0.1, 1.0), (0.5, 0.7), (2.0, 1.0)])
def test_softmax_int8_every_difference(lib: ctypes.CDLL, tmp_path: Path, scale: float,
                                       beta: float) -> None:  # fmt: skip
    """Rows holding every int8 value, so every difference to the row maximum occurs."""
    path = tmp_path / "softmax.tflite"
    path.write_bytes(single_op_model("SOFTMAX", [q8((4, 256), scale, 3)],
                                     [q8((4, 256), 1 / 256, -128)], "SoftmaxOptions",
                                     {0: ("f", beta)}))  # fmt: skip
    rng = np.random.default_rng(1)
    x = np.stack([rng.permutation(np.arange(-128, 128)) for _ in range(4)]).astype(np.int8)
    x[1] = np.minimum(x[1], 20)  # a row whose maximum is repeated
    it, _ = tflm_run(path, [x])
    g = Graph(path.read_bytes())
    ours, want, _ = run_op_on_tflm_tensors(lib, g, it, 0, g.subgraphs[0]["ops"][0])
    assert_same(ours[0], want[0].reshape(ours[0].shape), f"SOFTMAX scale {scale} beta {beta}")


def test_sigmoid_table_is_tflms(tmp_path: Path) -> None:
    """sigmoid_table.c holds exactly what TFLM's int16 TANH reveals (re-measured here)."""
    from support.tflm_oracle import oracle

    oracle()
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import measure_sigmoid_table as tool
    finally:
        sys.path.remove(str(REPO / "tools"))
    assert (KERNELS / "sigmoid_table.c").read_text() == tool.c_source(tool.measure())


def test_move_is_memmove_for_every_overlap(lib: ctypes.CDLL) -> None:
    """mak_move (the kernels' word-at-a-time memmove): every source and destination offset
    modulo 4 apart, overlapping both ways and not at all, short and long, equals memmove."""
    lib.mak_move.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.mak_move.restype = None
    size = 160
    for n in (0, 1, 3, 15, 16, 17, 31, 64, 67):
        for src in range(8):
            for dst in (*range(8), src + n // 2, max(src - n // 2, 0), 80):
                buf = ctypes.create_string_buffer(bytes((i * 37 + 11) % 256 for i in range(size)))
                want = bytearray(buf.raw)
                want[dst : dst + n] = bytes(want[src : src + n])
                base = ctypes.addressof(buf)
                lib.mak_move(base + dst, base + src, n)
                assert buf.raw == bytes(want), (n, src, dst)
