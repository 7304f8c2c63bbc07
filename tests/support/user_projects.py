"""For the tests of the examples as users' projects: what the examples print, PlatformIO run on a
copied example, and a QEMU board's SDK for a user's own CMake build, made from this
repository's board support.

A user's board vendor ships start-up code, a linker script and a C library back end; CMake
then builds the user's project with the vendor's toolchain file and links them. For the
emulated boards the same parts are boards/common and boards/<board> (the files, flags and
memory sizes the PlatformIO platform uses, from host.device.firmware and
host.runtime.sources): compiled here into libboard.a and handed to CMake, next to
cmake/arm-none-eabi.cmake, as the link line's standard libraries (CMAKE_C_STANDARD_LIBRARIES:
CMAKE_EXE_LINKER_FLAGS would replace the toolchain file's --gc-sections and nano.specs).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from host.device.firmware import (
    board_defines,
    board_json,
    board_sources,
    board_value,
    machine_flags,
    memory_size_symbols,
)
from host.paths import BOARDS, REPO
from host.runtime.sources import read_build_mk, registered_kernels


def example_outputs(text: str) -> list[bytes]:
    """The `output <i> bytes=<n> data=<hex>` lines the examples print, in order."""
    got = re.findall(r"^output (\d+) bytes=\d+ data=([0-9a-f]*)\r?$", text, re.M)
    assert [int(i) for i, _ in got] == list(range(len(got)))
    return [bytes.fromhex(d) for _, d in got]


def embedded_model(header: Path) -> tuple[bytes, int, str]:
    """The model array, the arena and the target of a generated microarena_model.h."""
    text = header.read_text()
    array = re.search(r"ma_model_data\[\d+\] = \{(.*?)\};", text, re.S)[1]
    data = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", array))
    arena = int(re.search(r"MA_MODEL_ARENA_BYTES (\d+)u", text)[1])
    return data, arena, re.search(r'MA_MODEL_TARGET "([\w-]+)"', text)[1]


def linked_operators(elf: Path) -> set[str]:
    """The operators whose kernels a Cortex-M image links (the registry's kernel symbols)."""
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True)
    names = set(nm.stdout.split())
    return {op for op, symbol in registered_kernels() if symbol in names}


def selected_operators(ops_header: Path) -> set[str]:
    """The operators a generated microarena_model_ops.h keeps."""
    return set(re.findall(r"case \d+: /\* (\w+) \*/", ops_header.read_text()))


PIO = Path(sys.executable).parent / "pio"
PIO_CORE = REPO / ".pio-core"  # prepared by .ci/setup (tools/pio_setup.py)


def pio_ready() -> bool:
    return PIO.exists() and PIO_CORE.is_dir()


def pio_run(project: Path, *args: str) -> str:
    """`pio run` in a copied example, the checkout's development platform and library named by
    MICROARENA_DIR (the examples' platformio.ini); returns its output."""
    env = dict(
        os.environ,
        MICROARENA_DIR=str(REPO),
        PLATFORMIO_CORE_DIR=str(PIO_CORE),
        PLATFORMIO_DISABLE_UPGRADE_CHECK="true",
    )
    done = subprocess.run(
        [str(PIO), "run", "-d", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return done.stdout


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, " ".join(cmd) + "\n" + done.stdout + done.stderr


def board_sdk(board: str, folder: Path, emulated: bool = True) -> list[str]:
    """Compiles a board's support into folder/libboard.a; returns the CMake options that build
    a C project for that board and link it (start-up, stdio on the UART, the board's link.ld;
    an emulated board exits through semihosting)."""
    spec = board_json(board)
    build = {k: v for k, v in spec["build"].items() if isinstance(v, str)}
    cpu = machine_flags(build)
    mk = read_build_mk()
    defines = [f"-D{k}={v}" for k, v in board_defines(board, build)]
    defines += ["-DBOARD_EMULATED"] if emulated else []
    includes = [f"-I{BOARDS / 'common'}", f"-I{BOARDS / board}"]
    folder.mkdir(parents=True, exist_ok=True)
    objects = []
    for source in board_sources(board, build, emulated=emulated, hosted_c=True):
        obj = folder / f"{source.parent.name}_{source.stem}.o"
        _run(["arm-none-eabi-gcc", *cpu, *mk["MA_WARN"], *mk["MA_ARM_FLAGS"], *defines]
             + [*includes, "-c", str(source), "-o", str(obj)])  # fmt: skip
        objects.append(str(obj))
    library = folder / "libboard.a"
    library.unlink(missing_ok=True)
    _run(["arm-none-eabi-ar", "rcs", str(library), *objects])
    link = [
        "-nostartfiles",  # the board's start-up is the entry point (Reset_Handler)
        f"-T{BOARDS / board / 'link.ld'}",
        f"-L{BOARDS / 'common'}",  # link.ld INCLUDEs sections.ld
        *memory_size_symbols(lambda key: board_value(spec, key)),
        "-Wl,--no-warn-rwx-segments",
        "--specs=nosys.specs",  # the system calls syscalls.c does not give: files
        f"-Wl,--whole-archive,{library},--no-whole-archive",
    ]
    return [
        f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'arm-none-eabi.cmake'}",
        f"-DMICROARENA_CPU_FLAGS={' '.join(f for f in cpu if f != '-mthumb')}",
        f"-DCMAKE_C_STANDARD_LIBRARIES={' '.join(link)}",
    ]


def cmake_build(project: Path, build: Path, *options: str) -> None:
    """Configures and builds a user's CMake project against this checkout, warning-free."""
    cmd = ["cmake", "-S", str(project), "-B", str(build), f"-DMICROARENA_DIR={REPO}"]
    cmd += [f"-DMICROARENA_PYTHON={sys.executable}", *options]
    for step in (cmd, ["cmake", "--build", str(build), "-j2"]):
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "warning" not in done.stdout + done.stderr


def cmake_header(build: Path) -> Path:
    """The model header examples/cmake's build generates."""
    return build / "classify_microarena" / "microarena_model.h"
