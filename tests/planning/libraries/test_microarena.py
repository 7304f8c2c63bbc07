"""This project's kernels as the planner sees them (host/planning/libraries/microarena.py): its
constants are firmware/src/kernels/'s, it requests no scratch where TFLM's kernels do, and its
fastest forms add the fast paths' pairs (fast_s8.c's, or on the Cortex-M55 fast_mve_s8.c's) to
the loops it otherwise shares with the reference kernels. The rules themselves are
test_loops.py's; the runtime's own arena, tests/runtime/'s.
"""

from __future__ import annotations

import re
from dataclasses import replace

from support.tflm_oracle import shared_model

from host.paths import FIRMWARE
from host.planning.libraries import loops, microarena
from host.planning.libraries.microarena import MICROARENA, fastest_library
from host.planning.libraries.reference import REFERENCE
from host.planning.scratch import scratch_requests, unknown_scratch_ops
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model


def test_microarena_depthwise_block_is_the_kernels() -> None:
    """The planner's rules use the depthwise block size of firmware/src/kernels/."""
    header = FIRMWARE / "src/kernels/kernel_util.h"
    block = re.search(r"MAK_DW_BLOCK = (\d+)", header.read_text())
    assert block and int(block.group(1)) == microarena.DW_BLOCK


def test_pair_constants_are_the_kernels() -> None:
    """PAIR_CHUNK, COL_MAX and MAX_RUNS are those of firmware/src/kernels/."""
    kernels = FIRMWARE / "src/kernels"
    chunk = re.search(r"MAK_PAIR_CHUNK = (\d+)", (kernels / "overlap.h").read_text())
    assert chunk and int(chunk.group(1)) == microarena.PAIR_CHUNK
    header = (kernels / "overlap.h").read_text()
    for name, value in (("ROWS", microarena.MVE_ROWS), ("CHANNELS", microarena.MVE_CHANNELS),
                        ("DW_LANES", microarena.MVE_DW_LANES)):  # fmt: skip
        found = re.search(rf"MAK_MVE_{name} = (\d+)", header)
        assert found and int(found.group(1)) == value, name
    mve = (kernels / "fast/mve/fast_mve_s8.c").read_text()
    assert re.search(rf"PIXELS = {microarena.MVE_ROWS}\b", mve)
    assert re.search(rf"SHORT_ROW = {microarena.MVE_SHORT_ROW}\b", mve)
    fast = (kernels / "fast/fast_s8.c").read_text()
    assert re.search(r"PAIRS = MAK_PAIR_CHUNK / 2\b", fast)
    for name, value in (("COL_MAX", microarena.COL_MAX), ("MAX_RUNS", microarena.MAX_RUNS)):
        found = re.search(rf"\b{name} = (\d+)", fast)
        assert found and int(found.group(1)) == value, name


def test_microarena_kernels_request_no_scratch() -> None:
    model = Model.load(shared_model("tflm_keyword_scrambled_int8"))
    assert scratch_requests(model, MICROARENA) == []
    assert unknown_scratch_ops(model, MICROARENA) == []
    assert scratch_requests(model, REFERENCE)  # while TFLM's SVDF does request scratch


def test_fastest_forms_add_the_fast_paths_pairs_only() -> None:
    """On the demo CNN: the plain library runs no pair; --fastest's adds fast_s8.c's pairs, the
    Cortex-M55's fast_mve_s8.c's instead, each to some operators, and changes nothing else of
    an operator's loops."""
    model = Model(build_demo_model())
    sg = model.subgraphs[0]
    plain = [MICROARENA.overlap_kernel(model, sg, op) for op in sg.operators]
    assert all(k is None or k.function == "" for k in plain)
    for cpu, functions in (
        ("cortex-m4", {loops.FAST_ROWS, loops.FAST_WINDOWS}),
        ("cortex-m55", {loops.FAST_MVE_ROWS, loops.FAST_MVE_DEPTHWISE}),
    ):
        lib = fastest_library(cpu)
        kernels = [lib.overlap_kernel(model, sg, op) for op in sg.operators]
        used = {k.function for k in kernels if k is not None} - {""}
        assert used and used <= functions, (cpu, used)
        for k, p in zip(kernels, plain, strict=True):
            assert (k and replace(k, function="", chunk=0, group=0)) == p
