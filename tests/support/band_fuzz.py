"""A standing fuzzer of the band rewrite (host.rewrite.bands, issue 26): random stages, every cut
and band count, the original against the rewrite on the pip TFLM and on this runtime (host
build), every byte of the outputs and of the cut tensor T. A short seeded run is a test
(tests/planning/test_band_fuzz.py), a long one is run by hand (tools/fuzz_bands.py).

A stage: an input [1, H, W, C] (int8, int16 or float32; odd and even heights), then 1 to 5
operators drawn from CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D (SAME or VALID,
strides 1-3, dilations 1-2, filters 1-4, fused activations), PAD, PADV2, MIRROR_PAD, a residual
ADD or MUL of two maps of the stage, RELU, RELU6, LOGISTIC, TANH, HARD_SWISH; then a RESHAPE
(run whole, after every cut). What TFLM refuses to run as the original is skipped; what the
rewrite refuses must be refused with a BandError; what it writes must run on TFLM (and on this
runtime where it runs the original) with the original's bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np
from support.kernel_harness import OP_CODES, OPT_TYPES
from support.tflm_oracle import oracle

from host.planning import band_choice
from host.planning.libraries.reference import REFERENCE
from host.rewrite import bands as rw
from host.rewrite import graph_check
from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model
from host.tflite.modelgen import Graph, assemble, scalar_options

FLOAT32, INT32, INT64, INT16, INT8 = 0, 2, 4, 7, 9
DTYPES = {FLOAT32: np.float32, INT16: np.int16, INT8: np.int8}
KINDS = ("conv", "depthwise", "max_pool", "average_pool", "pad", "padv2", "mirror_pad",
         "residual", "activation")  # fmt: skip
ACTIVATIONS = ("RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH")
# (scale, zero point) TFLM requires of these outputs, per type
FIXED_OUTPUT = {
    ("LOGISTIC", INT8): (1 / 256, -128),
    ("TANH", INT8): (1 / 128, 0),
    ("LOGISTIC", INT16): (1 / 32768, 0),
    ("TANH", INT16): (1 / 32768, 0),
}
ARENA = 1 << 20
TENSOR_QUANTIZATION = 4  # Tensor slot


@dataclass
class Stats:
    """Counts of a run (written in docs/bands.md for the long runs)."""

    models: int = 0
    skipped: int = 0  # TFLM does not run the original
    refused: int = 0  # no cut can be banded (a BandError naming why)
    rewrites: int = 0  # banded models compared on TFLM
    runtime: int = 0  # ... and on this runtime
    planned: int = 0  # host.plan --bands's choice, planned, checked and run on TFLM
    findings: list[str] = field(default_factory=list)

    def add(self, other: Stats) -> None:
        for k in ("models", "skipped", "refused", "rewrites", "runtime", "planned"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.findings += other.findings

    def text(self) -> str:
        return (
            f"{self.models} models ({self.skipped} not run by TFLM, {self.refused} refused), "
            f"{self.rewrites} rewrites compared on TFLM, {self.runtime} on this runtime, "
            f"{self.planned} planned choices run on TFLM, {len(self.findings)} findings"
        )


class _Builder:
    """A random stage on a Graph, one operator at a time."""

    def __init__(self, rng: np.random.Generator, dtype: int) -> None:
        self.rng, self.dtype, self.g = rng, dtype, Graph()
        self.shapes: dict[int, tuple[int, ...]] = {}
        self.quant: dict[int, tuple[float, int]] = {}
        self.names: list[str] = []

    def act(self, shape: tuple[int, ...], q: tuple[float, int] | None = None) -> int:
        if q is None:
            q = self.new_quant()
        i = len(self.g.tensors)
        scale, zp = ([q[0]], [q[1]]) if self.dtype != FLOAT32 else ([], [])
        t = self.g.tensor(f"t{i}", shape, self.dtype, scale, zp)
        self.shapes[t], self.quant[t] = shape, q
        return t

    def new_quant(self) -> tuple[float, int]:
        scale = float(self.rng.uniform(0.005, 0.1))
        if self.dtype == INT16:
            return scale / 256, 0
        return scale, int(self.rng.integers(-128, 128)) if self.dtype == INT8 else 0

    def const(self, name: str, shape: tuple[int, ...], dtype: int, data: bytes,
              scale: list[float], zp: list[int], qdim: int = 0) -> int:  # fmt: skip
        return self.g.tensor(name, shape, dtype, scale, zp, data, qdim=qdim)

    def op(self, name: str, ins: list[int], out: int, opt: str | None, slots: dict) -> None:
        nslots = max(slots, default=-1) + 1
        self.g.op(OP_CODES[name], ins, [out], OPT_TYPES[opt] if opt else 0,
                  scalar_options(slots, max(nslots, 1)))  # fmt: skip
        self.names.append(name)


def _window(rng: np.random.Generator, h: int, w: int) -> tuple[int, int, int, int, int, int]:
    """(kh, kw, stride, dilation, padding, fused activation) whose VALID output is not empty."""
    for _ in range(20):
        kh, kw = (int(v) for v in rng.integers(1, 5, 2))
        stride, dil = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        pad = int(rng.integers(0, 2))
        if pad == rw.SAME or ((kh - 1) * dil + 1 <= h and (kw - 1) * dil + 1 <= w):
            return kh, kw, stride, dil, pad, int(rng.integers(0, 4))  # none, relu, n1to1, relu6
    return 1, 1, 1, 1, rw.VALID, 0


def _out(n: int, k: int, s: int, d: int, pad: int) -> int:
    return -(-n // s) if pad == rw.SAME else (n - (k - 1) * d - 1) // s + 1


def _conv(b: _Builder, x: int, depthwise: bool) -> int | None:
    rng, dt = b.rng, b.dtype
    _, h, w, c = b.shapes[x]
    kh, kw, s, d, pad, fused = _window(rng, h, w)
    cout = c if depthwise else int(rng.integers(1, 5))
    wshape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, c)
    y = b.act((1, _out(h, kh, s, d, pad), _out(w, kw, s, d, pad), cout))
    if dt == FLOAT32:
        wdata = rng.uniform(-1, 1, wshape).astype(np.float32).tobytes()
        wt = b.const("w", wshape, FLOAT32, wdata, [], [])
        bt = b.const("b", (cout,), FLOAT32, rng.uniform(-1, 1, cout).astype(np.float32).tobytes(),
                     [], [])  # fmt: skip
    else:
        wscales = [float(v) for v in rng.uniform(0.002, 0.02, cout)]
        wdata = rng.integers(-127, 128, wshape).astype(np.int8).tobytes()
        wt = b.const("w", wshape, INT8, wdata, wscales, [0] * cout, qdim=3 if depthwise else 0)
        in_scale = b.quant[x][0]
        bias_type, np_bias = (INT64, np.int64) if dt == INT16 else (INT32, np.int32)
        bias = rng.integers(-1000, 1000, cout).astype(np_bias).tobytes()
        bt = b.const("b", (cout,), bias_type, bias, [in_scale * v for v in wscales], [0] * cout)
        y_scale = in_scale * float(np.mean(wscales)) * np.sqrt(kh * kw * (1 if depthwise else c))
        b.quant[y] = (y_scale * (8 if dt == INT8 else 2048), b.quant[y][1])
        _requantize(b, y)
    if depthwise:
        slots = {0: ("B", pad), 1: ("i", s), 2: ("i", s), 3: ("i", 1), 4: ("b", fused),
                 5: ("i", d), 6: ("i", d)}  # fmt: skip
        b.op("DEPTHWISE_CONV_2D", [x, wt, bt], y, "DepthwiseConv2DOptions", slots)
    else:
        slots = {0: ("B", pad), 1: ("i", s), 2: ("i", s), 3: ("b", fused), 4: ("i", d),
                 5: ("i", d)}  # fmt: skip
        b.op("CONV_2D", [x, wt, bt], y, "Conv2DOptions", slots)
    return y


def _requantize(b: _Builder, t: int) -> None:
    """Write tensor t's (changed) quantization into its table."""
    if b.dtype == FLOAT32:
        return
    q = b.g.tensors[t].get(TENSOR_QUANTIZATION)
    set_child(q, 2, struct.pack("<f", b.quant[t][0]))
    set_child(q, 3, struct.pack("<q", b.quant[t][1]))


