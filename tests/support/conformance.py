"""Operator conformance: one-operator models run on the real TFLM and on the C runtime.

A `Case` describes one operator with its tensors (types, shapes, quantization, constant data)
and options. `single_op_model` writes it as a .tflite with the project's model writer
(host.tflite.modelgen). `run_cases` runs every case of a test module on the runtime's
AddressSanitizer + UBSan build in ONE child process (libasan must be preloaded before Python)
and on the real TFLM in this process (or, for an operator TFLM lacks, on TFLite's reference
kernels: support.litert_oracle), with the same seeded inputs, and returns both sides per case.
`check` then asserts: integers bit-exact, floats within 1e-5, or, for a case that expects
a refusal, that ma_open failed with that status and a message naming operator, type and
reason. A case whose TFLM output is constant (e.g. all saturated) fails as degenerate: it
would hide arithmetic errors.

Usage in a test module (see tests/runtime/test_conformance_math.py):

    CASES = [Case("MEAN int8 keep_dims", "MEAN", [q8(...), const_i32([1, 2])], [q8(...)],
                  "ReducerOptions", {0: ("B", 1)}), ...]

    @pytest.fixture(scope="module")
    def results(tmp_path_factory): return run_cases(CASES, tmp_path_factory.mktemp("c"))

    @pytest.mark.parametrize("case", CASES, ids=str)
    def test_matches_tflm(results, case): check(case, results[case.name])
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from host.tflite import modelgen
from host.tflite.flatbuf import new_table, set_child

# TFLite TensorType values.
F32, I32, U8, I64, BOOL, I16, I8, U32 = 0, 2, 3, 4, 6, 7, 9, 15
NP_TYPES: dict[int, Any] = {
    F32: np.float32, I32: np.int32, U8: np.uint8, I64: np.int64, BOOL: np.bool_,
    I16: np.int16, I8: np.int8, U32: np.uint32,
}  # fmt: skip
FLOAT_RTOL = 1e-5
CHILD_TIMEOUT = 900


@dataclass
class T:
    """One tensor: constant when `data` is given, a variable (state kept by the operator, reset
    by the runtime, not fed) when `variable`. `low`/`high` bound generated float inputs (e.g.
    positive for RSQRT); integer inputs span the whole type, ends included."""

    shape: tuple[int, ...]
    dtype: int
    scale: list[float] = field(default_factory=list)
    zp: list[int] = field(default_factory=list)
    data: Any = None
    qdim: int = 0
    low: float | None = None
    high: float | None = None
    variable: bool = False

    def __post_init__(self) -> None:
        if self.scale and not self.zp:
            self.zp = [0] * len(self.scale)
        if self.data is not None:
            self.data = np.asarray(self.data, NP_TYPES[self.dtype]).reshape(self.shape)


def q8(shape: tuple[int, ...], scale: float, zp: int, **kw: Any) -> T:
    return T(shape, I8, [scale], [zp], **kw)


def q16(shape: tuple[int, ...], scale: float, zp: int = 0, **kw: Any) -> T:
    return T(shape, I16, [scale], [zp], **kw)


def f32(shape: tuple[int, ...], **kw: Any) -> T:
    return T(shape, F32, **kw)


def const_i32(values: Sequence[int] | int, shape: tuple[int, ...] | None = None) -> T:
    """A constant int32 tensor (axes, shapes, indices); a bare int is a scalar."""
    arr = np.asarray(values, np.int32)
    return T(arr.shape if shape is None else shape, I32, data=arr)


@dataclass
class Case:
    """One operator and its tensors. `refuse` = (status name, words the message must hold):
    the runtime must refuse the model at open (e.g. an unsupported type)."""

    name: str
    op: str
    inputs: list[T | None]
    outputs: list[T]
    options: str | None = None
    slots: dict[int, tuple[str, Any]] = field(default_factory=dict)
    nslots: int = 8
    vectors: dict[int, list[int]] = field(default_factory=dict)
    refuse: tuple[str, list[str]] | None = None
    seed: int | None = None  # None: from the name
    make_inputs: Callable[[np.random.Generator, list[T]], list[np.ndarray]] | None = None
    custom_options: bytes | None = None  # a custom operator's (op is then its name)
    invokes: int = 1  # > 1: state carried between invocations, each compared
    oracle: str = "tflm"  # "litert": TFLite's reference kernels (an operator TFLM lacks)
    edit: Callable[[bytes], bytes] | None = None  # rewrites the written model (its layout)

    def __str__(self) -> str:
        return self.name


def _tflite_enums() -> tuple[dict[str, int], dict[str, int]]:
    tflite = pytest.importorskip("tflite", reason="the `tflite` schema package is not installed")
    ops = {k: v for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    opts = {k: v for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
    return ops, opts


def single_op_model(case: Case) -> bytes:
    """The case as a one-operator .tflite; non-constant inputs are the graph's inputs."""
    g = modelgen.Graph()
    ids = []
    for i, t in enumerate(case.inputs + case.outputs):
        if t is None:  # an omitted optional input
            ids.append(-1)
            continue
        data = None if t.data is None else t.data.tobytes()
        ids.append(g.tensor(f"t{i}", t.shape, t.dtype, t.scale, t.zp, data, t.qdim, t.variable))
    add_operator(g, case, ids)
    n_in = len(case.inputs)
    model = modelgen.assemble(g, graph_inputs(case, ids[:n_in]), ids[n_in:])
    return model if case.edit is None else case.edit(model)


