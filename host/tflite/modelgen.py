"""Build microarena's own demo model: a small int8 image classifier with seeded weights.

The README's default model is made here, at set-up, so the project ships no third-party
model. It exercises the common int8 kernels (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D,
RESHAPE, FULLY_CONNECTED, SOFTMAX) with per-channel quantised weights, like a converter's output.

  python -m host.tflite.modelgen build/demo_int8.tflite
"""

from __future__ import annotations

import argparse
import struct
import sys
from dataclasses import dataclass, field

import numpy as np

from host import entry
from host.argtypes import SEED
from host.fileio import write_atomic
from host.tflite.flatbuf import Table, encode, new_table, set_child
from host.tflite.model import Model
from host.tflite.schema import SCHEMA

INT8, INT32 = 9, 2
SAME, VALID = 0, 1
RELU = 1
CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D = 3, 4, 1
FULLY_CONNECTED, SOFTMAX, RESHAPE = 9, 25, 22
CUSTOM = 32


@dataclass
class Graph:
    """Tensors, buffers and operators being assembled into a flatbuffer tree."""

    tensors: list[Table] = field(default_factory=list)
    buffers: list[Table] = field(default_factory=lambda: [new_table("Buffer", {}, 1)])
    operators: list[Table] = field(default_factory=list)
    opcodes: list[int | str] = field(default_factory=list)  # builtin codes, custom names
    channels: dict[int, int] = field(default_factory=dict)  # tensor -> channels (demo layers)

    def tensor(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: int,
        scale: list[float],
        zero_point: list[int],
        data: bytes | None = None,
        qdim: int = 0,
        is_variable: bool = False,
    ) -> int:
        buf = 0
        if data is not None:
            buf = len(self.buffers)
            b = new_table("Buffer", {}, 1)
            set_child(b, 0, data)
            self.buffers.append(b)
        scalars = {1: ("b", dtype), 2: ("I", buf)} | ({5: ("B", 1)} if is_variable else {})
        t = new_table("Tensor", scalars, 10)
        set_child(t, 0, struct.pack(f"<{len(shape)}i", *shape))
        set_child(t, 3, name.encode())
        q = new_table("QuantizationParameters", {6: ("i", qdim)}, 7)
        set_child(q, 2, struct.pack(f"<{len(scale)}f", *scale))
        set_child(q, 3, struct.pack(f"<{len(zero_point)}q", *zero_point))
        set_child(t, 4, q)
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(
        self, code: int | str, inputs: list[int], outputs: list[int], opt_type: int, opt: Table,
        custom_options: bytes | None = None,
    ) -> None:  # fmt: skip
        """A builtin operator by code, or a custom one by name (its options a flexbuffer)."""
        if code not in self.opcodes:
            self.opcodes.append(code)
        op = new_table("Operator", {0: ("I", self.opcodes.index(code)), 3: ("B", opt_type)}, 14)
        set_child(op, 1, struct.pack(f"<{len(inputs)}i", *inputs))
        set_child(op, 2, struct.pack(f"<{len(outputs)}i", *outputs))
        set_child(op, 4, opt)
        if custom_options is not None:
            set_child(op, 5, custom_options)  # custom_options_format 0: flexbuffers
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


ACT_SCALE = 0.03  # activations after ReLU: int8 with zero point -128


def _conv(
    g: Graph, rng: np.random.Generator, x: int, in_scale: float, name: str,
    hw: int, cout: int, stride: int, depthwise: bool, ksize: int = 3,
) -> int:  # fmt: skip
    """A CONV_2D or DEPTHWISE_CONV_2D with ReLU, SAME padding, per-channel int8 weights."""
    cin = cout if depthwise else g.channels[x]
    shape = (1, ksize, ksize, cout) if depthwise else (cout, ksize, ksize, cin)
    qdim = 3 if depthwise else 0
    fan_in = ksize * ksize * (1 if depthwise else cin)
    w, ws = _quantize_weights(rng.uniform(-1, 1, shape) * 1.5 / np.sqrt(fan_in), qdim)
    wt = g.tensor(f"{name}/weights", shape, INT8, ws, [0] * cout, w, qdim=qdim)
    bt = g.tensor(f"{name}/bias", (cout,), INT32, [in_scale * s for s in ws], [0] * cout,
                  _bias(cout, in_scale, ws, rng))  # fmt: skip
    out_hw = hw // stride
    y = g.tensor(f"{name}/relu", (1, out_hw, out_hw, cout), INT8, [ACT_SCALE], [-128])
    g.channels[y] = cout
    if depthwise:
        slots = {0: ("B", SAME), 1: ("i", stride), 2: ("i", stride), 3: ("i", 1), 4: ("b", RELU)}
        g.op(DEPTHWISE_CONV_2D, [x, wt, bt], [y], 2, scalar_options(slots, 7))
    else:
        slots = {0: ("B", SAME), 1: ("i", stride), 2: ("i", stride), 3: ("b", RELU)}
        g.op(CONV_2D, [x, wt, bt], [y], 1, scalar_options(slots, 7))
    return y


