"""Instructions per invoke of the runtime's kernels on emulated Cortex-M boards, next to the
real TFLM with its reference kernels and with CMSIS-NN, for every int8 shared model, the
demo model and the repository's converter-made int8 models TFLM was measured on; with
`--set unseen`, for the models the kernels were not written against instead (the int8 models
of ../shared/zoo and the converter-made MobileNetV2), with their output CRC-32 beside TFLM's.

The microarena figures are measured here: each model's image (PlatformIO, its own kernels
only, no offline plan) runs on QEMU with -icount shift=0, where SysTick ticks x the board's
qemu_tick_ns are instructions (the method host.record uses). TFLM's figures are not measured
here: they are read from tests/data/tflm_cmsis_nn/measured.json and unseen_m4.json (measured
by hand the same way, TFLM's online plan; method and commits in docs/tflm_cmsis_nn.md); '-'
where that file or its run is absent. Ratios below 1 mean fewer instructions than TFLM. Flash
is the image's (.isr_vector, .text, .rodata, .ARM.exidx, .data), the model included.

    .venv/bin/python benchmarks/speed_bench.py                        # mps2-an386 (Cortex-M4F)
    .venv/bin/python benchmarks/speed_bench.py --boards mps2-an386 mps2-an500 mps2-an505
    .venv/bin/python benchmarks/speed_bench.py --boards all      # M4F M7 M33 M55 M3: docs/speed.md
    .venv/bin/python benchmarks/speed_bench.py --models tflm_person_detect_int8 --json
    .venv/bin/python benchmarks/speed_bench.py --set unseen --boards mps2-an386 mps3-an547
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boards_bench import measure  # noqa: E402

from host.fileio import write_atomic  # noqa: E402
from host.paths import REPO, SHARED_MODELS, SHARED_ZOO, require_models  # noqa: E402
from host.progress import say  # noqa: E402
from host.tflite.model import Model  # noqa: E402
from host.tflite.modelgen import build_demo_model  # noqa: E402

PEERS = REPO / "tests" / "data" / "tflm_cmsis_nn" / "measured.json"
# TFLM on the models not given (docs/tflm_cmsis_nn.md "Models not given"), same format.
UNSEEN = PEERS.with_name("unseen_m4.json")
# `--set unseen`: issue 20's goal must also hold on models the kernels were not written against:
# these int8 models of ../shared/zoo (TFLM has no TILE kernel for the SSD detector, so it has no
# TFLM figure; the zoo's others are int16 or Ethos-U) and UNSEEN's converter-made int8 models.
ZOO_INT8 = [
    "sscma_mnist",
    "st_aed_yamnet_256_int8",
    "st_har_ign_wl48_int8",
    "st_ic_mobilenet_v1_025_96_gray_int8",
    "st_ic_resnet_v1_8_32_int8",
    "st_ic_st_mnist_v1_28_int8",
    "st_od_st_ssd_mobilenet_v1_025_192_int8",
    "st_od_st_yolo_lc_v1_192_int8",
]
DEMO = "demo_int8"
KERNELS = {"reference": "tflm_ref", "cmsis-nn": "tflm_cmsis_nn"}
# `--boards all`: one board per core TFLM was measured on: M4F, M7, M33, M55 (Helium), M3, M0+
# (ARMv6-M code on the AN385 machine).
ALL_BOARDS = [
    "mps2-an386",
    "mps2-an500",
    "mps2-an505",
    "mps3-an547",
    "mps2-an385",
    "mps2-an385-m0plus",
]


def _data(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def repo_models(path: Path = PEERS) -> dict[str, Path]:
    """The converter-made models of this repository that TFLM was measured on, by name."""
    models = _data(path).get("models", {})
    return {
        name: REPO / m["origin"].removeprefix("repo:")
        for name, m in models.items()
        if m.get("origin", "").startswith("repo:") and name.endswith("_int8")
    }


def int8_models() -> list[str]:
    shared = sorted(p.stem for p in SHARED_MODELS.glob("*_int8.tflite"))
    return [DEMO, *shared, *sorted(repo_models())]


def unseen_models() -> list[str]:
    return [*ZOO_INT8, *sorted(repo_models(UNSEEN))]


def model_path(name: str) -> Path:
    """A shared, zoo or repository model, or the demo model (written to build/ from
    host.modelgen if absent)."""
    repo = {**repo_models(), **repo_models(UNSEEN)}
    if name in repo:
        return repo[name]
    if name in ZOO_INT8:
        return SHARED_ZOO / f"{name}.tflite"
    if name != DEMO:
        return SHARED_MODELS / f"{name}.tflite"
    path = REPO / "build" / f"{DEMO}.tflite"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, build_demo_model())
    return path


def peer_runs(paths: tuple[Path, ...] = (PEERS, UNSEEN)) -> dict[tuple[str, str, str], dict]:
    """(model, board, kernels) -> TFLM's run with its own online plan."""
    return {
        (r["model"], r["board"], r["kernels"]): r
        for path in paths
        for r in _data(path).get("runs", [])
        if r.get("plan", "none") == "none"
    }


