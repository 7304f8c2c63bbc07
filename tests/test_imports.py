"""host/'s modules import each other without a cycle (issue 28).

Every `import` and `from ... import` of one host module by another counts, wherever it sits:
at module level, inside a function or under `if TYPE_CHECKING:`. An import moved into a
function or under TYPE_CHECKING still runs (or still ties the types) one way round, so a cycle
it closes is a cycle, only hidden; counting them all is what makes such a workaround fail here.
An import inside a function that closes no cycle (a lazy import of a heavy or optional part)
is allowed.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from support.cycles import find_cycle

from host.paths import HOST


def modules() -> dict[str, Path]:
    """Dotted name -> file, for every module and package of host/."""
    out = {}
    for path in sorted(HOST.rglob("*.py")):
        parts = list(path.relative_to(HOST.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(name: str, is_package: bool, node: ast.AST, known: dict[str, Path]) -> list[str]:
    """The host modules an import statement in module `name` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    assert isinstance(node, ast.ImportFrom)
    base = name if is_package else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
    out = []
    for alias in node.names:  # `from pkg import mod` loads pkg.mod, `from mod import name` mod
        if f"{source}.{alias.name}" in known:
            out.append(f"{source}.{alias.name}")
        elif source in known:
            out.append(str(source))
    return out


@functools.cache  # both tests read it: parse host/ once
def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {imported host module: line of the first such import}."""
    known = modules()
    graph: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        edges = graph.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(name, path.name == "__init__.py", node, known):
                    if target != name:
                        edges.setdefault(target, node.lineno)
    return graph


def test_the_graph_holds_every_kind_of_import() -> None:
    """Module level, inside a function and under TYPE_CHECKING imports are all read."""
    graph = import_graph()
    assert "host.planning.plan" in graph["host.planning.band_choice"]  # module level
    assert "host.runtime.binding" in graph["host.runtime.arena"]  # inside predict()
    assert "host.device.boards" in graph["host.device.record"]  # under TYPE_CHECKING too
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_host_imports_have_no_cycle() -> None:
    graph = import_graph()
    loop = find_cycle(graph)
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(loop, loop[1:], strict=False)]
    assert not loop, "host modules import each other in a circle: " + "; ".join(steps)
