"""Look for models the pip TFLM refuses that this runtime would run (and compute something else).

Every one-operator case of the tests (the conformance cases and the kernel tests' single
operators) is changed one way at a time: a tensor's zero point or scale moved, a tensor
re-typed, every fed tensor one rank up or down, an option set to another value. Each changed
model is loaded and invoked on the pip TFLM (in child processes, restarted after a failed check
stops one) and opened on this runtime (host build). The changes TFLM refuses and the runtime
opens are printed: each is a condition missing from host/planning/tflm/prepare.py and a kernel
to fix. A refusal that depends on the data (RSQRT of the zero input fed here, an index out of
bounds) is TFLM's Eval refusing values, not a condition: read the messages. Run by hand
(minutes); docs/runtime.md records the counts of the last run.

    python tools/sweep_prepare.py                 # every kind of change
    python tools/sweep_prepare.py --kinds quant   # quant, type, rank, options
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tools")]

from support.case_tables import SINGLE_OPS_FILE, conformance_cases, load_test_module  # noqa: E402
from support.conformance import F32, I8, I16, I32, Case, T, single_op_model  # noqa: E402
from support.tflm_verdicts import HUNG, tflm_verdicts  # noqa: E402

from host.runtime.binding import Interpreter, MicroarenaError  # noqa: E402

RANGE = {I8: (-128, 127), I16: (-32768, 32767)}
KINDS = ("quant", "type", "rank", "options")
TIMEOUT = 120  # seconds for one child process; the model it was running then is "hung"
Change = tuple[str, Callable[[Case], None]]


def _tensor(case: Case, where: tuple[str, int]) -> T:
    side, i = where
    t = (case.outputs if side == "out" else case.inputs)[i]
    assert t is not None
    return t


def _quant(case: Case) -> Iterator[Change]:
    places = [("out", 0)] + [("in", i) for i, t in enumerate(case.inputs) if t is not None]
    for where in places:
        t = _tensor(case, where)
        if not t.scale:
            continue
        lo, hi = RANGE.get(t.dtype, (-(2**31), 2**31 - 1))
        for d in (1, 3):

            def zp(c: Case, where: tuple[str, int] = where, d: int = d, ends=(lo, hi)) -> None:
                u = _tensor(c, where)
                u.zp = [z + d if ends[0] <= z + d <= ends[1] else z - d for z in u.zp]

            yield f"{where[0]}{where[1]} zero point +{d}", zp
        for k in (1.5, 2**-21):

            def scale(c: Case, where: tuple[str, int] = where, k: float = k) -> None:
                u = _tensor(c, where)
                u.scale = [s * k for s in u.scale]

            yield f"{where[0]}{where[1]} scale x{k:g}", scale


def _type(case: Case) -> Iterator[Change]:
    places = [("out", 0)] + [("in", i) for i, t in enumerate(case.inputs) if t is not None]
    for where in places:
        for dtype in (I8, I16, I32, F32):
            if dtype == _tensor(case, where).dtype:
                continue

            def retype(c: Case, where: tuple[str, int] = where, dtype: int = dtype) -> None:
                u = _tensor(c, where)
                u.dtype = dtype
                u.scale, u.zp = ([0.05], [0]) if dtype in RANGE else ([], [])
                if u.data is not None:
                    u.data = u.data.astype("int32" if dtype == I32 else "float32")

            yield f"{where[0]}{where[1]} type {dtype}", retype


def _rank(case: Case) -> Iterator[Change]:
    def fed(c: Case) -> list[T]:
        return [t for t in [*c.inputs, *c.outputs] if t is not None and t.data is None]

    def up(c: Case) -> None:
        for t in fed(c):
            t.shape = (1, *t.shape)

    def down(c: Case) -> None:
        for t in fed(c):
            if not t.shape or t.shape[0] != 1:
                raise ValueError("no leading 1")
            t.shape = t.shape[1:]

    yield "rank +1", up
    yield "rank -1", down


def _options(case: Case) -> Iterator[Change]:
    for slot, (fmt, value) in case.slots.items():
        values = (0, 1, 2, 3, 4, 5, 7, -1) if fmt in "bBhi" else (0.0, -1.0, 2.5)
        for v in values:
            if v == value or (fmt == "B" and v < 0):
                continue

            def set_slot(c: Case, slot: int = slot, fmt: str = fmt, v: float = v) -> None:
                c.slots[slot] = (fmt, v)

            yield f"option slot {slot} = {v}", set_slot


CHANGES = {"quant": _quant, "type": _type, "rank": _rank, "options": _options}


def cases() -> list[Case]:
    """The conformance cases TFLM runs, and the kernel tests' single operators."""
    out = [
        c
        for _, c in conformance_cases()
        if c.refuse is None and c.oracle == "tflm" and c.custom_options is None and c.edit is None
    ]
    single_ops = load_test_module(SINGLE_OPS_FILE).SINGLE_OPS
    for name, (op, ins, outs, opt, slots, *_) in single_ops.items():
        out.append(Case(name, op, list(ins), list(outs), opt, dict(slots)))
    return out


def changed_models(kinds: list[str]) -> list[tuple[str, bytes]]:
    out = []
    for case in cases():
        for kind in kinds:
            for label, change in CHANGES[kind](case):
                c = copy.deepcopy(case)
                try:
                    change(c)
                    out.append((f"{case.op} | {case.name} | {label}", single_op_model(c)))
                except Exception:  # noqa: BLE001, S112 - a change the writer cannot take
                    continue
    return out


def runtime_opens(data: bytes) -> bool:
    try:
        Interpreter(data)
    except MicroarenaError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"some of {', '.join(KINDS)}")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if any(k not in CHANGES for k in kinds):
        ap.error(f"--kinds takes {', '.join(KINDS)}")
    models = changed_models(kinds)
    verdicts = tflm_verdicts([d for _, d in models], TIMEOUT)
    counts: Counter[str] = Counter()
    for (label, data), tflm in zip(models, verdicts, strict=True):
        opens = runtime_opens(data)
        if tflm == HUNG:
            print(f"HUNG {label} (the runtime {'opens' if opens else 'refuses'} it)")
        tflm_side = "hangs" if tflm == HUNG else "refuses" if tflm else "runs"
        counts[f"TFLM {tflm_side}, the runtime {'opens' if opens else 'refuses'}"] += 1
        if tflm and tflm != HUNG and opens:
            print(f"GAP {label}: TFLM said {tflm[:300]!r}")
    print(f"{len(models)} changed models ({', '.join(kinds)}):")
    for key, n in sorted(counts.items()):
        print(f"  {key}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
