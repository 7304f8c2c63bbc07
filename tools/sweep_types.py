"""Sweep the type matrix: which (operator, types) pairs the pip TFLM runs, and whether this
runtime runs each of them with the same bytes.

Templates are the tests' one-operator cases (every tests/runtime/test_conformance_*.py case
and test_kernels_single_ops.py's): valid shapes, options and constants for each operator.
Each template is re-typed: the tensors of its activation type (its first fed input's) take
each of int8, uint8, int16, int32, int64, float32 and bool in turn (quantization kept,
made up or dropped as the type needs, constants cast); QUANTIZE, DEQUANTIZE and CAST re-type
their input and output independently. Every variant runs on the real TFLM; where TFLM
prepares and runs it, it runs on the runtime's host build with the same inputs and must give
the same outputs (integers and bools bit for bit, floats within 1e-5). A pair is named by the
operator and its tensors' types, `INT8,INT32->INT8` (inputs -> outputs).

    python tools/sweep_types.py                 # print the matrix's verdicts
    python tools/sweep_types.py --json          # as JSON
    python tools/sweep_types.py --write         # store them in docs (tests/data/type_sweep.json)

docs/operators.md reports the stored matrix (tools/gen_operators_doc.py);
tests/runtime/test_type_sweep.py re-runs the sweep and compares it with the stored one.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from support import conformance as C  # noqa: E402
from support.case_tables import SINGLE_OPS_FILE, conformance_cases, load_test_module  # noqa: E402

from host.fileio import write_text_atomic  # noqa: E402
from host.tflite.schema import TYPE_NAMES  # noqa: E402

STORED = REPO / "tests" / "data" / "type_sweep.json"
TYPES = [C.I8, C.U8, C.I16, C.I32, C.I64, C.F32, C.BOOL]
QUANTIZED = (C.I8, C.U8, C.I16)
PAIRED = ("QUANTIZE", "DEQUANTIZE", "CAST")  # input and output types vary independently
SKIP = ("TFLite_Detection_PostProcess",)  # float-only by its nature; its own suite checks it
RUNS = "runs"
# Where TFLM's result is not to be matched: pair -> why (the doc lists them apart from gaps).
# Variants whose TFLM result is not to be matched: (operator, which) -> why. The sweep leaves
# them out (tflm_wrong); the doc lists them.
TFLM_WRONG = {
    ("ADD", "INT32,INT32->INT32 with a fused activation"): "TFLM's int32 ADD clamps to an "
    "activation range it never computes (float bits read as integers)",
    ("GREATER", "INT16,INT16->BOOL"): "TFLM's Prepare computes the comparison's rescaling "
    "for int8 only, so its int16 GREATER compares with zero multipliers (always false); the "
    "runtime refuses it",
}


def tflm_wrong(case: C.Case) -> bool:
    """Whether TFLM_WRONG leaves the variant out."""
    sig = signature(case)
    fused = case.slots.get(0, ("b", 0))[1] != 0  # AddOptions' fused_activation_function
    add = case.op == "ADD" and sig == "INT32,INT32->INT32" and fused
    return add or (case.op, sig) in TFLM_WRONG


# Operators whose outputs TFLM leaves partly undefined: the variant must run, not match
# (their conformance tests compare the defined part).
PARTLY_UNDEFINED = {
    "SPACE_TO_BATCH_ND": "padded cells hold whatever TFLM's persistent memory held",
}
# Operators whose inputs share one type (TFLM reads the others' bytes as the first's).
SAME_TYPED = ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE",
              "FLOOR_DIV", "FLOOR_MOD", "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
              "LESS_EQUAL")  # fmt: skip
COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
# TFLM does not check these operators' types and reads other types' bytes as bool.
BOOL_ONLY = ("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT")
# Weight and bias slots take the type their kernels define for the activation type
# (float32, int8, int16), not the activation's: TFLM reads what it is given as that type.
_FILTER, _BIAS = (C.F32, C.I8, C.I8), (C.F32, C.I32, C.I64)
WEIGHTS: dict[str, dict[int, tuple[int, int, int]]] = {
    "CONV_2D": {1: _FILTER, 2: _BIAS},
    "DEPTHWISE_CONV_2D": {1: _FILTER, 2: _BIAS},
    "FULLY_CONNECTED": {1: _FILTER, 2: _BIAS},
    "TRANSPOSE_CONV": {1: _FILTER, 3: _BIAS},
}
WHERE = re.compile(r" ?\(?(code \d+, )?subgraph \d+, operator \d+\)?")  # model position


def _name(dtype: int) -> str:
    return TYPE_NAMES[dtype]


def signature(case: C.Case) -> str:
    ins = ",".join(_name(t.dtype) for t in case.inputs if t is not None)
    return f"{ins}->{','.join(_name(t.dtype) for t in case.outputs)}"


def _zero_point(old: C.T, dtype: int) -> int:
    """A zero point for dtype near the old one's (uint8 is int8 shifted by 128)."""
    z = old.zp[0] if old.zp else 0
    if old.dtype == C.I8 and dtype == C.U8:
        z += 128
    elif old.dtype == C.U8 and dtype == C.I8:
        z -= 128
    elif dtype == C.I16 or old.dtype not in QUANTIZED:
        z = 128 if dtype == C.U8 else 0
    info = np.iinfo(C.NP_TYPES[dtype])
    return int(min(max(z, info.min), info.max))


