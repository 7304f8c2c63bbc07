"""Bad nodes fail with clear messages, hostile values stay defined under UBSan, and every
kernel compiles warning-free without mutable globals."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from support.kernel_harness import (
    F32,
    I8,
    I16,
    I32,
    I64,
    KERNELS,
    REPO,
    hand,
    run_hand_node,
)

from host.runtime.sources import read_build_mk

Q = {"scale": 0.1, "zp": 0}
BAD_NODES: dict[str, tuple[str, list, list, dict, int, tuple[str, str, str]]] = {
    "FC bias size": ("FULLY_CONNECTED", [hand((1, 8), I8, **Q), hand((4, 8), I8, np.ones(32), **Q),
        hand((3,), I32, np.ones(3))], [hand((1, 4), I8, **Q)], {}, 1 << 16,
        ("prepare", "MODEL", "FULLY_CONNECTED: bias has 3 values for 4 units")),
    "FC missing filter": ("FULLY_CONNECTED", [hand((1, 8), I8, **Q), None],
        [hand((1, 4), I8, **Q)], {}, 1 << 16, ("prepare", "MODEL", "FULLY_CONNECTED: input 1 is")),
    "FC short tensor": ("FULLY_CONNECTED", [hand((1, 8), I8, nbytes=4, **Q),
        hand((4, 8), I8, np.ones(32), **Q)], [hand((1, 4), I8, **Q)], {}, 1 << 16,
        ("prepare", "MODEL", "bytes for its shape")),
    "CONV output size": ("CONV_2D", [hand((1, 5, 5, 2), F32), hand((3, 3, 3, 2), F32, np.ones(54))],
        [hand((1, 4, 3, 3), F32)], {0: 1, 1: 1, 2: 1}, 1 << 16,
        ("prepare", "MODEL", "CONV_2D: output size 4, geometry gives 3")),
    "CONV zero input channels": ("CONV_2D", [hand((1, 5, 5, 0), F32),
        hand((3, 3, 3, 2), F32, np.ones(54))], [hand((1, 3, 3, 3), F32)], {0: 1, 1: 1, 2: 1},
        1 << 16, ("prepare", "MODEL", "CONV_2D: 0 -> 3 channels")),
    "CONV tanh activation": ("CONV_2D", [hand((1, 5, 5, 2), F32),
        hand((3, 3, 3, 2), F32, np.ones(54))], [hand((1, 3, 3, 3), F32)],
        {0: 1, 1: 1, 2: 1, 3: 4}, 1 << 16, ("prepare", "UNSUPPORTED", "fused activation 4")),
    "CONV zero stride": ("CONV_2D", [hand((1, 5, 5, 2), F32), hand((3, 3, 3, 2), F32, np.ones(54))],
        [hand((1, 3, 3, 3), F32)], {0: 1, 1: 0, 2: 1}, 1 << 16, ("prepare", "MODEL", "bad stride")),
    "ADD int64": ("ADD", [hand((4,), I64), hand((4,), I64)], [hand((4,), I64)], {}, 1 << 16,
        ("prepare", "UNSUPPORTED", "ADD: input type INT64")),
    "ADD no broadcast": ("ADD", [hand((3, 4), F32), hand((3,), F32)], [hand((3, 4), F32)], {},
        1 << 16, ("prepare", "MODEL", "ADD: shapes do not broadcast")),
    "SOFTMAX int8 output zero point": ("SOFTMAX", [hand((1, 5), I8, **Q)],
        [hand((1, 5), I8, scale=1 / 256, zp=0)], {0: 1.0}, 1 << 16,
        ("prepare", "UNSUPPORTED", "SOFTMAX: output must have zero point -128")),
    "LOGISTIC int8 output scale": ("LOGISTIC", [hand((5,), I8, **Q)], [hand((5,), I8, **Q)], {},
        1 << 16, ("prepare", "UNSUPPORTED", "LOGISTIC: int8 output must")),
    "CONCATENATION axis": ("CONCATENATION", [hand((2, 3), F32), hand((2, 3), F32)],
        [hand((2, 6), F32)], {0: 2}, 1 << 16, ("prepare", "MODEL", "axis 2 outside rank 2")),
    "TRANSPOSE repeated axis": ("TRANSPOSE", [hand((2, 3), F32), hand((2,), I32, [0, 0])],
        [hand((2, 2), F32)], {}, 1 << 16, ("prepare", "MODEL", "TRANSPOSE: bad permutation")),
    "RESHAPE size": ("RESHAPE", [hand((2, 3), F32)], [hand((7,), F32)], {}, 1 << 16,
        ("prepare", "MODEL", "RESHAPE: 6 elements in, 7 out")),
    "GATHER index out of range": ("GATHER", [hand((4, 2), F32), hand((2,), I32, [1, 4])],
        [hand((2, 2), F32)], {}, 1 << 16, ("eval", "KERNEL", "GATHER: index 4 outside [0, 4)")),
    "PAD negative": ("PAD", [hand((2, 2), F32), hand((2, 2), I32, [[0, 0], [-1, 3]])],
        [hand((2, 4), F32)], {}, 1 << 16, ("prepare", "MODEL", "PAD: paddings do not give")),
    "int8 zero point out of range": ("FULLY_CONNECTED", [hand((1, 8), I8, scale=0.1, zp=1 << 30),
        hand((4, 8), I8, np.ones(32), **Q)], [hand((1, 4), I8, **Q)], {}, 1 << 16,
        ("prepare", "MODEL", "has a zero point outside INT8")),
    "tail exhausted": ("CONV_2D", [hand((1, 5, 5, 2), I8, **Q), hand((3, 3, 3, 2), I8,
        np.ones(54), **Q)], [hand((1, 3, 3, 3), I8, **Q)], {0: 1, 1: 1, 2: 1}, 32,
        ("prepare", "ARENA", "tail needs")),
    "no kernel": ("LSH_PROJECTION", [hand((1, 4), F32)], [hand((1, 4), F32)], {},
        1 << 16, ("prepare", "UNSUPPORTED", "no kernel for builtin 15")),
    "LSTM peephole": ("UNIDIRECTIONAL_SEQUENCE_LSTM", [hand((1, 2, 4), F32)] + [None] * 8
        + [hand((4,), F32)] + [None] * 14, [hand((1, 2, 4), F32)], {}, 1 << 16,
        ("prepare", "UNSUPPORTED", "peephole connections")),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_NODES)
def test_bad_node_fails_with_a_clear_message(lib: ctypes.CDLL, case: str) -> None:
    code, ins, outs, slots, tail, (phase, status, text) = BAD_NODES[case]
    got = run_hand_node(lib, code, ins, outs, slots, tail)
    assert got[:2] == (phase, status), got
    assert text in got[2], got


# ----------------------------------------------------------------------------- build rules

ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


@pytest.mark.parametrize(
    "compiler,flags",
    [("gcc", []), ("clang", []), ("arm-none-eabi-gcc", ARM_FLAGS),
     ("arm-none-eabi-gcc", ["-mcpu=cortex-m3", "-mthumb"]),
     ("arm-none-eabi-gcc", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"])],
)  # fmt: skip
def test_kernels_compile_warning_free_without_mutable_globals(
    tmp_path: Path, compiler: str, flags: list[str]
) -> None:
    """C11, -Wall -Wextra -Werror, and no writable data (.data/.bss) in any kernel object."""
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    size = "arm-none-eabi-size" if compiler.startswith("arm") else "size"

    def compile_and_check(src: Path) -> None:
        obj = tmp_path / (src.stem + ".o")
        cmd = [compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", *flags,
               f"-I{REPO / 'firmware' / 'include'}", f"-I{KERNELS}",
               "-c", str(src), "-o", str(obj)]  # fmt: skip
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, f"{src.name}: {res.stderr}"
        sections = subprocess.run([size, "-A", str(obj)], capture_output=True, text=True,
                                  check=True).stdout.splitlines()  # fmt: skip
        # Relocated constant tables (.data.rel.ro on PIE hosts) are read-only after loading.
        writable = [ln for ln in sections if ln.split()[:1] and
                    re.match(r"\.(data|bss)(?!\.rel\.ro)", ln.split()[0]) and
                    int(ln.split()[1]) > 0]  # fmt: skip
        assert not writable, f"{src.name} has mutable globals: {writable}"

    # One compiler per core: the files are independent.
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(compile_and_check, sorted(KERNELS.rglob("*.c"))))


def test_only_fast_arch_h_tests_the_target() -> None:
    """fast/arch.h is the one test of the target's features: no other kernel file asks the
    compiler's __ARM_* or __arm__ macros (docs/architecture.md, "Where to add")."""
    raw = re.compile(r"__ARM_\w+|__arm__")
    arch = KERNELS / "fast" / "arch.h"
    assert raw.search(arch.read_text())
    found = {
        f"{p.relative_to(KERNELS)}: {m}"
        for p in sorted(KERNELS.rglob("*.[ch]"))
        if p != arch
        for m in raw.findall(p.read_text())
    }
    assert not found, sorted(found)


