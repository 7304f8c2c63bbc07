"""The Helium (MVE) int8 paths (firmware/src/kernels/fast/mve/fast_mve_*.c) on QEMU's Cortex-M55
(mps3-an547) against the real TFLM: every intermediate tensor bit for bit.

One image (PlatformIO, built once) holds copies of shared int8 models and of the fast-path
operator cases (test_conformance_fast_s8.py's, plus the cases below for what the vector code
adds: 16-byte dot-product tails, four-channel blocks and their tails, more output channels than
the stacked weight sums, depthwise channel groups and their constants tables, grouped
convolutions, windows copied two at a time, left-shifting multipliers, and the rounding of
negative values) whose subgraph outputs include every operator's outputs; a second holds
micro_speech and the ADD, SUB, MUL, pool, LOGISTIC, TANH and QUANTIZE cases
(test_conformance_fast_elementwise.py's, _pool.py's and _unary.py's: vector tails, broadcast
rows, rescales with and without shifts, one-cell and 255-cell windows, input scales and zero
points across the fixed-point functions). Each runs on the firmware's deterministic input; the
CRC-32 of every output must be the CRC of the tensor TFLM computed on the same input, and the
run's stack high-water must leave support.stack_margin's margin of the board's stack and stay
within MVE_STACK_BUDGET. The host build runs the portable paths and is checked against TFLM by
the conformance suites; the M4's DSP paths by test_runtime_qemu.py."""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from functools import partial
from pathlib import Path

import pytest
from support import overlap_sim
from support.conformance import check, run_cases, single_op_model
from support.overlap_models import overlap_layout, with_plan
from support.stack_margin import assert_stack_margin
from support.tflm_oracle import run_tflm, with_every_output
from test_conformance_fast_elementwise import CASES as ELEMENTWISE_CASES
from test_conformance_fast_pool import CASES as POOL_CASES
from test_conformance_fast_s8 import CASES as FAST_S8_CASES
from test_conformance_fast_s8 import SAME, VALID, conv, dwconv, fc
from test_conformance_fast_unary import CASES as UNARY_CASES

from host.device import emulate
from host.device.boards import BuildError, build_image
from host.paths import SHARED_MODELS
from host.planning.libraries import loops, microarena
from host.planning.libraries.microarena import MICROARENA
from host.planning.model import metadata
from host.planning.model.lifetimes import align_up
from host.planning.plan import plan_model
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)

