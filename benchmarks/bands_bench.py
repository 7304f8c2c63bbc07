"""Arena head with --bands per CNN: vs TFLM's own, the plan's, and the plan's with --overlap.

Run by hand: .venv/bin/python benchmarks/bands_bench.py [--tflm] [--budget 0.1] [--only NAME]
Every shared model, every zoo model (../shared/zoo, where present) and every converter-made
model (tests/data/keras, tests/data/mobilenet_v2); a model whose early stage cannot run in
bands says why. With --tflm, the real TFLM (pip tflite-micro) runs the banded model with its
--overlap plan on 5 random inputs: the head it reports and whether every output equals the
original model's are printed. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.overlap_bench import RUNS, on_tflm  # noqa: E402
from host.paths import SHARED_MODELS, SHARED_ZOO, require_models  # noqa: E402
from host.planning import band_choice  # noqa: E402
from host.planning.libraries.reference import REFERENCE  # noqa: E402
from host.planning.model import metadata  # noqa: E402
from host.planning.plan import plan_model  # noqa: E402
from host.planning.targets.target import target_arena  # noqa: E402
from host.rewrite.bands import BandError  # noqa: E402
from host.tflite.model import Model, ModelError  # noqa: E402

CONVERTER_MODELS = ROOT / "tests" / "data" / "keras"
MOBILENET_V2 = ROOT / "tests" / "data" / "mobilenet_v2"  # tools/make_mobilenets.py
TARGET = "tflm-cortex-m"


def row(path: Path, budget: float, time_limit: float, tflm: bool) -> str:
    model = Model.load(path)
    plain = plan_model(model, time_limit=time_limit)
    over = plan_model(model, time_limit=time_limit, overlap=True)
    start = f"| {path.stem} | {plain.tflm_head} | {plain.head} | {over.head} |"
    heads = []
    for overlap in (False, True):
        try:
            b = band_choice.apply(
                Model.load(path), budget, REFERENCE, overlap, time_limit=time_limit
            )
        except BandError as e:
            return f"{start} not split: {str(e)[:60]} |"
        r = plan_model(b.model, time_limit=time_limit, overlap=overlap, **b.placement)
        heads.append((b, r))
    (_, plain_b), (b, r) = heads
    c = b.chosen
    if c is None:
        return f"{start} {plain_b.head} | {r.head} | 1.00x | no gain |"
    metadata.embed(b.model, r.tensor_offsets())
    metadata.embed(model, over.tensor_offsets())
    text = (
        f"{start} {plain_b.head} | {r.head} | {r.head / over.head:.2f}x | {c.cut}, {c.bands} "
        f"| {100 * c.added_fraction:.1f}% | {_arena(model)} | {_arena(b.model)} |"
    )
    if tflm:
        text += f" {on_tflm(path.read_bytes(), b.model.to_bytes())} |"
    return text


def _arena(model: Model) -> str:
    """The arena to set on a Cortex-M TFLM (head + tail: every band's operators add to the
    tail), or why it is not known."""
    try:
        return str(target_arena(Model(model.to_bytes()), TARGET).min_arena)
    except Exception as e:  # extra information: the row stands without it
        return f"n/a ({str(e)[:20]})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tflm", action="store_true", help="also run the real TFLM on each plan")
    ap.add_argument("--budget", type=float, default=0.1, help="--bands-mac-budget (default 0.1)")
    ap.add_argument("--time-limit", type=float, default=1.5)
    ap.add_argument("--only", nargs="*", help="model names (default: all)")
    args = ap.parse_args()
    require_models(SHARED_MODELS)
    cols = (
        "| model | TFLM head | plan | plan --overlap | --bands | --bands --overlap "
        f"| vs --overlap | cut after op, bands | MACs added | arena to set --overlap ({TARGET}) "
        "| arena to set --bands --overlap |"
    )
    if args.tflm:
        cols += f" TFLM head (bands, overlap) | identical ({RUNS} inputs) |"
    print(cols)
    print("|" + "---|" * (cols.count("|") - 1))
    paths = [
        *sorted(SHARED_MODELS.glob("*.tflite")),
        *sorted(SHARED_ZOO.glob("*.tflite")),  # models this work was not tuned on
        *sorted(CONVERTER_MODELS.glob("*.tflite")),
        *sorted(MOBILENET_V2.glob("*.tflite")),
    ]
    for path in paths:
        if args.only and path.stem not in args.only:
            continue
        try:
            print(row(path, args.budget, args.time_limit, args.tflm), flush=True)
        except ModelError as e:
            print(f"| {path.stem} | error: {e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
