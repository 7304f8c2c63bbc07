"""Arena head per shared model: microarena's plan vs the lower bound vs TFLM's greedy.

Run by hand: .venv/bin/python benchmarks/models_bench.py [--tflm]
With --tflm, the real TFLM (pip tflite-micro) runs each planned model and its reported head is
printed beside the prediction. Prints a Markdown table (ratios against the lower bound).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from host.paths import SHARED_MODELS, require_models  # noqa: E402
from host.planning.model import metadata  # noqa: E402
from host.planning.plan import plan_model  # noqa: E402
from host.tflite.model import Model, ModelError  # noqa: E402

MODELS = SHARED_MODELS


def tflm_head(data: bytes) -> int | str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from support.tflm_oracle import run_tflm

    try:
        return run_tflm(data).head
    except Exception as e:  # a model TFLM cannot run
        return f"fails: {str(e)[:30]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tflm", action="store_true", help="also run the real TFLM on each plan")
    ap.add_argument("--time-limit", type=float, default=10.0)
    args = ap.parse_args()
    require_models(MODELS)
    cols = "| model | tensors | lower bound | TFLM greedy | microarena | vs LB | saving | plan s |"
    if args.tflm:
        cols += " TFLM head with plan |"
    print(cols)
    print("|" + "---|" * (cols.count("|") - 1))
    slowest = (0.0, "")
    for path in sorted(MODELS.glob("*.tflite")):
        try:
            model = Model.load(path)
            t0 = time.monotonic()
            r = plan_model(model, time_limit=args.time_limit)
            secs = time.monotonic() - t0
        except ModelError as e:
            print(f"| {path.stem} | error: {e} |")
            continue
        slowest = max(slowest, (secs, path.stem))
        ratio = r.head / r.lower_bound if r.lower_bound else 1.0
        pct = 100 * r.saving / r.tflm_head if r.tflm_head else 0.0
        row = (
            f"| {path.stem} | {len(model.tensors)} | {r.lower_bound} | {r.tflm_head} | {r.head} "
            f"| {ratio:.3f} | {pct:.1f}% | {secs:.2f} |"
        )
        if args.tflm:
            metadata.embed(model, r.tensor_offsets())
            row += f" {tflm_head(model.to_bytes())} |"
        print(row, flush=True)
    print(f"\nslowest planning: {slowest[1]} {slowest[0]:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
