"""The band rewrite proves what it writes (issue 26): a max pool's padding never wins, no band
slices 0 rows, the rewrite and `--check` run the same graph check, docs/bands.md's table is the
code's, and a few seeds of the band fuzzer (support/band_fuzz.py; long runs: tools/fuzz_bands.py)
compare the original and every rewrite on the pip TFLM and on this runtime, byte for byte."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from support import band_fuzz as bf

from host.paths import REPO
from host.planning import band_choice, checker
from host.planning.cli import main as plan_main
from host.planning.libraries.reference import REFERENCE
from host.planning.model import metadata
from host.planning.plan import plan_model
from host.rewrite import bands as rw
from host.rewrite import graph_check
from host.rewrite.operators import BINARY, FLOAT32, INT8, INT16, PADS, UNARY, WINDOWED
from host.tflite.flatbuf import set_child
from host.tflite.model import Model
from host.tflite.modelgen import assemble

CI_SEEDS = range(0, 8)


def _stage(dtype: int, shape: tuple[int, ...], build) -> bytes:
    """A one-operator stage (build(builder, x) -> y) followed by a RESHAPE."""
    b = bf._Builder(np.random.default_rng(0), dtype)
    x = b.act(shape, (0.05, 0) if dtype == bf.INT8 else (0.0005, 0))
    y = build(b, x)
    n = int(np.prod(b.shapes[y]))
    shape_t = b.const("shape", (2,), bf.INT32, struct.pack("<2i", 1, n), [], [])
    flat = b.act((1, n), b.quant[y])
    b.op("RESHAPE", [y, shape_t], flat, None, {})
    return assemble(b.g, [x], [flat])


def _max_pool_same(b: bf._Builder, x: int) -> int:
    y = b.act(b.shapes[x], b.quant[x])
    slots = {0: ("B", rw.SAME), 1: ("i", 1), 2: ("i", 1), 3: ("i", 3), 4: ("i", 3)}
    b.op("MAX_POOL_2D", [x], y, "Pool2DOptions", slots)
    return y


@pytest.mark.parametrize("dtype", [bf.INT8, bf.INT16, bf.FLOAT32])
def test_max_pool_padding_never_wins(dtype: int) -> None:
    """Class 1: a SAME max pool over values below the zero point. Padded explicitly with the
    zero point, the padding won the max at every band edge; the type's minimum never wins."""
    data = _stage(dtype, (1, 8, 5, 2), _max_pool_same)
    model = Model(data)
    x = np.full((1, 8, 5, 2), -100, dtype=bf.DTYPES[dtype])
    x.flat[::3] = -120
    want = bf.run_tflm(bf.with_output(data, 1), x)
    for bounds in ([0, 4, 8], [0, 1, 5, 8], [0, 2, 4, 6, 8]):
        banded, _ = rw.rewrite(model, 0, bounds)
        assert "PADV2" in [op.name for op in banded.subgraphs[0].operators]
        out = bf.with_output(banded.to_bytes(), 1)
        assert bf.run_tflm(out, x) == want, bounds
        assert bf.run_ours(out, x) == bf.run_ours(bf.with_output(data, 1), x), bounds


def _pad_bottom(b: bf._Builder, x: int) -> int:
    _, h, w, c = b.shapes[x]
    pads = b.const("pads", (4, 2), bf.INT32, struct.pack("<8i", 0, 0, 1, 4, 0, 0, 0, 0), [], [])
    y = b.act((1, h + 5, w, c), b.quant[x])
    b.op("PAD", [x, pads], y, "PadOptions", {})
    return y


def test_band_in_padding_only_is_merged_never_sliced_empty() -> None:
    """Class 2: rows 7..11 of the cut are the PAD's bottom padding. A band there would slice 0
    rows of the input (no runtime runs that): the rewrite refuses it by name, merge_empty
    joins it to the band before, and host.plan's choices never offer it."""
    data = _stage(bf.INT8, (1, 6, 4, 2), _pad_bottom)
    model = Model(data)
    stage = rw.find_stage(model, 0)
    with pytest.raises(rw.BandError, match="lie in its padding"):
        rw.rewrite(model, 0, [0, 4, 7, 11])
    assert rw.merge_empty(stage, [0, 4, 7, 11]) == [0, 4, 11]
    assert rw.merge_empty(stage, [0, 1, 4, 7, 9, 11]) == [0, 4, 11]  # row 0: top padding
    assert rw.merge_empty(stage, [0, 2, 4, 7, 9, 11]) == [0, 2, 4, 11]
    x = np.arange(48, dtype=np.int8).reshape(1, 6, 4, 2)
    want = bf.run_tflm(bf.with_output(data, 1), x)
    banded, _ = rw.rewrite(model, 0, [0, 4, 11])
    assert bf.run_tflm(bf.with_output(banded.to_bytes(), 1), x) == want
    for c in band_choice.choices(model, time_limit=0.05):
        assert not c.error, c.error
        pairs = zip(c.bounds, c.bounds[1:], strict=False)
        assert all(rw.empty_input(stage, a, b) is None for a, b in pairs)


