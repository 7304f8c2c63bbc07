"""The Cortex-M4F build of the runtime on QEMU (mps2-an386): real ARM code, real emulator.

For several shared models a firmware is linked from build/arm/libmicroarena.a (all kernels,
-Os) and a driver (tests/test_runtime_qemu_main.c) whose static arena is exactly
`host.runtime.arena.predict(model, abi="cortex-m")["required"]` bytes. The test checks that
the model loads in that arena, that the board's head equals the prediction and its tail is
within it (equal when the kernels' op data holds no pointers: the prediction takes kernel
sizes from the 64-bit host build), and that the outputs equal the host build's on the same
inputs (int8 bit-exact, float within 1e-5).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.conformance import single_op_model
from support.overlap_models import DEPTHWISE_FOURS, PAIR_CASES, overlap_layout, with_plan
from test_conformance_fast_elementwise import CASES as FAST_ELEMENTWISE_CASES
from test_conformance_fast_pool import CASES as FAST_POOL_CASES
from test_conformance_fast_s8 import CASES as FAST_S8_CASES
from test_conformance_fast_unary import CASES as FAST_UNARY_CASES
from test_conformance_recurrent import CASES as RECURRENT_CASES
from test_conformance_shape import CASES as SHAPE_CASES

from host.paths import SHARED_MODELS
from host.planning.libraries import loops
from host.planning.libraries.microarena import MICROARENA
from host.planning.model import metadata
from host.planning.model.lifetimes import align_up
from host.planning.plan import plan_model
from host.runtime import arena
from host.runtime.binding import Interpreter, MicroarenaError
from host.runtime.sources import read_build_mk
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]
MODELS = SHARED_MODELS
CC = "arm-none-eabi-gcc"
_MK = read_build_mk()
CFLAGS = [*_MK["MA_ARM_M4F"], *_MK["MA_ARM_FLAGS"], *_MK["MA_WARN"], "-Werror"]  # as `make arm`
LINKER_SCRIPT = """
MEMORY { FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 4M
         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 4M }
SECTIONS {
  .text : { KEEP(*(.isr_vector)) *(.text*) *(.rodata*) . = ALIGN(16); } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  _sidata = LOADADDR(.data);
  .data : { _sdata = .; *(.data*) . = ALIGN(4); _edata = .; } > RAM AT > FLASH
  .bss (NOLOAD) : { _sbss = .; *(.bss*) *(COMMON) . = ALIGN(4); _ebss = .; } > RAM
  end = .; _end = .;
  _estack = ORIGIN(RAM) + LENGTH(RAM);
}
"""
MODEL_ASM = """  .section .rodata
  .balign 16
  .global model_data
  .global model_end
model_data:
  .incbin "{path}"
