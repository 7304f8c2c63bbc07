"""The TFLM arena model (host/planning/targets/tflm.py) against the real TFLM (pip tflite-micro).

For every shared model TFLM runs, the predicted RecordingMicroAllocator report (total, head,
tail and every category line) equals the real interpreter's, line for line, and the predicted
minimum arena equals the smallest arena_size for which the real interpreter sets up and runs
(found by bisection to the byte, as TFLM_BASELINE.tsv's min_arena_size was). The pip
interpreter allocates its arena with `new uint8_t[]` (glibc malloc): 16-byte aligned, the
alignment the prediction assumes.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.case_tables import conformance_cases
from support.tflm_oracle import (
    CONVERTER_MODELS,
    MODELS,
    capture_output,
    oracle,
    runnable_models,
    runs_in_arena,
    shared_model,
)

from host.planning.targets.target import TARGETS, target_arena
from host.planning.targets.tflm import PREPARE, predict, smallest_arena
from host.planning.tflm.refusal import refused_ops
from host.planning.tflm.structs import X86_64_PIP
from host.tflite.model import Model

RUNNABLE = runnable_models()
BIG_ARENA = 16 << 20
# Converter-made models (tools/make_keras_models.py): MLP, GRU, LSTM, attention + LayerNorm, ...
# and those TFLM refuses (test_refused_models_are_the_ones_tflm_refuses checks it does).
CONVERTED_ALL = sorted(CONVERTER_MODELS.glob("*.tflite"))
CONVERTED = [p for p in CONVERTED_ALL if not refused_ops(Model.load(p))]


@dataclass
class PipArena:
    report: list[str]  # the [RecordingMicroAllocator] lines, in order
    min_arena: int


def _measure(data: bytes) -> PipArena:
    """The real interpreter's report, and its minimum arena by bisection (started around the
    prediction to save probes; the answer is bracketed by probes, not assumed)."""
    runtime = oracle()
    interp = runtime.Interpreter.from_bytes(data, arena_size=BIG_ARENA)
    text = capture_output(interp.print_allocations)
    lines = [ln.strip() for ln in text.splitlines() if "[RecordingMicroAllocator]" in ln]
    near = predict(Model(data), X86_64_PIP).min_arena
    return PipArena(lines, smallest_arena(lambda size: runs_in_arena(data, size), near=near))


@pytest.fixture(scope="session")
def pip_arena():
    """The real interpreter's report and minimum arena per model, measured once per session."""
    cache: dict[str, PipArena] = {}

    def get(path: Path) -> PipArena:
        key = str(path)
        if key not in cache:
            cache[key] = _measure(path.read_bytes())
        return cache[key]

    return get


def _baseline_min_arena(name: str) -> int:
    with (MODELS / "TFLM_BASELINE.tsv").open() as f:
        rows = {r["name"]: r for r in csv.DictReader(f, delimiter="\t")}
    return int(rows[name]["min_arena_size"])


def _check_report(path: Path, pip_arena) -> None:
    predicted = predict(Model.load(path), X86_64_PIP, BIG_ARENA)
    assert predicted.exact, f"operators not modelled: {predicted.unknown}"
    assert predicted.report_lines() == pip_arena(path).report
    # Each byte of the tail belongs to a report category or to a named uncategorized kind.
    assert sum(r.used for r in predicted.categories.values()) == predicted.tail


@pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv is absent")
@pytest.mark.parametrize("name", RUNNABLE or ["none"])
def test_report_equals_pip_interpreter(name: str, pip_arena) -> None:
    _check_report(shared_model(name), pip_arena)


@pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv is absent")
@pytest.mark.parametrize("name", RUNNABLE or ["none"])
def test_min_arena_equals_pip_interpreter(name: str, pip_arena) -> None:
    predicted = predict(Model.load(shared_model(name)), X86_64_PIP).min_arena
    assert predicted == pip_arena(shared_model(name)).min_arena
    assert predicted == _baseline_min_arena(name)


@pytest.mark.skipif(not CONVERTED, reason="tests/data/keras has no converter-made models")
@pytest.mark.parametrize("path", CONVERTED or ["none"], ids=lambda p: Path(p).stem)
def test_converted_model_report_equals_pip_interpreter(path: Path, pip_arena) -> None:
    _check_report(path, pip_arena)


