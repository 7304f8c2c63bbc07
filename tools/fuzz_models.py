"""Fuzz the runtime and the planner against the pip TFLM for a while (issue 18).

Three fuzzers from one seed (tests/support/model_fuzz.py): random IF call graphs (fan-out,
sharing, depth) run on both; random offline plans checked by `--check` and run; mutated
call-graph models that both must run alike, or the runtime refuse. The test suite runs a few
rounds (tests/runtime/test_model_fuzz.py); run it long by hand:

    .venv/bin/python tools/fuzz_models.py --seconds 600 --seed 1 --out /tmp/fuzz

Each finding is written to OUT as <fuzzer>-<n>.tflite with a line saying what differed; keep
it as a regression case under tests/data/fuzz/ once fixed. Exit status 1 if anything was found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60, help="how long to run (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="the random seed (default 0)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-findings"),
                    help="folder for the models found (default ./fuzz-findings)")  # fmt: skip
    args = ap.parse_args(argv)
    from support.model_fuzz import fuzz

    from host.fileio import write_atomic

    found = rounds = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        for item in fuzz(args.seed, Path(scratch), seconds=args.seconds):
            if item is None:
                rounds += 1
                print(f"\r{rounds} rounds, {found} findings, {time.monotonic() - start:.0f} s",
                      end="", file=sys.stderr, flush=True)  # fmt: skip
                continue
            found += 1
            args.out.mkdir(parents=True, exist_ok=True)
            path = args.out / f"{item.fuzzer.replace(' ', '_')}-{found}.tflite"
            write_atomic(path, item.model)
            print(f"\n{path}: {item.fuzzer}: {item.message}")
    print(f"\nseed {args.seed}: {rounds} rounds in {time.monotonic() - start:.0f} s, "
          f"{found} findings", file=sys.stderr)  # fmt: skip
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