def retype(t: C.T, dtype: int) -> C.T:
    """The tensor as dtype: quantization kept (one scale), made up or dropped; data cast."""
    if t.dtype == dtype:
        return t
    scale = [t.scale[0] if t.scale else 0.05] if dtype in QUANTIZED else []
    zp = [_zero_point(t, dtype)] if scale else []
    data = None
    if t.data is not None:
        values = np.asarray(t.data, np.float64)
        if dtype == C.BOOL:
            data = values != 0
        elif dtype == C.F32:
            data = values.astype(np.float32)
        else:
            info = np.iinfo(C.NP_TYPES[dtype])
            data = np.clip(np.round(values), info.min, info.max)
    low = t.low if dtype == C.F32 and t.dtype == C.F32 else None
    high = t.high if dtype == C.F32 and t.dtype == C.F32 else None
    return C.T(t.shape, dtype, scale, zp, data, 0, low, high)


def _activation_type(case: C.Case) -> int:
    fed = [t for t in case.inputs if t is not None and t.data is None]
    return (fed or [t for t in case.inputs if t is not None] or case.outputs)[0].dtype


def _fixed(case: C.Case, slot: int, t: C.T) -> bool:
    """Whether input `slot` keeps its type: indices, axes and shapes (int32/int64 constants),
    and the results of comparisons (bool)."""
    indices = t.data is not None and t.dtype in (C.I32, C.I64)
    return indices or (slot < 0 and case.op in COMPARISONS)


def variants(case: C.Case) -> Iterator[C.Case]:
    """The case re-typed each way (itself included, as its own types)."""
    base = replace(case, refuse=None, make_inputs=None, seed=0)
    if case.op in PAIRED:
        for a in TYPES:
            for b in TYPES:
                ins, outs = [retype(case.inputs[0], a)], [retype(case.outputs[0], b)]
                if case.op == "QUANTIZE" and a == C.I32:  # quantized int32 (accumulators)
                    ins = [replace(ins[0], scale=[0.001], zp=[0])]
                same = a == case.inputs[0].dtype and b == case.outputs[0].dtype
                yield replace(base, inputs=ins, outputs=outs,
                              make_inputs=case.make_inputs if same else None)  # fmt: skip
        return
    act = _activation_type(case)
    for dtype in TYPES:
        if case.op in BOOL_ONLY and dtype != C.BOOL:
            continue

        def re(t: C.T | None, slot: int, dtype: int = dtype) -> C.T | None:
            if t is None:
                return None
            weight = WEIGHTS.get(case.op, {}).get(slot)
            if weight is not None and dtype in (C.F32, C.I8, C.I16):
                return retype(t, weight[(C.F32, C.I8, C.I16).index(dtype)])
            if t.dtype != act or _fixed(case, slot, t):
                return t
            return retype(t, dtype)

        v = replace(
            base,
            inputs=[re(t, k) for k, t in enumerate(case.inputs)],
            outputs=[re(t, -1) for t in case.outputs],  # type: ignore[misc]
            make_inputs=case.make_inputs if dtype == act else None,
        )
        if case.op not in SAME_TYPED or len({t.dtype for t in v.inputs if t is not None}) == 1:
            yield v


def templates() -> list[C.Case]:
    """The tests' one-operator cases TFLM's oracle checks (not TFLite's, not custom ones)."""
    cases = [c for _, c in conformance_cases() if c.oracle == "tflm"]
    kernels = load_test_module(SINGLE_OPS_FILE)
    for name, (op, ins, outs, opt, slots) in kernels.SINGLE_OPS.items():
        if any(t is not None and t.variable for t in ins):
            continue

        def conv(t: Any) -> C.T | None:
            return None if t is None else C.T(t.shape, t.dtype, t.scale, t.zp, t.data, t.qdim)

        cases.append(C.Case(name, op, [conv(t) for t in ins], [conv(t) for t in outs], opt,
                            dict(slots)))  # fmt: skip
    # Cases that expect a refusal are about options or values TFLM mishandles, not types.
    return [
        c
        for c in cases
        if c.custom_options is None
        and c.op not in SKIP
        and c.invokes == 1
        and c.refuse is None
        and c.edit is None
    ]


