"""The fast int8 paths' pair rules in C (overlap.c) equal the planner's
(host.planning.libraries.loops), and the runtime keeps to them: with the input over the output
where the in-order rule allows it but the pairs' rule does not, the output is TFLM's (pairs
there would read overwritten bytes: the simulator finds the read, so a run-time check letting
them run fails this test);
at the pairs' rule too. TFLM (pip tflite-micro) runs the same models without a plan.
"""

from __future__ import annotations

import ctypes
import random

import numpy as np
import pytest
from support import overlap_sim
from support.overlap_models import PAIR_CASES, overlap_layout, with_plan
from support.tflm_oracle import random_inputs, run_tflm

from host.planning.libraries import loops
from host.planning.libraries.microarena import (
    MICROARENA,
    MICROARENA_FASTEST,
    MVE_CHANNELS,
    MVE_DW_LANES,
    MVE_ROWS,
    PAIR_CHUNK,
)
from host.planning.model.lifetimes import align_up
from host.runtime.binding import Interpreter
from host.tflite.model import Model

SEEDS = 4
ANY_OFFSET = -(1 << 63)  # MAK_ANY_OFFSET


class Geom(ctypes.Structure):  # mak_window_geom (kernel_util.h)
    _fields_ = [
        (name, ctypes.c_int32)
        for name in (
            "batches",
            "in_h",
            "in_w",
            "out_h",
            "out_w",
            "kh",
            "kw",
            "stride_h",
            "stride_w",
            "dil_h",
            "dil_w",
            "pad_h",
            "pad_w",
        )  # fmt: skip
    ]


def _c_need(value: int) -> int | None:
    return None if value == ANY_OFFSET else value


def test_c_pair_rules_equal_the_planners(lib: ctypes.CDLL) -> None:
    rows_need, window_need = lib.mak_rows_pairs_need, lib.mak_window_pairs_need
    rows_need.restype = window_need.restype = ctypes.c_int64
    rows_need.argtypes = [ctypes.c_int64] * 3
    window_need.argtypes = [ctypes.POINTER(Geom), ctypes.c_int32, ctypes.c_int32]
    rng = random.Random(5)
    for _ in range(400):
        rows, cin, cout = rng.randint(0, 40), rng.randint(1, 70), rng.randint(1, 70)
        want = loops.rows_pairs_need(rows, cin, cout, PAIR_CHUNK)
        assert _c_need(rows_need(rows, cin, cout)) == want, (rows, cin, cout)
        k, s, d = [(rng.randint(1, 4), rng.randint(1, 4)) for _ in range(3)]
        ins = (rng.randint(1, 3), rng.randint(1, 12), rng.randint(1, 12), cin)
        pad = (rng.randint(0, k[0] - 1), rng.randint(0, k[1] - 1))
        outs = (ins[0], rng.randint(1, 12), rng.randint(1, 12), cout)
        g = Geom(ins[0], ins[1], ins[2], outs[1], outs[2], *k, *s, *d, *pad)
        want = loops.window_pairs_need(ins, outs, k, s, d, pad, PAIR_CHUNK)
        assert _c_need(window_need(ctypes.byref(g), cin, cout)) == want, (ins, outs, k, s, d, pad)


def test_c_helium_rules_equal_the_planners(lib: ctypes.CDLL) -> None:
    rows_need, dw_need = lib.mak_mve_rows_need, lib.mak_mve_dw_pairs_need
    rows_need.restype = dw_need.restype = ctypes.c_int64
    rows_need.argtypes = [ctypes.c_int64] * 3
    dw_need.argtypes = [ctypes.POINTER(Geom), ctypes.c_int32, ctypes.c_int32, ctypes.c_bool]
    rng = random.Random(6)
    for _ in range(400):
        rows, cin, cout = rng.randint(0, 40), rng.randint(1, 70), rng.randint(1, 70)
        want = loops.mve_rows_need(rows, cin, cout, MVE_ROWS, MVE_CHANNELS)
        assert _c_need(rows_need(rows, cin, cout)) == want, (rows, cin, cout)
        k, s, d = [(rng.randint(1, 4), rng.randint(1, 4)) for _ in range(3)]
        ins = (rng.randint(1, 3), rng.randint(1, 12), rng.randint(1, 12), rng.choice([1, 4, 8]))
        cout = ins[3] * rng.choice([1, 2, 8]) * (8 if ins[3] == 1 else 1)
        pad = (rng.randint(0, k[0] - 1), rng.randint(0, k[1] - 1))
        outs = (ins[0], rng.randint(1, 12), rng.randint(1, 12), cout)
        g = Geom(ins[0], ins[1], ins[2], outs[1], outs[2], *k, *s, *d, *pad)
        for columns in (False, True):
            want = loops.mve_depthwise_pairs_need(ins, outs, k, s, d, pad, MVE_DW_LANES, columns)
            got = dw_need(ctypes.byref(g), ins[3], cout, columns)
            assert _c_need(got) == want, (ins, outs, k, s, d, pad, columns)


def _offsets(case: str) -> tuple[bytes, int, int]:
    """The model, the in-order rule's offset and the pairs' (16-byte aligned, the first below
    the second), checked against the simulator: pairs at the first would read overwritten bytes."""
    model, slot = PAIR_CASES[case](np.random.default_rng(7))
    m = Model(model)
    sg, op = m.subgraphs[0], m.subgraphs[0].operators[0]
    k, fast = MICROARENA.overlap_kernel(m, sg, op), MICROARENA_FASTEST.overlap_kernel(m, sg, op)
    assert k is not None and fast is not None and fast.function and slot == 0
    in_order, pairs = align_up(loops.rule(k, 0)), align_up(loops.rule(fast, 0))
    assert in_order < pairs
    trace = overlap_sim.fast_s8_trace
    assert overlap_sim.corrupted_read(trace(fast), 0, in_order, 1, 1) is not None
    assert overlap_sim.corrupted_read(trace(fast), 0, pairs, 1, 1) is None
    return model, in_order, pairs


def planned(case: str) -> dict[str, bytes]:
    """The case's model with the input at the in-order rule's offset and at the pairs'."""
    model, in_order, pairs = _offsets(case)
    out = {}
    for name, delta in (("in-order", in_order), ("pairs", pairs)):
        offsets = overlap_layout(model, 0, delta)
        assert offsets is not None
        out[name] = with_plan(model, offsets)
    return out


@pytest.mark.parametrize("case", list(PAIR_CASES))
def test_runtime_keeps_the_pair_rule(case: str) -> None:
    model = PAIR_CASES[case](np.random.default_rng(7))[0]
    for name, data in planned(case).items():
        it = Interpreter(data)
        for seed in range(SEEDS):
            for i, x in enumerate(random_inputs(it, it.num_inputs(), seed)):
                it.set_input(i, x)
            it.invoke()
            want = run_tflm(model, seed).outputs[0]
            np.testing.assert_array_equal(it.get_output(0), want, err_msg=f"{name}, seed {seed}")
