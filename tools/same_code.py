"""Show that a change to the runtime's C sources changed no instruction: compile every runtime
source (firmware/build.mk's lists) for each CPU of the emulated boards, with its board's flags,
and for the host, and write each object's disassembly with addresses and encodings stripped and
its functions sorted by name, so that moving code between files, renaming a macro or reordering
functions leaves the text unchanged.

    git worktree add /tmp/old HEAD~1                 # the commit before the change
    python tools/same_code.py /tmp/before --firmware /tmp/old/firmware
    python tools/same_code.py /tmp/after --compare /tmp/before

--compare lists the objects whose code differs (exit status 1 if any). A refactoring whose
objects are all the same needs no speed or size measurement; one that differs does
(benchmarks/speed_bench.py, flash_bench.py). Needs arm-none-eabi-gcc and the host's gcc.
"""

from __future__ import annotations

import argparse
import filecmp
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host.device.boards import emulated_boards  # noqa: E402
from host.device.firmware import board_json, machine_flags  # noqa: E402
from host.fileio import write_text_atomic  # noqa: E402
from host.paths import FIRMWARE  # noqa: E402
from host.runtime.sources import runtime_build  # noqa: E402

ADDRESS = re.compile(r"^\s*[0-9a-f]+:\t")
OFFSET_LABEL = re.compile(r"<[^>]*\+0x[0-9a-f]+>")
TARGET = re.compile(r"\b[0-9a-f]{4,8} <([^>+]*)>")


def cores() -> dict[str, list[str]]:
    """Each CPU an emulated board has (cortex-m4, ...) -> its machine flags, from board.json."""
    out = {}
    for board in emulated_boards():
        build = board_json(board)["build"]
        out.setdefault(build["cpu"], machine_flags(build))
    return out


def compilers(firmware: Path) -> dict[str, tuple[list[str], str]]:
    """Core -> (compile command without source and output, objdump)."""
    build = runtime_build(firmware)
    common = [*build.warn, "-O2", *(f"-I{d}" for d in build.include_dirs)]
    out = {"host": (["gcc", *common, "-fPIC", "-ffunction-sections"], "objdump")}
    for cpu, flags in cores().items():
        cc = ["arm-none-eabi-gcc", *common, *build.arm_flags, *flags]
        out[cpu] = ([f for f in cc if f != "-g"], "arm-none-eabi-objdump")
    return out


def normalised(objdump: str, obj: Path) -> str:
    """The object's disassembly without addresses, encodings or offsets, functions sorted."""
    text = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", str(obj)], capture_output=True, text=True, check=True
    ).stdout
    lines = [TARGET.sub(r"<\1>", OFFSET_LABEL.sub("", ADDRESS.sub("", line))) for line in
             text.splitlines() if "file format" not in line]  # fmt: skip
    sections = "\n".join(lines).split("Disassembly of section ")
    return "".join(sorted(section.rstrip("\n") + "\n\n" for section in sections))


def write_core(firmware: Path, core: str, cc: list[str], objdump: str, out: Path) -> None:
    (out / core).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for src in runtime_build(firmware).sources:
            obj = Path(tmp) / f"{src.stem}.o"
            subprocess.run([*cc, "-c", str(src), "-o", str(obj)], check=True, cwd=firmware)
            write_text_atomic(out / core / f"{src.stem}.dis", normalised(objdump, obj))


def differing(before: Path, after: Path, cores: list[str]) -> list[str]:
    """The cores' objects (core/object.dis) whose code differs, or that one side lacks."""
    names = {
        p.relative_to(d) for d in (before, after) for c in cores for p in (d / c).glob("*.dis")
    }
    return sorted(
        str(n) for n in names
        if not ((before / n).exists() and (after / n).exists()
                and filecmp.cmp(before / n, after / n, shallow=False))
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path, help="folder for <core>/<object>.dis (made if absent)")
    ap.add_argument("--compare", type=Path, metavar="BEFORE", help="an earlier run's folder")
    ap.add_argument("--cores", nargs="+", choices=["host", *cores()], help="default: all")
    ap.add_argument("--firmware", type=Path, default=FIRMWARE,
                    help="the firmware folder to compile (default: this checkout's)")  # fmt: skip
    args = ap.parse_args(argv)
    firmware = args.firmware.resolve()
    try:
        chosen = {c: v for c, v in compilers(firmware).items() if c in (args.cores or [c])}
        with ThreadPoolExecutor() as pool:
            list(pool.map(lambda c: write_core(firmware, c, *chosen[c], args.out), chosen))
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"same_code: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: {', '.join(chosen)}")
    if args.compare is None:
        return 0
    changed = differing(args.compare, args.out, list(chosen))
    print("\n".join(changed) if changed else "the same code on every core")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