def peer_instructions() -> dict[tuple[str, str, str], int]:
    """(model, board, kernels) -> TFLM's instructions per invoke with its own online plan."""
    return {key: run["instructions"] for key, run in peer_runs().items()}


def joined_crc(parts: list[tuple[int, int]]) -> int:
    """CRC-32 of byte strings laid end to end, from each one's (CRC-32, length): the runtime's
    report has one CRC over all outputs, the TFLM harness one per output. CRC-32 is affine in
    its message, so crc(A+B) = crc(A+zeros) ^ crc(B) ^ crc(zeros), zeros as long as B."""
    crc = 0
    for part, n in parts:
        crc = zlib.crc32(bytes(n), crc) ^ part ^ zlib.crc32(bytes(n))
    return crc


def peer_output_crc(model: Model, run: dict) -> int:
    """TFLM's output CRC-32 over all of the model's outputs in order, as this runtime reports it."""
    sub = model.subgraphs[0]
    sizes = [sub.tensors[t].nbytes() for t in sub.outputs]
    return joined_crc([(int(c, 16), n) for c, n in zip(run["outputs_crc32"], sizes, strict=True)])


def speed_row(name: str, board: str, peers: dict[tuple[str, str, str], dict]) -> dict:
    row = measure(name, board, "none", model_path(name))
    out = {k: row.get(k) for k in ("model", "board", "flash", "instructions", "error")}
    for kernels, key in KERNELS.items():
        run = peers.get((name, board, kernels))
        out[key] = theirs = run and run["instructions"]
        mine = out["instructions"]
        out[f"vs_{key}"] = round(mine / theirs, 3) if mine and theirs else None
    out["output_crc"] = output_cell(name, board, row.get("output_crc"), peers)
    return out


def output_cell(name: str, board: str, mine: int | None, peers: dict) -> str | None:
    """The runtime's output CRC-32, with TFLM's beside it where they differ."""
    run = peers.get((name, board, "cmsis-nn")) or peers.get((name, board, "reference"))
    if mine is None:
        return None
    if run is None:
        return f"{mine:08x}"
    theirs = peer_output_crc(Model.load(model_path(name)), run)
    return f"{mine:08x}" if mine == theirs else f"{mine:08x} (TFLM {theirs:08x})"


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
# `--set unseen` adds the output check: docs/speed.md's "Models not given".
UNSEEN_COLUMNS = [*COLUMNS, ("output_crc", "output CRC-32")]


def markdown(rows: list[dict], columns: list[tuple[str, str]] = COLUMNS) -> str:
    lines = ["| " + " | ".join(t for _, t in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [
            "-" if row.get(k) is None else f"{row[k]:,}" if isinstance(row[k], int) else str(row[k])
            for k, _ in columns
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
        "--set",
        choices=["given", "unseen"],
        default="given",
        help=f"given: {DEMO}, every *_int8 shared model and the repository's measured ones "
        "(default); unseen: the models not given (the int8 models of ../shared/zoo and "
        "the converter-made MobileNetV2), with output CRC-32s against TFLM's",
    )
    ap.add_argument("--models", nargs="+", help="model names (default: those of --set)")
    ap.add_argument(
        "--boards",
        nargs="+",
        default=["mps2-an386"],
        help=f"emulated boards (default: mps2-an386; all: {' '.join(ALL_BOARDS)})",
    )
    ap.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    opts = ap.parse_args(argv)
    unseen = opts.set == "unseen"
    if not unseen:
        require_models(SHARED_MODELS)
    models = opts.models or (unseen_models() if unseen else int8_models())
    missing = [m for m in models if m != DEMO and not model_path(m).exists()]
    if unseen:  # the zoo is beside the checkout, not in it: measure what is there
        for m in missing:
            say(f"skipped {m}: {model_path(m)} is absent (../shared/zoo is not in the repository)")
        models = [m for m in models if m not in missing]
    elif missing:
        print(f"error: models not in {SHARED_MODELS}: {', '.join(missing)}", file=sys.stderr)
        return 2
    peers = peer_runs()
    if not peers:
        say(f"no TFLM figures at {PEERS}: its columns stay empty")
    boards = ALL_BOARDS if opts.boards == ["all"] else opts.boards
    rows = []
    for board in boards:
        for name in models:
            say(f"{name} on {board}")
            rows.append(speed_row(name, board, peers))
    table = markdown(rows, UNSEEN_COLUMNS if unseen else COLUMNS)
    print(json.dumps(rows, indent=2) if opts.json else table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
