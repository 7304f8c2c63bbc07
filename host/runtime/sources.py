"""The runtime's C sources as firmware/build.mk lists them, and the operators its registry and
core run: facts read from the firmware folder, for every Python builder (the PlatformIO builder,
the probe build, tests) and for `python -m host.run --list-ops`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from host.paths import FIRMWARE

BUILD_MK = FIRMWARE / "build.mk"
_ASSIGN = re.compile(r"^([A-Z0-9_]+)\s*:=\s*(.*)$")
REGISTRY = FIRMWARE / "src" / "kernels" / "registry.c"


def read_build_mk(path: Path = BUILD_MK) -> dict[str, list[str]]:
    """`NAME := words` lines (with backslash continuations) as NAME -> words."""
    values: dict[str, list[str]] = {}
    text = re.sub(r"\\\n", " ", path.read_text())
    for line in text.splitlines():
        m = _ASSIGN.match(line.strip())
        if m:
            values[m.group(1)] = m.group(2).split()
    return values


@dataclass(frozen=True)
class RuntimeBuild:
    sources: list[Path]  # core + wire + every kernel
    include_dirs: list[Path]
    warn: list[str]
    arm_flags: list[str]  # without -mcpu/-mfpu (those are the board's)
    arm_link: list[str]


def runtime_build(firmware: Path = FIRMWARE) -> RuntimeBuild:
    mk = read_build_mk(firmware / "build.mk")
    kernels = sorted(src for d in mk["MA_KERNEL_DIRS"] for src in (firmware / d).glob("*.c"))
    return RuntimeBuild(
        sources=[firmware / s for s in mk["MA_CORE_SRC"]] + kernels,
        include_dirs=[firmware / d for d in mk["MA_INCLUDE_DIRS"]],
        warn=mk["MA_WARN"],
        arm_flags=mk["MA_ARM_FLAGS"],
        arm_link=mk["MA_ARM_LINK"],
    )


# Operators the runtime's core runs itself (firmware/src/core/control.c), not a kernel.
CORE_OPS = ["IF", "WHILE", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"]


def runtime_operators() -> list[str]:
    """Every operator the runtime has code for: the kernel registry's and the core's."""
    return sorted({op for op, _ in registered_kernels()} | set(CORE_OPS))


def registered_kernels(registry: Path = REGISTRY) -> list[tuple[str, str]]:
    """(operator, kernel symbol) for every registry entry: builtin KERNEL(OP, mak_x) lines and
    the custom-operator name table."""
    src = registry.read_text()
    builtin = re.findall(r"^\s*KERNEL\((\w+), (mak_\w+)\);", src, re.M)
    return builtin + re.findall(r'\{"(\w+)", MA_KEEP_CUSTOM\(&(mak_\w+)\)\}', src)