@pytest.mark.skipif(not CONVERTED, reason="tests/data/keras has no converter-made models")
@pytest.mark.parametrize("path", CONVERTED or ["none"], ids=lambda p: Path(p).stem)
def test_converted_model_min_arena_equals_pip_interpreter(path: Path, pip_arena) -> None:
    assert predict(Model.load(path), X86_64_PIP).min_arena == pip_arena(path).min_arena


@pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv is absent")
@pytest.mark.parametrize("name", ["tiny_vww_mobilenet_int8", "tflm_audio_preprocessor_int8"])
def test_plan_cli_target_pip_with_embedded_plan(name: str, tmp_path: Path, capsys) -> None:
    """`host.plan --embed --json --target tflm-x86_64`: head, tail and min_arena are what the
    real interpreter reports and needs for the planned model (whose plan moves the head)."""
    from host.planning.cli import main

    out = tmp_path / f"{name}.tflite"
    args = [str(shared_model(name)), "--embed", "-o", str(out), "--json", "-q"]
    assert main([*args, "--target", "tflm-x86_64"]) == 0
    r = json.loads(capsys.readouterr().out)
    real = _measure(out.read_bytes())
    lines = {ln.split(" allocation ")[1].split()[0]: int(ln.split()[-2]) for ln in real.report[:3]}
    assert (r["head"], r["tail"], r["min_arena"]) == (lines["head"], lines["tail"], real.min_arena)
    assert r["target"]["exact"] == {"head": True, "tail": True, "min_arena": True}


@pytest.mark.parametrize("target", TARGETS)
def test_plan_cli_reports_each_target(target: str, tmp_path: Path, capsys) -> None:
    """Every target prints the arena to set, head and tail, and gives them as JSON integers
    equal to the target's own predictor on the planned model."""
    from host.planning.cli import main

    path = shared_model("tiny_kws_dscnn_int8")  # every runtime runs it
    assert main([str(path), "-q", "--target", target]) == 0
    text = capsys.readouterr().out
    assert f"target           {target}" in text and "arena to set" in text
    out = tmp_path / "planned.tflite"
    assert main([str(path), "-q", "--json", "--target", target, "--embed", "-o", str(out)]) == 0
    r = json.loads(capsys.readouterr().out)
    expected = target_arena(Model.load(out), target)
    assert (r["head"], r["tail"], r["min_arena"]) == (
        expected.head,
        expected.tail,
        expected.min_arena,
    )
    assert all(isinstance(r[k], int) for k in ("head", "tail", "min_arena"))


UNARY = [
    "ABS", "EXP", "LOG", "RSQRT", "SQRT", "SQUARE", "NEG", "SIN", "COS", "TANH", "LOGISTIC",
    "RELU", "RELU6", "ELU", "HARD_SWISH", "FLOOR", "CEIL", "ROUND", "LOG_SOFTMAX", "ZEROS_LIKE",
    "LEAKY_RELU", "SOFTMAX",
]  # fmt: skip
BINARY = [
    "ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "FLOOR_DIV",
    "FLOOR_MOD", "PRELU",
]  # fmt: skip


def _single_operator_model(name: str) -> bytes:
    """A float32 model of one operator on 1x4x4x3 tensors (default options)."""
    from host.tflite.modelgen import Graph, assemble, scalar_options
    from host.tflite.ops import BUILTIN_CODES

    g = Graph()
    shape = (1, 4, 4, 3)
    inputs = [g.tensor(f"in{i}", shape, 0, [], []) for i in range(2 if name in BINARY else 1)]
    out = g.tensor("out", shape, 0, [], [])
    g.op(BUILTIN_CODES[name], inputs, [out], 0, scalar_options({}, 1))
    return assemble(g, inputs, [out])


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_single_operator_report_equals_pip_interpreter(name: str) -> None:
    """Kernels the model corpus lacks, one at a time: every report line as the real TFLM's."""
    data = _single_operator_model(name)
    interp = oracle().Interpreter.from_bytes(data, arena_size=1 << 20)
    text = capture_output(interp.print_allocations)
    real = [ln.strip() for ln in text.splitlines() if "[RecordingMicroAllocator]" in ln]
    predicted = predict(Model(data), X86_64_PIP, 1 << 20)
    assert predicted.exact, f"operators not modelled: {predicted.unknown}"
    assert predicted.report_lines() == real


