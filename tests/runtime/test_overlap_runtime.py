"""This project's runtime runs plans made with --overlap --runtime microarena.

Every shared model the runtime supports is planned with overlaps allowed by this runtime's
kernels' rules, and run on the AddressSanitizer + UBSan build (a child process: libasan must be
preloaded) on 5 random inputs: every output equals the same runtime's run without a plan, byte
for byte. So do the single-operator models of test_overlap_tflm.py at this runtime's rule.
A plan one 16-byte step below a rule, where the simulator finds a corrupted read, is refused
with MA_ERR_PLAN naming both tensors and the operator.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from support import overlap_sim  # noqa: E402
from support.overlap_models import CASES, overlap_layout, with_plan  # noqa: E402

from host.planning.libraries.loops import rule  # noqa: E402
from host.planning.libraries.microarena import MICROARENA  # noqa: E402
from host.planning.model import metadata  # noqa: E402
from host.planning.model.lifetimes import align_up  # noqa: E402
from host.planning.plan import plan_model  # noqa: E402
from host.runtime.binding import (  # noqa: E402
    MA_ERR_PLAN,
    MA_ERR_UNSUPPORTED,
    Interpreter,
    MicroarenaError,
)
from host.tflite.model import Model  # noqa: E402

RUNS = 5


def _run(data: bytes, seed: int) -> list[np.ndarray]:
    from support.tflm_oracle import random_inputs

    it = Interpreter(data)
    for i, x in enumerate(random_inputs(it, it.num_inputs(), seed)):
        it.set_input(i, x)
    it.invoke()
    return [it.get_output(i) for i in range(it.num_outputs())]


def _child(folder: str) -> int:
    """Run every original/planned pair in `folder`; save each one's outputs."""
    results: dict[str, np.ndarray] = {}
    for path in sorted(Path(folder).glob("*.plain.tflite")):
        name = path.name.removesuffix(".plain.tflite")
        for kind in ("plain", "overlap"):
            data = (Path(folder) / f"{name}.{kind}.tflite").read_bytes()
            for seed in range(RUNS):
                for i, out in enumerate(_run(data, seed)):
                    results[f"{name}:{kind}:{seed}:{i}"] = out
    np.savez(Path(folder) / "outputs.npz", **results)
    return 0


def _supported(data: bytes) -> bool:
    try:
        Interpreter(data)
    except MicroarenaError as e:
        if e.status == MA_ERR_UNSUPPORTED:
            return False
        raise
    return True


def test_overlap_plans_run_identically_under_sanitizers(tmp_path: Path) -> None:
    from support.sanitize import sanitized_env
    from support.tflm_oracle import MODELS

    if not MODELS.exists():
        pytest.skip(f"{MODELS} is absent (tests read ../shared/models)")
    env = sanitized_env()
    overlapping = []
    for path in sorted(MODELS.glob("*.tflite")):
        original = path.read_bytes()
        if not _supported(original):
            continue
        model = Model(original, path.stem)
        result = plan_model(model, time_limit=1.5, lib=MICROARENA, overlap=True)
        metadata.embed(model, result.tensor_offsets())
        (tmp_path / f"{path.stem}.plain.tflite").write_bytes(original)
        (tmp_path / f"{path.stem}.overlap.tflite").write_bytes(model.to_bytes())
        if result.shared:
            overlapping.append(path.stem)
    assert len(overlapping) >= 5, f"only {overlapping} overlap"
    for case in _single_op_cases():
        model, slot, k = case
        offsets = overlap_layout(model, slot, _aligned_rule(k, slot, model))
        assert offsets is not None
        name = f"single{len(list(tmp_path.glob('single*.plain.tflite')))}"
        (tmp_path / f"{name}.plain.tflite").write_bytes(model)
        (tmp_path / f"{name}.overlap.tflite").write_bytes(with_plan(model, offsets))
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    outs = dict(np.load(tmp_path / "outputs.npz"))
    for key, plain in outs.items():
        if ":plain:" in key:
            np.testing.assert_array_equal(
                outs[key.replace(":plain:", ":overlap:")], plain, err_msg=key
            )
    assert {k.split(":")[0] for k in outs} >= set(overlapping)


