"""The Cortex-M0+'s int8 fast paths (ARMv6-M: fast_s8.c's LDRSB/MULS dot4 loop and window
copies, fast_depthwise_s8.c's multiplier-4k loop and byte-load forms, and the requantization
whose 64-bit product is built from 16-bit halves) on the mps2-an385-m0plus board against the
real TFLM.

That board runs code built with -mcpu=cortex-m0plus on QEMU's AN385 machine (QEMU 7.2's one
Cortex-M0 machine, microbit, has 16 KiB of RAM), whose Cortex-M3 would also run ARMv7-M
instructions: so the test also reads the image's disassembly and fails on any instruction
ARMv6-M lacks (32-bit encodings other than BL, MRS, MSR and the barriers; CBZ, CBNZ, IT),
which keeps the board's instruction counts an M0+'s.

One PlatformIO image (built once, or two halves where one does not fit) holds the CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED cases of test_conformance_fast_s8.py and the M3 test's
extra shapes; each runs on the firmware's deterministic input, and the CRC-32 of its output must
be TFLM's on the same input (support.fast_fuzz's QEMU check). The SVDF, LSTM and int8
TRANSPOSE_CONV cases of the conformance suite run too: SVDF's byte-wise memory push and
product and the four-row dot product those kernels share with CONV_2D (mak_dot4_rows) have
Armv6-M forms. The pool forms are the portable C of the host's conformance suite and of the
M3's QEMU test; each case here is a QEMU boot, so they are left out to keep the test short."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.conformance import single_op_model
from support.fast_fuzz import qemu_image
from support.tflm_oracle import run_tflm
from test_conformance_fast_s8 import CASES as FAST_S8_CASES
from test_conformance_recurrent import CASES as RECURRENT_CASES
from test_conformance_shape import CASES as SHAPE_CASES
from test_fast_m3_qemu import M3_CASES

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-objdump") is None,
    reason="needs qemu-system-arm and the arm-none-eabi tools (bash .ci/setup installs them)",
)

BOARD = "mps2-an385-m0plus"
CASES = [
    *FAST_S8_CASES,
    *M3_CASES,
    *RECURRENT_CASES,
    *[c for c in SHAPE_CASES if c.name.startswith("TRANSPOSE_CONV int8")],
]

# The 32-bit Thumb instructions ARMv6-M has; its 16-bit set lacks CBZ, CBNZ and IT.
V6M_WIDE = {"bl", "mrs", "msr", "dmb", "dsb", "isb", "udf.w"}
WIDE = re.compile(r"^\s*([0-9a-f]+):\t[0-9a-f]{4} [0-9a-f]{4}\s*\t(\S+)", re.M)
NARROW_V7 = re.compile(r"^\s*([0-9a-f]+):\t[0-9a-f]{4}\s*\t(cbn?z|it[te]{0,3})\s", re.M)


def not_v6m(elf: Path) -> list[str]:
    """The image's instructions outside ARMv6-M, as 'address mnemonic'."""
    text = subprocess.run(
        ["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    wide = [f"{a} {m}" for a, m in WIDE.findall(text) if m not in V6M_WIDE]
    return wide + [f"{a} {m}" for a, m in NARROW_V7.findall(text)]


def test_isa_check_finds_armv7m_instructions(tmp_path: Path) -> None:
    """The check itself: an object built for the M3 has instructions it flags."""
    src = tmp_path / "f.c"
    src.write_text("int f(int *p, int n) { int s = 0; for (int i = 0; i < n; ++i) s += p[i] * n;"
                   " return n ? s / n : 0; }\n")  # fmt: skip
    for cpu, flagged in (("cortex-m3", True), ("cortex-m0plus", False)):
        obj = tmp_path / f"{cpu}.o"
        subprocess.run(
            ["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-O2", "-c", str(src), "-o", str(obj)],
            check=True,
        )
        assert bool(not_v6m(obj)) == flagged, cpu


def test_fast_paths_on_the_m0plus_equal_tflm() -> None:
    runnable = [
        (case, model, run_tflm(model, deterministic=True).outputs)
        for case in CASES
        for model in [single_op_model(case)]
    ]
    foreign: list[str] = []
    verdicts = qemu_image(BOARD, runnable, lambda elf: foreign.extend(not_v6m(elf)))
    assert not foreign, f"instructions ARMv6-M lacks: {foreign[:10]}"
    bad = [f"{v.case.name}: {v.kind} {v.detail[:300]}" for v in verdicts if v.kind != "ok"]
    assert not bad, "\n".join(bad)
    assert len(verdicts) == len(CASES)
