"""The real TensorFlow Lite Micro interpreter (pip `tflite-micro`) as the reference.

Runs a model from bytes on random inputs and returns its outputs and its
RecordingMicroAllocator report. Tests import this only through `oracle()`: it skips with a
clear reason where the package has no wheel (anything but Linux x86_64) and fails where it has
one but is missing.
"""

from __future__ import annotations

import csv
import ctypes
import faulthandler
import os
import platform
import re
import struct
import sys
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from host.paths import SHARED_MODELS
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model

MODELS = SHARED_MODELS
# Converter-made models committed as test data (tools/make_keras_models.py writes them).
CONVERTER_MODELS = Path(__file__).resolve().parents[1] / "data" / "keras"
# A converter-made MobileNetV2, 160x160 (tools/make_mobilenets.py), and the split of its early
# stage with the smallest head host.plan --bands --overlap finds (cut after operator, bands).
MOBILENET_V2 = CONVERTER_MODELS.parent / "mobilenet_v2" / "mobilenet_v2_035_160_int8.tflite"
MOBILENET_V2_BANDS = (5, 16)
BIG_ARENA = 16 << 20

_LINE = re.compile(r"\[RecordingMicroAllocator\] Arena allocation (total|head|tail) (\d+) bytes")


@dataclass
class TflmRun:
    outputs: list[np.ndarray]
    head: int
    tail: int
    total: int
    report: str


def runnable_models() -> list[str]:
    """Shared models the real TFLM runs (TFLM_BASELINE.tsv); [] where the models are absent."""
    tsv = MODELS / "TFLM_BASELINE.tsv"
    if not tsv.exists():
        return []
    with tsv.open() as f:
        return [r["name"] for r in csv.DictReader(f, delimiter="\t") if r["tflm_runs"] == "yes"]


# Where the oracles (pip tflite-micro, ai-edge-litert) have wheels the test extras install them:
# there a missing one fails the test, since a skip would hide that nothing was checked.
HAS_ORACLE_WHEELS = sys.platform == "linux" and platform.machine() == "x86_64"


def oracle():
    """The tflite_micro runtime module; fails where it has wheels and is missing, else skips."""
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError as e:  # pragma: no cover - depends on the platform
        if HAS_ORACLE_WHEELS:
            pytest.fail(f"pip tflite-micro is not installed (pip install -e '.[test]'): {e}")
        pytest.skip(f"the real TFLM (pip tflite-micro, Linux x86_64 only) is not importable: {e}")
    _quick_resource_variable_count(runtime)
    return runtime


def _quick_resource_variable_count(runtime) -> None:
    """The pip Interpreter unpacks the whole model into Python objects to count its resource
    variables each time one is made (0.4 s for a 570 KB model, eight times its invoke). A model
    without a VAR_HANDLE operator has none: that is read from the operator codes alone."""
    full_count = runtime.count_resource_variables
    if getattr(full_count, "quick", False):
        return
    schema = runtime.schema_fb

    def count(model) -> int:
        if isinstance(model, schema.ModelT):
            return full_count(model)
        m = schema.Model.GetRootAsModel(model, 0)
        codes = (m.OperatorCodes(i) for i in range(m.OperatorCodesLength()))
        builtins = {runtime.get_builtin_code_from_operator_code(c) for c in codes}
        return full_count(model) if schema.BuiltinOperator.VAR_HANDLE in builtins else 0

    count.quick = True  # type: ignore[attr-defined]
    runtime.count_resource_variables = count


def _io_counts(runtime, model: bytes) -> tuple[int, int]:
    """How many inputs and outputs subgraph 0 has, read without decoding the model."""
    sg = runtime.schema_fb.Model.GetRootAsModel(model, 0).Subgraphs(0)
    return sg.InputsLength(), sg.OutputsLength()


def shared_model_names(exclude: Collection[str] = ()) -> list:
    """Every shared model's name, to parametrize a test with; where the corpus is absent, one
    skipped case that says so (pytest's own "got empty parameter set" names no cause)."""
    names = sorted(p.stem for p in MODELS.glob("*.tflite"))
    if names:
        return [n for n in names if n not in exclude]
    reason = f"no shared models in {MODELS} (tests read ../shared/models)"
    return [pytest.param("absent", marks=pytest.mark.skip(reason=reason))]


