"""Every overlap rule on the real TFLM: single-operator models, input placed over the output.

Each model's input is planned at the rule's offset above its output (16-byte aligned) and run
on many random inputs: the output must equal TFLM's own non-overlapping run. One 16-byte step
tighter, the byte-level simulator (host.planning.overlap_sim) decides: where it finds a read of
an overwritten byte, some input must give a different output (the rule is tight, not just
safe); where it finds none (the unsafe offsets can have gaps), all outputs must still agree.
The output is the model output, so every byte of it is compared.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from support import overlap_sim
from support.overlap_models import CASES, act, overlap_layout, with_plan
from support.tflm_oracle import run_tflm

from host.planning.aliasing import op_rules
from host.planning.libraries.reference import REFERENCE
from host.planning.model.lifetimes import align_up
from host.tflite.flatbuf import new_table, set_child
from host.tflite.model import Model
from host.tflite.modelgen import Graph, assemble

SAFE_RUNS = 12  # random inputs at the rule's offset
TIGHT_RUNS = 12  # random inputs tried one step tighter until one breaks


def _outputs(model: bytes, seed: int) -> list[np.ndarray]:
    return run_tflm(model, seed).outputs


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("case", list(CASES))
def test_rule_on_real_tflm(case: str) -> None:
    model, slot = CASES[case](np.random.default_rng(7))
    m = Model(model)
    rules = op_rules(m, m.subgraphs[0], m.subgraphs[0].operators[0], REFERENCE)
    assert rules, f"{case}: no overlap rule"
    d = {r.slot: r.min_delta for r in rules}[slot]
    in_size = align_up(m.subgraphs[0].tensors[m.subgraphs[0].operators[0].inputs[slot]].nbytes())
    delta = align_up(d) if d is not None else -in_size + 16
    safe = overlap_layout(model, slot, delta)
    assert safe is not None, f"{case}: the rule allows no useful overlap (d={d})"
    planned = with_plan(model, safe)
    for seed in range(SAFE_RUNS):
        assert _same(_outputs(planned, seed), _outputs(model, seed)), (case, d, delta, seed)
    tight = overlap_layout(model, slot, delta - 16) if d is not None else None
    if tight is None:
        return  # one step tighter no longer overlaps: nothing can break
    k = REFERENCE.overlap_kernel(m, m.subgraphs[0], m.subgraphs[0].operators[0])
    assert k is not None
    unsafe = overlap_sim.corrupted_read(
        overlap_sim.trace(k), slot, delta - 16, k.in_bytes, k.out_bytes
    )
    planned = with_plan(model, tight)
    broke = any(
        not _same(_outputs(planned, seed), _outputs(model, seed)) for seed in range(TIGHT_RUNS)
    )
    if unsafe:
        assert broke, f"{case}: offset {delta - 16} (rule {d}) never corrupted the output"
    else:
        assert not broke, f"{case}: offset {delta - 16} is safe in the simulation, not in TFLM"
        assert d > delta - 16  # the rule is conservative there, never unsafe


def test_reshape_is_not_overlapped() -> None:
    """RESHAPE copies with memcpy unless input and output share one address: no rule."""
    g = Graph()
    x = act(g, "x", (1, 4, 8))
    y = act(g, "y", (1, 32))
    opts = new_table("ReshapeOptions", {}, 1)
    set_child(opts, 0, struct.pack("<2i", 1, 32))
    g.op(22, [x], [y], 17, opts)
    m = Model(assemble(g, [x], [y]))
    assert op_rules(m, m.subgraphs[0], m.subgraphs[0].operators[0], REFERENCE) is None