def _pool(b: _Builder, x: int, name: str) -> int | None:
    _, h, w, c = b.shapes[x]
    kh, kw, s, _, pad, fused = _window(b.rng, h, w)
    y = b.act((1, _out(h, kh, s, 1, pad), _out(w, kw, s, 1, pad), c), b.quant[x])
    slots = {0: ("B", pad), 1: ("i", s), 2: ("i", s), 3: ("i", kw), 4: ("i", kh), 5: ("b", fused)}
    b.op(name, [x], y, "Pool2DOptions", slots)
    return y


def _pad(b: _Builder, x: int, kind: str) -> int | None:
    _, h, w, c = b.shapes[x]
    rng = b.rng
    top, bottom = (int(v) for v in rng.integers(0, 5, 2))
    left, right = (int(v) for v in rng.integers(0, 3, 2))
    if kind == "mirror_pad":
        top, bottom, left, right = min(top, h - 1), min(bottom, h - 1), min(left, w - 1), min(
            right, w - 1)  # fmt: skip
    pads = struct.pack("<8i", 0, 0, top, bottom, left, right, 0, 0)
    pt = b.const("pads", (4, 2), INT32, pads, [], [])
    y = b.act((1, h + top + bottom, w + left + right, c), b.quant[x])
    if kind == "pad":
        b.op("PAD", [x, pt], y, "PadOptions", {})
    elif kind == "padv2":
        q = b.quant[x]
        value = _random_values(rng, b.dtype, (1,)).tobytes()
        scale, zp = ([q[0]], [q[1]]) if b.dtype != FLOAT32 else ([], [])
        vt = b.const("value", (), b.dtype, value, scale, zp)
        b.op("PADV2", [x, pt, vt], y, "PadV2Options", {})
    else:
        b.op("MIRROR_PAD", [x, pt], y, "MirrorPadOptions", {0: ("b", int(rng.integers(0, 2)))})
    return y


