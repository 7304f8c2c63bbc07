"""Models the TensorFlow converter makes (tests/data/keras, tools/make_keras_models.py) and
TFLM's audio preprocessor, on the runtime's host build and its ASan + UBSan build, against
the real TFLM.

EXPECT says, for every model, whether the runtime must run it fully or refuse it at open,
naming which operator (and, where a kernel exists but lacks the type, which type). A model
that runs must give TFLM's outputs over three invocations (int8 bit-exact, float within
1e-5) and every intermediate tensor TFLM computed: a copy of the model whose subgraph
outputs include every operator's outputs runs on this runtime, and each of them is compared
with the tensor TFLM preserved (kPreserveAllTensors) for the original model. So the test
fails when a model regresses, when a refusal changes or is unclear, and when a model that
was refused starts to run (then EXPECT must be updated). No model is skipped silently.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import MODELS, oracle, random_inputs, run_tflm, with_every_output

from host.runtime.binding import MA_ERR_UNSUPPORTED, Interpreter, MicroarenaError
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]
KERAS = REPO / "tests" / "data" / "keras"
AUDIO = "tflm_audio_preprocessor_int8"  # shared model (Signal* custom operators)

# None: runs fully. (operator, reason): refused at open naming the operator and the reason
# (the type, where a kernel exists but not for that type; None = no kernel for the operator).
EXPECT: dict[str, tuple[str, str | None] | None] = {
    "conv1d_audio_int8": None,
    "conv_options_int8": None,
    # SPLIT_V's empty third part: TFLM refuses outputs with a 0 dimension (tools/
    # make_keras_models.py says why), tests/planning/targets/test_tflm.py checks TFLM does.
    "gru_no_reset_after_float": ("SPLIT_V", "output tensor 26 has dimension 1 of size 0"),
    "gru_float": None,
    "gru_int8": None,
    "lstm_float": None,
    "lstm_int8": None,
    "mlp_float": None,
    "mlp_int8": None,
    "mobilenet_v3ish_float": None,
    "mobilenet_v3ish_int8": None,
    "transformer_float": None,
    "transformer_int8": None,
    "unet_float": None,
    "unet_int8": None,
    AUDIO: None,
}
# Tensor values TFLM leaves undefined: SignalEnergy writes only bins [start, end) of its
# output (TFLM leaves the rest as the arena held them), and CAST copies them.
DEFINED = {AUDIO: {24: slice(5, 241), 25: slice(5, 241)}}
INVOCATIONS = 3


def model_bytes(name: str) -> bytes:
    path = MODELS / f"{name}.tflite" if name == AUDIO else KERAS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent (shared models are read from ../shared/models)")
    return path.read_bytes()


def test_every_model_has_an_expectation() -> None:
    made = {p.stem for p in KERAS.glob("*.tflite")}
    assert made, f"no models in {KERAS}"
    assert made | {AUDIO} == set(EXPECT), "EXPECT must name every converter-made model"


def run_ours(data: bytes) -> dict[str, np.ndarray]:
    """Every output of the every-output copy after each invocation: 'step:tensor' -> value."""
    variant, tensors = with_every_output(data)
    it = Interpreter(variant)
    results = {}
    for step in range(INVOCATIONS):
        for i, x in enumerate(random_inputs(it, it.num_inputs(), seed=step)):
            it.set_input(i, x)
        it.invoke()
        for k, t in enumerate(tensors):
            results[f"{step}:{t}"] = it.get_output(k)
    return results


def run_tflm_all(data: bytes) -> dict[str, np.ndarray]:
    """What the real TFLM computed for every operator output, per invocation."""
    runtime = oracle()
    sg = Model(data).subgraphs[0]
    tensors = list(sg.outputs) + [t for op in sg.operators for t in op.outputs if t >= 0]
    interp = runtime.Interpreter.from_bytes(
        data, arena_size=16 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )  # fmt: skip
    results = {}
    for step in range(INVOCATIONS):
        for i, x in enumerate(random_inputs(interp, len(sg.inputs), seed=step)):
            interp.set_input(x, i)
        interp.invoke()
        for t in tensors:
            results[f"{step}:{t}"] = np.array(interp.GetTensor(t, 0)["tensor_data"])
    return results


def assert_all_match(name: str, ours: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> None:
    assert set(ours) == set(ref), f"{name}: tensors compared differ"
    defined = DEFINED.get(name, {})
    for key, want in ref.items():
        got = ours[key].reshape(want.shape)
        part = defined.get(int(key.split(":")[1]))
        if part is not None:
            got, want = got.reshape(-1)[part], want.reshape(-1)[part]
        what = f"{name} invocation:tensor {key}"
        assert got.dtype == want.dtype, f"{what}: {got.dtype} vs TFLM {want.dtype}"
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)
        else:
            bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
            assert bad.size == 0, f"{what}: {bad.size}/{want.size} values differ"


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_model_runs_or_is_refused_as_expected(name: str) -> None:
    data = model_bytes(name)
    expected = EXPECT[name]
    if expected is not None:
        op, dtype = expected
        try:
            Interpreter(data)
        except MicroarenaError as e:
            assert e.status == MA_ERR_UNSUPPORTED, str(e)
            assert op in e.message, f"refusal should name {op}: {e.message}"
            reason = "unsupported operator" if dtype is None else dtype
            assert reason in e.message, f"refusal should say {reason!r}: {e.message}"
            return
        pytest.fail(f"{name} now opens: set EXPECT[{name!r}] = None if it matches TFLM")
    assert_all_match(name, run_ours(data), run_tflm_all(data))
    # Its arena, as configured, is no larger than TFLM's.
    ours, ref = Interpreter(data).stats(), run_tflm(data)
    assert ours.total <= ref.total, f"{name}: arena {ours.total} B, TFLM {ref.total} B"


def _child(out: str) -> int:
    """Run in a child process on the ASan + UBSan build: save every model's tensors."""
    results = {}
    for name, expected in EXPECT.items():
        if expected is None:
            for key, value in run_ours(model_bytes(name)).items():
                results[f"{name}/{key}"] = value
    np.savez(out, **results)
    return 0


def test_models_under_sanitizers_match_tflm(tmp_path: Path) -> None:
    from support.sanitize import child_tensors

    runs = [n for n, e in EXPECT.items() if e is None]
    for name in runs:
        model_bytes(name)  # skip with the reason if a shared model is absent
    saved = child_tensors(__file__, tmp_path / "tensors.npz")
    for name in runs:
        assert_all_match(name, saved.get(name, {}), run_tflm_all(model_bytes(name)))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    sys.exit(_child(sys.argv[2]))