# A MobileNet in miniature: (name, output channels, stride, depthwise). Its activation sizes
# follow the same pattern as the MLPerf Tiny VWW MobileNet, where TFLM's greedy placement
# needs a third more than the best plan: the demo shows the planner's saving.
DEMO_LAYERS = [
    ("conv0", 8, 2, False), ("dw1", 8, 1, True), ("pw1", 16, 1, False),
    ("dw2", 16, 2, True), ("pw2", 32, 1, False), ("dw3", 32, 1, True), ("pw3", 32, 1, False),
    ("dw4", 32, 2, True), ("pw4", 64, 1, False),
]  # fmt: skip


def build_demo_model(seed: int = 0) -> bytes:
    """A 32x32x3 int8 image -> 4 classes MobileNet-like CNN; deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    g = Graph()
    in_scale = 1.0 / 128
    x = g.tensor("input", (1, 32, 32, 3), INT8, [in_scale], [0])
    g.channels[x] = 3
    hw, scale = 32, in_scale
    for name, cout, stride, depthwise in DEMO_LAYERS:
        x = _conv(g, rng, x, scale, name, hw, cout, stride, depthwise)
        hw, scale = hw // stride, ACT_SCALE
    cout = g.channels[x]

    p = g.tensor("pool", (1, 1, 1, cout), INT8, [ACT_SCALE], [-128])
    pool = scalar_options(
        {0: ("B", VALID), 1: ("i", hw), 2: ("i", hw), 3: ("i", hw), 4: ("i", hw)}, 6
    )
    g.op(AVERAGE_POOL_2D, [x], [p], 5, pool)

    shape = g.tensor("flatten/shape", (2,), INT32, [0.0], [0], struct.pack("<2i", 1, cout))
    f = g.tensor("flatten", (1, cout), INT8, [ACT_SCALE], [-128])
    reshape = new_table("ReshapeOptions", {}, 1)
    set_child(reshape, 0, struct.pack("<2i", 1, cout))
    g.op(RESHAPE, [p, shape], [f], 17, reshape)

    w, ws = _quantize_weights(rng.uniform(-0.3, 0.3, (4, cout)), 0)
    wt = g.tensor("fc/weights", (4, cout), INT8, ws, [0] * 4, w)
    bt = g.tensor("fc/bias", (4,), INT32, [ACT_SCALE * s for s in ws], [0] * 4,
                  _bias(4, ACT_SCALE, ws, rng))  # fmt: skip
    logits = g.tensor("logits", (1, 4), INT8, [0.05], [0])
    g.op(FULLY_CONNECTED, [f, wt, bt], [logits], 8, scalar_options({0: ("b", 0)}, 5))

    out = g.tensor("probabilities", (1, 4), INT8, [1.0 / 256], [-128])
    g.op(SOFTMAX, [logits], [out], 9, scalar_options({0: ("f", 1.0)}, 1))
    return assemble(g, [0], [out])  # tensor 0 is the input


def assemble(g: Graph, inputs: list[int], outputs: list[int]) -> bytes:
    sg = new_table("SubGraph", {}, 6)
    set_child(sg, 0, g.tensors)
    set_child(sg, 1, struct.pack(f"<{len(inputs)}i", *inputs))
    set_child(sg, 2, struct.pack(f"<{len(outputs)}i", *outputs))
    set_child(sg, 3, g.operators)
    set_child(sg, 4, b"main")
    codes = []
    for code in g.opcodes:
        builtin = CUSTOM if isinstance(code, str) else code
        oc = new_table("OperatorCode", {0: ("b", min(builtin, 127)), 2: ("i", 1),
                                        3: ("i", builtin)}, 4)  # fmt: skip
        if isinstance(code, str):  # a custom operator, found by its name
            set_child(oc, 1, code.encode())
        codes.append(oc)
    model = new_table("Model", {0: ("I", 3)}, 8)
    set_child(model, 1, codes)
    set_child(model, 2, [sg])
    set_child(model, 3, b"microarena demo int8 MobileNet-like CNN (seeded weights)")
    set_child(model, 4, g.buffers)
    data = encode(model, SCHEMA)
    Model(data, "demo model")  # it must read back through the same checks as any model
    return data


def main(argv: list[str] | None = None) -> int:
    ap = entry.parser("modelgen", description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("output", help="where to write the .tflite (its folder must exist)")
    ap.add_argument("--seed", type=SEED, default=0, help="weights seed, >= 0 (default 0)")
    args = ap.parse_args(argv)
    try:
        write_atomic(args.output, build_demo_model(args.seed))
    except OSError as e:
        print(f"error: cannot write the model: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0
