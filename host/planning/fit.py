"""`host.plan MODEL --ram SIZE|BOARD`: one answer to "does it fit", a table of the options.

Each row is host.plan itself run with that option's arguments (plain, --overlap, --bands; for
stock TFLM with CMSIS-NN kernels or for this runtime's), so every figure is the one
`host.plan MODEL <those arguments>` prints: nothing here plans or sizes a model again.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from host.paths import BOARDS
from host.planning.model.lifetimes import walk
from host.planning.model.macs import model_macs
from host.tflite.model import Model

# host.plan's main, which cli.py passes in: its arguments -> its exit status.
PlanMain = Callable[[list[str]], int]

_SIZE = re.compile(r"^(\d+)\s*([KkMm]i?[Bb]?|[Bb])?$")
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024 * 1024}

# (row name, kernels words, host.plan arguments)
OPTIONS = [
    ("tflm", "stock TFLM + CMSIS-NN", ["--kernels", "cmsis-nn"]),
    ("tflm overlap", "stock TFLM + CMSIS-NN", ["--kernels", "cmsis-nn", "--overlap"]),
    ("tflm bands", "stock TFLM + CMSIS-NN", ["--kernels", "cmsis-nn", "--bands"]),
    ("microarena", "this runtime", ["--kernels", "microarena"]),
    ("microarena overlap", "this runtime", ["--kernels", "microarena", "--overlap"]),
    ("microarena bands", "this runtime", ["--kernels", "microarena", "--bands"]),
]


BANDS_BUDGET = 20.0  # seconds of bands search after which the other bands rows are skipped


class FitError(ValueError):
    pass


@dataclass
class Limits:
    ram: int
    flash: int | None  # None: not known (a bare --ram SIZE)
    board: str | None = None
    cpu: str | None = None  # the board's core, for the kernels' scratch and loops


@dataclass
class Row:
    option: str
    kernels: str
    args: list[str]
    arena: int | None = None  # the arena to set (head + tail), host.plan's min_arena
    head: int | None = None
    macs: int | None = None
    peak: str | None = None  # the operator at the head's peak
    verdict: str = ""
    skipped: str | None = None  # why no figures
    seconds: float = 0.0  # host.plan's time for this option
    plan: dict[str, Any] = field(default_factory=dict, repr=False)


def board_names() -> list[str]:
    return sorted(p.parent.name for p in BOARDS.glob("*/board.json"))


def limits(text: str) -> Limits:
    """--ram's value: a size (256K, 320KiB, 1M, 65536) or a board name from boards/*/board.json."""
    m = _SIZE.match(text.strip())
    if m:
        return Limits(int(m[1]) * _UNITS[(m[2] or "")[:1].lower()], None)
    path = BOARDS / text / "board.json"
    if text not in board_names():
        raise FitError(
            f"--ram {text!r} is neither a size (256K, 1M, 65536) nor a board "
            f"({', '.join(board_names())})"
        )
    info = json.loads(path.read_text())
    up, cpu = info["upload"], info["build"]["cpu"]
    return Limits(int(up["maximum_ram_size"]), int(up["maximum_size"]), text, cpu)


def _host_plan(plan: PlanMain, model: str, args: list[str]) -> dict[str, Any]:
    """host.plan MODEL ARGS --json, in this process: its document, or FitError with its error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = plan([model, *args, "--json", "-q"])
        except SystemExit as e:  # argparse refusing a combination
            status = int(e.code or 2)
    if status:
        lines = err.getvalue().strip().splitlines()
        raise FitError(lines[-1].removeprefix("error: ") if lines else f"exit status {status}")
    return json.loads(out.getvalue())


def peak_operator(model: Model, doc: dict[str, Any]) -> str | None:
    """The operator during which the placed buffers (tensors and scratch) reach the head."""
    placed = [b for b in doc["tensors"] + doc["scratch"] if b["offset"] >= 0]
    tops: dict[int, int] = {}
    for b in placed:
        for scope in range(b["first"], b["last"] + 1):
            tops[scope] = max(tops.get(scope, 0), b["offset"] + b["size"])
    scope = next((sc for sc in sorted(tops) if tops[sc] == doc["head"]), None)
    if scope is None:
        return None
    if (doc.get("bands") or {}).get("chosen"):  # the plan is the banded model's
        made = [t["name"].split(";")[-1] for t in doc["tensors"] if t["first"] == scope]
        return f"banded: writes {made[0][-22:]}" if made else None
    si, op = walk(model).owners[scope]
    return f"#{op} {model.subgraphs[si].operators[op].name}" if op >= 0 else None


def _macs(model: Model, doc: dict[str, Any]) -> int:
    chosen = (doc.get("bands") or {}).get("chosen")
    return model_macs(model) + (chosen["added_macs"] if chosen else 0)


def _verdict(row: Row, lim: Limits, model_bytes: int, refusal: str | None) -> str:
    if refusal:
        return f"runtime refuses: {refusal}"
    assert row.arena is not None
    problems = []
    if row.arena > lim.ram:
        problems.append(f"arena {row.arena} > RAM {lim.ram}")
    if lim.flash is not None and model_bytes > lim.flash:
        problems.append(f"model {model_bytes} > flash {lim.flash}")
    return "does not fit: " + ", ".join(problems) if problems else "fits"


def _fill(row: Row, model: Model, model_path: str, lim: Limits, plan: PlanMain) -> None:
    """Run host.plan for the row's option and fill its figures (or why it has none)."""
    start = time.perf_counter()
    try:
        doc = row.plan = _host_plan(plan, model_path, row.args)
    except FitError as e:
        row.skipped = str(e)
        return
    finally:
        row.seconds = round(time.perf_counter() - start, 2)
    row.arena, row.head = doc["min_arena"], doc["head"]
    row.macs = _macs(model, doc)
    row.peak = peak_operator(model, doc)
    runs = doc["microarena_runtime" if "microarena" in row.option else "tflm_runtime"]
    size = Path(model_path).stat().st_size
    row.verdict = _verdict(row, lim, size, None if runs["runs"] else runs.get("message"))
    if "--bands" in row.args and not doc["bands"]["chosen"]:
        why = doc["bands"]["reason"]
        row.verdict += (
            f" (no band split {'possible: ' + why if why else 'lowers the head'}: the plain plan)"
        )


