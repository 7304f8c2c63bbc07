"""The type sweep (tools/sweep_types.py): every (operator, types) pair the pip TFLM runs when
the tests' one-operator cases are re-typed, and whether the runtime runs it with TFLM's bytes.
The sweep runs again here; it must find what tests/data/type_sweep.json stores (and
docs/operators.md reports), so a new gap, a fixed one or a new pair fails until stored."""

from __future__ import annotations

import sys
from pathlib import Path

from support import conformance as C
from support.tflm_oracle import oracle

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))

import sweep_types as sw  # noqa: E402

FIX = "regenerate: python tools/sweep_types.py --write && python tools/gen_operators_doc.py"


def test_sweep_finds_what_is_stored() -> None:
    oracle()  # skips with the reason where the pip TFLM is absent
    fresh = sw.sweep()
    stored = sw.stored()
    changed = sorted(
        f"{op} {sig}: {stored.get(op, {}).get(sig)} -> {fresh.get(op, {}).get(sig)}"
        for op in set(fresh) | set(stored)
        for sig in set(fresh.get(op, {})) | set(stored.get(op, {}))
        if fresh.get(op, {}).get(sig) != stored.get(op, {}).get(sig)
    )
    assert not changed, f"the sweep changed ({FIX}):\n" + "\n".join(changed)


def test_paired_operators_try_every_type_pair() -> None:
    case = C.Case("QUANTIZE t", "QUANTIZE", [C.f32((4,))], [C.q8((4,), 0.1, 0)])
    pairs = {sw.signature(v) for v in sw.variants(case)}
    assert len(pairs) == len(sw.TYPES) ** 2
    assert "UINT8->INT8" in pairs and "INT32->INT16" in pairs


def test_weights_take_their_kernels_types() -> None:
    """A float re-typing of an int8 convolution has float weights and bias, a 16x8 one int8
    weights and an int64 bias (not the int32 bias TFLM would misread)."""
    conv = C.Case("CONV_2D t", "CONV_2D",
                  [C.q8((1, 3, 3, 2), 0.1, 0), C.T((2, 1, 1, 2), C.I8, [0.1], data=[1] * 4),
                   C.T((2,), C.I32, data=[5, 6])], [C.q8((1, 3, 3, 2), 0.1, 0)],
                  "Conv2DOptions")  # fmt: skip
    sigs = {sw.signature(v) for v in sw.variants(conv)}
    assert "FLOAT32,FLOAT32,FLOAT32->FLOAT32" in sigs
    assert "INT16,INT8,INT64->INT16" in sigs
    assert "FLOAT32,FLOAT32,INT32->FLOAT32" not in sigs