# Inline assembly, an intrinsics header, or a call of a Helium or DSP intrinsic.
ISA_CODE = re.compile(
    r"__asm__|\basm\s*\(|<arm_(?:mve|acle)\.h>"  # assembly, the intrinsics headers
    r"|\bv\w+q(?:_\w+)?\s*\("  # Helium's vaddq_s32(, vctp8q(, ...
    r"|\b__(?:sxt|smla|smul|smmul|ssat|usat|qadd|qsub|sel|ssub)\w*\s*\("  # ACLE's DSP
)
# fast/arch.h's feature macros (FAST_FPU aside: quantize.c's one float form).
ARCH_TEST = re.compile(r"\bFAST_(?:DSP|V7M|V6M|HOST|SAT|MVE)\b")
# The one #if ladder of each entry family (docs/architecture.md, "Where to add").
DISPATCH_HEADERS = {
    "fast/arch.h",
    "fast/fast_core_steps.h",  # fast_s8_core.h's steps
    "fast/fast_dot_s8.h",  # the dot products (Helium's, or DOT4_ROWS)
    "fast/fast_dw_steps.h",  # fast_depthwise_s8.c's steps
    "fast/fast_fixed_steps.h",  # kernel_util.h's mak_dhm_2a and mak_clamp
    "fast/fast_s8_steps.h",  # fast_s8.c's steps
    "fast/fast_svdf_steps.h",  # svdf.c's steps
}
# The portable entries that ask an architecture's step first, one call or include each
# (docs/architecture.md, "Where to add", lists them).
ENTRY_CALLS = {
    "elementwise.c",
    "lstm.c",
    "pooling.c",
    "quantize.c",
    "shape_ops.c",
    "transpose_conv.c",
}


