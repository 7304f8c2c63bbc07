"""Build microarena's own demo model: a small int8 image classifier with seeded weights.

The README's default model is made here, at set-up, so the project ships no third-party
model. It exercises the common int8 kernels (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D,
RESHAPE, FULLY_CONNECTED, SOFTMAX) with per-channel quantised weights, like a converter's output.

  python -m host.modelgen build/demo_int8.tflite
"""

from __future__ import annotations

import argparse
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from host.flatbuf import Table, encode, new_table, set_child
from host.model import Model, write_atomic
from host.tflite_schema import SCHEMA

INT8, INT32 = 9, 2
SAME, VALID = 0, 1
RELU = 1
CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D = 3, 4, 1
FULLY_CONNECTED, SOFTMAX, RESHAPE = 9, 25, 22


@dataclass
class Graph:
    """Tensors, buffers and operators being assembled into a flatbuffer tree."""

    tensors: list[Table] = field(default_factory=list)
    buffers: list[Table] = field(default_factory=lambda: [new_table("Buffer", {}, 1)])
    operators: list[Table] = field(default_factory=list)
    opcodes: list[int] = field(default_factory=list)

    def tensor(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: int,
        scale: list[float],
        zero_point: list[int],
        data: bytes | None = None,
        qdim: int = 0,
    ) -> int:
        buf = 0
        if data is not None:
            buf = len(self.buffers)
            b = new_table("Buffer", {}, 1)
            set_child(b, 0, data)
            self.buffers.append(b)
        t = new_table("Tensor", {1: ("b", dtype), 2: ("I", buf)}, 10)
        set_child(t, 0, struct.pack(f"<{len(shape)}i", *shape))
        set_child(t, 3, name.encode())
        q = new_table("QuantizationParameters", {6: ("i", qdim)}, 7)
        set_child(q, 2, struct.pack(f"<{len(scale)}f", *scale))
        set_child(q, 3, struct.pack(f"<{len(zero_point)}q", *zero_point))
        set_child(t, 4, q)
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(
        self, code: int, inputs: list[int], outputs: list[int], opt_type: int, opt: Table
    ) -> None:
        if code not in self.opcodes:
            self.opcodes.append(code)
        op = new_table("Operator", {0: ("I", self.opcodes.index(code)), 3: ("B", opt_type)}, 14)
        set_child(op, 1, struct.pack(f"<{len(inputs)}i", *inputs))
        set_child(op, 2, struct.pack(f"<{len(outputs)}i", *outputs))
        set_child(op, 4, opt)
        self.operators.append(op)


def scalar_options(slots: dict[int, tuple[str, float | int]], nslots: int) -> Table:
    return new_table("Scalars", slots, nslots)


def _quantize_weights(w: np.ndarray, axis: int) -> tuple[bytes, list[float]]:
    """Symmetric per-channel int8, as TFLite's converter does."""
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    scales = np.maximum(np.abs(moved).max(axis=1), 1e-6) / 127.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q.tobytes(), [float(s) for s in scales]


def _bias(n: int, in_scale: float, w_scales: list[float], rng: np.random.Generator) -> bytes:
    b = rng.normal(0, 0.1, n)
    return np.round(b / (in_scale * np.array(w_scales))).astype(np.int32).tobytes()


