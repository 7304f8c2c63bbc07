"""Draw a plan so it reads without the table: allocation scope (operator order) across, arena
offset up, one box per buffer TFLM plans in the head.

Boxes are coloured by kind (activation, model input/output, kernel scratch, bytes an operator's
output shares with its input), labelled with a shortened tensor name and its size where the
label fits inside the box, and never over another label: on a 250-tensor model most small boxes
stay unlabelled rather than unreadable. Buffers too thin to see are drawn at a minimum height.
A strip above the boxes marks which subgraph each scope belongs to; lines mark the plan's head,
the head TFLM's own greedy planner gives, and the lower bound.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from host.planning.model import lifetimes
from host.planning.plan import PlanResult
from host.rewrite.operators import band_of
from host.tflite.model import Model, ModelError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

FORMATS = (".png", ".svg")
KIND_COLOURS = {  # two shades each, alternated so neighbouring boxes stay apart
    "activation": ("#9ecae1", "#c6dbef"),
    "model input": ("#74c476", "#a1d99b"),
    "model output": ("#fd8d3c", "#fdae6b"),
    "scratch": ("#fcbba1", "#fcbba1"),
}
SCRATCH_EDGE = "#cb181d"
BAND_COLOURS = ("#fec44f", "#fee391")  # alternated: neighbouring bands stay apart
SUBGRAPH_COLOURS = ("#bdbdbd", "#80b1d3", "#bebada", "#fdb462", "#b3de69", "#fccde5", "#8dd3c7")
MIN_HEIGHT = 0.006  # of the y range: thinner buffers are drawn this tall
LABEL_SIZE = 7
NAME_CHARS = 24
CONVERTER_PREFIXES = ("onnx_tf_prefix_", "serving_default_")  # say nothing about the tensor
DPI = 100
STRIP = 0.035  # height of the subgraph strip above the boxes, in axes fractions


def check_plot_path(path: str) -> None:
    """Fail before any work if the plot cannot be written (wrong suffix, no matplotlib)."""
    if Path(path).suffix.lower() not in FORMATS:
        raise ModelError(f"--plot wants a .png or .svg file, got {path!r}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ModelError("--plot needs matplotlib: pip install 'microarena[plot]'") from None


def plot_bytes(r: PlanResult, model: Model, path: str) -> bytes:
    """The .png or .svg file (chosen by `path`'s suffix) of the plan of `model`: the bytes
    host.plan --plot writes."""
    check_plot_path(path)
    import matplotlib.pyplot as plt

    fig = draw_plan(r, model)
    out = io.BytesIO()
    fig.savefig(out, format=Path(path).suffix.lower()[1:], dpi=DPI)
    plt.close(fig)
    return out.getvalue()


@dataclass
class _Box:
    """One buffer as drawn: scopes first..last, offset and size in plot units."""

    gid: str
    kind: str
    first: int
    last: int
    y: float
    height: float  # drawn height (at least the minimum)
    tiny: bool
    labels: list[str]  # most to least informative; the first that fits is drawn


def short_name(name: str, fallback: str) -> str:
    """A tensor name a person can read in a box: the first of TFLite's fused names (`a;b;c`),
    its last two path parts, at most NAME_CHARS characters."""
    first = name.split(";")[0].strip()
    for prefix in CONVERTER_PREFIXES:
        first = first.removeprefix(prefix)
    parts = [p for p in first.split("/") if p]
    text = "/".join(parts[-2:]) or fallback
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 1] + "…"


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KiB".replace(".0 KiB", " KiB")


def _labels(name: str, size: int) -> list[str]:
    b = format_bytes(size)
    return [f"{name}\n{b}", f"{name} {b}", name, b]


def _boxes(r: PlanResult, model: Model, scale: float, min_h: float) -> list[_Box]:
    def box(gid: str, kind: str, first: int, last: int, offset: int, size: int, name: str) -> _Box:
        h = size / scale
        labels = _labels(name, size)
        return _Box(gid, kind, first, last, offset / scale, max(h, min_h), h < min_h, labels)

    main = model.subgraphs[0]
    base = main.tensors[0].global_index if main.tensors else 0
    kinds = {base + i: "model input" for i in main.inputs}
    kinds |= {base + i: "model output" for i in main.outputs}
    boxes = [
        box(f"tensor:{t.global_index}", kinds.get(t.global_index, "activation"), t.first,
            t.last, t.offset, t.size, short_name(t.name, f"t{t.global_index}"))
        for t in r.tensors
    ]  # fmt: skip
    for i, s in enumerate(r.scratch):
        boxes.append(box(f"scratch:{i}", "scratch", s.first, s.last, s.offset, s.size,
                         f"scratch {s.op_name}"))  # fmt: skip
    return boxes


class _Labeller:
    """Places texts only where they fit their region and clear every text placed before."""

    def __init__(self, fig: Figure, ax: Axes) -> None:
        self.ax = ax
        self.renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        self.placed: list[Bbox] = []

    def extent(self, x0: float, y0: float, x1: float, y1: float) -> Bbox:
        from matplotlib.transforms import Bbox

        return Bbox(self.ax.transData.transform([(x0, y0), (x1, y1)]))

    def place(
        self,
        candidates: Iterable[tuple[str, dict[str, Any]]],
        xy: tuple[float, float],
        within: Bbox,
        transform: Any = None,
    ) -> Text | None:
        """The first candidate (text, text options) that fits inside `within` (pixels)."""
        for text, opts in candidates:
            kw: dict[str, Any] = {"fontsize": LABEL_SIZE, "ha": "center", "va": "center"} | opts
            if transform is not None:
                kw["transform"] = transform
            t = self.ax.text(*xy, text, **kw)
            ext = t.get_window_extent(self.renderer)
            if _inside(ext, within) and not any(_overlap(ext, p) for p in self.placed):
                self.placed.append(ext)
                return t
            t.remove()
        return None

    def claim(self, texts: Iterable[Text]) -> None:
        """Keep each text that clears the ones kept so far; hide the rest (tick labels)."""
        for t in texts:
            if not t.get_text():
                continue
            ext = t.get_window_extent(self.renderer)
            if any(_overlap(ext, p) for p in self.placed):
                t.set_visible(False)
            else:
                self.placed.append(ext)


def _inside(a: Bbox, b: Bbox, pad: float = 1.0) -> bool:
    return a.x0 >= b.x0 + pad and a.x1 <= b.x1 - pad and a.y0 >= b.y0 + pad and a.y1 <= b.y1 - pad


def _overlap(a: Bbox, b: Bbox) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _scope_names(model: Model, owners: list[tuple[int, int]]) -> list[str]:
    """The operator (or subgraph start) that opened each scope: `3 CONV_2D`, `1:0 LESS`."""
    out = []
    for si, op in owners:
        where = "" if si == 0 else f"{si}:"
        if op < 0:
            out.append("inputs" if si == 0 else f"{si}: inputs")
        else:
            out.append(f"{where}{op} {model.subgraphs[si].operators[op].name}")
    return out


def _runs(owners: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Consecutive scopes of one subgraph: (subgraph, first scope, last scope)."""
    runs: list[tuple[int, int, int]] = []
    for scope, (si, _) in enumerate(owners):
        if runs and runs[-1][0] == si:
            runs[-1] = (si, runs[-1][1], scope)
        else:
            runs.append((si, scope, scope))
    return runs


def draw_plan(r: PlanResult, model: Model) -> Figure:
    """The figure for a plan (Agg backend); plot_bytes saves it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    owners = lifetimes.walk(model).owners
    n = len(owners)
    top_bytes = max(r.head, r.tflm_head, 1)
    scale = 1024.0 if top_bytes >= 8192 else 1.0
    ytop = top_bytes / scale * 1.1
    width, height = min(max(11.0, 6.0 + 0.085 * n), 28.0), 7.5 if n < 60 else 10.0
    fig = plt.figure(figsize=(width, height), dpi=DPI)
    ax = fig.add_axes((1.0 / width, 1.35 / height, 1 - 3.6 / width, 1 - 2.25 / height))
    xmin = min([0] + [t.first for t in r.tensors]) - 0.5  # -1: a tensor no operator touches
    ax.set_xlim(xmin, n - 0.5)
    ax.set_ylim(0, ytop)
    _axes_text(ax, r, model, owners, scale)  # first: it settles where the axes are
    lab = _Labeller(fig, ax)
    lab.claim(ax.get_xticklabels())
    handles = _draw_reference_lines(ax, lab, r, scale)
    _draw_subgraphs(ax, lab, model, owners)
    _draw_bands(ax, lab, model, owners, ytop)
    boxes = _boxes(r, model, scale, ytop * MIN_HEIGHT)
    _draw_boxes(ax, boxes)
    _draw_shared(ax, lab, r, scale, ytop * MIN_HEIGHT)
    _label_boxes(lab, boxes)
    fig.legend(
        handles=handles + _legend_patches(r, model, owners, boxes),
        loc="upper left",
        bbox_to_anchor=(1 - 2.5 / width, 1 - 0.6 / height),
        fontsize=8,
        frameon=False,
    )
    return fig


def _draw_reference_lines(ax: Axes, lab: _Labeller, r: PlanResult, scale: float) -> list[Any]:
    from matplotlib.lines import Line2D

    lines = [("plan head", r.head, "black", "-")]
    if r.tflm_head != r.head:
        lines.append(("TFLM greedy head", r.tflm_head, "#d62728", "--"))
    if r.lower_bound < r.head:
        lines.append(("lower bound", r.lower_bound, "grey", ":"))
    within = ax.get_window_extent(lab.renderer)
    handles = []
    for name, value, colour, style in lines:
        ax.axhline(value / scale, color=colour, linestyle=style, linewidth=1.1, zorder=4)
        text = f"{name} {value} B" + (
            " = TFLM greedy head" if value == r.tflm_head and name == "plan head" else ""
        )
        x0, x1 = ax.get_xlim()
        inset = (x1 - x0) / 100
        spots = [(x1 - inset, "right"), (x0 + inset, "left"), ((x0 + x1) / 2, "center")]
        for x, ha in spots:
            above = {"ha": ha, "va": "bottom", "color": colour, "fontsize": 8}
            below = above | {"va": "top"}
            if lab.place([(f" {text} ", above), (f" {text} ", below)], (x, value / scale), within):
                break
        handles.append(Line2D([], [], color=colour, linestyle=style, label=f"{name} ({value} B)"))
    return handles


def _draw_subgraphs(ax: Axes, lab: _Labeller, model: Model, owners: list[tuple[int, int]]) -> None:
    """A strip above the boxes coloured by subgraph, with its name where it fits, and a faint
    band and separators inside the plot for every called subgraph."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import blended_transform_factory

    strip = blended_transform_factory(ax.transData, ax.transAxes)
    for si, first, last in _runs(owners):
        colour = SUBGRAPH_COLOURS[si % len(SUBGRAPH_COLOURS)]
        rect = Rectangle(
            (first - 0.5, 1.0),
            last - first + 1,
            STRIP,
            transform=strip,
            facecolor=colour,
            edgecolor="white",
            clip_on=False,
        )
        rect.set_gid(f"subgraph:{si}")
        ax.add_patch(rect)
        if si != 0:
            ax.axvspan(first - 0.5, last + 0.5, color=colour, alpha=0.15, zorder=0, lw=0)
            for x in (first - 0.5, last + 0.5):
                ax.axvline(x, color="grey", linewidth=0.6, linestyle="--", zorder=0.5)
        within = rect.get_window_extent(lab.renderer)
        name = model.subgraphs[si].name
        full = f"subgraph {si}: {name}" if name else f"subgraph {si}"
        candidates = [(full, {}), (f"{si}: {name}", {}), (str(si), {})]
        lab.place(candidates, ((first + last) / 2, 1.0 + STRIP / 2), within, strip)


def band_runs(model: Model, owners: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The scopes of each band of a model host.plan --bands rewrote: (band, first scope, last
    scope), from the band its operator's output belongs to (host.rewrite.operators.band_of)."""
    sub = model.subgraphs[0] if model.subgraphs else None
    runs: list[tuple[int, int, int]] = []
    for scope, (si, op) in enumerate(owners):
        out = sub.operators[op].outputs if sub is not None and si == 0 and op >= 0 else []
        band = band_of(sub.tensors[out[0]].name) if sub is not None and out else None
        if band is None:
            continue
        if runs and runs[-1][0] == band and runs[-1][2] == scope - 1:
            runs[-1] = (band, runs[-1][1], scope)
        else:
            runs.append((band, scope, scope))
    return runs


def _draw_bands(
    ax: Axes, lab: _Labeller, model: Model, owners: list[tuple[int, int]], ytop: float
) -> None:
    """Behind the boxes, a shade over the scopes of each band (--bands), named at the top."""
    for i, (band, first, last) in enumerate(band_runs(model, owners)):
        colour = BAND_COLOURS[i % 2]
        span = ax.axvspan(first - 0.5, last + 0.5, color=colour, alpha=0.35, zorder=0, lw=0)
        span.set_gid(f"band:{band}:{first}")
        within = lab.extent(first - 0.5, ytop * 0.9, last + 0.5, ytop)
        names = [(f"band {band}", {}), (f"b{band}", {"fontsize": 6})]
        lab.place(names, ((first + last) / 2, ytop * 0.95), within)


def _draw_boxes(ax: Axes, boxes: list[_Box]) -> None:
    from matplotlib.patches import Rectangle

    for i, b in enumerate(boxes):
        scratch = b.kind == "scratch"
        rect = Rectangle(
            (b.first - 0.45, b.y),
            b.last - b.first + 0.9,
            b.height,
            facecolor=KIND_COLOURS[b.kind][i % 2],
            edgecolor=SCRATCH_EDGE if scratch else "#08306b" if b.tiny else "#4a4a4a",
            hatch="///" if scratch else None,
            linewidth=0.9 if scratch or b.tiny else 0.4,
            zorder=3 if b.tiny else 2,  # a tiny buffer drawn taller stays on top
        )
        rect.set_gid(b.gid)
        ax.add_patch(rect)


def _label_boxes(lab: _Labeller, boxes: list[_Box]) -> None:
    """Biggest boxes first, each with its most informative label that fits (across, else
    upright), at its centre or a quarter in from either end."""
    for b in sorted(boxes, key=lambda b: -(b.last - b.first + 1) * b.height):
        x0, x1 = b.first - 0.45, b.last + 0.45
        within = lab.extent(x0, b.y, x1, b.y + b.height)
        candidates = [(s, {"zorder": 5, "rotation": r}) for s in b.labels for r in (0, 90)]
        for x in (x0 + x1) / 2, x0 + (x1 - x0) / 4, x1 - (x1 - x0) / 4:
            t = lab.place(candidates, (x, b.y + b.height / 2), within)
            if t is not None:
                t.set_gid(f"label:{b.gid}")
                break


def _draw_shared(ax: Axes, lab: _Labeller, r: PlanResult, scale: float, min_h: float) -> None:
    """Where an operator's output overlaps its input (--overlap): the shared bytes, at the
    operator's time step, in black (at least the minimum height) with a label in the operator's
    column: above the bytes, else below, else wherever in the column it clears the others."""
    from matplotlib.patches import Rectangle

    by_index = {t.global_index: t for t in r.tensors}
    axes_box = ax.get_window_extent(lab.renderer)
    top = ax.get_ylim()[1]
    for s in r.shared:
        x, y = by_index[s.input], by_index[s.output]
        lo, hi = max(x.offset, y.offset) / scale, min(x.offset + x.size, y.offset + y.size) / scale
        hi = max(hi, lo + min_h)
        rect = Rectangle((y.first - 0.45, lo), 0.9, hi - lo, facecolor="black", alpha=0.55,
                         edgecolor="black", linewidth=0.6, zorder=3.5)  # fmt: skip
        rect.set_gid(f"shared:{s.op}")
        ax.add_patch(rect)
        lab.placed.append(lab.extent(y.first - 0.45, lo, y.first + 0.45, hi))  # keep it visible
        text = f"op {s.op}: {s.bytes} B shared"
        opts = {"rotation": 90, "fontsize": 6, "zorder": 6}
        spots = [(hi, "bottom"), (lo, "top")] + [(top * k / 8, "center") for k in range(7, 0, -1)]
        for at, va in spots:
            if lab.place([(text, opts | {"va": va})], (y.first, at), axes_box):
                break


def _axes_text(
    ax: Axes, r: PlanResult, model: Model, owners: list[tuple[int, int]], scale: float
) -> None:
    """Axis labels, operator names under the scopes (upright where side by side they would
    collide, with the bottom margin they need) and the title."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    unit = "KiB" if scale > 1 else "bytes"
    ax.set_ylabel(f"arena offset ({unit})")
    lo, hi = ax.get_ylim()
    ax.set_yticks([y for y in ax.get_yticks() if lo <= y <= hi])  # none drawn over the title
    ax.set_xlabel(
        "allocation scope: the operator that opens it (subgraph:operator in called subgraphs)"
    )
    ax.set_xticks(range(len(owners)), _scope_names(model, owners), fontsize=7)
    fig.draw_without_rendering()
    if overlapping_texts(ax.get_xticklabels(), renderer):
        ax.tick_params(axis="x", labelrotation=90, labelsize=6)
        fig.draw_without_rendering()
    ticks = max(t.get_window_extent(renderer).height for t in ax.get_xticklabels())
    box = ax.get_position()
    bottom = (ticks + 45) / fig.bbox.height  # tick labels, the axis label and a margin
    ax.set_position((box.x0, bottom, box.width, box.y1 - bottom))
    saving = r.tflm_head - r.head
    pct = f", {100 * saving / r.tflm_head:.2g}% less" if r.tflm_head and saving > 0 else ""
    plural = "" if len(r.scratch) == 1 else "s"
    ax.set_title(
        f"{Path(r.model).name}: plan head {r.head} B, TFLM greedy head {r.tflm_head} B"
        f"{pct} ({len(r.tensors)} tensors, {len(r.scratch)} scratch buffer"
        f"{plural})",
        fontsize=10,
        pad=ax.get_window_extent(renderer).height * STRIP + 6,
    )
    fig.draw_without_rendering()


def _legend_patches(
    r: PlanResult, model: Model, owners: list[tuple[int, int]], boxes: list[_Box]
) -> list[Any]:
    from matplotlib.patches import Patch

    kinds = {b.kind for b in boxes}
    out: list[Any] = []
    for kind, (colour, _) in KIND_COLOURS.items():
        if kind == "scratch":
            out.append(
                Patch(
                    facecolor=colour,
                    edgecolor=SCRATCH_EDGE,
                    hatch="///",
                    label="kernel scratch" + ("" if kind in kinds else " (none)"),
                )
            )
        elif kind in kinds or kind == "activation":
            out.append(Patch(facecolor=colour, edgecolor="#4a4a4a", label=kind))
    if r.shared:
        out.append(Patch(facecolor="black", alpha=0.55, label="output shares input bytes"))
    if any(b.tiny for b in boxes):
        out.append(
            Patch(
                facecolor="white",
                edgecolor="#08306b",
                linewidth=0.9,
                label="thin buffer, drawn taller",
            )
        )
    if band_runs(model, owners):
        out.append(Patch(facecolor=BAND_COLOURS[0], alpha=0.35, label="scopes of a band (--bands)"))
    seen = sorted({si for si, _ in owners})
    for si in seen:
        colour = SUBGRAPH_COLOURS[si % len(SUBGRAPH_COLOURS)]
        name = model.subgraphs[si].name
        out.append(
            Patch(facecolor=colour, label=f"subgraph {si}: {name}" if name else f"subgraph {si}")
        )
    return out


def overlapping_texts(texts: Iterable[Text], renderer: Any) -> list[tuple[str, str]]:
    """Pairs of visible texts whose extents overlap (a readable plot has none)."""
    boxes = [
        (t.get_text(), t.get_window_extent(renderer))
        for t in texts
        if t.get_visible() and t.get_text().strip()
    ]
    return [
        (a, b)
        for i, (a, ea) in enumerate(boxes)
        for b, eb in boxes[i + 1 :]
        if _overlap(ea.padded(-0.5), eb.padded(-0.5))
    ]
