"""Build the model-upload probe firmware (firmware/probe/) for an emulated MPS2 board.

The probe is one image for any model, so it is built directly with arm-none-eabi-gcc from the
board support (boards/), the runtime (firmware/src/) and firmware/probe/, with the same machine
flags as the PlatformIO builds, and rebuilt only when a source is newer than the image.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from host.paths import BUILD, REPO

PROBE_BUILD = BUILD / "probe"

# Boards whose UART0 is a CMSDK UART the probe can receive on, and where the 1 MiB model buffer
# and 2 MiB arena fit in RAM.
UART_BASE = {"mps2-an385": 0x40004000, "mps2-an386": 0x40004000, "mps2-an500": 0x40004000}


class ProbeBuildError(RuntimeError):
    pass


def _sources(board: str) -> list[Path]:
    common = REPO / "boards" / "common"
    src = REPO / "firmware" / "src"
    return [
        common / "startup.c",
        common / "print.c",
        common / "semihost.c",
        REPO / "boards" / board / "board.c",
        *_runtime_sources(src),
        *sorted((REPO / "firmware" / "probe").glob("*.c")),
    ]


def _runtime_sources(src: Path) -> list[Path]:
    """The runtime as firmware/Makefile builds it: no_kernels.c only when there are no kernels."""
    kernels = sorted((src / "kernels").glob("*.c"))
    core = [p for p in sorted(src.glob("*.c")) if p.name != "no_kernels.c" or not kernels]
    return core + kernels


def _machine_flags(build: dict) -> list[str]:
    flags = [f"-mcpu={build['cpu']}", "-mthumb"]
    if build.get("fpu"):
        return flags + [f"-mfloat-abi={build.get('float_abi', 'hard')}", f"-mfpu={build['fpu']}"]
    return flags + ["-mfloat-abi=soft"]


def build_probe(board: str, out_dir: Path = PROBE_BUILD) -> Path:
    """The probe image for `board` (built if missing or out of date)."""
    if board not in UART_BASE:
        raise ValueError(f"the probe runs on {', '.join(sorted(UART_BASE))}, not {board!r}")
    if shutil.which("arm-none-eabi-gcc") is None:
        raise ProbeBuildError("arm-none-eabi-gcc is not on PATH (Debian gcc-arm-none-eabi)")
    spec = json.loads((REPO / "boards" / board / "board.json").read_text())["build"]
    srcs = _sources(board)
    headers = [*REPO.glob("firmware/**/*.h"), *REPO.glob("boards/common/*.h")]
    elf = out_dir / board / "probe.elf"
    newest = max(p.stat().st_mtime for p in [*srcs, *headers])
    if elf.exists() and elf.stat().st_mtime > newest:
        return elf
    elf.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        "arm-none-eabi-gcc",
        *_machine_flags(spec),
        "-std=c11",
        "-O2",
        "-g",
        "-Wall",
        "-Wextra",
        "-ffunction-sections",
        "-fdata-sections",
        "-fno-common",
        f"-DF_CPU={spec['f_cpu']}",
        f'-DMA_BOARD_NAME="{board}"',
        "-DBOARD_EMULATED",
        f"-DPROBE_UART_BASE={UART_BASE[board]:#x}u",
        f"-I{REPO / 'boards' / 'common'}",
        f"-I{REPO / 'boards' / board}",
        f"-I{REPO / 'firmware' / 'include'}",
        f"-I{REPO / 'firmware' / 'src'}",
        f"-I{REPO / 'firmware' / 'src' / 'kernels'}",
        *map(str, srcs),
        f"-T{REPO / 'boards' / board / spec.get('ldscript', 'link.ld')}",
        f"-L{REPO / 'boards' / 'common'}",
        "-nostartfiles",
        "--specs=nano.specs",
        "-Wl,--gc-sections",
        "-Wl,--no-warn-rwx-segments",
        "-lc",
        "-lm",
        "-lgcc",
        "-o",
        str(elf.with_suffix(".tmp")),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise ProbeBuildError(f"building the probe for {board} failed:\n{tail}")
    elf.with_suffix(".tmp").replace(elf)
    return elf
