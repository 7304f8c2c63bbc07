"""Every row of host.planning.tflm.prepare's table of TFLM's Prepare conditions, broken by a
model built here: the pip TFLM refuses it (or stops), this runtime (host build) refuses it, and
host.plan says neither runs it. The models are the conformance cases, changed until they break
the row (a zero point or scale moved, the output re-typed), or written out where a change of
shape is needed; the cases as they are break no row (no false refusal)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from support.case_tables import conformance_cases
from support.conformance import (
    BOOL,
    F32,
    I8,
    I16,
    I32,
    Case,
    T,
    const_i32,
    f32,
    q8,
    q16,
    single_op_model,
)
from support.tflm_oracle import MODELS, runnable_models
from support.tflm_verdicts import STOPPED, tflm_verdicts

from host.planning.cli import _microarena_refusal
from host.planning.tflm.prepare import (
    COMPARISON_OPS,
    CONDITIONS,
    FUSED,
    Condition,
    broken_conditions,
    prepare_refusals,
)
from host.planning.tflm.refusal import tflm_refusal
from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite.model import Model

TYPE_CODES = {"INT8": I8, "INT16": I16}
RANGE = {I8: (-128, 127), I16: (-32768, 32767)}
S6 = (1, 2, 1, 2, 1, 2)
W8 = np.arange(-3, 3, dtype=np.int8)
S5 = (1, 2, 1, 2, 3)
# Rows that need another shape: written out (input rank one above TFLM's limit).
WRITTEN = {
    ("pad rank", "PAD"): Case("PAD rank 6", "PAD",
                              [q8(S6, 0.05, 1), const_i32([[0, 0]] * 5 + [[1, 1]])],
                              [q8((*S6[:5], 4), 0.05, 1)]),
    ("pad rank", "PADV2"): Case("PADV2 rank 6", "PADV2",
                                [q8(S6, 0.05, 1), const_i32([[0, 0]] * 5 + [[1, 1]]),
                                 q8((1,), 0.05, 1, data=[3])], [q8((*S6[:5], 4), 0.05, 1)]),
    ("transpose rank", "TRANSPOSE"): Case("TRANSPOSE rank 6", "TRANSPOSE",
                                          [q8(S6, 0.05, 1), const_i32([5, 4, 3, 2, 1, 0])],
                                          [q8(S6[::-1], 0.05, 1)]),
    ("strided slice rank", "STRIDED_SLICE"): Case(
        "STRIDED_SLICE rank 5", "STRIDED_SLICE",
        [q8(S5, 0.05, 1), const_i32([0] * 5), const_i32(list(S5)), const_i32([1] * 5)],
        [q8(S5, 0.05, 1)], "StridedSliceOptions", {}),
    ("broadcast_to rank", "BROADCAST_TO"): Case(
        "BROADCAST_TO rank 6", "BROADCAST_TO", [q8((1, 2), 0.05, 1), const_i32([2, 1, 1, 1, 2, 2])],
        [q8((2, 1, 1, 1, 2, 2), 0.05, 1)]),
    ("pad constant", "PAD"): Case(
        "PAD int8 constant zero point", "PAD",
        [q8((1, 3, 3, 1), 0.05, 1), const_i32([[0, 0], [1, 1], [1, 1], [0, 0]]),
         q8((1,), 0.05, 2, data=[5])], [q8((1, 5, 5, 1), 0.05, 1)]),
    ("add_n shapes", "ADD_N"): Case("ADD_N of two shapes", "ADD_N",
                                    [f32((2, 3)), f32((1, 3))], [f32((2, 3))]),
    ("channel scales", "CONV_2D"): Case(
        "CONV_2D 2 filter scales for 3 channels", "CONV_2D",
        [q8((1, 3, 3, 2), 0.05, 1), T((3, 1, 1, 2), I8, [0.01, 0.02], [0, 0], data=W8[:6]),
         T((3,), I32, [0.0005], [0], data=[1, 2, 3])], [q8((1, 3, 3, 3), 0.1, 0)],
        "Conv2DOptions", {0: ("B", 1), 1: ("i", 1), 2: ("i", 1)}),
    ("channel scales", "DEPTHWISE_CONV_2D"): Case(
        "DEPTHWISE_CONV_2D 3 filter scales for 2 channels", "DEPTHWISE_CONV_2D",
        [q8((1, 3, 3, 2), 0.05, 1), T((1, 1, 1, 2), I8, [0.01, 0.02, 0.03], [0, 0, 0],
                                      data=W8[:2], qdim=3),
         T((2,), I32, [0.0005], [0], data=[1, 2])], [q8((1, 3, 3, 2), 0.1, 0)],
        "DepthwiseConv2DOptions", {0: ("B", 1), 1: ("i", 1), 2: ("i", 1), 3: ("i", 1)}),
    ("channel scales", "FULLY_CONNECTED"): Case(
        "FULLY_CONNECTED 2 filter scales for 3 units", "FULLY_CONNECTED",
        [q8((1, 2), 0.05, 1), T((3, 2), I8, [0.01, 0.02], [0, 0], data=W8[:6])],
        [q8((1, 3), 0.1, 0)], "FullyConnectedOptions", {}),
    ("gather dims", "GATHER"): Case(
        "GATHER batch_dims 2 above axis 1", "GATHER",
        [q8((2, 3, 4), 0.05, 1), const_i32([[0, 1], [1, 2]])], [q8((2, 2, 4), 0.05, 1)],
        "GatherOptions", {0: ("i", 1), 1: ("i", 2)}),
    ("l2norm", "L2_NORMALIZATION"): Case("L2_NORMALIZATION rank 5", "L2_NORMALIZATION",
                                         [f32((1, 1, 1, 2, 3))], [f32((1, 1, 1, 2, 3))]),
    ("resize flags", "RESIZE_BILINEAR"): Case(
        "RESIZE_BILINEAR align_corners and half_pixel_centers", "RESIZE_BILINEAR",
        [f32((1, 2, 2, 1)), const_i32([4, 4])], [f32((1, 4, 4, 1))],
        "ResizeBilinearOptions", {2: ("B", 1), 3: ("B", 1)}),
    ("quantize one scale", "QUANTIZE"): Case(
        "QUANTIZE per-channel output", "QUANTIZE", [f32((2, 3))],
        [T((2, 3), I8, [0.1, 0.2, 0.3], [0, 0, 0], qdim=1)]),
    ("same shape", "CUMSUM"): Case("CUMSUM output transposed", "CUMSUM",
                                   [f32((2, 3)), const_i32(1, ())], [f32((3, 2))],
                                   "CumsumOptions", {}),
    ("same shape", "LOG_SOFTMAX"): Case("LOG_SOFTMAX output transposed", "LOG_SOFTMAX",
                                        [f32((2, 3))], [f32((3, 2))]),
    ("softmax beta", "SOFTMAX"): Case("SOFTMAX int8 beta 0", "SOFTMAX", [q8((2, 10), 0.1, 3)],
                                      [q8((2, 10), 1 / 256, -128)], "SoftmaxOptions",
                                      {0: ("f", 0.0)}),
}  # fmt: skip
# A comparison whose first input has scale 1, its own multiplier: TFLM's check stops there.
WRITTEN |= {
    ("comparison scales", op): Case(
        f"{op} int8 input scale 1",
        op,
        [q8((8,), 1.0, 0), q8((8,), 0.5, 0)],
        [T((8,), BOOL)],
        "".join(w.capitalize() for w in op.split("_")) + "Options",
    )
    for op in COMPARISON_OPS
}


# Bases for operators and types no conformance case has; TFLM and this runtime must open them.
EXTRA_BASES = [
    Case("RESHAPE int8", "RESHAPE", [q8((1, 3, 3, 1), 0.05, 1), const_i32([9])],
         [q8((9,), 0.05, 1)]),
    Case("TRANSPOSE int8", "TRANSPOSE", [q8((2, 3), 0.05, 1), const_i32([1, 0])],
         [q8((3, 2), 0.05, 1)]),
    Case("SOFTMAX int8", "SOFTMAX", [q8((2, 10), 0.1, 3)], [q8((2, 10), 1 / 256, -128)],
         "SoftmaxOptions", {0: ("f", 1.0)}),
    Case("CONCATENATION int16", "CONCATENATION", [q16((2, 3), 0.01), q16((2, 3), 0.01)],
         [q16((2, 6), 0.01)], "ConcatenationOptions", {0: ("i", 1)}),
]  # fmt: skip


def _moves(t: T) -> Iterator[Callable[[T], None]]:
    """Changes of one tensor's quantization or type, each kept in its type's range."""
    if t.scale:
        lo, hi = RANGE.get(t.dtype, (-(2**31), 2**31 - 1))

        def zp_by(d: int) -> Callable[[T], None]:
            def move(u: T) -> None:
                u.zp = [z + d if lo <= z + d <= hi else z - d for z in u.zp]

            return move

        def scale_by(k: float) -> Callable[[T], None]:
            def move(u: T) -> None:
                u.scale = [s * k for s in u.scale]

            return move

        yield from (zp_by(1), zp_by(3), scale_by(1.5), scale_by(2**-21))
    for dtype in (I16, I8, I32, F32):
        if dtype != t.dtype:

            def retype(u: T, dtype: int = dtype) -> None:
                u.dtype = dtype
                u.scale, u.zp = ([0.05], [0]) if dtype in RANGE else ([], [])
                if u.data is not None:
                    u.data = u.data.astype(np.int32 if dtype == I32 else np.float32)

            yield retype


def _variants(case: Case) -> Iterator[Case]:
    """The case with one tensor's quantization or type changed, output first."""
    tensors = [("out", 0, case.outputs[0])] + [
        ("in", i, t) for i, t in enumerate(case.inputs) if t is not None
    ]
    for side, i, t in tensors:
        for move in _moves(t):
            c = copy.deepcopy(case)
            move((c.outputs if side == "out" else c.inputs)[i])
            yield c


