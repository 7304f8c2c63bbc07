"""Draw a plan as rectangles: time (allocation scope) across, arena offset up."""

from __future__ import annotations

from pathlib import Path

from host.planning.plan import PlanResult
from host.tflite.model import ModelError


def plot_plan(r: PlanResult, path: str) -> None:
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise ModelError(f"--plot wants a .png or .svg file, got {path!r}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        raise ModelError("--plot needs matplotlib: pip install 'microarena[plot]'") from None
    fig, ax = plt.subplots(figsize=(10, 6))
    colours = plt.get_cmap("tab20")
    for i, t in enumerate(r.tensors):
        ax.add_patch(
            Rectangle(
                (t.first - 0.45, t.offset),
                t.last - t.first + 0.9,
                t.size,
                facecolor=colours(i % 20),
                edgecolor="black",
                linewidth=0.4,
            )
        )
        if t.size >= r.head / 25:
            ax.text(t.first, t.offset + t.size / 2, str(t.global_index), fontsize=7, va="center")
    for s in r.scratch:
        ax.add_patch(
            Rectangle(
                (s.first - 0.45, s.offset),
                s.last - s.first + 0.9,
                s.size,
                facecolor="none",
                edgecolor="red",
                hatch="//",
                linewidth=0.6,
            )
        )
    _draw_shared(ax, r, Rectangle)
    end = max([t.last for t in r.tensors] + [s.last for s in r.scratch] + [1])
    ax.set_xlim(-1, end + 1)
    ax.set_ylim(0, max(r.head, r.tflm_head, 1) * 1.05)
    ax.axhline(r.head, color="black", linestyle="--", linewidth=0.8)
    ax.axhline(r.tflm_head, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("allocation scope (operator order)")
    ax.set_ylabel("arena offset (bytes)")
    ax.set_title(
        f"{Path(r.model).name}: head {r.head} B (dashed), TFLM greedy {r.tflm_head} B (dotted), "
        f"scratch hatched" + (", output over input black" if r.shared else ""),
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _draw_shared(ax, r: PlanResult, Rectangle) -> None:
    """Where an operator's output overlaps its input (--overlap): the shared bytes, at the
    operator's time step, in black with a label, so the reuse is visible."""
    by_index = {t.global_index: t for t in r.tensors}
    for s in r.shared:
        x, y = by_index[s.input], by_index[s.output]
        lo, hi = max(x.offset, y.offset), min(x.offset + x.size, y.offset + y.size)
        ax.add_patch(
            Rectangle(
                (y.first - 0.45, lo),
                0.9,
                hi - lo,
                facecolor="black",
                alpha=0.55,
                edgecolor="black",
                linewidth=0.6,
            )  # fmt: skip
        )
        ax.text(y.first, hi, f"op {s.op}: {s.bytes} B shared", fontsize=6, rotation=90,
                va="bottom", ha="center")  # fmt: skip
