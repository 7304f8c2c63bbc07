"""Run the command-line fuzzer (tests/support/cli_fuzz.py) for a while, by hand.

    python tools/fuzz_cli.py --seconds 600 [--seed 0] [--save build/fuzz_cli]

Prints each finding (seed, command, damage, what went wrong) as it is found, and a summary;
with --save, writes each finding's damaged model and its command beside it, ready to become a
regression case in tests/data/fuzz_cli/. Exit status 1 if anything was found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from support.cli_fuzz import check_case, make_case  # noqa: E402

from host.argtypes import SECONDS, SEED  # noqa: E402
from host.fileio import write_atomic, write_text_atomic  # noqa: E402
from host.paths import SHARED_MODELS  # noqa: E402
from host.tflite.modelgen import build_demo_model  # noqa: E402

BASE_MODELS = ("tiny_ic_resnet8_int8", "tflm_hello_world_int8", "tiny_kws_dscnn_int8")


def base_models() -> list[bytes]:
    """The demo model, and a few shared models where ../shared/models is there."""
    paths = [SHARED_MODELS / f"{name}.tflite" for name in BASE_MODELS]
    return [build_demo_model(), *(p.read_bytes() for p in paths if p.is_file())]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seconds", type=SECONDS, default=60.0, help="how long to run (default 60)")
    p.add_argument("--seed", type=SEED, default=0, help="first case's seed (default 0)")
    p.add_argument("--save", type=Path, help="folder for the findings' models")
    args = p.parse_args(argv)
    models = base_models()
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    deadline, seed, found = time.monotonic() + args.seconds, args.seed, 0
    commands: Counter[str] = Counter()
    while time.monotonic() < deadline:
        case = make_case(seed, models)
        commands[case.command] += 1
        with tempfile.TemporaryDirectory() as folder:
            why = check_case(case, Path(folder))
        if why:
            found += 1
            print(f"seed {seed}: {case.command} on a model with {case.damage}: {why}", flush=True)
            if args.save:
                write_atomic(args.save / f"seed{seed}.tflite", case.data)
                write_text_atomic(args.save / f"seed{seed}.txt", f"{case.command}\n{why}\n")
        seed += 1
    runs = ", ".join(f"{n} {c}" for c, n in sorted(commands.items()))
    print(f"{seed - args.seed} cases ({runs}): {found} finding(s)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
