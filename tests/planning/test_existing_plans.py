"""A model that already carries an offline plan: host.plan says whose (Vela's, recognised by
its Ethos-U operator; its own; another tool's), keeps it unless --replace-plan, and --check
judges only the operators whose kernels it knows (Vela's deliberate aliasing of Ethos-U scratch
tensors is "not judged", an overlap around a known operator stays INVALID)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.vela_models import vela_like

from host.paths import SHARED_ZOO
from host.planning import checker, origin
from host.planning.cli import main
from host.planning.model import metadata
from host.tflite.model import OFFLINE_PLAN_NAME, Model
from host.tflite.modelgen import Graph, assemble, scalar_options
from host.tflite.ops import BUILTIN_CODES

INT8 = 9


def _write(tmp_path: Path, data: bytes, name: str = "m.tflite") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_vela_plan_is_named_and_kept(tmp_path: Path, capsys) -> None:
    data = vela_like()
    p = _write(tmp_path, data)
    assert main([str(p), "-q"]) == 0
    out = capsys.readouterr().out
    assert "existing plan    Arm Vela 3.11.0's offline plan for an Ethos-U NPU" in out
    assert "'_split_1_scratch', '_split_1_scratch_fast'" in out
    assert "kept (the report is for a new plan, which --embed --replace-plan writes over" in out
    assert main([str(p), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["existing_plan"]
    assert (doc["owner"], doc["tensors_placed"], doc["action"][:4]) == ("vela", 4, "kept")
    assert doc["tflm_head"] == 256  # everything at 0: the largest tensor
    assert p.read_bytes() == data


def test_embed_refuses_to_replace_vela_plan_unless_told(tmp_path: Path, capsys) -> None:
    data = vela_like()
    p = _write(tmp_path, data)
    for args in ([str(p), "--embed"], [str(p), "-o", str(tmp_path / "out.tflite")]):
        assert main([*args, "-q"]) == 2
        err = capsys.readouterr().err
        assert "already carries Arm Vela 3.11.0's offline plan" in err
        assert "nothing written: --replace-plan" in err
    assert p.read_bytes() == data and not (tmp_path / "out.tflite").exists()
    assert main([str(p), "--embed", "--replace-plan", "-q"]) == 0
    assert "replaced by this plan" in capsys.readouterr().out
    replaced = Model.load(p)
    recorded = origin.origin(replaced)
    assert recorded is not None and recorded.owner == "host.plan"
    assert metadata.read(replaced) != metadata.read(Model(data))
    # Its own plan it replaces unasked.
    assert main([str(p), "--embed", "-q"]) == 0


def test_plan_of_unknown_origin_is_kept_and_own_plan_recognised_by_its_crc(tmp_path: Path) -> None:
    g = Graph()
    x = g.tensor("x", (1, 16), INT8, [0.5], [0])
    y = g.tensor("y", (1, 16), INT8, [0.5], [0])
    g.op(BUILTIN_CODES["RELU"], [x], [y], 0, scalar_options({}, 1))
    p = _write(tmp_path, assemble(g, [x], [y]))
    assert main([str(p), "--embed", "-q"]) == 0
    ours = Model.load(p)
    assert origin.origin(ours).owner == "host.plan"  # type: ignore[union-attr]
    # Another tool rewrites the offsets and leaves the marker: no longer ours.
    ours.set_metadata(OFFLINE_PLAN_NAME, metadata.encode([32, 0], 1))
    ours.save(p)
    recorded = origin.origin(Model.load(p))
    assert recorded is not None and recorded.owner == "unknown" and "another tool" in recorded.text
    assert main([str(p), "--embed", "-q"]) == 2
    # A plan that places nothing is no one's work to keep.
    ours.set_metadata(OFFLINE_PLAN_NAME, metadata.encode([-1, -1], 1))
    ours.save(p)
    assert origin.origin(Model.load(p)).owner == "empty"  # type: ignore[union-attr]
    assert main([str(p), "--embed", "-q"]) == 0


def test_check_does_not_judge_vela_aliasing_of_ethos_u_tensors(tmp_path: Path, capsys) -> None:
    p = _write(tmp_path, vela_like())
    assert main(["--check", str(p)]) == 0
    out = capsys.readouterr().out
    assert "INVALID" not in out
    assert "offline plan OK for every operator this tool can judge" in out
    assert "6 overlaps not judged" in out
    assert (
        "tensors 3 '_split_1_scratch' and 4 '_split_1_scratch_fast' share bytes [0, 256) while "
        "both are live; both are tensors of operator 0, custom operator 'ethos-u'"
    ) in out
    assert "plan: Arm Vela 3.11.0's" in out
    assert "TFLM refuses this model" in out and "custom operator 'ethos-u'" in out
    assert main(["--check", str(p), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] and doc["problems"] == [] and len(doc["not_judged"]) == 6
    assert doc["origin"]["owner"] == "vela"


def test_check_still_judges_known_kernels_in_a_vela_model(tmp_path: Path, capsys) -> None:
    p = _write(tmp_path, vela_like(then_softmax=True))
    assert main(["--check", str(p)]) == 1
    out = capsys.readouterr().out
    assert "INVALID offline plan" in out
    assert "tensor 0 'out'" in out and "'softmax'" in out and "operator 1 SOFTMAX" in out
    problems = checker.check(Model.load(p))
    assert len(problems) == 1  # only the SOFTMAX pair; the Ethos-U ones stay not judged
    assert len(checker.not_judged(Model.load(p))) == 6


@pytest.mark.parametrize("name", ["tflm_person_detect_vela"])
def test_real_vela_model(name: str, capsys) -> None:
    path = SHARED_ZOO / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"zoo model {path} is absent (tests read ../shared/zoo)")
    assert main(["--check", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] and doc["origin"]["owner"] == "vela" and doc["not_judged"]
    assert main([str(path), "--embed", "-o", "/dev/null", "-q"]) == 2


def test_runtime_refusing_a_plan_says_whose_kernels_it_was_for(tmp_path: Path, capsys) -> None:
    """An --overlap plan made for TFLM's kernels, which this runtime's kernels do not allow:
    host.run says so and how to re-plan; re-planned as it says, the model runs."""
    from host.paths import REPO
    from host.runtime.cli import main as run

    p = _write(tmp_path, (REPO / "tests" / "data" / "keras" / "mlp_int8.tflite").read_bytes())
    assert main([str(p), "--overlap", "--kernels", "reference", "--embed", "-q"]) == 0
    capsys.readouterr()
    assert run([str(p)]) == 1
    err = capsys.readouterr().err
    assert "MA_ERR_PLAN" in err and "proven for the reference kernels" in err
    fix = f"python -m host.plan {p} --embed --kernels microarena --overlap"
    assert (
        "hint: the plan was made by host.plan --overlap for the TFLM reference kernels, whose "
        f"loops differ from this runtime's: re-plan it with `{fix}`"
    ) in err
    assert run([str(p), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["hint"].endswith(f"`{fix}`")
    assert main(fix.split()[3:]) == 0 and run([str(p)]) == 0


def test_overlap_plan_records_its_kernels_and_is_refused_for_others(tmp_path: Path, capsys):
    """The marker of an --overlap plan names its kernels and CPU: --check uses them by default
    and refuses the plan for other kernels, naming how to re-plan; the recorder refuses to
    compare it with this runtime's prediction; a stale marker (another plan's CRC) counts for
    nothing."""
    from host.device.record import UsageError, load_prediction
    from host.paths import REPO

    p = _write(tmp_path, (REPO / "tests" / "data" / "keras" / "mlp_int8.tflite").read_bytes())
    assert main([str(p), "--overlap", "--kernels", "reference", "--embed", "-q"]) == 0
    capsys.readouterr()
    o = origin.origin(Model.load(p))
    assert o is not None and (o.kernels, o.overlap) == ("reference", True)
    assert "for the TFLM reference kernels, with overlaps" in o.text
    assert main(["--check", str(p)]) == 0  # the recorded kernels' rules
    capsys.readouterr()
    assert main(["--check", str(p), "--kernels", "cmsis-nn", "--cpu", "cortex-m7"]) == 1
    out = capsys.readouterr().out
    assert "proven for the TFLM reference kernels, not for the CMSIS-NN kernels (cortex-m7" in out
    assert f"python -m host.plan {p} --embed --overlap --kernels cmsis-nn --cpu cortex-m7" in out
    with pytest.raises(UsageError, match="for the TFLM reference kernels, whose loops differ"):
        load_prediction(str(p))
    m = Model.load(p)  # the same marker beside another plan: not this plan's
    metadata.embed(m, {t.global_index: -1 for t in m.tensors})
    m.set_metadata(origin.MARKER, Model.load(p).metadata(origin.MARKER))
    assert origin.origin(m).owner != "host.plan"  # type: ignore[union-attr]
    from host.runtime.binding import Interpreter

    Interpreter(m.to_bytes())  # the runtime ignores the stale marker too (its CRC check)
