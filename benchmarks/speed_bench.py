"""Instructions per invoke of the runtime's kernels on emulated Cortex-M boards, next to the
real TFLM with its reference kernels and with CMSIS-NN, for every int8 shared model, the
demo model and the repository's converter-made int8 models TFLM was measured on.

The microarena figures are measured here: each model's image (PlatformIO, its own kernels
only, no offline plan) runs on QEMU with -icount shift=0, where SysTick ticks x the board's
qemu_tick_ns are instructions (the method host.record uses). TFLM's figures are not measured
here: they are read from tests/data/tflm_cmsis_nn/measured.json (measured by hand the same
way, TFLM's online plan; method and commits in docs/tflm_cmsis_nn.md); '-' where that file or
its run is absent. Ratios below 1 mean fewer instructions than TFLM. Flash is the image's
(.isr_vector, .text, .rodata, .ARM.exidx, .data), the model included.

    .venv/bin/python benchmarks/speed_bench.py                        # mps2-an386 (Cortex-M4F)
    .venv/bin/python benchmarks/speed_bench.py --boards mps2-an386 mps2-an500 mps2-an505
    .venv/bin/python benchmarks/speed_bench.py --boards all      # M4F M7 M33 M55 M3: docs/speed.md
    .venv/bin/python benchmarks/speed_bench.py --models tflm_person_detect_int8 --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boards_bench import measure  # noqa: E402

from host.fileio import write_atomic  # noqa: E402
from host.paths import REPO, SHARED_MODELS, require_models  # noqa: E402
from host.progress import say  # noqa: E402
from host.tflite.modelgen import build_demo_model  # noqa: E402

PEERS = REPO / "tests" / "data" / "tflm_cmsis_nn" / "measured.json"
DEMO = "demo_int8"
KERNELS = {"reference": "tflm_ref", "cmsis-nn": "tflm_cmsis_nn"}
# `--boards all`: one board per core TFLM was measured on: M4F, M7, M33, M55 (Helium), M3.
ALL_BOARDS = ["mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "mps2-an385"]


def repo_models() -> dict[str, Path]:
    """The converter-made models of this repository that TFLM was measured on, by name."""
    if not PEERS.exists():
        return {}
    models = json.loads(PEERS.read_text()).get("models", {})
    return {
        name: REPO / m["origin"].removeprefix("repo:")
        for name, m in models.items()
        if m.get("origin", "").startswith("repo:") and name.endswith("_int8")
    }


def int8_models() -> list[str]:
    shared = sorted(p.stem for p in SHARED_MODELS.glob("*_int8.tflite"))
    return [DEMO, *shared, *sorted(repo_models())]


def model_path(name: str) -> Path:
    """A shared or repository model, or the demo model (written to build/ from host.modelgen
    if absent)."""
    if name in repo_models():
        return repo_models()[name]
    if name != DEMO:
        return SHARED_MODELS / f"{name}.tflite"
    path = REPO / "build" / f"{DEMO}.tflite"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, build_demo_model())
    return path


def peer_instructions(path: Path = PEERS) -> dict[tuple[str, str, str], int]:
    """(model, board, kernels) -> TFLM's instructions per invoke with its own online plan."""
    if not path.exists():
        return {}
    runs = json.loads(path.read_text()).get("runs", [])
    return {
        (r["model"], r["board"], r["kernels"]): r["instructions"]
        for r in runs
        if r.get("plan", "none") == "none"
    }


def speed_row(name: str, board: str, peers: dict[tuple[str, str, str], int]) -> dict:
    row = measure(name, board, "none", model_path(name))
    out = {k: row.get(k) for k in ("model", "board", "flash", "instructions", "error")}
    for kernels, key in KERNELS.items():
        out[key] = theirs = peers.get((name, board, kernels))
        mine = out["instructions"]
        out[f"vs_{key}"] = round(mine / theirs, 3) if mine and theirs else None
    return out


COLUMNS = [
    ("model", "model"),
    ("board", "board"),
    ("instructions", "microarena"),
    ("tflm_ref", "TFLM reference"),
    ("tflm_cmsis_nn", "TFLM + CMSIS-NN"),
    ("vs_tflm_ref", "/ reference"),
    ("vs_tflm_cmsis_nn", "/ CMSIS-NN"),
    ("flash", "flash B"),
]


def markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(t for _, t in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = [
            "-" if row.get(k) is None else f"{row[k]:,}" if isinstance(row[k], int) else str(row[k])
            for k, _ in COLUMNS
        ]
        if row.get("error"):
            cells[2] = f"error: {row['error']}"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--models", nargs="+", help=f"model names (default: {DEMO} and every *_int8 shared model)"
    )
    ap.add_argument(
        "--boards",
        nargs="+",
        default=["mps2-an386"],
        help=f"emulated boards (default: mps2-an386; all: {' '.join(ALL_BOARDS)})",
    )
    ap.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    opts = ap.parse_args(argv)
    require_models(SHARED_MODELS)
    models = opts.models or int8_models()
    missing = [m for m in models if m != DEMO and not model_path(m).exists()]
    if missing:
        print(f"error: models not in {SHARED_MODELS}: {', '.join(missing)}", file=sys.stderr)
        return 2
    peers = peer_instructions()
    if not peers:
        say(f"no TFLM figures at {PEERS}: its columns stay empty")
    boards = ALL_BOARDS if opts.boards == ["all"] else opts.boards
    rows = []
    for board in boards:
        for name in models:
            say(f"{name} on {board}")
            rows.append(speed_row(name, board, peers))
    print(json.dumps(rows, indent=2) if opts.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