def _residual(b: _Builder, x: int, earlier: list[int]) -> int | None:
    same = [t for t in earlier if b.shapes[t] == b.shapes[x]]
    other = same[int(b.rng.integers(0, len(same)))] if same else x
    name = "ADD" if b.rng.integers(0, 2) else "MUL"
    y = b.act(b.shapes[x])
    if name == "MUL" and b.dtype != FLOAT32:
        b.quant[y] = (b.quant[x][0] * b.quant[other][0] * 64, b.quant[y][1])
        _requantize(b, y)
    b.op(name, [x, other], y, "AddOptions" if name == "ADD" else "MulOptions", {0: ("b", 0)})
    return y


def _activation(b: _Builder, x: int) -> int | None:
    name = ACTIVATIONS[int(b.rng.integers(0, len(ACTIVATIONS)))]
    q = FIXED_OUTPUT.get((name, b.dtype))
    y = b.act(b.shapes[x], q if q else b.new_quant())
    b.op(name, [x], y, None, {})
    return y


def random_stage(seed: int) -> tuple[bytes, str]:
    """A random stage model and a one-line description of it."""
    rng = np.random.default_rng(seed)
    dtype = (INT8, INT16, FLOAT32)[int(rng.integers(0, 3))]
    b = _Builder(rng, dtype)
    h, w, c = int(rng.integers(3, 20)), int(rng.integers(2, 9)), int(rng.integers(1, 4))
    x = b.act((1, h, w, c))
    cur, made = x, [x]
    for _ in range(int(rng.integers(1, 6))):
        kind = KINDS[int(rng.integers(0, len(KINDS)))]
        if kind in ("conv", "depthwise"):
            y = _conv(b, cur, kind == "depthwise")
        elif kind in ("max_pool", "average_pool"):
            y = _pool(b, cur, kind.upper() + "_2D")
        elif kind in ("pad", "padv2", "mirror_pad"):
            y = _pad(b, cur, kind)
        elif kind == "residual":
            y = _residual(b, cur, made)
        else:
            y = _activation(b, cur)
        if y is None or min(b.shapes[y]) < 1:
            break
        cur = y
        made.append(y)
    n = int(np.prod(b.shapes[cur]))
    shape = b.const("shape", (2,), INT32, struct.pack("<2i", 1, n), [], [])
    flat = b.act((1, n), b.quant[cur])
    b.op("RESHAPE", [cur, shape], flat, None, {})
    names = ", ".join(b.names)
    kind = {INT8: "int8", INT16: "int16", FLOAT32: "float32"}[dtype]
    return assemble(b.g, [x], [flat]), f"seed {seed}: {kind} [1, {h}, {w}, {c}]: {names}"


