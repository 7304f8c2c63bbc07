"""Conformance of the type combinations real models use beyond int8 and float32 with the real
TFLM: one-operator models run on the runtime's ASan+UBSan build and on TFLM with the same
inputs, outputs compared bit for bit (see support.conformance).

QUANTIZE requantizes between integer types (uint8 <-> int8 around the int8 body of ST's and
Wake Vision's image models, int32 -> int8/int16); the pairs TFLM's Prepare accepts but its
Eval refuses (float32 -> uint8, uint8 -> uint8) are refused at open here.
"""

from __future__ import annotations

import pytest
from support.conformance import I32, U8, Case, T, check, f32, q8, q16, run_cases

SHAPE = (2, 5, 7)


def quantize(name: str, src: T, dst: T, refuse: tuple[str, list[str]] | None = None) -> Case:
    return Case(f"QUANTIZE {name}", "QUANTIZE", [src], [dst], refuse=refuse)


def u8(scale: float, zp: int, **kw: object) -> T:
    return T(SHAPE, U8, [scale], [zp], **kw)  # type: ignore[arg-type]


def i32(scale: float, zp: int) -> T:
    return T(SHAPE, I32, [scale], [zp], low=-40_000, high=40_000)


CASES = [
    quantize("uint8 to int8 shift of 128 (the image models' input)", u8(0.02, 128),
             q8(SHAPE, 0.02, 0)),
    quantize("uint8 to int8 rescaled", u8(0.02, 100), q8(SHAPE, 0.05, -7)),
    quantize("int8 to uint8 shift of 128 (the image models' output)", q8(SHAPE, 0.004, -128),
             u8(0.004, 0)),
    quantize("int8 to uint8 rescaled saturating", q8(SHAPE, 0.05, 3), u8(0.03, 120)),
    quantize("int32 to int8", i32(0.001, 5), q8(SHAPE, 0.2, -3)),
    quantize("int32 to int16", i32(0.001, -9), q16(SHAPE, 0.003, 2)),
    quantize("int16 to int8", q16(SHAPE, 0.001, 0), q8(SHAPE, 0.2, 4)),
    quantize("float32 to uint8 refused as TFLM's Eval refuses it", f32(SHAPE), u8(0.02, 128),
             refuse=("MA_ERR_UNSUPPORTED", ["QUANTIZE", "FLOAT32", "UINT8"])),
    quantize("uint8 to uint8 refused as TFLM's Eval refuses it", u8(0.02, 128),
             u8(0.03, 128), refuse=("MA_ERR_UNSUPPORTED", ["QUANTIZE", "UINT8"])),
    Case("DEQUANTIZE uint8", "DEQUANTIZE", [u8(0.02, 131)], [f32(SHAPE)]),
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_types"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    check(case, results[case.name])


def test_refusals_are_refused_by_tflm(results: dict) -> None:
    """The pairs refused above are ones TFLM refuses too (else they would be gaps)."""
    for case in CASES:
        if case.refuse is not None:
            assert results[case.name].tflm is None, f"{case}: TFLM runs it"
