"""Flash per operator: what each kernel family costs on Cortex-M4F, and what an image saves by
keeping only the kernels its model uses (the default; custom_kernels = all keeps every one).

    .venv/bin/python benchmarks/flash_bench.py                       # the demo model
    .venv/bin/python benchmarks/flash_bench.py --models m1.tflite m2.tflite   # other models

Kernel sizes are those of each kernel source's object built as `make -C firmware arm` builds it
(build.mk's flags, -ffunction-sections): text + data + rodata, before the linker drops what no
registry entry reaches. Image sizes are the linked firmware's text + data on mps2-an386.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from host.device.boards import build_image  # noqa: E402
from host.paths import BUILD, FIRMWARE  # noqa: E402
from host.runtime.sources import registered_kernels  # noqa: E402

KERNELS = FIRMWARE / "src" / "kernels"


def operators_by_file() -> dict[str, list[str]]:
    """Kernel source file -> the operators (builtin or custom) whose kernel it defines."""
    home = {}
    for src in KERNELS.rglob("*.c"):
        for name in re.findall(r"^const ma_kernel (mak_\w+)\s*=", src.read_text(), re.M):
            home[name] = src.name
    out: dict[str, list[str]] = {}
    for op, kernel in registered_kernels():
        out.setdefault(home.get(kernel, "?"), []).append(op)
    return out


def object_sizes() -> dict[str, int]:
    subprocess.run(["make", "-s", "-C", str(FIRMWARE), "arm"], check=True)
    objs = sorted((BUILD / "arm" / "obj" / "src" / "kernels").rglob("*.o"))
    out = subprocess.run(["arm-none-eabi-size", *map(str, objs)], capture_output=True,
                         text=True, check=True).stdout.splitlines()[1:]  # fmt: skip
    sizes = {}
    for line in out:
        text, data, _bss, *_rest, name = line.split()
        sizes[Path(name).stem + ".c"] = int(text) + int(data)
    return sizes


def image_size(elf: Path) -> int:
    line = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True,
                          check=True).stdout.splitlines()[1]  # fmt: skip
    text, data = line.split()[:2]
    return int(text) + int(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", nargs="*", default=[str(BUILD / "demo_int8.tflite")])
    ap.add_argument("--board", default="mps2-an386")
    args = ap.parse_args(argv)
    ops, sizes = operators_by_file(), object_sizes()
    print("| kernel file | flash bytes (M4F object) | operators |\n|---|---|---|")
    for name in sorted(sizes, key=lambda n: -sizes[n]):
        print(f"| {name} | {sizes[name]} | {', '.join(sorted(ops.get(name, []))) or '(shared)'} |")
    print(f"\ntotal kernel objects: {sum(sizes.values())} bytes\n")
    print("| model | image, model's kernels | image, all kernels | saved |\n|---|---|---|---|")
    for model in args.models:
        only = image_size(build_image(args.board, model, kernels="model"))
        every = image_size(build_image(args.board, model, kernels="all"))
        saved = f"{every - only} ({(every - only) / every:.0%})"
        print(f"| {Path(model).stem} | {only} | {every} | {saved} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
