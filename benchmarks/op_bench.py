"""Per operator: this runtime's instructions next to TFLM + CMSIS-NN's, and how far each
operator is from the board's MAC limit (issue 29's table in docs/speed.md).

Each model's profiling image (`host.record --profile`'s: the model application with the
operator hook, only the model's kernels, no offline plan) runs on QEMU with -icount shift=0;
each operator's SysTick ticks x the board's qemu_tick_ns are its instructions. TFLM's are the
CMSIS-NN runs' per-node figures in tests/data/tflm_cmsis_nn/measured.json and unseen_m4.json
(same board, no plan), joined by node index. MACs are the multiply-accumulates of the node's
int8 products (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: output elements x taps of each);
"MAC/instr" is MACs per instruction, against the limit of the core's widest int8
multiply-accumulate: 16 on Helium (one VMLADAVA), 2 on the DSP cores (one SMLAD).

    .venv/bin/python benchmarks/op_bench.py --board mps3-an547 --models tiny_sww_int8
    .venv/bin/python benchmarks/op_bench.py --board mps3-an547 --models tiny_kws_dscnn_int8 --json
    .venv/bin/python benchmarks/op_bench.py --by-op --models demo_int8 tiny_sww_int8  # per type
"""

from __future__ import annotations

import argparse
import json
import sys
from math import prod
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from speed_bench import PEERS, UNSEEN, model_path  # noqa: E402

from host.device import emulate  # noqa: E402
from host.device.boards import build_image, get_board  # noqa: E402
from host.device.wire import WireReport, decode_stream  # noqa: E402
from host.tflite.model import Model  # noqa: E402

# Int8 multiply-accumulates per instruction at best: Helium's VMLADAVA.S8 does 16, SMLAD 2.
MAC_LIMIT = {"mps3-an547": 16, "mps2-an386": 2, "mps2-an500": 2, "mps2-an505": 2}


def node_macs(model: Model, index: int) -> int:
    """Multiply-accumulates of one node of subgraph 0 (0 for the operators without weights)."""
    sub = model.subgraphs[0]
    op = sub.operators[index]
    out = prod(sub.tensors[op.outputs[0]].shape)
    if op.name == "CONV_2D":
        return out * prod(sub.tensors[op.inputs[1]].shape[1:])
    if op.name == "DEPTHWISE_CONV_2D":
        return out * prod(sub.tensors[op.inputs[1]].shape[1:3])
    if op.name == "FULLY_CONNECTED":
        return out * sub.tensors[op.inputs[1]].shape[-1]
    return 0


def peer_nodes(model: str, board: str) -> dict[int, int]:
    """TFLM + CMSIS-NN's instructions per node of subgraph 0 (measured.json, or unseen_m4.json
    for the models not given), by node index."""
    runs = [r for p in (PEERS, UNSEEN) if p.exists() for r in json.loads(p.read_text())["runs"]]
    for r in runs:
        if (r["model"], r["board"], r["kernels"], r["plan"]) == (model, board, "cmsis-nn", "none"):
            return {n["node"]: n["instructions"] for n in r.get("nodes", [])}
    return {}


def profile(model: str, board: str) -> list[dict]:
    """One row per operator of subgraph 0, in node order."""
    path = model_path(model)
    elf = build_image(board, path, profile=True)
    result = emulate.run(board, elf, timeout=600)
    reports = [e for e in decode_stream([result.uart_text.encode()]) if isinstance(e, WireReport)]
    if not reports or not reports[0].ok:
        raise RuntimeError(f"{model} on {board}: no report ({result.fault or 'no output'})")
    tick_ns = get_board(board).qemu_tick_ns
    m = Model.load(path)
    peers = peer_nodes(model, board)
    limit = MAC_LIMIT.get(board)
    rows = []
    for o in reports[0].ops:
        if o.subgraph != 0:
            continue
        mine = round(o.ticks * tick_ns)
        macs = node_macs(m, o.op)
        peer = peers.get(o.op)
        rows.append(
            {
                "model": model,
                "node": o.op,
                "op": m.subgraphs[0].operators[o.op].name,
                "instructions": mine,
                "cmsis_nn": peer,
                "ratio": round(mine / peer, 3) if peer else None,
                "macs": macs,
                "macs_per_instruction": round(macs / mine, 2) if macs and mine else None,
                "of_limit": round(macs / mine / limit, 3) if macs and mine and limit else None,
            }
        )
    return rows


def by_operator(rows: list[dict], limit: int | None) -> list[dict]:
    """The rows of each model summed per operator type ("node": how many nodes), slowest first
    within the model, with the ratio and MAC figures of the sums (no CMSIS-NN figure where a
    node lacks one)."""
    out: dict[tuple[str, str], dict] = {}
    for r in rows:
        key = (r["model"], r["op"])
        s = out.setdefault(key, {"model": r["model"], "node": 0, "op": r["op"], "instructions": 0})
        s["node"] += 1
        s["instructions"] += r["instructions"]
        s["macs"] = s.get("macs", 0) + r["macs"]
        peer = s.get("cmsis_nn", 0)
        s["cmsis_nn"] = None if peer is None or r["cmsis_nn"] is None else peer + r["cmsis_nn"]
    summed = sorted(out.values(), key=lambda s: (s["model"], -s["instructions"]))
    for s in summed:
        mine, peer, macs = s["instructions"], s["cmsis_nn"], s["macs"]
        s["ratio"] = round(mine / peer, 3) if peer else None
        s["macs_per_instruction"] = round(macs / mine, 2) if macs and mine else None
        s["of_limit"] = round(macs / mine / limit, 3) if macs and mine and limit else None
    return summed


COLUMNS = [
    ("model", "model"),
    ("node", "node"),
    ("op", "operator"),
    ("instructions", "microarena"),
    ("cmsis_nn", "TFLM + CMSIS-NN"),
    ("ratio", "/ CMSIS-NN"),
    ("macs", "MACs"),
    ("macs_per_instruction", "MAC/instr"),
    ("of_limit", "of limit"),
]


def cell(v: object) -> str:
    if v is None:
        return "-"
    return f"{v:,}" if isinstance(v, int) else str(v)


def markdown(rows: list[dict], columns: list[tuple[str, str]] = COLUMNS) -> str:
    lines = ["| " + " | ".join(h for _, h in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r[k]) for k, _ in columns) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--board", default="mps3-an547")
    ap.add_argument("--models", nargs="+", required=True, help="model names (speed_bench's)")
    ap.add_argument("--min-share", type=float, default=0.0, help="omit operators below this share")
    ap.add_argument("--by-op", action="store_true", help="sum each model's nodes per operator")
    ap.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = ap.parse_args(argv)
    rows = []
    for name in args.models:
        got = profile(name, args.board)
        total = sum(r["instructions"] for r in got) or 1
        rows += [r for r in got if r["instructions"] / total >= args.min_share]
    columns = COLUMNS
    if args.by_op:
        rows = by_operator(rows, MAC_LIMIT.get(args.board))
        columns = [(k, "nodes" if k == "node" else h) for k, h in COLUMNS]
    print(json.dumps(rows, indent=1) if args.json else markdown(rows, columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
