"""Fuzz the band rewrite (host.plan --bands) against the pip TFLM and this runtime (issue 26).

Random stages (tests/support/band_fuzz.py: convolutions, pools with every padding, pads,
residuals, activations; int8, int16, float32), every cut and band count, original against
rewrite, every byte of the outputs and of the cut tensor; every Nth seed also through
host.plan's own choice within a random MAC budget, planned, checked and run. The test suite
runs a few seeds (tests/planning/test_band_fuzz.py); run it long by hand and write the counts
in docs/bands.md:

    .venv/bin/python tools/fuzz_bands.py --seeds 0:2000 --planned-every 10

Exit status 1 if anything was found (each finding printed with its seed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def _seeds(text: str) -> range:
    a, _, b = text.partition(":")
    return range(int(a), int(b)) if b else range(int(a), int(a) + 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=_seeds, default=range(0, 200), help="A:B (default 0:200)")
    every = "also plan every Nth seed through host.plan's choice (0: none)"
    ap.add_argument("--planned-every", type=int, default=10, metavar="N", help=every)
    ap.add_argument("--no-runtime", action="store_true", help="compare on TFLM only")
    args = ap.parse_args(argv)
    from support.band_fuzz import Stats, fuzz

    total = Stats()
    start = time.monotonic()
    for seed in args.seeds:
        st = fuzz(range(seed, seed + 1), not args.no_runtime, args.planned_every)
        for f in st.findings:
            print(f, flush=True)
        total.add(st)
    print(f"seeds {args.seeds.start}:{args.seeds.stop}: {total.text()} "
          f"in {time.monotonic() - start:.0f} s")  # fmt: skip
    return 1 if total.findings else 0


if __name__ == "__main__":
    sys.exit(main())
