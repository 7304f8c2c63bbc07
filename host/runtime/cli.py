"""Run a .tflite model on the microarena C runtime (host build) and print its arena report.

    python -m host.run MODEL [--input FILE.npy ...] [--arena-size N] [--seed S] [--json]
    python -m host.run --list-ops       # the operators this runtime runs, with their types

Inputs not given as .npy files are seeded random values; a given one must be what the input
holds (INPUT_RULE). Without --arena-size the arena is sized exactly: the runtime is opened once
with a large arena, then again with the smallest arena that loads (the report's "Arena
required" line). Exit status: 0 ok, 1 runtime error (message on stderr), 2 bad usage or
unreadable file.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys

import numpy as np

from host import entry
from host.argtypes import SEED, number
from host.fileio import read_file
from host.runtime.binding import (
    MA_ERR_PLAN,
    STATUS_NAMES,
    Interpreter,
    MicroarenaError,
    RuntimeBuildError,
    TensorInfo,
)
from host.runtime.support import list_operators
from host.tflite.model import Model, read_model

MAX_ARENA = 2**32 - 1  # the runtime's reports hold 32-bit sizes; no microcontroller has more
NPY_HEADER_BYTES = 1 << 20  # numpy's headers are far smaller
INPUT_RULE = """\
--input: an array saved with numpy.save, with the input's shape and either its dtype or values
that dtype holds exactly (int8 features saved as int32, say). Anything else is refused, never
cast (a float into int8 would truncate, 300 would wrap): quantize first. Floats are rounded to
a float input's type."""


def _parser() -> argparse.ArgumentParser:
    p = entry.parser(
        "run",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a TFLite model on the microarena C runtime (host build): print the\n"
        "allocation report (TFLM RecordingMicroAllocator format plus microarena's required\n"
        "arena and tensor offsets) and the outputs.",
        epilog=INPUT_RULE + "\n\n"
        "example: python -m host.run ../shared/models/tflm_hello_world_int8.tflite --json\n"
        "exit status: 0 ok, 1 runtime error (unsupported operator, arena too small,\n"
        "malformed model...), 2 bad usage or unreadable file",
    )
    p.add_argument("model", nargs="?", help=".tflite file")
    p.add_argument(
        "--list-ops",
        action="store_true",
        help="list the operators this runtime runs (with the types docs/operators.md found) "
        "and exit",
    )
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="FILE.npy",
        help="value for the next model input (repeat in input order; at most one per input); "
        "the input's shape, and its dtype or values it holds exactly; missing ones are random",
    )
    p.add_argument(
        "--arena-size",
        type=number(int, 1, MAX_ARENA),
        metavar="BYTES",
        help=f"arena bytes, 1 to {MAX_ARENA} (default: exactly what is needed)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object for machines")
    return p


def load_input(path: str, i: int, d: TensorInfo) -> np.ndarray:
    """The array for input i from a .npy file, refused unless it is exactly what the input holds."""
    # At most 8 bytes an element (any numeric type converts) and the header: a bounded read of
    # a regular file, so /dev/zero or a FIFO is refused rather than read forever.
    data = read_file(path, 8 * math.prod(d.shape) + NPY_HEADER_BYTES, "input")
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file (write one with numpy.save)")
    try:
        value = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as e:  # a damaged or truncated file, an object array
        raise ValueError(f"{path}: {e}") from None
    want = np.dtype(d.dtype)
    if value.shape != d.shape:
        raise ValueError(f"{path}: shape {value.shape}, but input {i} has shape {d.shape}")
    if value.dtype == want:
        return value
    if value.dtype.kind not in "biuf":
        raise ValueError(f"{path}: {value.dtype} values, but input {i} is {want}")
    with np.errstate(invalid="ignore", over="ignore"):
        converted = value.astype(want)
        if value.dtype.kind == want.kind == "f":  # rounded to the nearest, as any float input
            exact = np.isfinite(converted) | ~np.isfinite(value)
        else:
            exact = np.isfinite(value) & (converted.astype(value.dtype) == value)
    if not exact.all():
        where = tuple(int(k) for k in np.argwhere(~exact)[0])
        quant = f" (scale {d.scale:g}, zero point {d.zero_point})" if d.scale else ""
        raise ValueError(
            f"{path}: {value.dtype} value {value[where]} at {list(where)} is not exactly "
            f"representable in {want}, the type of input {i}: convert or quantize it first{quant}"
        )
    return converted


def random_input(shape: tuple[int, ...], dtype: type, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -128), min(info.max, 127) + 1, shape).astype(dtype)


def run(args: argparse.Namespace) -> dict:
    model = read_model(args.model)
    it = Interpreter(model, args.arena_size)
    if len(args.input) > it.num_inputs():
        raise ValueError(
            f"{len(args.input)} --input files, but the model has {it.num_inputs()} input(s)"
        )
    rng = np.random.default_rng(args.seed)
    for i in range(it.num_inputs()):
        d = it.input_details(i)
        if i < len(args.input):
            value = load_input(args.input[i], i, d)
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


def _plan_hint(path: str) -> str | None:
    """Why the model's offline plan may not suit this runtime, and how to re-plan it."""
    from host.planning.origin import replan_hint  # late: host.run starts without the planner

    try:
        return replan_hint(Model(read_model(path), path), path)
    except (OSError, ValueError):  # the error already said what is wrong with the file
        return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.list_ops:
        print("\n".join(list_operators()))
        return 0
    if args.model is None:
        _parser().error("give a MODEL (or --list-ops)")
    try:
        result = run(args)
    except MicroarenaError as e:
        hint = _plan_hint(args.model) if e.status == MA_ERR_PLAN else None
        if args.json:
            doc = {"error": STATUS_NAMES.get(e.status), "message": e.message}
            print(json.dumps({**doc, "hint": hint} if hint else doc))
        print(f"error: {e}", file=sys.stderr)
        if hint:
            print(f"hint: {hint}", file=sys.stderr)
        return 1
    except RuntimeBuildError as e:  # no compiler here: what to install, in one line
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"error: this computer cannot give a {args.arena_size}-byte arena", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
        return 0
    print("\n".join(result["report"]))
    for i, o in enumerate(result["outputs"]):
        text = np.array2string(np.array(o["values"]), threshold=16)
        print(f"output {i}: shape {o['shape']} {o['dtype']}: {text}")
    return 0
