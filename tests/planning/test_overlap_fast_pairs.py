"""The pair rules of this project's int8 fast paths (fast_s8.c) against a byte-level replay of
their loops, and host.plan's two figures (smallest plan, every fast path kept).

Row pairs (1x1 stride-1 convolutions, FULLY_CONNECTED's batches): the rule equals the replay's
smallest safe offset of the pairs' reads. Pixel pairs: the rule (every pixel counted as the
first of a pair) is at least the replay's. With the --fastest rule the whole fast path (pairs
and single pixels in the kernel's walk) reads no overwritten byte; gathered windows (copied
before the pair is written) keep the in-order CONV_2D rule.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import pytest
from support import overlap_sim
from support.tflm_oracle import shared_model
from test_overlap_rules import _window_case

from host.paths import FIRMWARE
from host.planning.cli import main
from host.planning.libraries import loops, microarena
from host.tflite.model import Model

CHUNK = microarena.PAIR_CHUNK


def _conv(rng: random.Random, function: str) -> loops.Kernel:
    while True:
        ins, outs, k, s, d, pad = _window_case(rng, depthwise=False)
        ins = (*ins[:3], rng.choice([1, 2, 4, 8, 16, 32]))
        outs = (*outs[:3], rng.choice([1, 2, 3, 4, 5, 16, 17, 18, 31, 33, 34]))
        if function == loops.FAST_ROWS:
            ins, k, s, d, pad = (*ins[:1], *outs[1:3], ins[3]), (1, 1), (1, 1), (1, 1), (0, 0)
        window = (k, s, d, pad)
        return loops.Kernel("conv", (ins,), outs, 1, 1, (0,), window, function=function,
                              chunk=CHUNK)  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_row_pairs_rule_is_exact(seed: int) -> None:
    rng = random.Random(seed)
    if seed % 2:
        k = _conv(rng, loops.FAST_ROWS)
    else:
        fc = (rng.randint(1, 7), rng.choice([1, 4, 8, 24, 40]), rng.choice([1, 3, 16, 17, 33]))
        k = loops.Kernel("fully_connected", ((fc[0], fc[1]),), (fc[0], fc[2]), 1, 1, (0,),
                           fc=fc, function=loops.FAST_ROWS, chunk=CHUNK)  # fmt: skip
    # The single rows' reads under slot -1: the pairs' reads alone decide.
    sim = overlap_sim.min_safe_delta(overlap_sim.fast_s8_trace(k, single_slot=-1), 0, 1, 1)
    assert loops.pairs_need(k) == sim
    _no_corrupted_read_at_the_rule(k)


@pytest.mark.parametrize("seed", range(40))
def test_pixel_pairs_rule_bounds_the_kernels_walk(seed: int) -> None:
    k = _conv(random.Random(seed), loops.FAST_WINDOWS)
    sim = overlap_sim.min_safe_delta(overlap_sim.fast_s8_trace(k, single_slot=-1), 0, 1, 1)
    need = loops.pairs_need(k)
    assert sim is None or (need is not None and need >= sim)
    _no_corrupted_read_at_the_rule(k)
    base = loops.Kernel("conv", k.in_shapes, k.out_shape, 1, 1, (0,), k.window)
    gathered = overlap_sim.min_safe_delta(overlap_sim.gathered_trace(base), 0, 1, 1)
    rule = loops.rule(base, 0)
    assert gathered is None or (rule is not None and gathered <= rule)


def _no_corrupted_read_at_the_rule(k: loops.Kernel) -> None:
    rule = loops.rule(k, 0)
    if rule is not None:
        assert overlap_sim.corrupted_read(overlap_sim.fast_s8_trace(k), 0, rule, 1, 1) is None


@pytest.mark.parametrize("seed", range(30))
def test_helium_rules_against_their_replay(seed: int) -> None:
    """fast_mve_s8.c: the rows read in place (exact) and the depthwise pairs side by side and
    one above the other (a bound; with the in-order depthwise rule no corrupted read)."""
    rng = random.Random(seed)
    rows, cin, cout = rng.randint(0, 13), rng.randint(1, 20), rng.randint(1, 20)
    lanes, block = microarena.MVE_DW_LANES, microarena.DW_BLOCK
    need = loops.mve_rows_need(rows, cin, cout, microarena.MVE_ROWS, microarena.MVE_CHANNELS)
    trace = overlap_sim.mve_rows_trace(
        rows, cin, cout, microarena.MVE_ROWS, microarena.MVE_CHANNELS
    )
    assert need == overlap_sim.min_safe_delta(trace, 0, 1, 1)
    ins, outs, k, s, d, pad = _window_case(rng, depthwise=True)
    ic = rng.choice([1, 2, 4, 8, 16])
    mult = rng.choice([m for m in (1, 2, 4, 8, 16) if ic * m % lanes == 0])
    ins, outs = (*ins[:3], ic), (*outs[:3], ic * mult)
    window = (k, s, d, pad)
    in_order = loops.depthwise_rule(ins, outs, *window, 1, 1, block)
    for columns in (False, True):
        need = loops.mve_depthwise_pairs_need(ins, outs, *window, lanes, columns)
        pairs = overlap_sim.mve_depthwise_trace(ins, outs, window, lanes, block, columns, -1)
        sim = overlap_sim.min_safe_delta(pairs, 0, 1, 1)
        assert sim is None or (need is not None and need >= sim)
        full = loops._at_least(in_order, need)
        walk = overlap_sim.mve_depthwise_trace(ins, outs, window, lanes, block, columns)
        assert full is None or overlap_sim.corrupted_read(walk, 0, full, 1, 1) is None


@pytest.mark.parametrize("seed", range(30))
def test_dsp_depthwise_pixels_keep_the_in_order_rule(seed: int) -> None:
    """fast_depthwise_s8.c's dw3x3_pixel_dsp reads a pixel's window four channels at a time,
    then writes them. With multiplier 1 the depthwise rule of the kernel's wider blocks holds
    it wherever the input does not start below the output (mak_dw_blocks_fit), so the DSP
    cores keep it on the overlaps the planner makes: it needs no rule of its own."""
    rng = random.Random(seed)
    ins, outs, k, s, d, pad = _window_case(rng, depthwise=True)
    c = rng.choice([4, 8, 12, 16, 36, 64])
    ins, outs = (*ins[:3], c), (*outs[:3], c)
    rule = loops.depthwise_rule(ins, outs, k, s, d, pad, 1, 1, microarena.DW_BLOCK)
    fours = list(overlap_sim.depthwise_trace(ins, outs, k, s, d, pad, block=4))
    need = overlap_sim.min_safe_delta(fours, 0, 1, 1)
    at = max(0, rule if rule is not None else 0)
    assert need is None or need <= at
    assert overlap_sim.corrupted_read(fours, 0, at, 1, 1) is None


def test_pair_constants_are_the_kernels() -> None:
    """PAIR_CHUNK, COL_MAX and MAX_RUNS are those of firmware/src/kernels/."""
    kernels = FIRMWARE / "src/kernels"
    chunk = re.search(r"MAK_PAIR_CHUNK = (\d+)", (kernels / "overlap.h").read_text())
    assert chunk and int(chunk.group(1)) == microarena.PAIR_CHUNK
    header = (kernels / "overlap.h").read_text()
    for name, value in (("ROWS", microarena.MVE_ROWS), ("CHANNELS", microarena.MVE_CHANNELS),
                        ("DW_LANES", microarena.MVE_DW_LANES)):  # fmt: skip
        found = re.search(rf"MAK_MVE_{name} = (\d+)", header)
        assert found and int(found.group(1)) == value, name
    mve = (kernels / "fast/mve/fast_mve_s8.c").read_text()
    assert re.search(rf"PIXELS = {microarena.MVE_ROWS}\b", mve)
    assert re.search(rf"SHORT_ROW = {microarena.MVE_SHORT_ROW}\b", mve)
    fast = (kernels / "fast/fast_s8.c").read_text()
    assert re.search(r"PAIRS = MAK_PAIR_CHUNK / 2\b", fast)
    for name, value in (("COL_MAX", microarena.COL_MAX), ("MAX_RUNS", microarena.MAX_RUNS)):
        found = re.search(rf"\b{name} = (\d+)", fast)
        assert found and int(found.group(1)) == value, name


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
    from host.paths import REPO, SHARED_MODELS
    from host.planning.plan import plan_model
    from host.runtime import arena

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
    from host.planning import fast_paths
    from host.planning.plan import plan_model

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