def test_check_refuses_a_banded_model_that_cannot_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model the rewrite wrote before the fix (a 0-row slice, with a valid plan) is INVALID
    to `--check`, by the graph check the rewrite now runs before writing."""
    model = Model(_stage(bf.INT8, (1, 6, 4, 2), _pad_bottom))
    with monkeypatch.context() as m:  # the rewrite as it was: no band check, no graph check
        m.setattr(rw, "empty_input", lambda *a: None)
        m.setattr(graph_check, "problems", lambda model: [])
        banded, _ = rw.rewrite(model, 0, [0, 4, 7, 11])
    problems = graph_check.problems(banded)
    assert problems and "has shape [1, 0, 4, 2]" in problems[0], problems
    result = plan_model(banded, "best", 0.2, REFERENCE, None)
    metadata.embed(banded, result.tensor_offsets())
    assert checker.check(banded, REFERENCE) == []  # the plan alone is fine
    path = tmp_path / "banded.tflite"
    banded.save(path)
    assert plan_main(["--check", str(path)]) == 1
    assert "band rewrite: operator" in capsys.readouterr().out


def test_graph_check_catches_a_quantization_change() -> None:
    """A join whose input is quantized otherwise than its output (TFLM's Prepare refuses it,
    and a byte copy would change the values)."""
    data = _stage(bf.INT8, (1, 8, 4, 2), _max_pool_same)
    banded, _ = rw.rewrite(Model(data), 0, [0, 4, 8])
    assert graph_check.problems(banded) == []
    from host.planning.model.operands import quantization_table

    part = next(op for op in banded.subgraphs[0].operators if op.name == "CONCATENATION")
    t = banded.subgraphs[0].tensors[part.inputs[0]]
    set_child(quantization_table(banded, t), 2, struct.pack("<f", 0.5))
    reread = Model(banded.to_bytes())
    assert any("quantized differently" in p for p in graph_check.problems(reread))


def _doc_table() -> str:
    """docs/bands.md's table of what runs in bands, from the rewrite's tables."""
    types = ", ".join({FLOAT32: "float32", INT16: "int16", INT8: "int8"}[t] for t in rw.SLICEABLE)
    rows = [
        "| operator | in a band | padding the original leaves implicit, made explicit with |",
        "|---|---|---|",
    ]
    for name in WINDOWED:
        how = rw.PADDING[name]
        banded = "only where it does not pad" if how == rw.REFUSED else "yes"
        rows.append(f"| {name} | {banded} | {'refused' if how == rw.REFUSED else how} |")
    rows.append(f"| {', '.join(PADS)} | yes | (explicit: each band takes its share of the rows) |")
    binary = "maps of one shape, or constants not varying over rows"
    rows.append(f"| {', '.join(BINARY)} | {binary} | - |")
    rows.append(f"| {', '.join(UNARY)} | yes | - |")
    rows.append("| any other (MIRROR_PAD, RESHAPE, ...) | no: it ends the stage | - |")
    return "\n".join(rows) + f"\n\nFeature maps: {types} ([1, H, W, C])."


def test_doc_table_is_the_code() -> None:
    """docs/bands.md states exactly which operators and paddings bands run: the code's table."""
    doc = (REPO / "docs" / "bands.md").read_text()
    assert _doc_table() in doc


def test_band_fuzzer_seeds() -> None:
    """Random stages, every cut and band count: the rewrite's outputs and T equal the
    original's on the pip TFLM and on this runtime, byte for byte; every second seed also
    through host.plan's choice within a random budget, planned, checked and run on TFLM."""
    st = bf.fuzz(CI_SEEDS, planned_every=2)
    assert not st.findings, st.findings[:5]
    assert st.rewrites >= 100 and st.runtime >= 100 and st.planned >= 2, st.text()