def _single_op_cases():
    """(model, slot, kernel) of every single-operator case this runtime supports."""
    for build in CASES.values():
        model, slot = build(np.random.default_rng(7))
        if not _supported(model):
            continue
        m = Model(model)
        k = MICROARENA.overlap_kernel(m, m.subgraphs[0], m.subgraphs[0].operators[0])
        if k is not None and slot in k.slots:
            yield model, slot, k


def _aligned_rule(k, slot: int, model: bytes) -> int:
    d = rule(k, slot)
    if d is None:  # any offset: as far down as still overlaps
        m = Model(model)
        x = m.subgraphs[0].tensors[m.subgraphs[0].operators[0].inputs[slot]]
        return 16 - align_up(x.nbytes())
    return align_up(d)


def test_single_operators_tighter_than_the_rule_are_refused() -> None:
    refused = 0
    for model, slot, k in _single_op_cases():
        d = rule(k, slot)
        delta = _aligned_rule(k, slot, model) - 16
        offsets = overlap_layout(model, slot, delta)
        if d is None or offsets is None:
            continue
        unsafe = overlap_sim.corrupted_read(
            overlap_sim.trace(k), slot, delta, k.in_bytes, k.out_bytes
        )
        if not unsafe:
            continue  # a safe gap below the rule: the runtime may refuse it or not
        with pytest.raises(MicroarenaError) as err:
            Interpreter(with_plan(model, offsets))
        assert err.value.status == MA_ERR_PLAN and "or more bytes above" in str(err.value)
        refused += 1
    assert refused >= 10


def test_runtime_refuses_an_overlap_below_its_rule() -> None:
    from support.tflm_oracle import shared_model

    model = Model(shared_model("tflm_person_detect_int8").read_bytes())
    result = plan_model(model, time_limit=1.5, lib=MICROARENA, overlap=True)
    s = next(x for x in result.shared if x.op_name == "CONV_2D" and x.min_delta > 16)
    offsets = result.tensor_offsets()
    offsets[s.input] = offsets[s.output] + (s.min_delta + 15) // 16 * 16 - 16
    metadata.embed(model, offsets)
    with pytest.raises(MicroarenaError) as err:
        Interpreter(model.to_bytes())
    assert err.value.status == MA_ERR_PLAN
    msg = str(err.value)
    for words in (f"tensor {s.input} ", f"tensor {s.output} ", f"operator {s.op}'s kernel",
                  f"{s.min_delta} or more bytes"):  # fmt: skip
        assert words in msg, msg


if __name__ == "__main__" and "--child" in sys.argv:
    sys.exit(_child(sys.argv[sys.argv.index("--child") + 1]))


def test_overlap_counts_only_for_the_creating_operators_input() -> None:
    """x = RELU(a) is a graph output, y = ABS(a) is created where x's lifetime ends (the end
    of the graph) but ABS never reads x: no rule covers x, and y written over x would destroy
    an output. An offline plan putting both at one offset is refused."""
    from host.tflite import modelgen

    g = modelgen.Graph()
    a, x, y = (g.tensor(name, (16,), 0, [], [], None, 0) for name in ("a", "x", "y"))
    for code, out in ((19, x), (101, y)):  # RELU, ABS (BuiltinOperator)
        g.op(code, [a], [out], 0, modelgen.scalar_options({}, 0))
    data = modelgen.assemble(g, [a], [x, y])
    Interpreter(data).invoke()  # runs without a plan
    with pytest.raises(MicroarenaError) as err:
        Interpreter(with_plan(data, {a: 0, x: 64, y: 64}))
    assert err.value.status == MA_ERR_PLAN
    assert "tensor 1 of subgraph 0 [64, 128) and tensor 2 of subgraph 0 [64, 128)" in str(err.value)
