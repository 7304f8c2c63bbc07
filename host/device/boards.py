"""The boards of this project, read from their definitions in boards/<id>/board.json.

One source of truth for the firmware build (PlatformIO reads the same files) and for the host
tools that run images on QEMU (host.device.emulate) or compare results (tests, benchmarks).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from host.device import pio_core
from host.fileio import check_file, write_text_atomic
from host.paths import BOARDS, BUILD, CHECKOUT, FIRMWARE, REPO
from host.tflite.model import MAX_MODEL_BYTES


@dataclass(frozen=True)
class Board:
    id: str
    name: str
    cpu: str
    tick_hz: int  # SysTick clock (the core clock) as the firmware is built for
    flash_bytes: int  # code memory; the models too unless model_memory_bytes is set
    ram_bytes: int
    qemu_machine: str | None  # None for a real board that can only be built here
    qemu_tick_ns: float  # guest nanoseconds (= instructions under -icount shift=0) per tick
    # A memory of the board's own for the models (mps3-an547: SRAM beside the ITCM), 0 if none.
    model_memory_bytes: int = 0

    @property
    def emulated(self) -> bool:
        return self.qemu_machine is not None

    @property
    def renode_script(self) -> Path | None:
        """boards/<id>/renode.resc, for real boards Renode models (Renode is not installed here)."""
        script = BOARDS / self.id / "renode.resc"
        return script if script.is_file() else None


def _load(path: Path) -> Board:
    data = json.loads(path.read_text())
    build, upload = data["build"], data["upload"]
    tick_hz = int(str(build["f_cpu"]).rstrip("L"))
    machine = build.get("qemu_machine") if build.get("semihosting") else None
    return Board(
        id=path.parent.name,
        name=data["name"],
        cpu=build["cpu"],
        tick_hz=tick_hz,
        flash_bytes=int(upload["maximum_size"]),
        ram_bytes=int(upload["maximum_ram_size"]),
        qemu_machine=machine or None,
        # QEMU's model may clock SysTick differently from the datasheet (lm3s6965evb: 12.5 MHz
        # of guest time, measured against the MPS2 boards); board.json says so when it does.
        qemu_tick_ns=float(build.get("qemu_tick_ns") or 1e9 / tick_hz),
        model_memory_bytes=int(upload.get("maximum_model_size", 0)),
    )


def invoke_timing_fields(ticks: int, tick_hz: int, emulated: Board | None = None) -> dict:
    """What one invoke's SysTick count means, for machines (record --json). On hardware SysTick
    counts core cycles. Under QEMU (-icount shift=0: one instruction per guest nanosecond) it
    counts guest time, so the figure is instructions (ticks x the board's qemu_tick_ns, to within
    one tick) and any time is an estimate: those instructions at the board's clock, one per
    cycle."""
    if emulated is None:
        ms = ticks * 1000 / tick_hz if tick_hz else None
        return {"ticks": ticks, "cycles": ticks, "ms": ms, "clock_hz": tick_hz or None}
    instructions = round(ticks * emulated.qemu_tick_ns)
    return {
        "ticks": ticks,
        "instructions": instructions,
        "qemu_tick_ns": emulated.qemu_tick_ns,
        "estimated_ms": instructions * 1000 / emulated.tick_hz,
        "clock_hz": emulated.tick_hz,
    }


def invoke_timing(ticks: int, tick_hz: int, emulated: Board | None = None) -> str:
    """invoke_timing_fields for a person."""
    t = invoke_timing_fields(ticks, tick_hz, emulated)
    if emulated is None:
        ms = f" ({t['ms']:.3f} ms at {tick_hz} Hz)" if t["ms"] is not None else ""
        return f"cycles per invoke: {ticks}{ms}"
    return (
        f"instructions per invoke: {t['instructions']} (QEMU -icount: {ticks} SysTick ticks x "
        f"{t['qemu_tick_ns']:g}); estimated {t['estimated_ms']:.3f} ms at {t['clock_hz']} Hz "
        "(one instruction per cycle; not measured hardware time)"
    )


def all_boards() -> dict[str, Board]:
    """Every board with a boards/<id>/board.json, by id."""
    return {b.id: b for b in (_load(p) for p in sorted(BOARDS.glob("*/board.json")))}


def get_board(board_id: str) -> Board:
    boards = all_boards()
    if board_id not in boards:
        known = ", ".join(sorted(boards)) or "none"
        raise ValueError(f"unknown board {board_id!r}; known boards: {known}")
    return boards[board_id]


def emulated_boards() -> list[str]:
    return [b.id for b in all_boards().values() if b.emulated]


# The deterministic input the firmware applications feed a model (firmware/src/core/
# deterministic_input.c computes the same values): element i of every input gets
# base = (37 * i + 11) mod 251, then per type int: base - 125, unsigned: base,
# float: (base - 125) / 125, bool: base & 1.
def deterministic_input(dtype: np.dtype | type, count: int) -> np.ndarray:
    dtype = np.dtype(dtype)
    base = (37 * np.arange(count, dtype=np.int64) + 11) % 251
    if dtype == np.bool_:
        return (base & 1).astype(np.bool_)
    if dtype.kind == "f":
        return ((base - 125).astype(dtype)) / dtype.type(125)
    if dtype.kind == "u":
        return base.astype(dtype)
    if dtype.kind == "i":
        return (base - 125).astype(dtype)
    raise ValueError(f"no deterministic input for dtype {dtype}")


class BuildError(RuntimeError):
    """PlatformIO could not build the image; the message holds the build's error lines."""


