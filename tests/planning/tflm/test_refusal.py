"""host.plan says when TFLM will refuse a model (an operator it registers no kernel for, a
custom operator such as Vela's ethos-u) instead of calling the head "exact", and the stored
list of registered operators is the installed pip TFLM's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.conformance import I8, I16, Case, T, single_op_model
from support.tflm_oracle import capture_output, oracle

from host.paths import REPO
from host.planning.cli import main
from host.planning.tflm import registered
from host.planning.tflm.refusal import tflm_refusal
from host.runtime.binding import Interpreter, MicroarenaError
from host.tflite.model import Model
from host.tflite.ops import BUILTIN_CODES

sys.path.insert(0, str(REPO / "tools"))

import gen_operators_doc  # noqa: E402


def test_stored_registrations_are_the_installed_tflms() -> None:
    oracle()
    from tflite_micro.python.tflite_micro import _version

    if _version.__version__ != registered.VERSION:
        pytest.skip(
            f"installed tflite-micro {_version.__version__}, the list is for the stored one"
        )
    proc = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_tflm_registered.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_stored_registrations_are_the_operator_tables() -> None:
    """docs/operators.md's TFLM column comes from the same probe: the two lists agree."""
    version, names = gen_operators_doc.stored_tflm(gen_operators_doc.DOC.read_text())
    assert (version, names) == (registered.VERSION, sorted(registered.OPERATORS))


def _tflm_says(data: bytes) -> str:
    """What the pip TFLM prints and raises while loading the model."""
    runtime = oracle()
    said: list[str] = []

    def load() -> None:
        try:
            runtime.Interpreter.from_bytes(data, arena_size=1 << 16)
        except Exception as e:  # noqa: BLE001 - whatever TFLM raises is its verdict
            said.append(str(e))

    said.append(capture_output(load))
    return "".join(said)


ONE_OP = [("TILE", BUILTIN_CODES["TILE"], None), ("POW", BUILTIN_CODES["POW"], None)]
CUSTOM = [
    ("ethos-u", BUILTIN_CODES["CUSTOM"], "ethos-u"),
    ("MyOp", BUILTIN_CODES["CUSTOM"], "MyOp"),
]


