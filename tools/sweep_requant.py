"""Sweep requantization against the real TFLM for many seeded scale configurations.

Every operator of tests/support/requant_sweep.py (the element-wise ones and the weighted or
windowed ones: convolutions, FULLY_CONNECTED, pools, BATCH_MATMUL, SVDF, SOFTMAX, ...), every
int8 (256) and int16 (65,536) input value, configurations [--first, --first + --configs);
prints each mismatch and a count. --only picks operators by a part of their names.

    .venv/bin/python tools/sweep_requant.py --configs 50 [--only CONV]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.conformance import fed, run_cases  # noqa: E402
from support.requant_sweep import cases, check_bits  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--first", type=int, default=0, help="first configuration (seed)")
    ap.add_argument("--configs", type=int, default=20, help="configurations per operator and type")
    ap.add_argument("--only", default="", help="only the cases whose names hold this")
    args = ap.parse_args(argv)
    start = time.monotonic()
    todo = [c for c in cases(range(args.first, args.first + args.configs)) if args.only in c.name]
    with tempfile.TemporaryDirectory() as tmp:
        results = run_cases(todo, Path(tmp))
    failed = 0
    for case in todo:
        try:
            check_bits(case, results[case.name])
        except AssertionError as e:
            failed += 1
            print(f"MISMATCH {e}")
    # The fed first input's values, over every invocation (SVDF's carry a state).
    values = sum(
        int(np.prod(next(t for t in c.inputs if fed(t)).shape)) * c.invokes  # type: ignore[union-attr]
        for c in todo
    )
    print(
        f"{len(todo)} cases, {values} input values, {failed} mismatches "
        f"in {time.monotonic() - start:.0f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
