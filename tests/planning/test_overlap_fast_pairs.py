"""host.plan's two figures for this project's int8 fast paths (fast_s8.c, fast_mve_s8.c): the
smallest plan and the plan keeping every fast path (--fastest), in text, --json and
docs/overlap.md. The pair rules themselves are tests/planning/libraries/test_loops.py's."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from support.tflm_oracle import shared_model

from host.paths import REPO, SHARED_MODELS
from host.planning import fast_paths
from host.planning.cli import main
from host.planning.libraries import microarena
from host.planning.plan import plan_model
from host.runtime import arena
from host.tflite.model import Model


def test_cli_prints_both_heads_and_the_slowed_operators(tmp_path: Path, capsys) -> None:
    """On the KWS DS-CNN the smallest plan slows four 1x1 convolutions down; --fastest keeps
    them at 192 more bytes. Text and --json say so; --fastest plans the larger head."""
    p = tmp_path / "kws.tflite"
    p.write_bytes(shared_model("tiny_kws_dscnn_int8").read_bytes())
    assert main([str(p), "--overlap", "--kernels", "microarena", "-q", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fast = doc["fast_paths"]
    assert doc["head"] == fast["smallest_head"] < fast["fastest_head"]
    assert fast["chosen"] == "smallest" and not fast["same"]
    slow = fast["slow_in_smallest"]
    assert slow and all(s["op_name"] == "CONV_2D" and s["delta"] < s["need"] for s in slow)
    sg = Model(p.read_bytes()).subgraphs[0]
    for s in slow:  # 1x1 convolutions: a MAC per output value and input channel
        op = sg.operators[s["op"]]
        out, w = sg.tensors[op.outputs[0]].shape, sg.tensors[op.inputs[1]].shape
        assert w[1:3] == (1, 1) and s["macs"] == math.prod(out) * w[3]
    share = sum(s["macs"] for s in slow) / fast["model_macs"]
    assert 0 < share < 1 and fast["slow_share"] == pytest.approx(share)
    assert main([str(p), "--overlap", "--kernels", "microarena", "-q", "--fastest"]) == 0
    text = capsys.readouterr().out
    assert f"arena head       {fast['fastest_head']} bytes" in text
    assert f"smallest plan: head {fast['smallest_head']} bytes" in text
    assert f"holding {100 * share:.1f}% of the model's multiply-accumulates" in text
    for s in slow:
        assert f"op {s['op']} CONV_2D: input {s['delta']} bytes above its output" in text
    assert "this plan: every fast path kept" in text


def test_cli_says_so_in_one_line_when_both_plans_are_one(capsys) -> None:
    """person_detect: keeping every fast path costs no byte, so the plan keeps them all."""
    path = str(shared_model("tflm_person_detect_int8"))
    assert main([path, "--overlap", "--kernels", "microarena", "-q"]) == 0
    out = capsys.readouterr().out
    head = re.search(r"arena head +(\d+) bytes", out)
    lines = [x for x in out.splitlines() if x.startswith("fast paths")]
    assert head and lines == [
        f"fast paths       every int8 fast path kept at the smallest head ({head.group(1)} bytes "
        "either way)"
    ]


def test_fastest_needs_overlap_and_microarena(capsys) -> None:
    path = str(shared_model("tflm_hello_world_int8"))
    for args in (["--fastest"], ["--fastest", "--overlap", "--kernels", "reference"]):
        with pytest.raises(SystemExit):
            main([path, *args])
        assert "--fastest needs --overlap --kernels microarena" in capsys.readouterr().err


def test_docs_heads_are_the_planners() -> None:
    """docs/overlap.md's table of heads: no plan (the runtime's own placement), the smallest
    plan and the plan keeping every fast path, re-planned (the instructions are measured by
    hand on QEMU, with their commit)."""

    text = (REPO / "docs/overlap.md").read_text(encoding="utf-8")
    boards = {"mps2-an386": "cortex-m4", "mps3-an547": "cortex-m55"}
    row = r"^\| (\w+) \| ([\w-]+) \| (\d+) \| (\d+) \| (\d+) \| [\d,]+ \|"
    rows = re.findall(row, text, re.M)
    assert len(rows) >= 7 and {r[1] for r in rows} == set(boards)
    for name, board, plain, smallest, fastest in rows:
        path = SHARED_MODELS / f"{name}.tflite"
        if not path.exists():
            pytest.skip(f"{path} is absent (tests read ../shared/models)")
        data = path.read_bytes()
        heads = [arena.predict(data, abi="cortex-m")["head"]]
        for lib in (microarena.MICROARENA, microarena.fastest_library(boards[board])):
            heads.append(plan_model(Model(data, name), time_limit=1.5, lib=lib, overlap=True).head)
        assert heads == [int(plain), int(smallest), int(fastest)], (name, board)


def test_cli_helium_rules_with_cpu_cortex_m55(tmp_path: Path, capsys) -> None:
    """--cpu cortex-m55: the Helium paths' rules (1x1 rows, depthwise pairs one above the other
    on KWS's 25x5 maps) decide which operators the smallest plan slows, and --fastest plans
    with them: its plan slows none."""

    p = tmp_path / "kws.tflite"
    p.write_bytes(shared_model("tiny_kws_dscnn_int8").read_bytes())
    args = [str(p), "--overlap", "--kernels", "microarena", "--cpu", "cortex-m55", "-q"]
    assert main([*args, "--json"]) == 0
    fast = json.loads(capsys.readouterr().out)["fast_paths"]
    assert {s["op_name"] for s in fast["slow_in_smallest"]} == {"CONV_2D", "DEPTHWISE_CONV_2D"}
    assert fast["smallest_head"] < fast["fastest_head"]
    assert main([*args, "--fastest", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["head"] == fast["fastest_head"]
    model = Model.load(p)
    lib = microarena.fastest_library("cortex-m55")
    result = plan_model(model, time_limit=1.5, lib=lib, overlap=True)
    assert result.shared and not fast_paths.slow_operators(model, result, "cortex-m55")