def test_unmodelled_kernel_is_named_and_not_exact(capsys, tmp_path: Path) -> None:
    """An operator whose kernel the model does not know: the report says which, and marks the
    tail and the arena to set NOT exact rather than print a short figure as exact."""
    from host.planning.cli import main
    from host.tflite.modelgen import Graph, assemble, scalar_options
    from host.tflite.ops import BUILTIN_CODES

    g = Graph()
    x = g.tensor("x", (1, 8), 0, [], [])
    y = g.tensor("y", (1, 8), 0, [], [])
    g.op(BUILTIN_CODES["RNN"], [x], [y], 0, scalar_options({}, 1))  # no kernel in TFLM
    path = tmp_path / "rnn.tflite"
    path.write_bytes(assemble(g, [x], [y]))
    assert main([str(path), "-q", "--target", "tflm-x86_64"]) == 0
    text = capsys.readouterr().out
    assert "kernels not modelled (their allocations are missing): RNN" in text
    assert "(NOT exact): the smallest arena" in text and "bytes (NOT exact), of which" in text


@pytest.mark.skipif(not RUNNABLE, reason="../shared/models/TFLM_BASELINE.tsv is absent")
@pytest.mark.parametrize("path", sorted(MODELS.glob("*.tflite")), ids=lambda p: p.stem)
def test_refused_models_are_the_ones_tflm_refuses(path: Path) -> None:
    """Hybrid operators (float activations, int8 weights) are what the real TFLM refuses."""
    _check_refusal(path)


@pytest.mark.parametrize("path", CONVERTED_ALL, ids=lambda p: p.stem)
def test_refused_converted_models_are_the_ones_tflm_refuses(path: Path) -> None:
    """An operator output with a 0 dimension (an empty SPLIT_V part) TFLM refuses too."""
    _check_refusal(path)


def _check_refusal(path: Path) -> None:
    refused = refused_ops(Model.load(path))
    assert bool(refused) == (not runs_in_arena(path.read_bytes(), BIG_ARENA)), refused


CONFORMANCE = [case for _, case in conformance_cases()]


@pytest.mark.parametrize("case", CONFORMANCE, ids=str)
def test_conformance_case_report_equals_pip_interpreter(case) -> None:
    """Every one-operator conformance model TFLM accepts: every report line as TFLM's (or, for
    a kernel the model does not know yet, a prediction marked not exact)."""
    from support.conformance import single_op_model

    data = single_op_model(case)
    try:
        interp = oracle().Interpreter.from_bytes(data, arena_size=1 << 20)
    except RuntimeError as e:
        pytest.skip(f"TFLM refuses this case: {e}")
    text = capture_output(interp.print_allocations)
    real = [ln.strip() for ln in text.splitlines() if "[RecordingMicroAllocator]" in ln]
    predicted = predict(Model(data), X86_64_PIP, 1 << 20)
    if predicted.unknown:  # a kernel added to the suite after this model: it must say so
        assert not predicted.exact and predicted.tail <= int(real[2].split()[-2])
        return
    assert predicted.report_lines() == real


@pytest.mark.parametrize(
    "options",
    [
        dict(boxes=30, classes=4),
        dict(boxes=50, classes=5, regular=True, per_class=3, max_detections=12),
        dict(boxes=6, classes=2, max_detections=2),
    ],
    ids=["fast", "regular", "planner memory decides"],
)
def test_detection_postprocess_arena_to_set(options: dict) -> None:
    """TFLite_Detection_PostProcess (11 scratch buffers, its OpData, Prepare borrowing only its
    inputs): the arena to set is exact, the real interpreter's smallest to the byte."""
    from support.conformance import single_op_model
    from support.detection_models import detect

    data = single_op_model(detect("arena", **options))
    predicted = predict(Model(data), X86_64_PIP)
    assert predicted.exact and not predicted.unknown
    assert predicted.min_arena == smallest_arena(
        lambda size: runs_in_arena(data, size), near=predicted.min_arena
    )


@pytest.mark.parametrize("case", CONFORMANCE[::6], ids=str)
def test_conformance_case_min_arena(case) -> None:
    """On one-operator models a kernel's Prepare often decides the minimum: where the kernel's
    borrowing is known exactly the minimum equals the real one, otherwise it is marked not
    exact and is never below it."""
    from support.conformance import single_op_model

    data = single_op_model(case)
    if not runs_in_arena(data, 1 << 20):
        pytest.skip("TFLM refuses this case")
    predicted = predict(Model(data), X86_64_PIP)
    if predicted.unknown:
        pytest.skip(f"operators not modelled: {predicted.unknown}")
    real = smallest_arena(lambda size: runs_in_arena(data, size), near=predicted.min_arena)
    if predicted.exact:
        assert predicted.min_arena == real
    else:
        assert predicted.limited_by == PREPARE and predicted.min_arena >= real
