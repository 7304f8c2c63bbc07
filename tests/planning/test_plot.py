"""The plan plot reads without the table: labels that never collide, a legend, every scratch
buffer and subgraph drawn, thin buffers visible, the TFLM greedy head marked."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.subgraph_models import twice_called_subgraph_model

from host.paths import REPO, SHARED_MODELS
from host.planning.model import lifetimes
from host.planning.plan import PlanResult, plan_model
from host.tflite.model import Model

pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the plot extra)")

from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from host.planning.libraries.reference import REFERENCE
from host.planning.plot import draw_plan, format_bytes, overlapping_texts, short_name  # noqa: E402

KERAS = REPO / "tests" / "data" / "keras"
MIN_PIXELS = 2.0  # a box thinner than this cannot be seen


def _model(name: str) -> Model:
    if name == "if-twice":
        return Model(twice_called_subgraph_model()[0], "if-twice")
    return Model.load(KERAS / f"{name}.tflite")


def _draw(model: Model, **options) -> tuple[PlanResult, Figure]:
    r = plan_model(model, time_limit=0.1, **options)
    fig = draw_plan(r, model)
    fig.draw_without_rendering()  # lay out the legend as saving would: every extent final
    return r, fig


@pytest.fixture(
    scope="module",
    params=["transformer_int8", "if-twice", "gru_int8", "mobilenet_v3ish_int8 --overlap"],
)
def drawn(request) -> tuple[Model, PlanResult, Figure]:
    name, *flags = request.param.split()
    model = _model(name)
    r, fig = _draw(model, overlap="--overlap" in flags)
    yield model, r, fig
    import matplotlib.pyplot as plt

    plt.close(fig)


def _texts(fig: Figure) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _patches(fig: Figure, prefix: str) -> dict[str, object]:
    ax = fig.axes[0]
    return {p.get_gid(): p for p in ax.patches if (p.get_gid() or "").startswith(prefix)}


def _pixel_height(fig: Figure, patch) -> float:
    return patch.get_window_extent(fig.canvas.get_renderer()).height


def test_no_two_texts_overlap(drawn) -> None:
    _, _, fig = drawn
    assert overlapping_texts(fig.findobj(Text), fig.canvas.get_renderer()) == []


def test_boxes_carry_tensor_names_and_sizes(drawn) -> None:
    _, r, fig = drawn
    words = "\n".join(t.get_text() for t in _texts(fig))
    named = [t for t in r.tensors if short_name(t.name, "") in words]
    sized = [t for t in r.tensors if format_bytes(t.size) in words]
    assert named and sized, "no box is labelled with its tensor's name and size"
    assert not any(t.get_text().strip().isdigit() for t in _texts(fig) if t.get_gid()), (
        "a box is labelled with a bare index"
    )


def test_legend_names_the_kinds_and_lines(drawn) -> None:
    _, r, fig = drawn
    assert fig.legends, "no legend"
    entries = [t.get_text() for t in fig.legends[0].get_texts()]
    for kind in ("activation", "model input", "model output", "kernel scratch"):
        assert any(e.startswith(kind) for e in entries), kind
    assert f"plan head ({r.head} B)" in entries
    if r.tflm_head != r.head:
        assert f"TFLM greedy head ({r.tflm_head} B)" in entries


def test_every_buffer_is_drawn_and_visible(drawn) -> None:
    _, r, fig = drawn
    scratch = _patches(fig, "scratch:")
    tensors = _patches(fig, "tensor:")
    assert set(scratch) == {f"scratch:{i}" for i in range(len(r.scratch))}
    assert set(tensors) == {f"tensor:{t.global_index}" for t in r.tensors}
    for gid, patch in scratch.items() | tensors.items():
        assert _pixel_height(fig, patch) >= MIN_PIXELS, f"{gid} is too thin to see"


def test_every_subgraph_is_marked(drawn) -> None:
    model, _, fig = drawn
    walked = {si for si, _ in lifetimes.walk(model).owners}
    assert {gid.split(":")[1] for gid in _patches(fig, "subgraph:")} == {str(s) for s in walked}
    entries = [t.get_text() for t in fig.legends[0].get_texts()]
    for si in walked:
        assert any(e.startswith(f"subgraph {si}") for e in entries)


def test_overlap_shared_bytes_are_drawn_and_labelled(drawn) -> None:
    model, r, fig = drawn
    if r.overlap_bound is not None:
        assert r.shared, "the --overlap case should share bytes"
    shared = _patches(fig, "shared:")
    assert set(shared) == {f"shared:{s.op}" for s in r.shared}
    words = [t.get_text() for t in _texts(fig)]
    for s in r.shared:
        assert f"op {s.op}: {s.bytes} B shared" in words
    entries = [t.get_text() for t in fig.legends[0].get_texts()]
    assert ("output shares input bytes" in entries) == bool(r.shared)


def test_plan_and_tflm_greedy_heads_are_labelled_lines(drawn) -> None:
    model, r, fig = drawn
    if model.source.endswith("transformer_int8.tflite"):
        assert r.tflm_head > r.head, "the test wants a model the plan improves"
    words = [t.get_text().strip() for t in _texts(fig)]
    if r.tflm_head != r.head:
        assert f"TFLM greedy head {r.tflm_head} B" in words
        assert f"plan head {r.head} B" in words
    else:
        assert f"plan head {r.head} B = TFLM greedy head" in words


def test_short_names() -> None:
    assert short_name("model/conv2d_3/Relu;model/batch_norm/FusedBatchNormV3", "t1") == (
        "conv2d_3/Relu"
    )
    assert short_name("onnx_tf_prefix_LeakyRelu_21", "t1") == "LeakyRelu_21"
    assert short_name("", "t7") == "t7"
    assert len(short_name("x" * 80, "t")) == 24
    assert format_bytes(1536) == "1.5 KiB" and format_bytes(2048) == "2 KiB"
    assert format_bytes(48) == "48 B"


def test_bad_plot_path_fails_before_any_work(tmp_path: Path, capsys) -> None:
    from host.planning.cli import main

    model = tmp_path / "m.tflite"
    model.write_bytes((KERAS / "mlp_int8.tflite").read_bytes())
    before = model.read_bytes()
    assert main([str(model), "--embed", "--plot", str(tmp_path / "x.jpg"), "-q"]) == 2
    assert "--plot wants a .png or .svg" in capsys.readouterr().err
    assert model.read_bytes() == before, "--embed ran although the plot could not be written"


def test_every_shared_model_plots(tmp_path: Path) -> None:
    """The whole corpus (slow): every plot is drawn and its labels never collide."""
    import matplotlib.pyplot as plt

    paths = sorted(SHARED_MODELS.glob("*.tflite"))
    if not paths:
        pytest.skip(f"no shared models in {SHARED_MODELS} (tests read ../shared/models)")
    for path in paths:
        model = Model.load(path)
        r, fig = _draw(model, overlap=path.stem == "tflm_person_detect_int8")
        assert overlapping_texts(fig.findobj(Text), fig.canvas.get_renderer()) == [], path.stem
        assert len(_patches(fig, "scratch:")) == len(r.scratch), path.stem
        plt.close(fig)


def test_bands_are_shaded_and_named() -> None:
    """A model host.plan --bands rewrote: each band's scopes shaded (behind the boxes) and
    named, every band operator inside its band's shade, in the legend, no text overlapping."""
    from host.planning import band_choice
    from host.planning.plot import band_runs
    from host.rewrite.bands import find_stage
    from host.rewrite.operators import band_of
    from host.tflite.modelgen import build_demo_model

    original = Model(build_demo_model(), "demo")
    cut = band_choice.cuts(original)[-1]
    t = find_stage(original, cut).t_tensor
    bounds = band_choice.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], 3)
    assert bounds is not None
    banded, r = band_choice.plan_banded(original, cut, bounds, REFERENCE, False, 0.1)
    fig = draw_plan(r, banded)
    fig.draw_without_rendering()
    owners = lifetimes.walk(banded).owners
    runs = band_runs(banded, owners)
    assert sorted({b for b, _, _ in runs}) == [0, 1, 2]
    spans = _patches(fig, "band:")
    assert set(spans) == {f"band:{b}:{first}" for b, first, _ in runs}
    sub = banded.subgraphs[0]
    band_ops = [op for op in sub.operators if band_of(sub.tensors[op.outputs[0]].name) is not None]
    assert len(band_ops) == sum(last - first + 1 for _, first, last in runs)
    for b, first, last in runs:
        x0, x1 = spans[f"band:{b}:{first}"].get_window_extent().intervalx
        ax = fig.axes[0]
        assert (x0, x1) == pytest.approx(
            tuple(ax.transData.transform([(first - 0.5, 0), (last + 0.5, 0)])[:, 0]), abs=1
        )
    words = [t.get_text() for t in _texts(fig)]
    assert {"band 0", "band 1", "band 2"} <= set(words)
    entries = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "scopes of a band (--bands)" in entries
    assert overlapping_texts(fig.findobj(Text), fig.canvas.get_renderer()) == []
    assert band_runs(original, lifetimes.walk(original).owners) == []