def without_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def portable_files() -> dict[str, str]:
    """fast/'s top-level files and the portable kernels (not the architectures' folders),
    by path under kernels/, their text without comments."""
    files = [*KERNELS.glob("*.[ch]"), *(KERNELS / "fast").glob("*.[ch]")]
    return {str(p.relative_to(KERNELS)): without_comments(p.read_text()) for p in files}


def test_portable_kernels_hold_no_isa_code() -> None:
    """The optimised forms live in their architecture's folder under fast/ (docs/architecture.md,
    "Where to add"): no portable kernel file and none of fast/'s top-level files holds inline
    assembly, an intrinsics header or a call of a Helium or DSP intrinsic."""
    files = portable_files()
    found = {f"{name}: {m}" for name, text in files.items() for m in ISA_CODE.findall(text)}
    assert not found, sorted(found)


def test_only_dispatch_headers_test_the_architecture() -> None:
    """Outside the architectures' folders only the dispatch headers (one #if ladder per entry
    family) and the portable entries' dispatching calls ask FAST_DSP, FAST_V7M, FAST_V6M,
    FAST_HOST, FAST_SAT or FAST_MVE: the loops call one step name that every architecture's
    header provides, and a strategy is a named choice (FAST_WORDS, FAST_DIV_CALL, ...) defined
    in fast/arch.h or beside a ladder."""
    files = portable_files()
    allowed = DISPATCH_HEADERS | ENTRY_CALLS
    assert allowed <= set(files), sorted(allowed - set(files))
    found = {
        f"{name}: {m}"
        for name, text in files.items()
        if name not in allowed
        for m in set(ARCH_TEST.findall(text))
    }
    assert not found, sorted(found)


def test_every_kernel_folder_is_built() -> None:
    """Every folder of kernel sources (an architecture's under fast/) is in build.mk's
    MA_KERNEL_DIRS, which the Makefile, CMake, microarena.mk and PlatformIO builds read: a
    folder left out would not be compiled anywhere."""
    firmware = REPO / "firmware"
    listed = {firmware / d for d in read_build_mk()["MA_KERNEL_DIRS"]}
    folders = {p.parent for p in KERNELS.rglob("*.c")}
    assert folders == listed, sorted(map(str, folders ^ listed))


