"""Recorder and model upload per shared model, on the probe firmware under QEMU.

For each model: upload time and lines sent again, the recorded status and arena (head, tail,
total, temporary high-water mark) next to TFLM's (../shared/models/TFLM_BASELINE.tsv), the record's
size on the wire, instructions per invoke, and whether the output CRC equals the real TFLM's on
the same input.

    .venv/bin/python benchmarks/record_bench.py                       # all models that fit
    .venv/bin/python benchmarks/record_bench.py --models tflm_hello_world_int8 --json
    .venv/bin/python benchmarks/record_bench.py --max-bytes 200000     # skip the slow uploads
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.tflm_oracle import run_tflm  # noqa: E402

from host.device import emulate, probe, record, upload  # noqa: E402
from host.paths import SHARED_MODELS, require_models  # noqa: E402

MODELS = SHARED_MODELS
BOARD = "mps2-an386"


def tflm_crc(path: Path) -> int | None:
    """CRC-32 of the real TFLM's outputs on the boards' deterministic input (None: no TFLM)."""
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        return None
    try:
        outputs = run_tflm(path.read_bytes(), deterministic=True).outputs
    except RuntimeError:  # TFLM refuses the model
        return None
    return zlib.crc32(b"".join(np.ascontiguousarray(o).tobytes() for o in outputs))


def run_model(elf: Path, path: Path) -> dict:
    model = path.read_bytes()
    row: dict = {"model": path.stem, "bytes": len(model)}
    with emulate.start(BOARD, elf) as emu:
        port = record.open_port(emu.serial_url, 115200)
        try:
            src = upload.LineSource(port.read)
            t0 = time.monotonic()
            stats = upload.upload(src, port.write, model)
            row["upload_s"] = round(time.monotonic() - t0, 2)
            row["resends"] = stats["resends"]
            rec = record.record_stream(record._prepend(src.pending, port.read), BOARD, 120)
        finally:
            port.close()
    r = rec.report
    assert r is not None
    row["status"] = r.status_name
    row["record_bytes"] = sum(len(line) for line in rec.raw.splitlines() if b"@MA1 " in line)
    if r.ok:
        row.update(head=r.head, tail=r.tail, total=r.total, temp_peak=r.temp_peak)
        row["instructions"] = (r.cycles or 0) * 1_000_000_000 // (r.clock_hz or 1)
        expected = tflm_crc(path)
        row["out_eq_tflm"] = None if expected is None else expected == r.output_crc
    else:
        row["message"] = r.message
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", nargs="*", help="model names (default: all that fit the probe)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--max-bytes",
        type=int,
        default=1 << 20,
        help="skip larger models (the probe takes 1 MiB; uploads run at a few KB/s on QEMU)",
    )
    args = ap.parse_args()
    require_models(MODELS)
    with (MODELS / "TFLM_BASELINE.tsv").open() as f:
        base = {row["name"]: row for row in csv.DictReader(f, delimiter="\t")}
    names = args.models or sorted(p.stem for p in MODELS.glob("*.tflite"))
    elf = probe.build_probe(BOARD)
    cols = [
        "model",
        "bytes",
        "upload_s",
        "resends",
        "status",
        "head",
        "tflm_head",
        "tail",
        "tflm_tail",
        "total",
        "temp_peak",
        "record_bytes",
        "instructions",
        "out_eq_tflm",
    ]
    if not args.json:  # rows are printed as they come: large models take minutes to upload
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols), flush=True)
    rows = []
    for name in names:
        row = measure(elf, name, args.max_bytes)
        b = base.get(name, {})
        row["tflm_head"], row["tflm_tail"] = b.get("arena_head"), b.get("arena_tail")
        rows.append(row)
        if not args.json:
            cells = ("" if row.get(c) is None else str(row.get(c)) for c in cols)
            print("| " + " | ".join(cells) + " |", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


def measure(elf: Path, name: str, max_bytes: int) -> dict:
    path = MODELS / f"{name}.tflite"
    size = path.stat().st_size
    if size > max_bytes:
        return {"model": name, "bytes": size, "status": f"skipped (over {max_bytes} bytes)"}
    try:
        return run_model(elf, path)
    except (upload.UploadError, record.RecordError, emulate.EmulationError) as e:
        return {"model": name, "bytes": size, "status": f"failed: {e}"}


if __name__ == "__main__":
    sys.exit(main())
