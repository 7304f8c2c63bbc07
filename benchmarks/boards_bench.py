"""Per model and board: flash and RAM of the firmware image, the arena the runtime used, and
instructions per inference on QEMU (-icount shift=0: 1 instruction = 1 ns of guest time, so
instructions = SysTick ticks * 1e9 / tick_hz, to within one tick), next to TFLM's arena for the
same model with the same plan on Cortex-M (head + tail as host.planning.targets.target predicts
for TFLM's reference kernels, exact; 4-byte pointers like the board's). (QEMU's lm3s6965evb
SysTick ticks every 80 ns of guest time, not the datasheet's 83.3: board.json's qemu_tick_ns
says so.)

    .venv/bin/python benchmarks/boards_bench.py                  # default models and boards
    .venv/bin/python benchmarks/boards_bench.py --models tflm_hello_world_int8 --boards mps2-an386
    .venv/bin/python benchmarks/boards_bench.py --json

Each model gets its own image (so flash is that model's); builds are cached under build/pio.
By default every model is measured twice: as it is, and with host.plan's best offline plan
embedded (custom_plan = best), which the runtime then follows.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from host.device import emulate  # noqa: E402
from host.device.boards import BuildError, build_image, get_board  # noqa: E402
from host.device.wire import WireReport, decode_stream  # noqa: E402
from host.paths import SHARED_MODELS, require_models  # noqa: E402
from host.planning.libraries.reference import REFERENCE
from host.planning.model import metadata  # noqa: E402
from host.planning.plan import plan_model  # noqa: E402
from host.planning.targets.target import target_arena  # noqa: E402
from host.tflite.model import Model  # noqa: E402

MODELS_DIR = SHARED_MODELS
DEFAULT_MODELS = [
    "tflm_hello_world_int8",
    "tflm_hello_world_float",
    "tflm_micro_speech_int8",
    "tflm_person_detect_int8",
    "tflm_magic_wand_float",
    "tiny_kws_dscnn_int8",
    "tiny_vww_mobilenet_int8",
    "tiny_ic_resnet8_int8",
    "tiny_ad_autoencoder_int8",
    "tiny_sww_int8",
    "litert_while_multi_subgraphs",
]
DEFAULT_BOARDS = ["mps2-an386", "mps2-an385", "mps2-an500"]
FLASH_SECTIONS = (".isr_vector", ".text", ".rodata", ".ARM.exidx", ".data", ".model")
RAM_SECTIONS = (".data", ".bss", ".stack")


def section_sizes(elf: Path) -> dict[str, int]:
    out = subprocess.run(
        ["arm-none-eabi-size", "-A", "-d", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    return {m[0]: int(m[1]) for m in re.findall(r"^(\.\S+)\s+(\d+)\s+\d+", out, re.MULTILINE)}


def tflm_cortex_m_total(path: Path, plan: str) -> int | None:
    """TFLM's head + tail on Cortex-M (reference kernels) for the model as the image runs it
    (plan embedded the way custom_plan does), None where the prediction is not exact (or TFLM
    refuses the model)."""
    model = Model.load(path)
    if plan != "none":
        metadata.embed(model, plan_model(model, planner=plan).tensor_offsets())
        model = Model(model.to_bytes())
    t = target_arena(model, "tflm-cortex-m", REFERENCE)
    return t.head + t.tail if t.exact.get("head") and t.exact.get("tail") else None


def measure(model: str, board: str, plan: str, path: Path | None = None) -> dict[str, object]:
    """One model's image on one board; `path`: the model file (default: the shared model)."""
    path = path or MODELS_DIR / f"{model}.tflite"
    row: dict[str, object] = {"model": model, "board": board, "plan": plan}
    row["tflm_total"] = tflm_cortex_m_total(path, plan)
    try:
        elf = build_image(board, path, plan=plan)
    except BuildError as exc:
        lines = str(exc).splitlines()
        errors = [ln for ln in lines if ln.startswith("Error:")] or lines[-1:]
        row["error"] = "build: " + errors[0].strip()
        return row
    sizes = section_sizes(elf)
    row["flash"] = sum(sizes.get(s, 0) for s in FLASH_SECTIONS)
    row["ram"] = sum(sizes.get(s, 0) for s in RAM_SECTIONS)
    result = emulate.run(board, elf, timeout=300)
    reports = [e for e in decode_stream([result.uart_text.encode()]) if isinstance(e, WireReport)]
    if not reports:
        row["error"] = result.fault or ("timeout" if result.timed_out else "no report")
        return row
    report = reports[0]
    if not report.ok:
        row["error"] = f"{report.status_name}: {report.message}"[:70]
        return row
    tick_ns = get_board(board).qemu_tick_ns
    row.update(
        arena_buffer=report.arena_size,
        head=report.head,
        tail=report.tail,
        total=report.total,
        ticks=report.cycles,
        instructions=round(report.cycles * tick_ns) if report.cycles is not None else None,
        output_crc=report.output_crc,
    )
    if row["tflm_total"] and report.total:
        row["vs_tflm"] = round(report.total / int(row["tflm_total"]), 3)
    return row


COLUMNS = [
    ("model", "model"),
    ("board", "board"),
    ("plan", "offline plan"),
    ("flash", "flash B"),
    ("ram", "RAM B"),
    ("head", "head"),
    ("tail", "tail"),
    ("total", "total"),
    ("tflm_total", "TFLM total (Cortex-M)"),
    ("vs_tflm", "total/TFLM"),
    ("instructions", "instr/inference"),
]


def markdown(rows: list[dict[str, object]]) -> str:
    lines = [
        "| " + " | ".join(title for _, title in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in rows:
        cells = []
        for key, _ in COLUMNS:
            value = row.get(key)
            if value is None and key not in ("model", "board") and "error" in row:
                value = ""
            cells.append(
                "" if value is None else f"{value:,}" if isinstance(value, int) else str(value)
            )
        if "error" in row:
            cells[-1] = f"error: {row['error']}"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS, help="shared model names")
    parser.add_argument("--boards", nargs="+", default=DEFAULT_BOARDS, help="emulated boards")
    parser.add_argument(
        "--plans",
        nargs="+",
        default=["none", "best"],
        choices=["none", "best", "greedy"],
        help="offline plans to embed with host.plan before building (default: none best)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON rows")
    opts = parser.parse_args(argv)
    require_models(MODELS_DIR)
    missing = [m for m in opts.models if not (MODELS_DIR / f"{m}.tflite").exists()]
    if missing:
        print(f"error: models not in {MODELS_DIR}: {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = []
    for model in opts.models:
        for plan in opts.plans:
            for board in opts.boards:
                rows.append(measure(model, board, plan))
                print(f"measured {model} on {board}, plan {plan}", file=sys.stderr)
    print(json.dumps(rows, indent=2) if opts.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
