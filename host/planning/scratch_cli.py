"""`python -m host.scratch`: the scratch buffers a model's kernels request (host.planning.scratch)
and, for TFLM, the arena head its planner will use with them."""

from __future__ import annotations

import json
import sys

from host import entry
from host.planning.libraries.base import KernelsError
from host.planning.libraries.registry import RUNTIMES, library
from host.planning.model.lifetimes import align_up
from host.planning.scratch import predict_tflm_head, scratch_requests, unknown_scratch_ops
from host.tflite.model import Model, ModelError


def main(argv: list[str] | None = None) -> int:
    ap = entry.parser(
        "scratch",
        description="List the scratch buffers a model's kernels request at set-up, in request "
        "order, and (for TFLM) the arena head TFLM's planner will use with them.",
    )
    ap.add_argument("model", help="the .tflite model")
    ap.add_argument("--runtime", choices=list(RUNTIMES), default="tflm",
                    help="whose kernels: the pip tflite-micro reference kernels (default) or "
                    "this project's kernels")  # fmt: skip
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    try:
        model = Model.load(args.model)
        lib = library(args.runtime)
        requests = scratch_requests(model, lib)
        unknown = unknown_scratch_ops(model, lib)
        head = predict_tflm_head(model, lib) if args.runtime == "tflm" else None
    except (ModelError, KernelsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    names = {(sg.index, op.index): op.name for sg in model.subgraphs for op in sg.operators}
    if args.json:
        doc = {
            "model": args.model,
            "runtime": args.runtime,
            "requests": [
                {
                    "subgraph": r.subgraph,
                    "op": r.op,
                    "op_name": names[(r.subgraph, r.op)],
                    "bytes": r.bytes,
                    "planned_bytes": align_up(r.bytes),
                }
                for r in requests
            ],  # fmt: skip
            "unknown_ops": unknown,
            "predicted_tflm_head": head,
        }
        print(json.dumps(doc, indent=2))
        return 0
    print(f"{len(requests)} scratch request(s) by {args.runtime} kernels in {args.model}")
    for i, r in enumerate(requests):
        name = names[(r.subgraph, r.op)]
        print(f"  #{i:<3} subgraph {r.subgraph} op {r.op:<4} {name:<32} {r.bytes:>9} B"
              f" (planned {align_up(r.bytes)} B)")  # fmt: skip
    total = sum(align_up(r.bytes) for r in requests)
    print(f"  total {total} B if all were live at once")
    if head is not None:
        print(f"predicted TFLM arena head: {head} B")
    for u in unknown:
        print(f"warning: scratch of {u} is not modelled; the prediction may be short",
              file=sys.stderr)  # fmt: skip
    return 0
