"""The main job on the bundled demo model, end to end:

1. build microarena's own int8 demo model (host.tflite.modelgen) if it is not there yet;
2. plan its arena for this runtime's kernels and embed the plan (host.plan --embed --kernels
   microarena) into a copy: the board runs this runtime, so the head it reports is the planned
   head (stock TFLM with CMSIS-NN kernels needs more: `python -m host.plan MODEL --ram BOARD`
   lists both);
3. build the firmware with that model for an emulated board (PlatformIO, offline);
4. run it under QEMU and record the arena report over the UART (host.device.record),
   checking it against the planner's prediction.

python -m host.demo [--board mps2-an386] [--model FILE.tflite]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from host import entry
from host.argtypes import SECONDS, file_path
from host.device import record
from host.paths import BUILD, REPO
from host.planning import cli as plan_cli
from host.tflite import modelgen

DEMO_MODEL = BUILD / "demo_int8.tflite"


def _shown(path: Path) -> Path:
    """A path in the checkout as the README writes it; elsewhere (the cache) in full."""
    return path.relative_to(REPO) if path.is_relative_to(REPO) else path


def _step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = entry.parser(
        "demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--board", default="mps2-an386", help="emulated board (default mps2-an386)")
    ap.add_argument("--model", type=file_path, help="a .tflite to use instead of the demo model")
    ap.add_argument(
        "--timeout", type=SECONDS, default=300.0, help="seconds for build and run (default 300)"
    )
    args = ap.parse_args(argv)
    os.environ.setdefault("PLATFORMIO_DISABLE_UPGRADE_CHECK", "true")

    source = Path(args.model) if args.model else DEMO_MODEL
    BUILD.mkdir(parents=True, exist_ok=True)
    if not args.model and not source.exists():
        _step(f"building the demo model {_shown(source)}")
        modelgen.main([str(source)])
    planned = BUILD / f"{source.stem}.planned.tflite"

    # Planned for the kernels the board runs (this runtime's), so the two heads printed agree.
    _step(
        f"planning {source.name} for this runtime's kernels "
        f"(host.plan --embed --kernels microarena -o {_shown(planned)})"
    )
    status = plan_cli.main(
        [str(source), "--embed", "--kernels", "microarena", "-o", str(planned), "-q"]
    )
    if status:
        return status

    _step(f"building for {args.board}, running it under QEMU, recording its UART report")
    return record.main(
        [
            "--board",
            args.board,
            "--model",
            str(planned),
            "--plan",
            str(planned),
            "--timeout",
            str(args.timeout),
        ]
    )