BOARD = "mps3-an547"
# The deepest run's stack (docs/boards.md's Stack table: 3,120 bytes, micro_speech's
# DEPTHWISE_CONV_2D) and a little room: a change that deepens the Helium paths' or the core's
# frames fails here instead of overflowing a user's smaller stack into the arena.
MVE_STACK_BUDGET = 3264
# Depthwise-separable (KWS), residual (ResNet-8) and small convolutional and FC models; the
# larger ones (person_detect, VWW, the autoencoder) do not fit beside them in the 512 KiB ITCM.
SHARED = ["tflm_micro_speech_int8", "tiny_kws_dscnn_int8", "tiny_ic_resnet8_int8"]
MVE_CASES = [
    conv("1x1 40 -> 20 (16-byte dot tail, channel tail)", (1, 3, 4, 40), (1, 1), 20, (3, 4)),
    conv("3x3 SAME 33 -> 6 tiny output scale (left shift, saturating)", (1, 4, 4, 33), (3, 3),
         6, (4, 4), out_scale=0.0001, zps=(3, -7)),
    conv("1x1 48 -> 5 negative outputs per-tensor", (1, 2, 3, 48), (1, 1), 5, (2, 3),
         per_channel=False, zps=(-128, 100), out_scale=0.7),
    dwconv("3x3 SAME 50 channels (two blocks, 16-lane tail)", (1, 5, 5, 50), (3, 3), (5, 5)),
    dwconv("3x3 VALID 20 channels left-shifting multipliers", (1, 4, 4, 20), (3, 3), (2, 2),
           padding=VALID, out_scale=0.0002, zps=(10, -3)),
    dwconv("1x1 132 channels per-tensor no bias (more than a constants table holds)",
           (1, 1, 3, 132), (1, 1), (1, 3), per_channel=False, with_bias=False),
    dwconv("5x1 SAME stride 2 dilation 2 12 channels on one column (as one row, lane tail)",
           (1, 12, 1, 12), (5, 1), (6, 1), stride=2, dilation=2, per_channel=False),
    dwconv("3x3 SAME stride 2 16 channels per-tensor", (1, 7, 7, 16), (3, 3), (4, 4), stride=2,
           per_channel=False, padding=SAME),
    fc("depth 200 units 9 tiny output scale (left shift, saturating)", (1, 200), 9,
       out_scale=0.0001, zps=(20, 0), with_bias=False),
    conv("3x3 SAME stride 2 groups 3 per-tensor", (1, 7, 6, 6), (3, 3), 9, (4, 3), stride=2,
         fin=2, per_channel=False, zps=(-128, 3)),
    conv("3x3 SAME groups 2 of 17 channels (windows copied in runs)", (1, 3, 2, 34), (3, 3), 4,
         (3, 2), fin=17, per_channel=False),
    conv("3x3 SAME 20 -> 1 (one output channel: four pixels a vector)", (1, 5, 3, 20), (3, 3),
         1, (5, 3)),
    conv("1x1 40 -> 2 per-tensor, six pixels (weight sums per channel)", (1, 2, 3, 40), (1, 1),
         2, (2, 3), per_channel=False),
    conv("1x1 32 -> 6 (rows of two whole vectors)", (1, 3, 3, 32), (1, 1), 6, (3, 3)),
    conv("1x1 stride 2 33 -> 65 per-tensor (wider than the weight sums beside window copies)",
         (1, 5, 5, 33), (1, 1), 65, (3, 3), stride=2, per_channel=False, with_bias=False),
    conv("1x1 groups 4 no bias", (1, 3, 5, 8), (1, 1), 12, (3, 5), fin=2, with_bias=False,
         zps=(0, 0)),
    conv("1x1 1 -> 258 per-tensor no bias (more channels than the stacked weight sums)",
         (1, 3, 3, 1), (1, 1), 258, (3, 3), per_channel=False, with_bias=False, zps=(7, -2)),
    fc("depth 16 units 1 batch 2", (2, 16), 1),
    fc("depth 47 units 6 per-channel negative", (1, 47), 6, per_channel=True, zps=(-128, 90)),
    fc("depth 16 units 16 batch 9 (batches four at a time, weight sums once)", (9, 16), 16),
    fc("depth 40 units 6 batch 5 per-channel (a last single batch)", (5, 40), 6,
       per_channel=True),
    conv("3x3 SAME 40 -> 7 (windows copied two at a time, channel pairs and a last channel)",
         (1, 3, 3, 40), (3, 3), 7, (3, 3)),
    conv("3x3 SAME 40 -> 67 (two windows at a time with the weight sums, a last three channels)",
         (1, 4, 3, 40), (3, 3), 67, (4, 3)),
    conv("3x3 SAME groups 2 of 20 channels -> 10 (two windows at a time, a last channel)",
         (1, 3, 2, 40), (3, 3), 10, (3, 2), fin=20, per_channel=False),
]  # fmt: skip
CASES = FAST_S8_CASES + MVE_CASES
# The element-wise, pool, LOGISTIC/TANH and QUANTIZE cases (fast_mve_elementwise.c,
# fast_mve_pool.c, fast_mve_activations.c, fast_mve_quantize.c) in a second image:
# beside the models above they overflow the ITCM.
OPS_CASES = ELEMENTWISE_CASES + POOL_CASES + UNARY_CASES


def case_stem(i: int) -> str:
    return f"case{i:02d}"


def ops_stem(name: str) -> str:
    return f"ops{next(i for i, c in enumerate(OPS_CASES) if c.name == name):02d}"