BUILD_ROOT = BUILD / "pio"
# An installed package's PlatformIO project, made in the cache: the checkout's platformio.ini
# names its folders relative to the checkout; this one names the package's. Every custom_*
# option comes from build_image's MICROARENA_* variables.
PACKAGE_PROJECT = BUILD / "pio-project"
PACKAGE_INI = """\
; Written by microarena (host/device/boards.py) for the installed package; made again as needed.
[platformio]
core_dir = {core}
src_dir = {firmware}/apps
test_dir = {boards}/pio_test

[env]
platform = symlink://{boards}/platform
test_framework = custom
"""


def pio_executable() -> str:
    """The ``pio`` of this Python's environment (the one tools/pio_setup.py prepared)."""
    beside = Path(sys.executable).parent / "pio"
    if beside.exists():
        return str(beside)
    found = shutil.which("pio")
    if found is None:
        extra = "-e '.[boards]'" if CHECKOUT else "'microarena[boards]'"
        raise BuildError(f"PlatformIO (pio) is not installed: pip install {extra}")
    return found


def pio_project() -> Path:
    """The PlatformIO project folder: the checkout, else one in the cache for the installed
    package's firmware and boards, with its own offline core folder."""
    if CHECKOUT:
        return REPO
    core = PACKAGE_PROJECT / ".pio-core"
    ini = PACKAGE_INI.format(core=core, firmware=FIRMWARE.as_posix(), boards=BOARDS.as_posix())
    ini += "".join(f"\n[env:{b}]\nboard = {b}\n" for b in all_boards())
    path = PACKAGE_PROJECT / "platformio.ini"
    if not path.exists() or path.read_text() != ini:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, ini)
    pio_core.prepare(core, PACKAGE_PROJECT)
    return PACKAGE_PROJECT


def build_image(
    board: str,
    model: str | os.PathLike[str] | list[str | os.PathLike[str]] | None = None,
    app: str = "model",
    build_root: Path = BUILD_ROOT,
    plan: str = "none",
    kernels: str = "model",
    profile: bool = False,
) -> Path:
    """Build (or bring up to date) the firmware for a board with PlatformIO; returns the .elf.

    Each application/model pair gets its own build folder under build_root, so images for
    several models can coexist and rebuilds are incremental. ``model`` may be a list: the image
    then holds all of them and runs the one named by ``emulate.run(..., args=<model stem>)``.
    ``plan="best"`` (or "greedy") embeds host.plan's offline memory plan in the model first.
    ``kernels="model"`` links only the kernels of the model's operators, "all" every kernel.
    ``profile=True`` makes the model application report each operator's ticks too.
    """
    get_board(board)
    pio = pio_executable()
    project = pio_project()
    variant = app
    env = dict(os.environ, PLATFORMIO_DISABLE_UPGRADE_CHECK="true", MICROARENA_APP=app)
    if app == "model":
        if model is None:
            raise ValueError("the model application needs a model (.tflite)")
        paths = [Path(m).resolve() for m in (model if isinstance(model, list) else [model])]
        for path in paths:
            try:
                check_file(path, MAX_MODEL_BYTES, "model")  # not /dev/zero, a FIFO, a folder
            except FileNotFoundError:
                raise FileNotFoundError(f"model not found: {path}") from None
            except OSError as e:
                raise ValueError(f"cannot read {path}: {e.strerror}") from None
        variant = "model-" + "+".join(p.stem for p in paths)
        if len(variant) > 80:
            digest = hashlib.sha1(variant.encode()).hexdigest()[:12]
            variant = f"model-{len(paths)}models-{digest}"
        env["MICROARENA_MODEL"] = ",".join(str(p) for p in paths)
        env["MICROARENA_PLAN"] = plan  # none, or the planner (host.plan) whose plan is embedded
        if plan != "none":
            variant += f"-plan_{plan}"
        env["MICROARENA_KERNELS"] = kernels
        if kernels != "model":
            variant += f"-kernels_{kernels}"
        env["MICROARENA_PROFILE"] = "1" if profile else "0"
        if profile:
            variant += "-profile"
    build_dir = Path(build_root) / variant
    env["PLATFORMIO_BUILD_DIR"] = str(build_dir)
    proc = subprocess.run(
        [pio, "run", "-e", board, "-d", str(project)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).splitlines()
        errors = [ln for ln in lines if "rror" in ln or "overflow" in ln or "needs" in ln]
        detail = "\n".join(errors[-15:] or lines[-15:])
        raise BuildError(f"building {variant} for {board} failed:\n{detail}")
    return build_dir / board / "firmware.elf"
