"""Sweep requantization against the real TFLM for many seeded scale configurations.

Every operator of tests/support/requant_sweep.py, every int8 (256) and int16 (65,536) input
value, configurations [--first, --first + --configs); prints each mismatch and a count.

    .venv/bin/python tools/sweep_requant.py --configs 50
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.conformance import check, run_cases  # noqa: E402
from support.requant_sweep import cases  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--first", type=int, default=0, help="first configuration (seed)")
    ap.add_argument("--configs", type=int, default=20, help="configurations per operator and type")
    args = ap.parse_args(argv)
    start = time.monotonic()
    todo = cases(range(args.first, args.first + args.configs))
    with tempfile.TemporaryDirectory() as tmp:
        results = run_cases(todo, Path(tmp))
    failed = 0
    for case in todo:
        try:
            check(case, results[case.name])
        except AssertionError as e:
            failed += 1
            print(f"MISMATCH {e}")
    values = sum(c.inputs[0].shape[0] for c in todo)  # type: ignore[union-attr]
    print(
        f"{len(todo)} cases, {values} input values, {failed} mismatches "
        f"in {time.monotonic() - start:.0f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