# Plans whose operators write over their inputs (--overlap --kernels microarena): the kernels
# then take the paths that keep overlap.c's rules (1x1 convolutions through the window copy;
# ADD, MUL, LOGISTIC and QUANTIZE over an input at the output's address, pools over theirs).
OVERLAP = ["demo_int8", "tiny_kws_dscnn_int8"]
OPS_OVERLAP = [
    ops_stem("ADD int8 odd shape zero points at the ends"),
    ops_stem("ADD int8 second scale larger, 4n + 2 values, negative outputs"),
    ops_stem("MUL int8 output multiplier above 1/2 (no shift)"),
    ops_stem("MAX_POOL_2D int8 SAME 3x3 stride 2 depth 7 clipped windows"),
    ops_stem("AVERAGE_POOL_2D int8 VALID 3x2 depth 12 RELU"),
    ops_stem("LOGISTIC int8 scale 0.09 zero point -7"),
    ops_stem("QUANTIZE int8 -> int8 left shift zero points at the ends"),
]  # fmt: skip
# Helium pairs under overlap (overlap.h's MVE rules): each case with its input at the in-order
# rule's offset above the output, where the pairs would read overwritten bytes (the replay says
# so), and at the pairs' rule; both must give TFLM's output.
MVE_PAIR_CASES = [
    conv("1x1 16 -> 16 (rows read in place)", (1, 4, 4, 16), (1, 1), 16, (4, 4)),
    dwconv("3x3 SAME 40 channels (pairs side by side)", (1, 4, 6, 40), (3, 3), (4, 6)),
    dwconv("3x3 SAME 16 channels narrow (pairs one above the other)", (1, 8, 3, 16), (3, 3),
           (8, 3)),
    fc("depth 16 units 16 batch 8 (batches four at a time)", (8, 16), 16),
]  # fmt: skip
PAIR_NAMES = [
    f"mvepairs{i}_{at}" for i in range(len(MVE_PAIR_CASES)) for at in ("in-order", "pairs")
]
# micro_speech joins the second image: the first is at the ITCM's end.
MAIN_NAMES = ["demo_int8", *SHARED[1:], *map(case_stem, range(len(CASES))),
              *(f"{n}_overlap" for n in OVERLAP)]  # fmt: skip
OPS_NAMES = [SHARED[0], *(ops_stem(c.name) for c in OPS_CASES),
             *(f"{n}_overlap" for n in OPS_OVERLAP), *PAIR_NAMES]  # fmt: skip
