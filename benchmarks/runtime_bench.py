"""microarena runtime vs TFLM: arena per model and Cortex-M4 code size.

    .venv/bin/python benchmarks/runtime_bench.py [--models DIR] [--json]

Per shared model: head / tail / total of this runtime (host build) next to TFLM's (the real
pip tflite-micro interpreter when importable, else ../shared/models/TFLM_BASELINE.tsv), the
smallest arena that loads found by bisection next to the runtime's reported "required", and
TFLM's minimum arena from the baseline. Then the code size of the Cortex-M4 library with all
kernels (arm-none-eabi-size of build/arm/libmicroarena.a, -Os).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from support.tflm_oracle import capture_output  # noqa: E402

from host.paths import SHARED_MODELS, require_models  # noqa: E402
from host.runtime.binding import MA_ERR_ARENA, Interpreter, MicroarenaError  # noqa: E402

LINE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def tflm_live(data: bytes) -> dict[str, int] | None:
    """head/tail/total from the real TFLM's print_allocations, None if it cannot run."""
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        return None
    try:
        interp = runtime.Interpreter.from_bytes(data, arena_size=16 << 20)
    except Exception:  # TFLM rejects the model (e.g. hybrid): no numbers
        return None
    text = capture_output(interp.print_allocations)
    return {k: int(v) for k, v in LINE.findall(text)}


def min_arena(data: bytes, hi: int) -> int:
    """Smallest arena size (16-aligned start) that loads, by bisection."""
    lo = 0  # fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            Interpreter(data, mid)
            hi = mid
        except MicroarenaError as e:
            if e.status != MA_ERR_ARENA:
                raise
            lo = mid
    return hi


def code_size() -> dict[str, int] | None:
    """text/data/bss of the Cortex-M4 library, and text of the core vs the kernels."""
    build = subprocess.run(["make", "-s", "-C", str(REPO / "firmware"), "arm"], capture_output=True)
    lib = REPO / "build" / "arm" / "libmicroarena.a"
    if build.returncode != 0 or not lib.exists():
        return None
    out = subprocess.run(["arm-none-eabi-size", str(lib)], capture_output=True, text=True).stdout
    size = {"text": 0, "data": 0, "bss": 0, "core_text": 0, "kernels_text": 0}
    for line in out.splitlines()[1:]:
        text, data, bss = (int(x) for x in line.split()[:3])
        size["text"] += text
        size["data"] += data
        size["bss"] += bss
        member = line.split()[5]  # "conv.o (ex ...)": archive members have no folder
        is_kernel = any((REPO / "firmware" / "src" / "kernels").rglob(f"{Path(member).stem}.c"))
        size["kernels_text" if is_kernel else "core_text"] += text
    return size


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=str(SHARED_MODELS))
    p.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = p.parse_args()
    models = Path(args.models)
    require_models(models)
    baseline = {}
    if (models / "TFLM_BASELINE.tsv").exists():
        with (models / "TFLM_BASELINE.tsv").open(newline="") as f:
            baseline = {r["name"]: r for r in csv.DictReader(f, delimiter="\t")}
    rows = []
    for path in sorted(models.glob("*.tflite")):
        data = path.read_bytes()
        row: dict[str, object] = {"model": path.stem}
        try:
            it = Interpreter(data)
        except MicroarenaError as e:
            row["error"] = e.message
            rows.append(row)
            continue
        s = it.stats()
        row.update(head=s.head, tail=s.tail, total=s.total, required=s.required)
        row["min_arena"] = min_arena(data, s.required + 64)
        ref = tflm_live(data)
        b = baseline.get(path.stem, {})
        if ref is None and b.get("arena_total"):
            ref = {k: int(b[f"arena_{k}"]) for k in ("head", "tail", "total")}
        row["tflm"] = ref
        row["tflm_min_arena"] = int(b["min_arena_size"]) if b.get("min_arena_size") else None
        rows.append(row)
    size = code_size()
    if args.json:
        print(json.dumps({"models": rows, "cortex_m4_code": size}))
        return 0
    hdr = (
        f"{'model':30} {'head':>7} {'tflm':>7} {'tail':>6} {'tflm':>6} {'total':>7} "
        f"{'tflm':>7} {'total%':>7} {'required':>8} {'min':>7} {'tflm min':>8}"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "error" in r:
            print(f"{r['model']:30} not supported: {r['error']}")
            continue
        t = r["tflm"] or {}
        pct = f"{100 * r['total'] / t['total']:.0f}%" if t.get("total") else "-"
        print(
            f"{r['model']:30} {r['head']:>7} {t.get('head', '-'):>7} {r['tail']:>6} "
            f"{t.get('tail', '-'):>6} {r['total']:>7} {t.get('total', '-'):>7} {pct:>7} "
            f"{r['required']:>8} {r['min_arena']:>7} {r['tflm_min_arena'] or '-':>8}"
        )
    if size:
        print(
            f"\nCortex-M4 library (-Os, all kernels): text {size['text']} B (core "
            f"{size['core_text']}, kernels {size['kernels_text']}), data {size['data']} B, "
            f"bss {size['bss']} B"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