def shared_model(name: str) -> Path:
    p = MODELS / f"{name}.tflite"
    if not p.exists():
        pytest.skip(f"shared model {p} is absent (tests read ../shared/models)")
    return p


def capture_output(fn) -> str:
    """Run fn() and return what C code printed to file descriptors 1 and 2."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
            ctypes.CDLL(None).fflush(None)  # C stdio may buffer a file: flush before restoring
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, old in zip((1, 2), saved, strict=True):
                os.dup2(old, fd)
                os.close(old)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")


def _input_spec(interp, i: int) -> tuple[np.dtype, tuple[int, ...]]:
    """dtype and shape of input i, from TFLM's interpreter or this project's."""
    if hasattr(interp, "get_input_details"):
        d = interp.get_input_details(i)
        return d["dtype"], tuple(d["shape"])
    d = interp.input_details(i)
    return d.dtype, tuple(d.shape)


def random_inputs(interp, count: int, seed: int = 0) -> list[np.ndarray]:
    """The same seeded inputs for the real TFLM and for this project's Interpreter."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i in range(count):
        dtype, shape = _input_spec(interp, i)
        if np.issubdtype(dtype, np.floating):
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -128), min(info.max, 127)
            arrays.append(rng.integers(lo, hi + 1, shape).astype(dtype))
    return arrays


def runs_in_arena(data: bytes, arena_size: int) -> bool:
    """Whether the real interpreter sets up and invokes the model in this arena; in a child
    process, since TFLM can crash outright on some too-small arenas."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        faulthandler.disable()  # a crash here is an answer ("does not run"), not news
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        ok = False
        try:
            interp = oracle().Interpreter.from_bytes(data, arena_size=arena_size)
            inputs = len(Model(data).subgraphs[0].inputs)
            for i, arr in enumerate(random_inputs(interp, inputs)):
                interp.set_input(arr, i)
            interp.invoke()
            ok = True
        except BaseException:
            pass
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def deterministic_inputs(interp, count: int) -> list[np.ndarray]:
    """The inputs the board applications feed (host.device.boards.deterministic_input)."""
    from host.device.boards import deterministic_input

    arrays = []
    for i in range(count):
        d = interp.get_input_details(i)
        shape = tuple(int(n) for n in d["shape"])
        arrays.append(deterministic_input(d["dtype"], int(np.prod(shape))).reshape(shape))
    return arrays


def run_tflm(
    model: bytes,
    seed: int = 0,
    arena_size: int = BIG_ARENA,
    deterministic: bool = False,
    invocations: int = 1,
) -> TflmRun:
    """Run the real TFLM on random inputs (numpy seed), or on the boards' deterministic input,
    `invocations` times in a row on one interpreter (the same inputs, variables carried over as
    the model app's "name*N" does), and return its outputs after the last and its report."""
    runtime = oracle()
    n_inputs, n_outputs = _io_counts(runtime, model)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena_size)
    if deterministic:
        inputs = deterministic_inputs(interp, n_inputs)
    else:
        inputs = random_inputs(interp, n_inputs, seed)
    for _ in range(invocations):
        for i, arr in enumerate(inputs):  # set again: an invocation may reuse an input's bytes
            interp.set_input(arr, i)
        interp.invoke()
    outputs = [np.array(interp.get_output(i)) for i in range(n_outputs)]
    report = capture_output(interp.print_allocations)
    nums = {k: int(v) for k, v in _LINE.findall(report)}
    return TflmRun(outputs, nums["head"], nums["tail"], nums["total"], report)


def with_every_output(data: bytes, variables: bool = False) -> tuple[bytes, list[int]]:
    """The model with every operator output of subgraph 0 added to its outputs (and with
    `variables` its variable tensors after them, as they are after the invocation), and the
    tensor indices of all its outputs in order."""
    m = Model(data)
    sg = m.subgraphs[0]
    outputs = list(sg.outputs)
    for op in sg.operators:
        outputs += [t for t in op.outputs if t >= 0 and t not in outputs]
    if variables:
        outputs += [t.index for t in sg.tensors if t.is_variable and t.index not in outputs]
    table = m.root.get(S.MODEL_SUBGRAPHS)[0]
    set_child(table, S.SUBGRAPH_OUTPUTS, struct.pack(f"<{len(outputs)}i", *outputs))
    return m.to_bytes(), outputs