OUTPUT_LINE = re.compile(r"^output (\d+) type=\d+ bytes=(\d+) crc32=([0-9a-f]{8})", re.M)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Every model of the image by name, each with every operator output as an output."""
    missing = [n for n in SHARED if not (SHARED_MODELS / f"{n}.tflite").exists()]
    if missing:
        pytest.skip(f"shared models absent (tests read ../shared/models): {', '.join(missing)}")
    originals = {n: (SHARED_MODELS / f"{n}.tflite").read_bytes() for n in SHARED}
    originals["demo_int8"] = build_demo_model()
    originals.update({case_stem(i): single_op_model(c) for i, c in enumerate(CASES)})
    originals.update({ops_stem(c.name): single_op_model(c) for c in OPS_CASES})
    originals.update({f"mvepairs{i}": single_op_model(c) for i, c in enumerate(MVE_PAIR_CASES)})
    every = {name: with_every_output(data)[0] for name, data in originals.items()}
    overlaps = {f"{n}_overlap": overlap_plan(originals[n]) for n in OVERLAP + OPS_OVERLAP}
    for i in range(len(MVE_PAIR_CASES)):
        for at, data in pair_plans(originals[f"mvepairs{i}"]).items():
            overlaps[f"mvepairs{i}_{at}"] = data
    return every | overlaps


def pair_plans(data: bytes) -> dict[str, bytes]:
    """The single-operator model with its input at the in-order rule's offset and at the
    Helium pairs' rule (16-byte aligned), checked against the replay of the pairs' loops."""
    m = Model(data)
    sg = m.subgraphs[0]
    k = microarena.MICROARENA.overlap_kernel(m, sg, sg.operators[0])
    assert k is not None
    if k.loop in ("conv", "fully_connected"):
        if k.loop == "conv":
            b, oh, ow, oc = k.out_shape
            rows, cin = b * oh * ow, k.in_shapes[0][3]
        else:
            rows, cin, oc = k.fc
        need = loops.mve_rows_need(rows, cin, oc, microarena.MVE_ROWS, microarena.MVE_CHANNELS)
        trace = partial(
            overlap_sim.mve_rows_trace, rows, cin, oc, microarena.MVE_ROWS, microarena.MVE_CHANNELS
        )
    else:
        columns = k.out_shape[2] < k.out_shape[1]
        args = (k.in_shapes[0], k.out_shape)
        need = loops.mve_depthwise_pairs_need(*args, *k.window, microarena.MVE_DW_LANES, columns)
        trace = partial(
            overlap_sim.mve_depthwise_trace,
            *args,
            k.window,
            microarena.MVE_DW_LANES,
            microarena.DW_BLOCK,
            columns,
        )
    in_order = align_up(loops.rule(k, 0))
    pairs = align_up(max(need, loops.rule(k, 0)))
    assert in_order < pairs
    assert overlap_sim.corrupted_read(trace(), 0, in_order, 1, 1) is not None
    assert overlap_sim.corrupted_read(trace(), 0, pairs, 1, 1) is None
    return {
        at: with_plan(data, overlap_layout(data, 0, d))
        for at, d in (("in-order", in_order), ("pairs", pairs))
    }


def overlap_plan(data: bytes) -> bytes:
    model = Model(data)
    result = plan_model(model, time_limit=1.5, lib=MICROARENA, overlap=True)
    assert result.shared, "the plan overlaps no operator's input and output"
    metadata.embed(model, result.tensor_offsets())
    return model.to_bytes()


@pytest.fixture(scope="module")
def images(models: dict[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two images: "main" (MAIN_NAMES) and "ops" (OPS_NAMES)."""
    built = {}
    for key, names in (("main", MAIN_NAMES), ("ops", OPS_NAMES)):
        folder = tmp_path_factory.mktemp(f"mve_models_{key}")
        paths = []
        for name in names:
            paths.append(folder / f"{name}.tflite")
            paths[-1].write_bytes(models[name])
        try:
            built[key] = build_image(BOARD, paths)
        except BuildError as exc:
            pytest.fail(str(exc))
    return built


def test_image_runs_the_mve_paths(images: dict[str, Path]) -> None:
    kernels = {"main": ("mak_mve_conv_s8", "mak_mve_dwconv_s8", "mak_mve_fc_s8"),
               "ops": ("mak_mve_binary_q8", "mak_mve_pool_s8", "mak_mve_sigmoid_q8",
                       "mak_mve_requant_to_s8")}  # fmt: skip
    for key, names in kernels.items():
        symbols = subprocess.run(
            ["arm-none-eabi-nm", str(images[key])], capture_output=True, text=True, check=True
        ).stdout
        for kernel in names:
            assert re.search(rf" T {kernel}$", symbols, re.M), kernel


def test_mve_cases_match_tflm_on_the_host(tmp_path: Path) -> None:
    """The cases this file adds, on the host build (portable paths) against TFLM."""
    results = run_cases(MVE_CASES, tmp_path)
    for case in MVE_CASES:
        check(case, results[case.name])


@pytest.mark.parametrize("name", MAIN_NAMES + OPS_NAMES)
def test_every_tensor_matches_tflm_on_the_m55(
    images: dict[str, Path], models: dict[str, bytes], name: str
):
    image = images["ops" if name in OPS_NAMES else "main"]
    result = emulate.run(BOARD, image, timeout=60, args=name)
    assert result.ok, result.uart_text[-2000:]
    assert_stack_margin(result.uart_text, BOARD, name, MVE_STACK_BUDGET)
    got = [(int(b), int(c, 16)) for _, b, c in OUTPUT_LINE.findall(result.uart_text)]
    stem = name.removesuffix("_overlap").removesuffix("_in-order").removesuffix("_pairs")
    original = models[stem] if stem != name else None
    want = run_tflm(original or models[name], deterministic=True).outputs
    if original:  # the planned copy keeps only the model's own outputs
        want = want[: len(got)]
    assert len(got) == len(want) >= 1
    for k, tensor in enumerate(want):
        data = tensor.tobytes()
        assert got[k] == (len(data), zlib.crc32(data)), f"{name}: output {k} differs"