def _tiny_relu6(case: Case) -> Iterator[Case]:
    """The case with a fused RELU6 and every fed tensor's scale (and an int32 bias's) 1e-10
    times as large: 6 / output scale leaves int32, the ratios between scales stay."""
    if case.op not in FUSED or not case.options:
        return
    c = copy.deepcopy(case)
    c.slots[FUSED[case.op][1]] = ("b", 3)
    for t in [*c.inputs, *c.outputs]:
        if t is not None and t.scale and (t.data is None or t.dtype == I32):
            t.scale = [s * 1e-10 for s in t.scale]
    yield c


def _built(case: Case) -> tuple[bytes, Model] | None:
    try:
        data = single_op_model(case)
        return data, Model(data)
    except Exception:  # noqa: BLE001 - a change the model writer or reader cannot take
        return None


def _breaks(model: Model) -> list[Condition]:
    sg = model.subgraphs[0]
    return broken_conditions(model, sg, sg.operators[0])


def _bases() -> list[Case]:
    """The conformance cases TFLM runs as they are."""
    return EXTRA_BASES + [
        c
        for _, c in conformance_cases()
        if c.refuse is None and c.oracle == "tflm" and c.custom_options is None and c.edit is None
    ]


def _first_input_type(case: Case) -> str:
    t = case.inputs[0]
    return {I8: "INT8", I16: "INT16"}.get(t.dtype, "") if t is not None else ""


