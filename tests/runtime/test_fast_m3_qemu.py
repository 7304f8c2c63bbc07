"""The Cortex-M3's int8 fast paths (fast_s8.c's LDRSB/MLA and fast_depthwise_s8.c's SBFX/MLA
assembly loops, the portable pool forms, SMLAL requantization in LSTM, SVDF and
TRANSPOSE_CONV) on QEMU's mps2-an385 against the real TFLM.

One PlatformIO image (built once, or two halves where one does not fit) holds the fast-path
operator cases of the conformance modules (test_conformance_fast_s8.py's, _fast_pool.py's,
_recurrent.py's, the int8 TRANSPOSE_CONV ones of _shape.py) and the M3 cases below (runs whose
length is 4 more than a multiple of 8, where the 2x2 loop starts at its second half; runs of
exactly 4; four-row blocks of FULLY_CONNECTED). Each runs on the firmware's deterministic input;
the CRC-32 of its output must be TFLM's on the same input (support.fast_fuzz's QEMU check)."""

from __future__ import annotations

import shutil

import pytest
from support.conformance import single_op_model
from support.fast_fuzz import qemu_image
from support.tflm_oracle import run_tflm
from test_conformance_fast_pool import CASES as POOL_CASES
from test_conformance_fast_s8 import CASES as FAST_S8_CASES
from test_conformance_fast_s8 import VALID, conv, fc
from test_conformance_recurrent import CASES as RECURRENT_CASES
from test_conformance_shape import CASES as SHAPE_CASES

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)

BOARD = "mps2-an385"
M3_CASES = [
    conv(
        "1x1 12 -> 6 (runs of 12: the 2x2 loop entered at its second half)",
        (1, 3, 4, 12),
        (1, 1),
        6,
        (3, 4),
    ),
    conv(
        "1x1 4 -> 8 per-tensor (runs of exactly 4)",
        (1, 2, 3, 4),
        (1, 1),
        8,
        (2, 3),
        per_channel=False,
        zps=(127, -128),
    ),
    conv(
        "3x3 VALID 20 -> 10 (uniform runs of 60 bytes)",
        (1, 5, 5, 20),
        (3, 3),
        10,
        (3, 3),
        padding=VALID,
        zps=(-3, 7),
    ),
    conv(
        "1x1 36 -> 9 one pixel (four-channel passes, odd channel)", (1, 1, 1, 36), (1, 1), 9, (1, 1)
    ),
    conv(
        "1x1 40 -> 19 (widened pairs: 32 + 8 values, 16 + 2 channels, an odd channel)",
        (1, 3, 4, 40),
        (1, 1),
        19,
        (3, 4),
        zps=(9, -2),
    ),
    fc("depth 44 units 13 (four-row blocks, a tail of one)", (1, 44), 13),
    fc("depth 100 units 8 two batches", (2, 100), 8, zps=(-128, 0)),
]
CASES = [
    *FAST_S8_CASES,
    *POOL_CASES,
    *RECURRENT_CASES,
    *[c for c in SHAPE_CASES if c.name.startswith("TRANSPOSE_CONV int8")],
    *M3_CASES,
]


def test_fast_paths_on_the_m3_equal_tflm() -> None:
    runnable = [
        (case, model, run_tflm(model, deterministic=True).outputs)
        for case in CASES
        for model in [single_op_model(case)]
    ]
    verdicts = qemu_image(BOARD, runnable)
    bad = [f"{v.case.name}: {v.kind} {v.detail[:300]}" for v in verdicts if v.kind != "ok"]
    assert not bad, "\n".join(bad)
    assert len(verdicts) == len(CASES)