def build_demo_model(seed: int = 0) -> bytes:
    """A 16x16x1 int8 image -> 4 classes CNN; deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    g = Graph()
    in_scale, act_scale = 1.0 / 128, 0.03
    x = g.tensor("input", (1, 16, 16, 1), INT8, [in_scale], [0])

    w, ws = _quantize_weights(rng.uniform(-0.5, 0.5, (8, 3, 3, 1)), 0)
    wt = g.tensor("conv/weights", (8, 3, 3, 1), INT8, ws, [0] * 8, w)
    bt = g.tensor("conv/bias", (8,), INT32, [in_scale * s for s in ws], [0] * 8,
                  _bias(8, in_scale, ws, rng))  # fmt: skip
    c1 = g.tensor("conv/relu", (1, 8, 8, 8), INT8, [act_scale], [-128])
    conv = scalar_options({0: ("B", SAME), 1: ("i", 2), 2: ("i", 2), 3: ("b", RELU)}, 7)
    g.op(CONV_2D, [x, wt, bt], [c1], 1, conv)

    w, ws = _quantize_weights(rng.uniform(-0.5, 0.5, (1, 3, 3, 8)), 3)
    wt = g.tensor("dw/weights", (1, 3, 3, 8), INT8, ws, [0] * 8, w, qdim=3)
    bt = g.tensor("dw/bias", (8,), INT32, [act_scale * s for s in ws], [0] * 8,
                  _bias(8, act_scale, ws, rng))  # fmt: skip
    c2 = g.tensor("dw/relu", (1, 8, 8, 8), INT8, [act_scale], [-128])
    dw = scalar_options({0: ("B", SAME), 1: ("i", 1), 2: ("i", 1), 3: ("i", 1), 4: ("b", RELU)}, 7)
    g.op(DEPTHWISE_CONV_2D, [c1, wt, bt], [c2], 2, dw)

    p = g.tensor("pool", (1, 4, 4, 8), INT8, [act_scale], [-128])
    pool = scalar_options({0: ("B", VALID), 1: ("i", 2), 2: ("i", 2), 3: ("i", 2), 4: ("i", 2)}, 6)
    g.op(AVERAGE_POOL_2D, [c2], [p], 5, pool)

    shape = g.tensor("flatten/shape", (2,), INT32, [0.0], [0], struct.pack("<2i", 1, 128))
    f = g.tensor("flatten", (1, 128), INT8, [act_scale], [-128])
    reshape = new_table("ReshapeOptions", {}, 1)
    set_child(reshape, 0, struct.pack("<2i", 1, 128))
    g.op(RESHAPE, [p, shape], [f], 17, reshape)

    w, ws = _quantize_weights(rng.uniform(-0.2, 0.2, (4, 128)), 0)
    wt = g.tensor("fc/weights", (4, 128), INT8, ws, [0] * 4, w)
    bt = g.tensor("fc/bias", (4,), INT32, [act_scale * s for s in ws], [0] * 4,
                  _bias(4, act_scale, ws, rng))  # fmt: skip
    logits = g.tensor("logits", (1, 4), INT8, [0.1], [0])
    g.op(FULLY_CONNECTED, [f, wt, bt], [logits], 8, scalar_options({0: ("b", 0)}, 5))

    out = g.tensor("probabilities", (1, 4), INT8, [1.0 / 256], [-128])
    g.op(SOFTMAX, [logits], [out], 9, scalar_options({0: ("f", 1.0)}, 1))
    return assemble(g, [x], [out])


def assemble(g: Graph, inputs: list[int], outputs: list[int]) -> bytes:
    sg = new_table("SubGraph", {}, 6)
    set_child(sg, 0, g.tensors)
    set_child(sg, 1, struct.pack(f"<{len(inputs)}i", *inputs))
    set_child(sg, 2, struct.pack(f"<{len(outputs)}i", *outputs))
    set_child(sg, 3, g.operators)
    set_child(sg, 4, b"main")
    codes = []
    for code in g.opcodes:
        oc = new_table("OperatorCode", {0: ("b", min(code, 127)), 2: ("i", 1), 3: ("i", code)}, 4)
        codes.append(oc)
    model = new_table("Model", {0: ("I", 3)}, 8)
    set_child(model, 1, codes)
    set_child(model, 2, [sg])
    set_child(model, 3, b"microarena demo int8 CNN (seeded weights)")
    set_child(model, 4, g.buffers)
    data = encode(model, SCHEMA)
    Model(data, "demo model")  # it must read back through the same checks as any model
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m host.modelgen", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("output", help="where to write the .tflite")
    ap.add_argument("--seed", type=int, default=0, help="weights seed (default 0)")
    args = ap.parse_args(argv)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, build_demo_model(args.seed))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