def _example(row: Condition, op: str, bases: list[Case]) -> tuple[str, bytes] | None:
    """A model with operator `op` that breaks `row`."""
    if (row.key, op) in WRITTEN:
        case = WRITTEN[(row.key, op)]
        return case.name, single_op_model(case)
    for base in bases:
        if base.op != op or (row.types and _first_input_type(base) not in row.types):
            continue
        for case in [*_variants(base), *_tiny_relu6(base)]:
            built = _built(case)
            if built and row in _breaks(built[1]):
                return f"{base.name}, changed", built[0]
    return None


@pytest.fixture(scope="module")
def bases() -> list[Case]:
    return _bases()


@pytest.fixture(scope="module")
def examples(bases: list[Case]) -> dict[tuple[str, str], tuple[str, bytes]]:
    out = {}
    for row in CONDITIONS:
        for op in row.ops:
            found = _example(row, op, bases)
            if found:
                out[(row.key, op)] = found
    return out


def test_every_row_and_operator_has_a_breaking_model(examples) -> None:
    pairs = {(row.key, op) for row in CONDITIONS for op in row.ops}
    missing = sorted(pairs - set(examples))
    assert missing == [], missing


def test_unchanged_cases_break_no_row(bases: list[Case]) -> None:
    """No false refusal: the conformance cases TFLM runs (and this runtime, compared in their
    own tests) break no condition, and host.plan says TFLM loads them."""
    for case in bases:
        model = Model(single_op_model(case))
        assert _breaks(model) == [], case.name
        assert tflm_refusal(model) is None, case.name


def test_real_models_tflm_runs_break_no_row() -> None:
    """No false refusal on real models: the shared ones the pip TFLM runs (TFLM_BASELINE.tsv)."""
    names = runnable_models()
    if not names:
        pytest.skip(f"{MODELS} absent (the shared models are not in the repository)")
    for name in names:
        model = Model((MODELS / f"{name}.tflite").read_bytes())
        assert prepare_refusals(model) == [], name


@pytest.mark.oracle
def test_tflm_this_runtime_and_host_plan_refuse_each_row(examples) -> None:
    keys = sorted(examples)
    controls = [single_op_model(c) for c in EXTRA_BASES]
    verdicts = tflm_verdicts([examples[k][1] for k in keys] + controls)
    wrong = []
    for case, data, tflm in zip(EXTRA_BASES, controls, verdicts[len(keys) :], strict=True):
        if tflm.strip():
            wrong.append(f"{case.name}: TFLM refuses the base ({tflm!r})")
        try:
            Interpreter(data)
        except MicroarenaError as e:
            wrong.append(f"{case.name}: this runtime refuses the base ({e.message})")
    verdicts = verdicts[: len(keys)]
    for key, tflm in zip(keys, verdicts, strict=True):
        name, data = examples[key]
        row = next(r for r in CONDITIONS if r.key == key[0])
        refused = "failed to allocate" in tflm.lower() or tflm == STOPPED
        if row.at_invoke:
            refused = "invoke: " in tflm and "failed to allocate" not in tflm.lower()
        if not refused:
            wrong.append(f"{key} {name}: TFLM {'runs' if row.at_invoke else 'loads'} it ({tflm!r})")
        try:
            Interpreter(data)
            wrong.append(f"{key} {name}: this runtime opens it")
        except MicroarenaError:
            pass
        model = Model(data)
        refusal = tflm_refusal(model)
        if refusal is None or not any(row.says() in p for p in refusal.in_prepare):
            wrong.append(f"{key} {name}: host.plan's TFLM verdict {refusal}")
        if _microarena_refusal(model) is None:
            wrong.append(f"{key} {name}: host.plan says this runtime runs it")
    assert wrong == []
