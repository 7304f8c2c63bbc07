"""Run a .tflite model on the microarena C runtime (host build) and print its arena report.

    python -m host.run MODEL [--input FILE.npy ...] [--arena-size N] [--seed S] [--json]

Inputs not given as .npy files are seeded random values. Without --arena-size the arena is
sized exactly: the runtime is opened once with a large arena, then again with the smallest
arena that loads (the report's "Arena required" line). Exit status: 0 ok, 1 runtime error
(message on stderr), 2 bad usage or unreadable file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from host.runtime.binding import STATUS_NAMES, Interpreter, MicroarenaError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m host.run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a TFLite model on the microarena C runtime (host build): print the\n"
        "allocation report (TFLM RecordingMicroAllocator format plus microarena's required\n"
        "arena and tensor offsets) and the outputs.",
        epilog="example: python -m host.run ../shared/models/tflm_hello_world_int8.tflite --json\n"
        "exit status: 0 ok, 1 runtime error (unsupported operator, arena too small,\n"
        "malformed model...), 2 bad usage or unreadable file",
    )
    p.add_argument("model", help=".tflite file")
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="FILE.npy",
        help="value for the next model input (repeat in input order); missing ones are random",
    )
    p.add_argument("--arena-size", type=int, help="arena bytes (default: exactly what is needed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object for machines")
    return p


def random_input(shape: tuple[int, ...], dtype: type, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -128), min(info.max, 127) + 1, shape).astype(dtype)


def run(args: argparse.Namespace) -> dict:
    model = Path(args.model).read_bytes()
    it = Interpreter(model, args.arena_size)
    rng = np.random.default_rng(args.seed)
    for i in range(it.num_inputs()):
        d = it.input_details(i)
        if i < len(args.input):
            value = np.load(args.input[i], allow_pickle=False)
        else:
            value = random_input(d.shape, d.dtype, rng)
        it.set_input(i, value)
    it.invoke()
    s = it.stats()
    outputs = [it.get_output(i) for i in range(it.num_outputs())]
    return {
        "model": args.model,
        "arena_size": it.arena_size,
        "head": s.head,
        "tail": s.tail,
        "total": s.total,
        "temp_peak": s.temp_peak,
        "required": s.required,
        "report": it.report(),
        "outputs": [
            {"shape": list(o.shape), "dtype": str(o.dtype), "values": o.ravel().tolist()}
            for o in outputs
        ],
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.arena_size is not None and args.arena_size <= 0:
        print("error: --arena-size must be positive", file=sys.stderr)
        return 2
    try:
        result = run(args)
    except MicroarenaError as e:
        if args.json:
            print(json.dumps({"error": STATUS_NAMES.get(e.status), "message": e.message}))
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
        return 0
    print("\n".join(result["report"]))
    for i, o in enumerate(result["outputs"]):
        text = np.array2string(np.array(o["values"]), threshold=16)
        print(f"output {i}: shape {o['shape']} {o['dtype']}: {text}")
    return 0
