"""What a board adds to the runtime's build, from its board.json: machine flags, memory sizes,
the macros board code reads and the board-support sources. The runtime's own sources and flags
are host/runtime/sources.py's (build.mk). The PlatformIO builder (boards/platform/builder/main.py),
the probe build (host/device/probe.py) and tests read both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from host.paths import BOARDS, BUILD


def board_json(board_id: str) -> dict:
    """boards/<board_id>/board.json, whole."""
    return json.loads((BOARDS / board_id / "board.json").read_text())


def object_cache() -> str:
    """Where builds share compiled objects: MICROARENA_BUILD_CACHE, else the checkout's (or the
    user's cache's) build/objects; an empty MICROARENA_BUILD_CACHE turns sharing off ("")."""
    return os.environ.get("MICROARENA_BUILD_CACHE", str(BUILD / "objects"))


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