HOSTILE_NODES: dict[str, tuple[str, list, list, dict]] = {
    "FC int32 accumulator overflow": ("FULLY_CONNECTED", [hand((1, 70000), I8,
        np.full(70000, 127), 0.1, -128), hand((2, 70000), I8, np.full(140000, 127), 0.1)],
        [hand((1, 2), I8, scale=0.1)], {}),
    "CONV tiny output scale with RELU6": ("CONV_2D", [hand((1, 3, 3, 2), I8, **Q),
        hand((1, 3, 3, 2), I8, np.ones(18), **Q)], [hand((1, 1, 1, 1), I8, scale=1e-38, zp=5)],
        {0: 1, 1: 1, 2: 1, 3: 3}),
    "FC huge multiplier with output offset": ("FULLY_CONNECTED", [hand((1, 4), I8,
        [-128, 127, -128, 127], 1.0, 0), hand((3, 4), I8, [127, -127] * 6, 1.0)],
        [hand((1, 3), I8, scale=1e-30, zp=-128)], {}),
    "DEQUANTIZE huge scale": ("DEQUANTIZE", [hand((3,), I8, [-128, 0, 127], 3e38, 0)],
        [hand((3,), F32)], {}),
    "QUANTIZE NaN and infinity": ("QUANTIZE", [hand((3,), F32, [np.nan, np.inf, -np.inf])],
        [hand((3,), I8, scale=0.1, zp=3)], {}),
    "SOFTMAX NaN beta": ("SOFTMAX", [hand((1, 5), I8, **Q)],
        [hand((1, 5), I8, scale=1 / 256, zp=-128)], {0: float("nan")}),
    "AVERAGE_POOL_2D huge window": ("AVERAGE_POOL_2D", [hand((1, 300, 300, 1), I8,
        np.full(90000, 127), **Q)], [hand((1, 1, 1, 1), I8, **Q)],
        {0: 1, 1: 1, 2: 1, 3: 300, 4: 300}),
    "BATCH_MATMUL int8 accumulator overflow": ("BATCH_MATMUL", [hand((1, 70000), I8,
        np.full(70000, 127), 0.1, -128), hand((70000, 2), I8, np.full(140000, 127), 0.1, -128)],
        [hand((1, 2), I8, scale=0.1)], {}),
    "BATCH_MATMUL int16 tiny output scale": ("BATCH_MATMUL", [hand((1, 4), I16,
        np.full(4, 32767), 1.0), hand((4, 1), I16, np.full(4, 32767), 1.0)],
        [hand((1, 1), I16, scale=1e-30)], {}),
    "TRANSPOSE_CONV int8 accumulator and bias overflow": ("TRANSPOSE_CONV",
        [hand((4,), I32, [1, 1, 1, 1]), hand((1, 1, 1, 70000), I8, np.full(70000, 127), 0.1),
        hand((1, 1, 1, 70000), I8, np.full(70000, 127), 0.1, -128),
        hand((1,), I32, [2**31 - 1])], [hand((1, 1, 1, 1), I8, scale=0.1)],
        {0: 1, 1: 1, 2: 1}),
    "TRANSPOSE_CONV int16 extreme int64 bias": ("TRANSPOSE_CONV",
        [hand((4,), I32, [1, 1, 1, 1]), hand((1, 1, 1, 2), I8, [127, 127], 1.0),
        hand((1, 1, 1, 2), I16, [32767, 32767], 1.0), hand((1,), I64, [2**63 - 1])],
        [hand((1, 1, 1, 1), I16, scale=1e-30)], {0: 1, 1: 1, 2: 1}),
    "STRIDED_SLICE extreme indices and strides": ("STRIDED_SLICE", [hand((3, 4), F32,
        np.zeros(12)), hand((2,), I32, [-1, 2**31 - 1]), hand((2,), I32, [2**31 - 1, 0]),
        hand((2,), I32, [2**31 - 1, -2**31])], [hand((1, 1), F32)], {}),
}  # fmt: skip


@pytest.mark.parametrize("case", HOSTILE_NODES)
def test_hostile_values_stay_defined(lib: ctypes.CDLL, case: str) -> None:
    """Values a hostile model can carry run without undefined behaviour (the harness is built
    with -fsanitize=undefined -fno-sanitize-recover, so UB would abort the test)."""
    code, ins, outs, slots = HOSTILE_NODES[case]
    phase, status, msg = run_hand_node(lib, code, ins, outs, slots)
    assert status in ("OK", "UNSUPPORTED", "MODEL"), (phase, status, msg)
