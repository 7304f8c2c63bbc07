"""Fuzzers of the runtime and the planner against the pip TFLM (issue 18): a short seeded run
is a test (tests/runtime/test_model_fuzz.py), a long one is run by hand
(tools/fuzz_models.py --seconds N). Each check returns None when the model passes, else a line
saying what differed; a finding becomes a regression case in tests/data/fuzz/.

- call graphs: random IF call graphs (fan-out, sharing, depth; support/callgraph_models.py):
  the runtime's outputs equal TFLM's for both conditions, its head host.runtime.arena's, and
  TFLM's head host.plan's prediction.
- plans: random offline plans for a model: where `--check` accepts one (for either runtime's
  kernels) that runtime opens the planned model and its outputs equal those without a plan;
  where the runtime's check refuses it, the runtime refuses it too.
- mutations: a call-graph model with one field changed while keeping a valid structure (an
  IF's branch, a tensor's shape, a tensor's type): what the runtime runs, TFLM runs to the
  same outputs (or crashes on: it runs in a child process); the runtime may refuse what TFLM
  runs, with a message.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from support.callgraph_models import random_call_graph
from support.tflm_oracle import oracle, run_tflm

from host.planning import checker
from host.planning.libraries.microarena import MICROARENA
from host.planning.libraries.reference import REFERENCE
from host.planning.model import metadata
from host.planning.model.lifetimes import walk
from host.planning.scratch import predict_tflm_head
from host.runtime import arena
from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

REPO = Path(__file__).resolve().parents[2]

X = np.arange(8, dtype=np.float32).reshape(1, 8) / 4 - 1
BOOL = 6
QUANT_SCALE, QUANT_ZERO_POINT = 2, 3  # QuantizationParameters slots
TENSOR_QUANTIZATION = 4  # Tensor slot
DTYPES = {0: np.float32, 2: np.int32, 3: np.uint8, 7: np.int16, 9: np.int8, 6: np.bool_}
ARENA = 1 << 20


def inputs_for(data: bytes, c: bool) -> list[np.ndarray]:
    """The model's inputs: a bool one is the condition c, others take X's values in their
    own shape and type."""
    sg0 = Model(data).subgraphs[0]
    out = []
    for i in sg0.inputs:
        t = sg0.tensors[i]
        if t.type == BOOL:
            out.append(np.full(t.shape, c, dtype=bool))
        else:
            out.append(np.resize(X * 8, t.shape).astype(DTYPES.get(t.type, np.float32)))
    return out


def tflm_outputs(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    interp = oracle().Interpreter.from_bytes(data, arena_size=ARENA)
    for i, arr in enumerate(inputs):
        interp.set_input(arr, i)
    interp.invoke()
    return [np.array(interp.get_output(i)) for i in range(len(Model(data).subgraphs[0].outputs))]


def our_outputs(data: bytes, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], Interpreter]:
    interp = Interpreter(data)
    for i, arr in enumerate(inputs):
        interp.set_input(i, arr)
    interp.invoke()
    return [interp.get_output(i) for i in range(interp.num_outputs())], interp


def same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    """Integers exactly, floats within 1e-5 (the runtime's float kernels' tolerance)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape:
            return False
        if x.dtype.kind == "f":
            if not np.allclose(x, y, rtol=1e-5, atol=1e-5, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def check_call_graph(data: bytes) -> str | None:
    """The runtime runs a call-graph model as TFLM does, for both conditions."""
    for c in (True, False):
        inputs = inputs_for(data, c)
        want = tflm_outputs(data, inputs)
        got, ours = our_outputs(data, inputs)
        if not np.array_equal(got[0], want[0]):
            return f"condition {c}: runtime {got[0].ravel()} but TFLM {want[0].ravel()}"
        predicted = arena.predict(data, "host")["head"]
        if ours.stats().head != predicted:
            return f"runtime head {ours.stats().head}, host.runtime.arena predicts {predicted}"
    tflm, predicted = run_tflm(data).head, predict_tflm_head(Model(data), REFERENCE)
    if tflm != predicted:
        return f"TFLM head {tflm}, host.plan predicts {predicted}"
    return None


def random_plan(rng: random.Random, model: Model) -> list[int]:
    """Offsets for the planned tensors (some left online), on a grid of their sizes, so that
    overlaps are common and exact."""
    w = walk(model)
    offsets = [-1] * len(model.tensors)
    for lt in w.lifetimes:
        if rng.random() < 0.8:
            offsets[lt.tensor.global_index] = 16 * rng.randrange(0, 1 + len(w.lifetimes) * 2)
    for t in model.tensors:
        if t.is_variable and rng.random() < 0.5:
            offsets[t.global_index] = 16 * rng.randrange(0, 8)
    return offsets


def with_plan(data: bytes, offsets: list[int]) -> bytes:
    model = Model(data)
    model.set_metadata(OFFLINE_PLAN_NAME, metadata.encode(offsets, len(model.subgraphs)))
    return model.to_bytes()


def check_plan(data: bytes, offsets: list[int]) -> str | None:
    """An offline plan `--check` accepts runs to the same outputs; one it refuses for the
    runtime's kernels the runtime refuses too."""
    planned = with_plan(data, offsets)
    problems = checker.check(Model(planned), MICROARENA)
    try:
        Interpreter(planned)
    except MicroarenaError as e:
        return f"--check accepts the plan, the runtime refuses it: {e}" if not problems else None
    if problems:
        return f"the runtime accepts a plan --check refuses: {problems[0]}"
    for c in (True, False):
        inputs = inputs_for(data, c)
        want = our_outputs(data, inputs)[0]
        got = our_outputs(planned, inputs)[0]
        if not np.array_equal(got[0], want[0]):
            return f"condition {c}: planned outputs {got[0].ravel()}, unplanned {want[0].ravel()}"
    if not checker.check(Model(planned), REFERENCE):
        for c in (True, False):
            inputs = inputs_for(data, c)
            if not np.array_equal(tflm_outputs(planned, inputs)[0], tflm_outputs(data, inputs)[0]):
                return f"condition {c}: TFLM's outputs change under a plan --check accepts"
    return None


SEED_MODELS = ("mlp_int8", "mlp_float", "conv_options_int8", "lstm_int8", "conv1d_audio_int8",
               "mobilenet_v3ish_int8")  # fmt: skip


def seed_model(rng: random.Random) -> bytes:
    """A model to mutate: a random call graph, or a small converter-made one of tests/data."""
    if rng.random() < 0.5:
        return random_call_graph(rng, rng.randint(2, 5), rng.randint(1, 5))
    return (REPO / "tests/data/keras" / f"{rng.choice(SEED_MODELS)}.tflite").read_bytes()


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One field of a model changed, the structure kept valid: an IF's branch, a planned
    tensor's shape or type, a byte of an operator's options, a quantization scale or zero
    point."""
    model = Model(data)
    sgs = model.root.get(S.MODEL_SUBGRAPHS)
    ops = [op for sg in sgs for op in sg.get(S.SUBGRAPH_OPERATORS, [])]
    planned = [t for t in model.tensors if not t.is_const]
    kind = rng.choice(["branch", "shape", "type", "options", "quantization"])
    if kind == "branch" and model.tensors[0].type == BOOL:
        opts = rng.choice(ops).get(S.OP_OPTIONS)
        if opts is not None and opts.has(0):
            struct.pack_into("<i", opts.inline, opts.field_offsets[rng.randint(0, 1)],
                             rng.randrange(0, len(sgs) + 1))  # fmt: skip
    elif kind in ("shape", "type", "quantization"):
        t = rng.choice(planned)
        tensor = sgs[t.subgraph].get(S.SUBGRAPH_TENSORS)[t.index]
        if kind == "shape":
            dims = [rng.choice([1, 2, 3, 8, 4]) for _ in range(rng.randint(1, 4))]
            set_child(tensor, S.TENSOR_SHAPE, struct.pack(f"<{len(dims)}i", *dims))
        elif kind == "type" and tensor.has(S.TENSOR_TYPE):
            struct.pack_into("<b", tensor.inline, tensor.field_offsets[S.TENSOR_TYPE],
                             rng.choice([0, 2, 3, 6, 7, 9]))  # fmt: skip
        elif kind == "quantization" and tensor.get(TENSOR_QUANTIZATION) is not None:
            q = tensor.get(TENSOR_QUANTIZATION)
            if q.get(QUANT_SCALE):
                scale = struct.unpack("<f", q.get(QUANT_SCALE)[:4])[0] * 2.0 ** rng.randint(-8, 8)
                set_child(q, QUANT_SCALE, struct.pack("<f", scale) + q.get(QUANT_SCALE)[4:])
            if q.get(QUANT_ZERO_POINT):
                zp = rng.randint(-128, 127)
                set_child(q, QUANT_ZERO_POINT, struct.pack("<q", zp) + q.get(QUANT_ZERO_POINT)[8:])
    else:
        opts = rng.choice(ops).get(S.OP_OPTIONS)
        if opts is not None and len(opts.inline) > 4:
            at = rng.randrange(4, len(opts.inline))
            if all(not (o <= at < o + 4) for k, o in enumerate(opts.field_offsets)
                   if o and k in S.SCHEMA.tables.get(opts.name, {})):  # fmt: skip
                opts.inline[at] = rng.randrange(256)
    return model.to_bytes()


def _tflm_child(path: str) -> int:
    """Runs in a child: TFLM's output for both conditions (path.0.npy, path.1.npy), or
    prints 'refused'."""
    data = Path(path).read_bytes()
    try:
        for c in (False, True):
            outs = tflm_outputs(data, inputs_for(data, c))
            np.savez(f"{path}.{int(c)}.npz", *outs)
    except Exception as e:  # noqa: BLE001 - any refusal counts as one
        print(f"refused {type(e).__name__}: {e}")
    return 0


def tflm_in_child(data: bytes, scratch: Path) -> list[list[np.ndarray]] | str:
    """TFLM's outputs for conditions False and True, 'refused', or 'crashed' (it segfaults on
    some hostile models)."""
    path = scratch / "model.tflite"
    path.write_bytes(data)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    proc = subprocess.run(
        [sys.executable, __file__, str(path)], capture_output=True, text=True, timeout=60, env=env
    )
    if proc.returncode != 0:
        return "crashed"
    if proc.stdout.startswith("refused"):
        return "refused"
    loaded = [np.load(f"{path}.{c}.npz") for c in (0, 1)]
    return [[f[f"arr_{i}"] for i in range(len(f.files))] for f in loaded]


def check_mutation(data: bytes, scratch: Path) -> str | None:
    """Both run to the same outputs, or the runtime refuses with a message. It may refuse
    what TFLM runs: TFLM copies IF operands of different sizes, reads past tensors, and so
    on (docs/runtime.md); but what it runs, TFLM must run (or crash on) to the same outputs."""
    try:
        Model(data)
    except ModelError:
        return None  # the host tools refuse it; the runtime's own refusals are fuzzed in C
    try:
        ours = [our_outputs(data, inputs_for(data, c))[0] for c in (False, True)]
    except (MicroarenaError, ValueError):
        return None  # a refusal with a message
    theirs = tflm_in_child(data, scratch)
    if theirs == "crashed":
        return None
    if isinstance(theirs, str):
        return f"the runtime runs it, TFLM {theirs}"
    for c, a, b in zip((False, True), ours, theirs, strict=True):
        if not same(a, b):
            return f"condition {c}: runtime {a[0].ravel()[:8]} but TFLM {b[0].ravel()[:8]}"
    return None


@dataclass
class Finding:
    fuzzer: str
    model: bytes
    message: str


def fuzz(seed: int, scratch: Path, rounds: int | None = None, seconds: float | None = None,
         ) -> Iterator[Finding | None]:  # fmt: skip
    """Rounds of the three fuzzers from one seed, until `rounds` or `seconds` run out: yields
    a Finding for each failed check and None after each round (for progress)."""
    rng = random.Random(seed)
    end = None if seconds is None else time.monotonic() + seconds
    done = 0
    while (rounds is None or done < rounds) and (end is None or time.monotonic() < end):
        data = random_call_graph(rng, rng.randint(2, 5), rng.randint(1, 5))
        plan = random_plan(rng, Model(data))
        mutated = mutate(rng, seed_model(rng))
        for fuzzer, model, message in (
            ("call graph", data, check_call_graph(data)),
            ("plan", with_plan(data, plan), check_plan(data, plan)),
            ("mutation", mutated, check_mutation(mutated, scratch)),
        ):
            if message is not None:
                yield Finding(fuzzer, model, message)
        done += 1
        yield None


if __name__ == "__main__":
    sys.exit(_tflm_child(sys.argv[1]))