def add_operator(g: modelgen.Graph, case: Case, ids: list[int]) -> None:
    """The case's operator into graph `g`, on tensors `ids` (its inputs, then its outputs)."""
    op_codes, opt_types = _tflite_enums()
    # Named after its options type: the writer needs the schema's kinds of vector fields.
    options = new_table(case.options or "Scalars", case.slots, case.nslots)
    for slot, values in case.vectors.items():
        set_child(options, slot, struct.pack(f"<{len(values)}i", *values))
    n_in = len(case.inputs)
    opt_type = opt_types[case.options] if case.options else 0
    code = op_codes.get(case.op, case.op)  # not a builtin: a custom operator's name
    g.op(code, ids[:n_in], ids[n_in:], opt_type, options, case.custom_options)


def buffers_4_aligned(model: bytes) -> bytes:
    """The model re-written with every buffer's bytes at 4 modulo 8: as a flatbuffer writer
    that ignores the schema's force_align lays out a [ubyte] vector (its 4-byte length prefix
    aligned), so 8-byte constants are only 4-byte aligned, as in ARM ML-zoo's int16 models."""
    from host.tflite import flatbuf
    from host.tflite.schema import BUFFER_DATA, SCHEMA

    data_kind = SCHEMA.tables["Buffer"][BUFFER_DATA]

    class Writer(flatbuf._Writer):
        def vector(self, v: Any, kind: flatbuf.FieldKind) -> int:
            if kind is not data_kind:
                return super().vector(v, kind)  # type: ignore[arg-type]
            self.pad_to(8)  # the length prefix at 0 mod 8: the bytes after it at 4 mod 8
            pos = len(self.out)
            self.out += struct.pack("<I", len(v)) + bytes(v)
            return pos

    w = Writer(SCHEMA)
    w.out += bytes(4) + SCHEMA.identifier
    w.patch(0, w.table(flatbuf.decode(model, SCHEMA)))
    w.pad_to(16)
    return bytes(w.out)


def fed(t: T | None) -> bool:
    """Whether an input is a graph input, given each invocation."""
    return t is not None and t.data is None and not t.variable


def graph_inputs(case: Case, ids: list[int]) -> list[int]:
    return [ids[i] for i, t in enumerate(case.inputs) if fed(t)]


def random_tensor(rng: np.random.Generator, t: T) -> np.ndarray:
    """Seeded data for a non-constant input: the type's whole range for integers."""
    dtype = NP_TYPES[t.dtype]
    if t.dtype == F32:
        lo = -3.0 if t.low is None else t.low
        hi = 3.0 if t.high is None else t.high
        return rng.uniform(lo, hi, t.shape).astype(dtype)
    if t.dtype == BOOL:
        return rng.integers(0, 2, t.shape).astype(dtype)
    info = np.iinfo(dtype)
    lo = info.min if t.low is None else int(t.low)
    hi = info.max if t.high is None else int(t.high)
    arr = rng.integers(lo, hi, t.shape, endpoint=True).astype(dtype)
    flat = arr.reshape(-1)
    if flat.size >= 2:  # always include both ends of the range
        flat[0], flat[-1] = lo, hi
    return arr


def case_inputs(case: Case) -> list[list[np.ndarray]]:
    """The graph inputs of each invocation."""
    rng = np.random.default_rng(zlib.crc32(case.name.encode()) if case.seed is None else case.seed)
    given = [t for t in case.inputs if fed(t)]
    if case.make_inputs is not None:
        return [case.make_inputs(rng, given) for _ in range(case.invokes)]
    return [[random_tensor(rng, t) for t in given] for _ in range(case.invokes)]


def _save(path: Path, steps: list[list[np.ndarray]]) -> None:
    """Arrays per invocation (an invocation may have none: 'steps' counts them)."""
    arrays = {f"s{k}_{i}": x for k, xs in enumerate(steps) for i, x in enumerate(xs)}
    np.savez(path, steps=np.array(len(steps)), **arrays)


def _load(path: Path) -> list[list[np.ndarray]]:
    with np.load(path) as z:
        steps: list[list[np.ndarray]] = [[] for _ in range(int(z["steps"]))]
        names = sorted(tuple(map(int, n[1:].split("_"))) for n in z.files if n != "steps")
        for k, i in names:
            steps[k].append(z[f"s{k}_{i}"])
    return steps


# ----------------------------------------------------------------------------- the two sides


@dataclass
class Result:
    """Both sides of one case."""

    tflm: list[np.ndarray] | None  # outputs of each invocation, one after the other
    tflm_error: str | None
    ours: list[np.ndarray] | None
    status: str | None  # the runtime's error status name, None when it ran
    message: str


