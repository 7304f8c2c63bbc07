"""Build the model-upload probe firmware (firmware/apps/probe/) for an emulated MPS2 board.

The probe is one image for any model, so it is built directly with arm-none-eabi-gcc from the
board support (boards/), the runtime and firmware/apps/probe/, with the sources and flags of
firmware/build.mk as the PlatformIO builds use them, and rebuilt only when a source is newer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from host.device.firmware import board_defines, board_sources, machine_flags, runtime_build
from host.paths import BOARDS, BUILD, FIRMWARE

PROBE_BUILD = BUILD / "probe"

# Boards whose UART0 is a CMSDK UART the probe can receive on, and where the 1 MiB model buffer
# and 2 MiB arena fit in RAM.
PROBE_BOARDS = ("mps2-an385", "mps2-an386", "mps2-an500")


class ProbeBuildError(RuntimeError):
    pass


def _sources(board: str, spec: dict) -> list[Path]:
    apps = sorted((FIRMWARE / "apps" / "probe").glob("*.c"))
    return [*board_sources(board, spec, emulated=True), *runtime_build().sources, *apps]


def build_probe(board: str, out_dir: Path = PROBE_BUILD) -> Path:
    """The probe image for `board` (built if missing or out of date)."""
    if board not in PROBE_BOARDS:
        raise ValueError(f"the probe runs on {', '.join(PROBE_BOARDS)}, not {board!r}")
    if shutil.which("arm-none-eabi-gcc") is None:
        raise ProbeBuildError("arm-none-eabi-gcc is not on PATH (Debian gcc-arm-none-eabi)")
    spec = json.loads((BOARDS / board / "board.json").read_text())["build"]
    srcs = _sources(board, spec)
    headers = [*FIRMWARE.glob("**/*.h"), *(BOARDS / "common").glob("*.h"), FIRMWARE / "build.mk"]
    elf = out_dir / board / "probe.elf"
    newest = max(p.stat().st_mtime for p in [*srcs, *headers])
    if elf.exists() and elf.stat().st_mtime > newest:
        return elf
    elf.parent.mkdir(parents=True, exist_ok=True)
    rt = runtime_build()
    defines = [f"-D{k}={v}" for k, v in board_defines(board, spec)]
    cmd = [
        "arm-none-eabi-gcc",
        *machine_flags(spec),
        *rt.warn,
        *rt.arm_flags,
        *defines,
        "-DBOARD_EMULATED",
        f"-I{BOARDS / 'common'}",
        f"-I{BOARDS / board}",
        *[f"-I{d}" for d in rt.include_dirs],
        *map(str, srcs),
        f"-T{BOARDS / board / spec.get('ldscript', 'link.ld')}",
        f"-L{BOARDS / 'common'}",
        *rt.arm_link,
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
