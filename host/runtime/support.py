"""What the microarena runtime runs: its operators, and the types docs/operators.md found them
to run (`python -m host.run --list-ops`). Whether it opens a given model is binding.open_refusal."""

from __future__ import annotations

from host.paths import CHECKOUT, REPO
from host.runtime.sources import runtime_operators

OPERATORS_DOC = REPO / "docs" / "operators.md"


def operator_types() -> dict[str, tuple[str, str]]:
    """Operator -> (types it runs, its refusals) from the generated docs/operators.md ({} when
    the document is absent: the types come from running the tests' cases, not from the code)."""
    if not CHECKOUT or not OPERATORS_DOC.exists():  # the docs are not in an installed package
        return {}
    out = {}
    for line in OPERATORS_DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[2] == "yes":
            out[cells[0]] = (cells[3], cells[4])
    return out


def list_operators() -> list[str]:
    """One line per operator the runtime has code for, with the types it runs where known."""
    types = operator_types()
    lines = []
    for op in runtime_operators():
        runs = types.get(op, ("", ""))[0]
        lines.append(f"{op:<40} {runs or '(types: see docs/operators.md)'}")
    return lines
