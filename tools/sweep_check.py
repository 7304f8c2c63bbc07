"""Check converter-made models (tools/sweep_keras_models.py) against the real TFLM.

Run by hand with the project's venv (pip tflite-micro); no test imports this file:

    .venv/bin/python tools/sweep_check.py /tmp/sweep [--only NAME ...]

For each <name>.tflite, in a child process (a crash is a result, not the end of the sweep):
  plan    `host.plan --embed --json --target tflm-x86_64`: head and tail equal what the real
          TFLM reports for the planned model, min_arena its smallest working arena, the
          planner's TFLM-greedy head TFLM's own head, and the planned model's outputs TFLM's.
  runtime the runtime opens the model and every operator output equals TFLM's over three
          seeded invocations (integers exactly, floats within 1e-5); arena total <= TFLM's.
  refusal where TFLM refuses a model, host.run and host.plan refuse it with a message, no
          traceback.
Prints one tab-separated row per model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
for p in (REPO, TESTS, TESTS / "runtime", TESTS / "planning" / "targets"):
    sys.path.insert(0, str(p))

COLUMNS = ("model", "tflm", "plan_head", "plan_out", "runtime", "arena_ours", "arena_tflm")


def _inputs_in_range():
    """Integer inputs in [0, 20): index inputs (Embedding's GATHER) must be valid indices."""
    import numpy as np
    import support.tflm_oracle as o

    original = o.random_inputs

    def rand(interp, count: int, seed: int = 0) -> list:
        arrays = original(interp, count, seed)
        for k, a in enumerate(arrays):
            if a.dtype == np.int32:
                arrays[k] = np.random.default_rng(seed).integers(0, 20, a.shape).astype(a.dtype)
        return arrays

    return rand


def _tflm_runs(data: bytes) -> str | None:
    """None if the real TFLM sets up and invokes the model, else why not."""
    from support.tflm_oracle import runs_in_arena

    return None if runs_in_arena(data, 16 << 20) else "TFLM refuses or fails"


def _plan(path: Path, row: dict) -> None:
    import numpy as np
    from support.tflm_oracle import run_tflm
    from test_tflm import _measure

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "planned.tflite"
        cmd = [sys.executable, "-m", "host.plan", str(path), "--embed", "-o", str(out)]
        proc = subprocess.run(
            [*cmd, "--json", "-q", "--target", "tflm-x86_64"],
            capture_output=True, text=True, cwd=REPO, timeout=300,
        )  # fmt: skip
        if proc.returncode != 0:
            row["plan_head"] = f"FAIL plan exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
            return
        r = json.loads(proc.stdout)
        planned = out.read_bytes()
    original = path.read_bytes()
    before, after = run_tflm(original), run_tflm(planned)
    real = _measure(planned)
    got = (r["head"], r["tail"], r["min_arena"], r["tflm_greedy_head"])
    want = (after.head, after.tail, real.min_arena, before.head)
    row["plan_head"] = "ok" if got == want else f"FAIL head,tail,min,greedy {got} vs {want}"
    flagged = not r["target"]["exact"]["min_arena"]
    if got[:2] + got[3:] == want[:2] + want[3:] and flagged and got[2] > want[2]:
        row["plan_head"] = f"ok (min_arena {got[2]} flagged an upper bound, TFLM {want[2]})"
    same = all(np.array_equal(a, b) for a, b in zip(before.outputs, after.outputs, strict=True))
    row["plan_out"] = "ok" if same else "FAIL outputs differ with the plan"


def _runtime(path: Path, row: dict) -> None:
    import support.tflm_oracle as o
    import test_converter_models as t

    from host.runtime.binding import Interpreter, MicroarenaError

    t.random_inputs = _inputs_in_range()
    data = path.read_bytes()
    try:
        ours_it = Interpreter(data)
    except MicroarenaError as e:
        row["runtime"] = f"REFUSED {e.message}"
        return
    try:
        t.assert_all_match(path.stem, t.run_ours(data), t.run_tflm_all(data))
        row["runtime"] = "ok"
    except AssertionError as e:
        row["runtime"] = "FAIL " + str(e).splitlines()[0][:300]
    o.random_inputs = t.random_inputs  # run_tflm's inputs too
    ours, ref = ours_it.stats().total, o.run_tflm(data).total
    row["arena_ours"], row["arena_tflm"] = ours, ref
    if ours > ref:
        row["runtime"] += f"; FAIL arena {ours} > TFLM {ref}"


def _refusal(path: Path, row: dict) -> None:
    """TFLM refuses: our tools must say so cleanly."""
    problems = []
    for mod in ("host.run", "host.plan"):
        proc = subprocess.run(
            [sys.executable, "-m", mod, str(path)],
            capture_output=True, text=True, cwd=REPO, timeout=300,
        )  # fmt: skip
        text = proc.stdout + proc.stderr
        if "Traceback" in text or proc.returncode < 0:
            problems.append(f"{mod} crashed ({proc.returncode}): {text.strip()[-200:]}")
        elif mod == "host.run" and proc.returncode == 0:
            problems.append("host.run ran it")
        elif mod == "host.run":
            row["runtime"] = "refused: " + text.strip().splitlines()[-1][:200]
    if problems:
        row["runtime"] = "FAIL " + "; ".join(problems)


def check_one(path: Path) -> dict:
    row: dict = {c: "-" for c in COLUMNS}
    row["model"] = path.stem
    import support.tflm_oracle as o

    o.random_inputs = _inputs_in_range()
    why = _tflm_runs(path.read_bytes())
    row["tflm"] = "ok" if why is None else "refused"
    steps = [_plan, _runtime] if why is None else [_refusal]
    for step in steps:
        try:
            step(path, row)
        except Exception:  # noqa: BLE001 - a sweep records every failure and goes on
            row[COLUMNS[2] if step is _plan else "runtime"] = (
                "CRASH " + traceback.format_exc(limit=3).replace("\n", " | ")[-400:]
            )
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(check_one(args.folder)))
        return 0
    print("\t".join(COLUMNS))
    for path in sorted(args.folder.glob("*.tflite")):
        if args.only and path.stem not in args.only:
            continue
        proc = subprocess.run(
            [sys.executable, __file__, str(path), "--one"],
            capture_output=True, text=True, cwd=REPO, timeout=900,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        try:
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            tail = (proc.stdout + proc.stderr).strip()[-300:].replace("\n", " | ")
            row = {c: "-" for c in COLUMNS}
            row.update(model=path.stem, runtime=f"CRASH exit {proc.returncode}: {tail}")
        print("\t".join(str(row[c]) for c in COLUMNS), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
