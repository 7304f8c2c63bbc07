"""A band copied onto itself on the ARM newlib build: memcpy(p, p, n) leaves p as it was.

host.plan --bands places each band's output where the joining CONCATENATION copies it (its
source and destination are one address). TFLM's reference concatenation copies with memcpy; on
x86 the pip TFLM shows it harmless (tests/planning/test_bands.py compares every byte of T).
Here newlib's memcpy, as a Cortex-M firmware links it (newlib-nano and full newlib), runs on
QEMU (mps2-an386) for offsets 0..7 and lengths 0..4096 through a volatile pointer.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_runtime_qemu import CC, CFLAGS, LINKER_SCRIPT, REPO

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("specs", [["--specs=nano.specs"], ["--specs=nosys.specs"]])
def test_newlib_memcpy_onto_itself(specs: list[str], tmp_path: Path) -> None:
    for tool in (CC, "qemu-system-arm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (.ci/setup installs it)")
    (tmp_path / "link.ld").write_text(LINKER_SCRIPT)
    elf = tmp_path / "memcpy.elf"
    subprocess.run(
        [CC, *CFLAGS, f"-I{REPO / 'firmware' / 'include'}", "-DMAIN_ELSEWHERE",
         str(HERE / "test_runtime_qemu_main.c"), str(HERE / "memcpy_onto_itself.c"),
         "-nostartfiles", *specs, f"-T{tmp_path / 'link.ld'}", "-o", str(elf)],
        check=True,
    )  # fmt: skip
    run = subprocess.run(
        ["qemu-system-arm", "-M", "mps2-an386", "-display", "none", "-monitor", "none",
         "-serial", "none", "-semihosting-config", "enable=on,target=native", "-kernel",
         str(elf)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, f"case {run.returncode - 1} changed bytes: {run.stderr}"
