"""A fuzzer of the command-line tools on damaged models (issue 18): a short seeded run is a
test (tests/test_hostile_files.py), a long one is run by hand (tools/fuzz_cli.py --seconds N).

Each case damages a model (cut short, bytes or words changed, a tensor's shape or type changed)
and runs one command on it in a child process with bounded memory and time (support/hostile.py):
host.plan (plain, --overlap, --json, -o, --embed in place, --check), host.scratch or host.run.
The command must end with a known status and no traceback; the files it was given stay
byte-identical unless it succeeded at rewriting them, and a planned model it wrote passes
--check. `check_case` returns None when all that holds, else a line saying what did not; a
finding becomes a regression case in tests/data/fuzz_cli/ (the damaged model, its command).
"""

from __future__ import annotations

import random
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from support.hostile import run_bounded

from host.planning import checker
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model, ModelError

COMMANDS = {  # name: (module, arguments before the model, statuses a clean end may have)
    "plan": ("host.plan", ["-q"], {0, 2}),
    "plan --overlap": ("host.plan", ["-q", "--overlap", "--kernels", "reference"], {0, 2}),
    "plan --json": ("host.plan", ["-q", "--json"], {0, 2}),
    "plan -o": ("host.plan", ["-q", "-o", "{out}"], {0, 2}),
    "plan --embed": ("host.plan", ["-q", "--embed"], {0, 2}),
    "plan --check": ("host.plan", ["--check"], {0, 1, 2}),
    "scratch": ("host.scratch", [], {0, 2}),
    "run": ("host.run", [], {0, 1, 2}),
}
SHAPES = [
    (),
    (0,),
    (1, 0, 3),
    (1 << 20, 1 << 20),
    (1, 8000, 8000, 16),
    (-1, 4),
    (1, 2, 3, 4, 5, 6, 7),
]


@dataclass
class Case:
    seed: int
    damage: str  # what was done to the model, for the report
    command: str  # a key of COMMANDS
    data: bytes  # the damaged model


def damage(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """The model with one kind of damage, and a word saying which."""
    kind = rng.choice(["cut", "bytes", "words", "shape", "type"])
    if kind == "cut":
        at = rng.randrange(len(data))
        return f"cut at {at}", data[:at]
    if kind in ("bytes", "words"):
        out = bytearray(data)
        width = 1 if kind == "bytes" else 4
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(0, len(out) - width + 1)
            out[at : at + width] = rng.randbytes(width)
        return f"{kind} changed", bytes(out)
    model = Model(data)
    tensors = model.root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_TENSORS)
    ti = rng.randrange(len(tensors))
    if kind == "shape" or not tensors[ti].has(S.TENSOR_TYPE):  # no type field: float32
        shape = rng.choice(SHAPES)
        set_child(tensors[ti], S.TENSOR_SHAPE, struct.pack(f"<{len(shape)}i", *shape))
        return f"tensor {ti} shape {shape}", model.to_bytes()
    t = rng.randrange(-2, 20)
    tensors[ti].inline[tensors[ti].field_offsets[S.TENSOR_TYPE]] = t & 0xFF
    return f"tensor {ti} type {t}", model.to_bytes()


def make_case(seed: int, models: list[bytes]) -> Case:
    rng = random.Random(seed)
    what, data = damage(rng, rng.choice(models))
    return Case(seed, what, rng.choice(sorted(COMMANDS)), data)


def check_case(case: Case, folder: Path) -> str | None:
    """Run the case's command on its model in `folder`; None if it ended as it should."""
    model, out = folder / "m.tflite", folder / "out.tflite"
    model.write_bytes(case.data)
    out.write_bytes(b"old output")
    module, before, statuses = COMMANDS[case.command]
    args = [a.format(out=out) for a in before]
    try:
        r = run_bounded(module, *args, str(model), timeout=30)
    except subprocess.TimeoutExpired:
        return "did not end within 30 s"
    if "Traceback" in r.stderr or r.returncode not in statuses:
        last = r.stderr.strip().splitlines()[-1:] or ["(nothing on stderr)"]
        return f"exit {r.returncode}: {last[0]}"
    written = {"plan -o": out, "plan --embed": model}.get(case.command)
    unchanged = [p for p in (model, out) if p != written or r.returncode]
    before_bytes = {model: case.data, out: b"old output"}
    changed = [p.name for p in unchanged if p.read_bytes() != before_bytes[p]]
    if changed:
        return f"exit {r.returncode} but changed {changed}"
    if written is not None and r.returncode == 0:
        return _planned_model_problem(written.read_bytes())
    return None


def _planned_model_problem(data: bytes) -> str | None:
    try:
        problems = checker.check(Model(data))
    except ModelError as e:
        return f"wrote a model that does not read back: {e}"
    return f"wrote a plan --check refuses: {problems[0]}" if problems else None