def run_tflm(
    model: bytes, steps: list[list[np.ndarray]], n_out: int
) -> tuple[list[np.ndarray] | None, str | None]:
    """TFLM's outputs of each invocation, or None and its error where it refuses the model."""
    from support.tflm_oracle import oracle

    runtime = oracle()
    outputs = []
    try:
        it = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
        for inputs in steps:
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
            outputs += [np.array(it.get_output(i)) for i in range(n_out)]
    except RuntimeError as e:
        return None, str(e)
    return outputs, None


def run_cases(cases: Sequence[Case], workdir: Path) -> dict[str, Result]:
    """Every case on the sanitized runtime (one child process) and on the real TFLM."""
    from support.litert_oracle import run_litert
    from support.sanitize import sanitized_env

    env = sanitized_env()
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    inputs = {}
    for k, case in enumerate(cases):
        model = single_op_model(case)
        (workdir / f"{k}.tflite").write_bytes(model)
        inputs[k] = case_inputs(case)
        _save(workdir / f"{k}.in.npz", inputs[k])
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(workdir), str(len(cases))],
        env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    results = {}
    for k, case in enumerate(cases):
        meta = json.loads((workdir / f"{k}.out.json").read_text())
        ours = None
        if meta["status"] is None:
            ours = [x for step in _load(workdir / f"{k}.out.npz") for x in step]
        model = (workdir / f"{k}.tflite").read_bytes()
        run_oracle = run_tflm if case.oracle == "tflm" else run_litert
        tflm, tflm_error = run_oracle(model, inputs[k], len(case.outputs))
        results[case.name] = Result(tflm, tflm_error, ours, meta["status"], meta["message"])
    return results


def _child(workdir: Path, count: int) -> int:
    """Runs in the sanitized child: each model on the runtime, outputs or error to files."""
    from host.runtime.binding import STATUS_NAMES, Interpreter, MicroarenaError

    for k in range(count):
        model = (workdir / f"{k}.tflite").read_bytes()
        meta: dict[str, Any] = {"status": None, "message": ""}
        try:
            it = Interpreter(model)
            outputs = []
            for inputs in _load(workdir / f"{k}.in.npz"):
                for i, x in enumerate(inputs):
                    it.set_input(i, x)
                it.invoke()
                outputs.append([it.get_output(i) for i in range(it.num_outputs())])
            _save(workdir / f"{k}.out.npz", outputs)
        except MicroarenaError as e:
            meta = {"status": STATUS_NAMES.get(e.status, str(e.status)), "message": e.message}
        (workdir / f"{k}.out.json").write_text(json.dumps(meta))
    return 0


# ----------------------------------------------------------------------------- verdict


def check(case: Case, r: Result) -> None:
    """The runtime agrees with TFLM (or refuses as the case expects)."""
    if case.refuse is not None:
        status, words = case.refuse
        assert r.status == status, f"{case}: expected {status}, got {r.status} {r.message!r}"
        missing = [w for w in words if w not in r.message]
        assert not missing, f"{case}: message {r.message!r} lacks {missing}"
        return
    assert r.tflm is not None, f"{case}: TFLM cannot run the model: {r.tflm_error}"
    assert r.status is None, f"{case}: runtime refused: {r.status} {r.message}"
    assert r.ours is not None and len(r.ours) == len(r.tflm), f"{case}: output count"
    n_out = len(case.outputs)
    for i in range(n_out):
        # A constant output (e.g. everything saturated) would hide arithmetic errors; over
        # all invocations, since a stream may start with a constant one (a delay's zeros).
        want = np.concatenate([w.reshape(-1) for w in r.tflm[i::n_out]])
        assert r.tflm[i].size < 4 or np.unique(want).size > 1, (
            f"{case}: degenerate, TFLM's output {i} is constant"
        )
    for j, (got, want) in enumerate(zip(r.ours, r.tflm, strict=True)):
        step = f" of invocation {j // n_out}" if case.invokes > 1 else ""
        assert_same(got, want, f"{case} output {j % n_out}{step}")


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Integers and bools bit for bit; floats within 1e-5 relative to the output's scale."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs TFLM {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs TFLM {want.shape}"
    if np.issubdtype(want.dtype, np.floating):
        finite = want[np.isfinite(want)]
        scale = float(np.max(np.abs(finite))) if finite.size else 0.0
        np.testing.assert_allclose(
            got, want, rtol=FLOAT_RTOL, atol=FLOAT_RTOL * max(scale, 1e-3), err_msg=what
        )
        return
    diff = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    assert diff.size == 0, (
        f"{what}: {diff.size}/{want.size} values differ, first at {diff[0]}: "
        f"got {got.reshape(-1)[diff[0]]}, TFLM {want.reshape(-1)[diff[0]]}"
    )


if __name__ == "__main__" and "--child" in sys.argv:
    at = sys.argv.index("--child")
    sys.exit(_child(Path(sys.argv[at + 1]), int(sys.argv[at + 2])))