def fit_rows(model_path: str, lim: Limits, time_limit: float | None, plan: PlanMain) -> list[Row]:
    """Every option's row, in OPTIONS order. The bands rows run last: each takes up to its
    --time-limit (6 s by default) in CPU, more in wall time on a busy machine, so once the
    bands searches have taken BANDS_BUDGET seconds the rest are skipped, saying so."""
    model = Model.load(model_path)
    extra = (["--cpu", lim.cpu] if lim.cpu else []) + (
        ["--time-limit", str(time_limit)] if time_limit else []
    )
    rows = [Row(option, kernels, args + extra) for option, kernels, args in OPTIONS]
    spent = 0.0
    # This runtime's bands row first: the stock TFLM one is the one skipped when time runs out.
    for row in sorted(rows, key=lambda r: ("--bands" in r.args, "microarena" not in r.option)):
        if "--bands" in row.args and spent > BANDS_BUDGET:
            row.skipped = (
                f"the bands search took {spent:.0f} s already (over {BANDS_BUDGET:.0f} s); "
                f"`python -m host.plan MODEL {' '.join(row.args)}` gives this row alone"
            )
            continue
        _fill(row, model, model_path, lim, plan)
        spent += row.seconds if "--bands" in row.args else 0.0
    return rows


def fit_json(model_path: str, lim: Limits, rows: list[Row]) -> dict[str, Any]:
    return {
        "model": model_path,
        "ram": lim.ram,
        "flash": lim.flash,
        "board": lim.board,
        "cpu": lim.cpu,
        "model_bytes": Path(model_path).stat().st_size,
        "flash_counts": "model size only (code size not estimated)",
        "options": [
            {
                "option": r.option,
                "kernels": r.kernels,
                "host_plan_args": r.args,
                "arena": r.arena,
                "head": r.head,
                "macs": r.macs,
                "peak_operator": r.peak,
                "verdict": r.verdict,
                "skipped": r.skipped,
                "seconds": r.seconds,
            }
            for r in rows
        ],
    }


def fit_text(model_path: str, lim: Limits, rows: list[Row]) -> str:
    size = Path(model_path).stat().st_size
    where = f"board {lim.board} ({lim.cpu})" if lim.board else "the given RAM"
    flash = f"flash {lim.flash} B" if lim.flash is not None else "flash not known"
    lines = [
        f"does {Path(model_path).name} fit {where}: RAM {lim.ram} B, {flash}",
        f"flash needed: the model's {size} B (model size only: code size is not estimated)",
        "arena = the arena to set (head + tail) for those kernels, as host.plan prints it",
        "",
        f"{'option':<20}{'kernels':<23}{'arena':>9}{'head':>9}{'MACs':>12}  {'peak at':<34}verdict",
    ]
    for r in rows:
        if r.skipped:
            lines.append(f"{r.option:<20}{r.kernels:<23}  skipped: {r.skipped}")
            continue
        lines.append(
            f"{r.option:<20}{r.kernels:<23}{r.arena:>9}{r.head:>9}{r.macs:>12}  "
            f"{r.peak or '-':<33} {r.verdict}"
        )
    lines.append("(each row: `python -m host.plan MODEL <its arguments>`; --json lists them)")
    return "\n".join(lines)


def main(model_path: str, ram: str, time_limit: float | None, as_json: bool, plan: PlanMain) -> int:
    lim = limits(ram)
    rows = fit_rows(model_path, lim, time_limit, plan)
    if as_json:
        print(json.dumps(fit_json(model_path, lim, rows)))
    else:
        print(fit_text(model_path, lim, rows))
    return 0
