"""How long host.plan takes per model, plain and with --bands, at the default time limits.

Run by hand: .venv/bin/python benchmarks/plan_times.py [--only NAME] [--no-bands]
Every shared model, every zoo model (../shared/zoo, where present) and every converter-made
model (tests/data/keras, tests/data/mobilenet_v2), each in a child `python -m host.plan MODEL
--json -q` (start-up included): its exit status, CPU and wall seconds, the `seconds` its
--json reports; with --bands the split chosen, or why none, and the choices the time limit
left unplanned. Prints a Markdown table (docs/bands.md quotes one).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from host.paths import SHARED_MODELS, SHARED_ZOO  # noqa: E402

CONVERTER_MODELS = [ROOT / "tests" / "data" / "keras", ROOT / "tests" / "data" / "mobilenet_v2"]


def models() -> list[Path]:
    folders = [SHARED_MODELS, SHARED_ZOO, *CONVERTER_MODELS]
    return [p for f in folders if f.is_dir() for p in sorted(f.glob("*.tflite"))]


def run(path: Path, *extra: str) -> tuple[int, float, float, dict | None, str]:
    """Exit status, CPU and wall seconds, the --json document and the last error line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "host.plan", str(path), "--json", "-q", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    doc = json.loads(r.stdout) if r.returncode == 0 else None
    error = (r.stderr.strip().splitlines() or [""])[-1]
    return r.returncode, cpu, wall, doc, error


def bands_cell(doc: dict | None, error: str) -> str:
    if doc is None:
        return error[:80]
    b = doc["bands"]
    if b["reason"]:
        return f"none possible: {b['reason'][:70]}"
    c = b["chosen"]
    what = f"cut {c['cut_operator']}, {c['bands']} bands" if c else "no split lowers the head"
    left = f"; {b['unplanned']} left by the limit" if b["unplanned"] else ""
    return f"{what} ({len(b['choices'])} planned, {b['pruned']} pruned{left})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="models whose name contains this")
    ap.add_argument("--no-bands", action="store_true", help="plain planning only")
    args = ap.parse_args()
    print(
        "| model | plain: exit, CPU s, wall s, --json s | --bands: exit, CPU s, wall s, "
        "--json s | --bands chose |"
    )
    print("|---|---|---|---|")
    for path in models():
        if args.only and args.only not in path.name:
            continue
        code, cpu, wall, doc, error = run(path)
        plain = f"{code}, {cpu:.2f}, {wall:.2f}, {doc['seconds'] if doc else '-'}"
        banded, chose = "-", "-"
        if not args.no_bands:
            code, cpu, wall, doc, error = run(path, "--bands")
            banded = f"{code}, {cpu:.2f}, {wall:.2f}, {doc['seconds'] if doc else '-'}"
            chose = bands_cell(doc, error)
        print(f"| {path.stem} | {plain} | {banded} | {chose} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