model_end:
"""
CASES = [
    "tflm_hello_world_int8",
    "tflm_hello_world_float",
    "tflm_micro_speech_int8",
    "tiny_ad_autoencoder_int8",
    "tiny_ic_resnet8_int8",
    "litert_while_multi_subgraphs",
    "litert_resource_vars_fc",
    "tflm_keyword_scrambled_int8",
    "tflm_mnist_lstm_float",
    "tiny_vww_mobilenet_int8",
    "tflm_person_detect_int8",
    "litert_call_once_mul",
    "litert_nested_while",
]
OVERLAP_CASES = ["tflm_person_detect_int8", "tiny_vww_mobilenet_int8", "tiny_kws_dscnn_int8"]


def _pattern(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """tests/test_runtime_qemu_main.c fill()."""
    i = np.arange(int(np.prod(shape)) if shape else 1)
    if dtype == np.float32:
        return ((i % 17 - 8) / 8.0).astype(np.float32).reshape(shape)
    if dtype == np.int8:
        return ((i * 7) % 256 - 128).astype(np.int8).reshape(shape)
    return np.zeros(shape, dtype)


@pytest.fixture(scope="module")
def arm_library() -> Path:
    for tool in (CC, "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (.ci/setup installs it)")
    subprocess.run(["make", "-s", "-C", str(REPO / "firmware"), "arm"], check=True)
    return REPO / "build" / "arm" / "libmicroarena.a"


@pytest.mark.parametrize("name", CASES)
def test_model_on_qemu_cortex_m4(name: str, arm_library: Path, tmp_path: Path) -> None:
    path = MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (tests read ../shared/models)")
    _check_on_qemu(path, arm_library, tmp_path)


@pytest.mark.parametrize("name", OVERLAP_CASES)
def test_overlap_plan_on_qemu_cortex_m4(name: str, arm_library: Path, tmp_path: Path) -> None:
    """A plan whose operators write over their inputs (--overlap --runtime microarena): the
    board accepts it, reports the predicted head, and its outputs equal the host build's
    without a plan."""
    path = MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (tests read ../shared/models)")
    model = Model(path.read_bytes(), name)
    result = plan_model(model, time_limit=1.5, lib=MICROARENA, overlap=True)
    assert result.shared and result.head < result.lower_bound
    metadata.embed(model, result.tensor_offsets())
    planned = tmp_path / "planned.tflite"
    planned.write_bytes(model.to_bytes())
    host = _check_on_qemu(planned, arm_library, tmp_path)
    plain = Interpreter(path.read_bytes())
    for i in range(plain.num_inputs()):
        d = plain.input_details(i)
        plain.set_input(i, _pattern(d.shape, d.dtype))
    plain.invoke()
    for o in range(plain.num_outputs()):
        np.testing.assert_array_equal(host.get_output(o), plain.get_output(o))


@pytest.mark.parametrize("case", list(PAIR_CASES))
def test_pair_rule_on_qemu_cortex_m4(case: str, arm_library: Path, tmp_path: Path) -> None:
    """fast_s8.c's pixel and row pairs on the DSP build (overlap.c's pair rules): with the
    input at the in-order rule's offset above the output (pairs there would read overwritten
    bytes) and at the pairs' rule, the board's output equals the host build's and the real
    TFLM's on the same input (the model without a plan), byte for byte."""
    from support.kernel_harness import tflm_run
    from test_overlap_fast_pairs_run import planned

    plain = tmp_path / "plain.tflite"
    plain.write_bytes(PAIR_CASES[case](np.random.default_rng(7))[0])
    sg = Model(plain.read_bytes()).subgraphs[0]
    x = _pattern(tuple(sg.tensors[sg.inputs[0]].shape), np.int8)
    want = tflm_run(plain, [x])[0].get_output(0)
    for name, data in planned(case).items():
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(data)
        host = _check_on_qemu(path, arm_library, tmp_path)
        np.testing.assert_array_equal(host.get_output(0), want, err_msg=name)


def test_dsp_depthwise_pixels_on_an_overlap_on_qemu_cortex_m4(arm_library: Path,
                                                              tmp_path: Path) -> None:  # fmt: skip
    """fast_depthwise_s8.c's whole 3x3 pixels (blocks of four channels) on an input at the
    in-order depthwise rule's offset above the output (mak_dw_blocks_fit): every output byte is
    the real TFLM's on the same input (the model without a plan)."""
    from support.kernel_harness import tflm_run

    data = DEPTHWISE_FOURS(np.random.default_rng(3))[0]
    plain = tmp_path / "plain.tflite"
    plain.write_bytes(data)
    m = Model(data)
    k = MICROARENA.overlap_kernel(m, m.subgraphs[0], m.subgraphs[0].operators[0])
    assert k is not None
    offsets = overlap_layout(data, 0, align_up(loops.rule(k, 0)))
    assert offsets is not None  # the input overlaps the output
    path = tmp_path / "planned.tflite"
    path.write_bytes(with_plan(data, offsets))
    sg = m.subgraphs[0]
    x = _pattern(tuple(sg.tensors[sg.inputs[0]].shape), np.int8)
    host = _check_on_qemu(path, arm_library, tmp_path)
    np.testing.assert_array_equal(host.get_output(0), tflm_run(plain, [x])[0].get_output(0))


TCONV_S8_CASES = [c for c in SHAPE_CASES if c.name.startswith("TRANSPOSE_CONV int8")]
# LOGISTIC and TANH int8: kernel_util.h's fixed point with SMMULR; one fine and one coarse
# input scale each (every int8 value, both saturation radii).
SIGMOID_CASES = [c for c in FAST_UNARY_CASES if c.op in ("LOGISTIC", "TANH") and
                 ("fine" in c.name or "coarse" in c.name)]  # fmt: skip