@pytest.mark.parametrize(("name", "code", "custom"), ONE_OP + CUSTOM)
def test_unregistered_operator_is_named_as_tflm_refuses_it(
    tmp_path: Path, capsys, name: str, code: int, custom: str | None
) -> None:
    data = gen_operators_doc._probe_model(code, custom)
    assert "Failed to get registration from op code" in _tflm_says(data)
    refusal = tflm_refusal(Model(data))
    assert refusal is not None
    assert [(u.name, u.custom, u.at) for u in refusal.unregistered] == [
        (name, custom is not None, [(0, 0)])
    ]
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    assert main([str(path), "-q", "--kernels", "reference"]) == 0
    out = capsys.readouterr().out
    assert "exact: what TFLM reports" not in out
    label = f"custom operator '{name}'" if custom else name
    assert (
        f"TFLM refuses this model: the pip tflite-micro {registered.VERSION} registers "
        f"no kernel for {label} (subgraph 0 operator 0" in out
    )
    assert main([str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tflm_runtime"]["runs"] is False
    assert doc["tflm_runtime"]["unregistered"] == [
        {"name": name, "custom": custom is not None, "operators": [[0, 0]]}
    ]
    assert doc["target"]["exact"] == {"head": False, "tail": False, "min_arena": False}


def test_registered_operator_keeps_the_exact_head(tmp_path: Path, capsys) -> None:
    data = gen_operators_doc._probe_model(BUILTIN_CODES["RELU"], None)
    assert "Failed to get registration" not in _tflm_says(data)
    assert tflm_refusal(Model(data)) is None
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    assert main([str(path), "-q"]) == 0
    out = capsys.readouterr().out
    assert "exact: what TFLM reports" in out and "TFLM refuses" not in out
    assert main([str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tflm_runtime"] == {"runs": True}


def test_refusal_names_the_chosen_kernels(tmp_path: Path, capsys) -> None:
    """With --kernels cmsis-nn the report says which TFLM build refuses (CMSIS-NN replaces
    kernels, not TFLM's operator set)."""
    path = tmp_path / "m.tflite"
    path.write_bytes(gen_operators_doc._probe_model(BUILTIN_CODES["TILE"], None))
    assert main([str(path), "-q", "--kernels", "cmsis-nn"]) == 0
    out = capsys.readouterr().out
    assert (
        "TFLM refuses this model: a TFLM build with the CMSIS-NN kernels (whose operators " in out
    )
    assert "registers no kernel for TILE (subgraph 0 operator 0)" in out


FUZZ = REPO / "tests" / "data" / "fuzz"


@pytest.mark.parametrize("name", ["max_pool_requantizes", "average_pool_requantizes"])
def test_requantizing_pool_is_named_as_tflm_refuses_it(name: str) -> None:
    """Integer pooling never requantizes: TFLM's Prepare refuses a pool whose output scale or
    zero point differs from its input's, and host.plan names that operator."""
    data = (FUZZ / f"{name}.tflite").read_bytes()
    said = _tflm_says(data)
    assert "POOL_2D (number" in said and "failed to prepare" in said, said
    refusal = tflm_refusal(Model(data))
    assert refusal is not None and not refusal.unregistered
    assert [p for p in refusal.in_prepare if "POOL_2D" in p] == refusal.in_prepare
    assert all("output scale within 1e-6 of the input's" in p for p in refusal.in_prepare)


def test_pool_with_its_input_quantization_is_not_refused() -> None:
    """The shared models' pools keep their input's quantization: TFLM loads them."""
    models = REPO.parent / "shared" / "models"
    path = models / "tiny_kws_dscnn_int8.tflite"
    if not path.exists():
        pytest.skip(f"{path} absent (the shared models are not in the repository)")
    model = Model(path.read_bytes())
    assert any("POOL_2D" in op.name for sg in model.subgraphs for op in sg.operators)
    assert tflm_refusal(model) is None


def _concat(first: tuple[int, float, int], out: tuple[int, float, int]) -> bytes:
    """CONCATENATION of an input quantized `first` and one quantized as `out`
    ((type, scale, zero point) each)."""

    def t(q: tuple[int, float, int], shape: tuple[int, ...]) -> T:
        return T(shape, q[0], [q[1]], [q[2]])

    case = Case("concat", "CONCATENATION", [t(first, (2, 3)), t(out, (2, 3))], [t(out, (2, 6))],
                "ConcatenationOptions", {0: ("i", 1)})  # fmt: skip
    return single_op_model(case)


CONCATS = {
    "int8 alike": ((I8, 0.05, -3), (I8, 0.05, -3)),
    "int8 scale differs": ((I8, 0.04, -3), (I8, 0.05, -3)),
    "int8 zero point differs": ((I8, 0.05, 3), (I8, 0.05, -3)),
    "int16 scale differs": ((I16, 0.02, 0), (I16, 0.01, 0)),
    "int16 input zero point 2": ((I16, 0.01, 2), (I16, 0.01, 0)),
    "int16 output zero point 2": ((I16, 0.01, 2), (I16, 0.01, 2)),
}


@pytest.mark.parametrize("name", CONCATS)
def test_concatenation_quantization_verdict_is_tflms(name: str) -> None:
    """host.plan's refusal model, this runtime and the pip TFLM agree on which quantizations
    CONCATENATION (a byte copy) accepts."""
    data = _concat(*CONCATS[name])
    tflm_refuses = "failed to prepare" in _tflm_says(data)
    assert (tflm_refusal(Model(data)) is not None) == tflm_refuses
    try:
        Interpreter(data)
        runtime_refuses = False
    except MicroarenaError:
        runtime_refuses = True
    assert runtime_refuses == tflm_refuses


@pytest.mark.parametrize("target", ["microarena-host", "tflm-x86_64"])
def test_no_exact_head_for_a_model_the_runtime_refuses(tmp_path: Path, capsys, target: str) -> None:
    """host.plan calls a head exact only where the runtime it was planned for opens the model
    (issue 26: it once printed an exact microarena head, then said the runtime cannot run it)."""
    path = tmp_path / "concat.tflite"
    path.write_bytes(_concat(*CONCATS["int8 scale differs"]))
    assert main([str(path), "-q", "--target", target]) == 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.startswith("arena head"))
    assert "exact:" not in head and "reports none" in head, head
    assert "cannot run this model" in out
    assert main([str(path), "-q", "--target", target, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["planned_head_exact"] is False