def _ours(model: bytes, inputs: list[np.ndarray], n_out: int) -> tuple[list | None, str]:
    from host.runtime.binding import Interpreter, MicroarenaError

    try:
        it = Interpreter(model)
        for i, x in enumerate(inputs):
            it.set_input(i, x)
        it.invoke()
        return [it.get_output(i) for i in range(n_out)], ""
    except MicroarenaError as e:
        return None, WHERE.sub("", e.message)


def _all_variants() -> list[tuple[str, C.Case]]:
    """(template name, variant) for every variant of every template, in a fixed order."""
    return [(case.name, v) for case in templates() for v in variants(case)]


def verdict(case: C.Case, mark: Any = None) -> str | None:
    """None where TFLM does not run the case; else 'runs' or why the runtime differs.
    mark(side) is called before each side runs, so a crash can be attributed."""
    try:
        model = C.single_op_model(case)
    except (ValueError, OverflowError, struct.error):
        return None
    steps = C.case_inputs(case)
    if mark:
        mark("T")
    tflm, _ = C.run_tflm(model, steps, len(case.outputs))
    if tflm is None:
        return None
    if mark:
        mark("O")
    ours, message = _ours(model, steps[0], len(case.outputs))
    if ours is None:
        return f"refused: {message}"
    if case.op in PARTLY_UNDEFINED:
        return RUNS
    for i, (got, want) in enumerate(zip(ours, tflm, strict=True)):
        try:
            C.assert_same(got, want, f"output {i}")
        except AssertionError as e:
            return f"differs: {str(e).splitlines()[0]}"
    return RUNS


def _child(start: int) -> int:
    """From variant `start` on: prints `index side` before each side runs and `index =
    verdict` (JSON) after; a crash ends the process and the parent carries on after it."""
    import os

    from support.tflm_oracle import capture_output

    out = os.fdopen(os.dup(1), "w")  # TFLM's own prints go to the captured stdout
    for k, (_, v) in enumerate(_all_variants()):
        if k < start:
            continue

        def mark(side: str, k: int = k) -> None:
            out.write(f"{k} {side}\n")
            out.flush()

        said: list[str | None] = []
        capture_output(lambda v=v, said=said, mark=mark: said.append(verdict(v, mark)))
        out.write(f"{k} = {json.dumps(said[0])}\n")
        out.flush()
    return 0


def _run_children(total: int, progress: bool) -> dict[int, str | None]:
    """Every variant's verdict, in child processes restarted after a crash."""
    found: dict[int, str | None] = {}
    while len(found) < total:
        start = len(found)
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", str(start)], stdout=subprocess.PIPE, text=True
        )
        last = (start, "T")
        assert proc.stdout is not None
        for line in proc.stdout:
            index, kind, *rest = line.rstrip("\n").split(" ", 2)
            if kind == "=":
                found[int(index)] = json.loads(rest[0])
                if progress:
                    print(f"\r{len(found)}/{total}", end="", file=sys.stderr, flush=True)
            else:
                last = (int(index), kind)
        proc.wait()
        if len(found) < total:  # crashed: TFLM (it does not run that) or the runtime (a bug)
            index, side = last
            found[index] = None if side == "T" else "crash: the runtime aborted"
    if progress:
        print(file=sys.stderr)
    return found


def sweep(progress: bool = False) -> dict[str, dict[str, str]]:
    """operator -> types -> verdict, over every variant TFLM runs; the first failure of a
    pair is kept (with its template's name)."""
    cases = _all_variants()
    found = _run_children(len(cases), progress)
    result: dict[str, dict[str, str]] = {}
    for k, (template, v) in enumerate(cases):
        said = found[k]
        if said is None:
            continue
        pairs = result.setdefault(v.op, {})
        sig = signature(v)
        if tflm_wrong(v):
            continue
        if pairs.get(sig, RUNS) == RUNS:
            pairs[sig] = said if said == RUNS else f"{said} ({template})"
    return {op: dict(sorted(p.items())) for op, p in sorted(result.items())}


def stored() -> dict[str, dict[str, str]]:
    return json.loads(STORED.read_text()) if STORED.exists() else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    ap.add_argument("--write", action="store_true", help=f"store them in {STORED.name}")
    args = ap.parse_args(argv)
    result = sweep(progress=sys.stderr.isatty())
    text = json.dumps(result, indent=1) + "\n"
    if args.write:
        write_text_atomic(STORED, text)
    if args.json:
        print(text, end="")
    else:
        for op, pairs in result.items():
            for sig, v in pairs.items():
                print(f"{op:28} {sig:40} {v}")
    gaps = sum(v != RUNS for p in result.values() for v in p.values())
    total = sum(len(p) for p in result.values())
    print(f"{total - gaps} of {total} pairs TFLM runs run here the same", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(_child(int(sys.argv[2])))
    sys.exit(main())