# QUANTIZE of equal scales: the offset a word at a time (QADD8 on the DSP; the camera input's
# offset of 0, one flip of the top bits).
OFFSET_CASES = [c for c in FAST_UNARY_CASES if c.op == "QUANTIZE" and
                ("equal scales" in c.name or "camera" in c.name)]  # fmt: skip
FAST_CASES = [*FAST_S8_CASES, *FAST_ELEMENTWISE_CASES, *FAST_POOL_CASES, *RECURRENT_CASES,
              *TCONV_S8_CASES, *SIGMOID_CASES, *OFFSET_CASES]  # fmt: skip


@pytest.mark.parametrize("case", FAST_CASES, ids=str)
def test_fast_case_on_qemu_cortex_m4(case, arm_library: Path, tmp_path: Path) -> None:
    """The DSP instructions of the fast int8 paths (fast_s8.c, fast_depthwise_s8.c,
    elementwise.c's ADD/SUB/MUL with SMMULR, the int8 pools' SXTAB16 and SSUB8/SEL, LOGISTIC and
    TANH's fixed point with SMMULR (kernel_util.h), the dot
    products of SVDF, the LSTM and TRANSPOSE_CONV); the host build runs their
    portable form, checked against TFLM by the conformance modules these cases come from:
    outputs equal the host build's (one invocation)."""
    path = tmp_path / "case.tflite"
    path.write_bytes(single_op_model(case))
    _check_on_qemu(path, arm_library, tmp_path)


def _check_on_qemu(path: Path, arm_library: Path, tmp_path: Path) -> Interpreter:
    """Run the model at `path` on QEMU in its predicted arena: head as predicted, outputs as
    the host build's (returned, after its run on the same inputs)."""
    data = path.read_bytes()
    try:
        host = Interpreter(data)
    except MicroarenaError as e:
        pytest.skip(f"runtime says: {e.message}")
    predicted = arena.predict(data, abi="cortex-m")
    (tmp_path / "link.ld").write_text(LINKER_SCRIPT)
    (tmp_path / "model.S").write_text(MODEL_ASM.format(path=path))
    elf = tmp_path / "fw.elf"
    inc = [f"-I{REPO / 'firmware' / 'include'}"]
    subprocess.run(
        [
            CC,
            *CFLAGS,
            *inc,
            f"-DARENA_BYTES={predicted['required']}",
            str(Path(__file__).with_name("test_runtime_qemu_main.c")),
            str(tmp_path / "model.S"),
            str(arm_library),
            "-nostartfiles",
            "--specs=nano.specs",
            "-Wl,--gc-sections",
            f"-T{tmp_path / 'link.ld'}",
            "-lm",
            "-o",
            str(elf),
        ],
        check=True,
    )
    run = subprocess.run(
        [
            "qemu-system-arm",
            "-M",
            "mps2-an386",
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            "none",
            "-chardev",
            "stdio,id=sh",  # semihosting output to stdout (its default is stderr)
            "-semihosting-config",
            "enable=on,target=native,chardev=sh",
            "-kernel",
            str(elf),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    nums = dict(re.findall(r"Arena allocation (head|tail|total) (\d+) bytes", run.stdout))
    assert int(nums["head"]) == predicted["head"]
    assert int(nums["tail"]) <= predicted["tail"]
    required = int(re.search(r"Arena required (\d+) bytes", run.stdout).group(1))
    assert required <= predicted["required"]
    # Same inputs on the host build; outputs must agree.
    for i in range(host.num_inputs()):
        d = host.input_details(i)
        host.set_input(i, _pattern(d.shape, d.dtype))
    host.invoke()
    boards = dict(re.findall(r"output (\d+):([0-9a-f]*)", run.stdout))
    for o in range(host.num_outputs()):
        want = host.get_output(o)
        got = np.frombuffer(bytes.fromhex(boards[str(o)]), want.dtype).reshape(want.shape)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(got, want)
    return host
