"""The firmware's sources and flags as firmware/build.mk defines them, for Python builders.

The PlatformIO builder (boards/platform/builder/main.py), the probe build (host/device/probe.py)
and tests compile the runtime from this one list, as firmware/Makefile does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from host.paths import BOARDS, FIRMWARE

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


def machine_flags(build: dict) -> list[str]:
    """-mcpu/-mthumb/float ABI from a board.json "build" section."""
    flags = [f"-mcpu={build['cpu']}", "-mthumb"]
    if build.get("fpu"):
        return flags + [f"-mfloat-abi={build.get('float_abi', 'hard')}", f"-mfpu={build['fpu']}"]
    return flags + ["-mfloat-abi=soft"]


# The memory sizes of board.json, the one place they are written: the fit checks read them and
# the boards' link.ld take their MEMORY lengths from these symbols (linker --defsym).
MEMORY_SIZES = {
    "__flash_size": "upload.maximum_size",  # code memory (and the model, unless kept apart)
    "__model_size": "upload.maximum_model_size",  # the models' own memory, if any
    "__ram_size": "upload.maximum_ram_size",
    "STACK_SIZE": "build.stack_size",  # sections.ld reserves it; the start-up measures its use
}


def memory_size_symbols(get: Callable[[str], object]) -> list[str]:
    """The linker options defining MEMORY_SIZES's symbols; get("upload.maximum_size") reads
    a board.json value by its dotted key (PlatformIO's BoardConfig.get, or board_value)."""
    sizes = {sym: int(str(get(key) or 0)) for sym, key in MEMORY_SIZES.items()}
    return [f"-Wl,--defsym={sym}={size}" for sym, size in sizes.items() if size]


def board_value(board: dict, key: str) -> object:
    """A board.json value by its dotted key ("build.cpu"), None if absent."""
    section, name = key.split(".", 1)
    return board.get(section, {}).get(name)


def board_defines(board_id: str, build: dict) -> list[tuple[str, str]]:
    """The board facts board code reads as macros: clock and UART base, from board.json only."""
    return [
        ("F_CPU", str(build["f_cpu"])),
        ("BOARD_UART_BASE", f"{int(build['uart_base'], 0):#x}u"),
        ("MA_BOARD_NAME", f'"{board_id}"'),
    ]


def board_sources(board_id: str, build: dict, emulated: bool, hosted_c: bool = False) -> list[Path]:
    """The board support an image links: start-up, printing, board facts, the UART (the board's
    own board.c, or the shared driver its board.json "uart" names) and the exit path; an `_sbrk`
    that refuses (no heap), or with hosted_c (a user's application written for a hosted C
    library) newlib's system calls: stdio on the UART, exit, and a small reserve for stdio."""
    common = BOARDS / "common"
    shared = ["startup.c", "print.c", "syscalls.c" if hosted_c else "no_heap.c", "board_facts.c"]
    shared.append("semihost.c" if emulated else "nosemihost.c")
    if build.get("uart"):
        shared.append(f"board_uart_{build['uart']}.c")
    return [common / name for name in shared] + sorted((BOARDS / board_id).glob("*.c"))


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
