"""Arena head with --overlap per shared model: vs TFLM's greedy and vs the no-overlap bound.

Run by hand: .venv/bin/python benchmarks/overlap_bench.py [--tflm]
With --tflm, the real TFLM (pip tflite-micro) runs each overlap plan on 5 random inputs: the
head it reports and whether every output equals its own non-overlapping run are printed.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from host.paths import SHARED_MODELS, require_models  # noqa: E402
from host.planning.model import metadata  # noqa: E402
from host.planning.plan import plan_model  # noqa: E402
from host.tflite.model import Model, ModelError  # noqa: E402

MODELS = SHARED_MODELS
RUNS = 5


def on_tflm(original: bytes, planned: bytes) -> str:
    """'head, identical' measured on the real TFLM over RUNS random inputs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from support.tflm_oracle import run_tflm

    try:
        same, head = True, 0
        for seed in range(RUNS):
            a, b = run_tflm(original, seed), run_tflm(planned, seed)
            same &= all(np.array_equal(x, y) for x, y in zip(a.outputs, b.outputs, strict=True))
            head = b.head
        return f"{head} | {'yes' if same else 'NO'}"
    except Exception as e:  # a model TFLM cannot run
        return f"fails: {str(e)[:30]} | -"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tflm", action="store_true", help="also run the real TFLM on each plan")
    ap.add_argument("--time-limit", type=float, default=1.5)
    args = ap.parse_args()
    require_models(MODELS)
    cols = (
        "| model | TFLM greedy | bound without overlap | head without | overlap bound "
        "| head with overlap | vs TFLM | vs no-overlap bound | operators overlapped |"
    )
    if args.tflm:
        cols += f" TFLM head | identical ({RUNS} inputs) |"
    print(cols)
    print("|" + "---|" * (cols.count("|") - 1))
    for path in sorted(MODELS.glob("*.tflite")):
        try:
            plain = plan_model(Model.load(path), time_limit=args.time_limit)
            model = Model.load(path)
            r = plan_model(model, time_limit=args.time_limit, overlap=True)
        except ModelError as e:
            print(f"| {path.stem} | error: {e} |")
            continue
        vs_tflm = 100 * (r.head - r.tflm_head) / r.tflm_head if r.tflm_head else 0.0
        vs_bound = 100 * (r.head - r.lower_bound) / r.lower_bound if r.lower_bound else 0.0
        row = (
            f"| {path.stem} | {r.tflm_head} | {r.lower_bound} | {plain.head} | {r.overlap_bound} "
            f"| {r.head} | {vs_tflm:+.1f}% | {vs_bound:+.1f}% | {len(r.shared)} |"
        )
        if args.tflm:
            metadata.embed(model, r.tensor_offsets())
            row += f" {on_tflm(path.read_bytes(), model.to_bytes())} |"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