def _random_values(rng: np.random.Generator, dtype: int, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == FLOAT32:
        return (rng.standard_normal(shape) * 3).astype(np.float32)
    info = np.iinfo(DTYPES[dtype])
    return rng.integers(info.min, info.max + 1, shape).astype(DTYPES[dtype])


def with_output(data: bytes, t: int) -> bytes:
    """The model with tensor t added to subgraph 0's outputs (T, to compare every byte)."""
    m = Model(data)
    sg = m.root.get(S.MODEL_SUBGRAPHS)[0]
    outs = list(m.subgraphs[0].outputs) + [t]
    set_child(sg, S.SUBGRAPH_OUTPUTS, struct.pack(f"<{len(outs)}i", *outs))
    return m.to_bytes()


def run_tflm(data: bytes, x: np.ndarray) -> list[bytes]:
    interp = oracle().Interpreter.from_bytes(data, arena_size=ARENA)
    interp.set_input(x, 0)
    interp.invoke()
    n = len(Model(data).subgraphs[0].outputs)
    return [np.array(interp.get_output(i)).tobytes() for i in range(n)]


def run_ours(data: bytes, x: np.ndarray) -> list[bytes]:
    from host.runtime.binding import Interpreter

    interp = Interpreter(data)
    interp.set_input(0, x)
    interp.invoke()
    return [interp.get_output(i).tobytes() for i in range(interp.num_outputs())]


def band_bounds(rng: np.random.Generator, height: int, row_bytes: int) -> list[list[int]]:
    """Every band count's aligned bounds (as host.plan weighs them) and a few random bounds."""
    out = []
    for n in range(2, min(height, 12) + 1):
        aligned = band_choice.aligned_bounds(height, row_bytes, n)
        if aligned:
            out.append(aligned)
        cut = sorted(int(v) for v in rng.choice(np.arange(1, height), n - 1, replace=False))
        out.append([0, *cut, height])
    return out


def check_model(data: bytes, seed: int, runtime: bool = True) -> Stats:
    """Every cut and band count of one model, compared byte for byte."""
    st = Stats(models=1)
    rng = np.random.default_rng(seed)
    model = Model(data)
    x = _random_values(rng, model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]].type,
                       model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]].shape)  # fmt: skip
    try:
        cuts = band_choice.cuts(model)
    except rw.BandError:
        st.refused += 1
        return st
    for cut in cuts:
        stage = rw.find_stage(model, cut)
        t = stage.t_tensor
        original = with_output(data, stage.t)
        try:
            want = run_tflm(original, x)
        except Exception:  # TFLM's Prepare refuses the generated original: nothing to compare
            st.skipped += 1
            return st
        ours_want = None
        if runtime:
            try:
                ours_want = run_ours(original, x)
            except Exception:
                ours_want = None
        for bounds in band_bounds(rng, t.shape[1], t.nbytes() // t.shape[1]):
            st.findings += _compare(model, cut, bounds, x, want, ours_want, st)
    return st


def _compare(model: Model, cut: int, bounds: list[int], x: np.ndarray, want: list[bytes],
             ours_want: list[bytes] | None, st: Stats) -> list[str]:  # fmt: skip
    stage = rw.find_stage(model, cut)
    merged = rw.merge_empty(stage, bounds)
    where = f"cut {cut}, bounds {bounds}"
    try:
        banded, _ = rw.rewrite(model, cut, bounds)
    except rw.BandError as e:
        if merged == bounds:
            return [f"{where}: refused although no band is empty: {e}"]
        try:
            banded, _ = rw.rewrite(model, cut, merged)
        except rw.BandError as e2:
            return [f"{where}: merged {merged} refused: {e2}"]
    problems = graph_check.problems(banded)
    if problems:
        return [f"{where}: graph check: {problems[0]}"]
    data = with_output(banded.to_bytes(), stage.t)
    try:
        got = run_tflm(data, x)
    except Exception as e:
        return [f"{where}: TFLM does not run the rewrite: {e}"]
    st.rewrites += 1
    if got != want:
        return [f"{where}: outputs or T differ on TFLM"]
    if ours_want is None:
        return []
    try:
        ours = run_ours(data, x)
    except Exception as e:
        return [f"{where}: this runtime runs the original, not the rewrite: {e}"]
    st.runtime += 1
    return [] if ours == ours_want else [f"{where}: outputs or T differ on this runtime"]


BUDGETS = (0.0, 0.1, 0.5, 10.0)  # --bands-mac-budget values the planned check draws from


def check_planned(data: bytes, seed: int, st: Stats) -> list[str]:
    """host.plan --bands's own path: its choices within a random budget, the best one planned
    (whether or not it beats the unbanded head), embedded, checked (plan and graph), run on
    TFLM with the plan: outputs as the original's."""
    from host.planning import checker
    from host.planning.model import metadata

    rng = np.random.default_rng(seed)
    budget = BUDGETS[int(rng.integers(0, len(BUDGETS)))]
    overlap = bool(rng.integers(0, 2))
    model = Model(data)
    try:
        options = band_choice.choices(model, REFERENCE, overlap, time_limit=0.1, budget=budget)
    except rw.BandError:
        return []
    errors = [c.error for c in options if c.error]
    if errors:
        return [f"budget {budget}: a choice host.plan weighs fails: {errors[0]}"]
    chosen = band_choice.best(options, budget)
    if chosen is None:
        return []
    banded, r = band_choice.plan_banded(model, chosen.cut, chosen.bounds, REFERENCE, overlap, 0.1)
    metadata.embed(banded, r.tensor_offsets())
    problems = checker.check(banded, REFERENCE) + band_choice.graph_problems(banded)
    if problems:
        return [f"budget {budget}: the planned rewrite fails --check: {problems[0]}"]
    x = _random_values(rng, model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]].type,
                       model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]].shape)  # fmt: skip
    try:
        got = run_tflm(banded.to_bytes(), x)
    except Exception as e:
        return [f"budget {budget}: TFLM does not run the planned rewrite: {e}"]
    st.planned += 1
    same = got == run_tflm(data, x)
    return [] if same else [f"budget {budget}: the planned rewrite's outputs differ on TFLM"]


def fuzz(seeds: range, runtime: bool = True, planned_every: int = 0) -> Stats:
    """Every seed's stage checked at every cut and band count; with planned_every N, every
    Nth one also through host.plan's choice, plan and check (check_planned)."""
    total = Stats()
    for seed in seeds:
        data, what = random_stage(seed)
        st = check_model(data, seed, runtime)
        if planned_every and seed % planned_every == 0 and not st.skipped:
            st.findings += check_planned(data, seed, st)
        st.findings = [f"{what}: {f}" for f in st.findings]
        total.add(st)
    return total
