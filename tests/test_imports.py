"""host/'s modules import each other without a cycle, and host/planning's in few layers
(issue 28).

Every `import` and `from ... import` of one host module by another counts, wherever it sits:
at module level, inside a function or under `if TYPE_CHECKING:`. An import moved into a
function or under TYPE_CHECKING still runs (or still ties the types) one way round, so a cycle
it closes is a cycle, only hidden; counting them all is what makes such a workaround fail here.
An import inside a function that closes no cycle (a lazy import of a heavy or optional part)
is allowed.

The depth is measured on module-level imports only (those that run when a module is
imported): host/planning's longest chain of them, counted in host/planning modules, is at most
MAX_PLANNING_CHAIN. Each layer (model facts and TFLM facts, kernel libraries, per-model
questions, the plan, the targets, choosers and outputs, the command line) imports only those
below it, so the chain grows by a layer, not by a module.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
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
        elif source in known and not _extension(known[source], alias.name):
            out.append(str(source))
    return out


def _extension(path: Path, name: str) -> bool:
    """Whether `from package import name` loads a compiled module of the package (its C
    source or the built file beside __init__.py), not a name the package defines."""
    return path.name == "__init__.py" and any(path.parent.glob(f"{name}.*"))


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """The import statements that run when the module is imported: at its top level, also
    inside a top-level if/try, but not under `if TYPE_CHECKING:` (nor in a def or class)."""
    out: list[ast.AST] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody
            todo += [s for h in node.handlers for s in h.body]
    return out


@functools.cache  # the tests read them: parse host/ once
def _graphs() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """(every import, module-level imports only): module -> {imported host module: line}."""
    known = modules()
    every: dict[str, dict[str, int]] = {}
    loaded: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        for graph, nodes in ((every, list(ast.walk(tree))), (loaded, _module_level(tree))):
            edges = graph.setdefault(name, {})
            for node in nodes:
                if isinstance(node, ast.Import | ast.ImportFrom):
                    for target in _targets(name, path.name == "__init__.py", node, known):
                        if target != name:
                            edges.setdefault(target, node.lineno)
    return every, loaded


def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {imported host module: line of the first such import}, every import."""
    return _graphs()[0]


def module_level_graph() -> dict[str, dict[str, int]]:
    """The same for module-level imports only: what importing a module runs."""
    return _graphs()[1]


def longest_chain(graph: dict[str, dict[str, int]], prefix: str) -> list[str]:
    """The longest path of imports among the modules whose names start with `prefix` (the
    graph has no cycle: test_host_imports_have_no_cycle)."""

    @functools.cache
    def chain(module: str) -> tuple[str, ...]:
        below = [chain(m) for m in graph[module] if m.startswith(prefix)]
        return (module, *max(below, key=len, default=()))

    return list(max((chain(m) for m in graph if m.startswith(prefix)), key=len, default=()))


def test_the_graph_holds_every_kind_of_import() -> None:
    """Module level, inside a function and under TYPE_CHECKING imports are all read."""
    graph = import_graph()
    assert "host.planning.plan" in graph["host.planning.band_choice"]  # module level
    assert "host.runtime.binding" in graph["host.runtime.arena"]  # module level
    assert "host.device.boards" in graph["host.device.record"]  # under TYPE_CHECKING too
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    loaded = module_level_graph()
    assert "host.planning.origin" in graph["host.runtime.cli"]  # inside a function only
    assert "host.planning.origin" not in loaded["host.runtime.cli"]
    assert "host.planning.band_choice" in loaded["host.planning.cli"]
    assert "host.device.boards" not in loaded["host.device.record"]  # under TYPE_CHECKING


def test_host_imports_have_no_cycle() -> None:
    graph = import_graph()
    loop = find_cycle(graph)
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(loop, loop[1:], strict=False)]
    assert not loop, "host modules import each other in a circle: " + "; ".join(steps)


MAX_PLANNING_CHAIN = 8


def test_chain_is_the_longest_path() -> None:
    graph = {"p.a": {"p.b": 1, "p.c": 1}, "p.b": {"p.d": 1}, "p.c": {}, "p.d": {"q": 1}, "q": {}}
    assert longest_chain(graph, "p.") == ["p.a", "p.b", "p.d"]  # q is outside the prefix


def test_planning_import_chain_is_short() -> None:
    """Importing any host/planning module runs at most MAX_PLANNING_CHAIN of them in a row."""
    graph = module_level_graph()
    assert not find_cycle(graph), "a cycle has no longest chain: see the test above"
    chain = longest_chain(graph, "host.planning.")
    assert len(chain) >= 4, chain  # the graph is read: cli > ... > model facts at least
    assert len(chain) <= MAX_PLANNING_CHAIN, (
        f"host/planning imports {len(chain)} modules in a row (at most {MAX_PLANNING_CHAIN}): "
        + " > ".join(f"{a} (line {graph[a][b]})" for a, b in zip(chain, chain[1:], strict=False))
        + f" > {chain[-1]}"
    )


# host/planning's layers, bottom up (docs/architecture.md, "Layers"): a module may import its
# own layer and those below, never one above. Keyed by the first name under host.planning.
PLANNING_LAYERS = (
    ("packing", "model", "tflm"),  # facts: the packing problem, the model, stock TFLM
    ("libraries",),  # the kernel libraries' memory models
    ("aliasing", "scratch", "checker", "origin"),  # questions about one model
    ("plan",),
    ("targets",),
    ("band_choice", "fast_paths", "fit", "report", "plot", "c_header"),  # choosers, outputs
    ("cli", "scratch_cli", "build_plan"),  # the command lines
)


def _layer(module: str) -> int:
    part = module.removeprefix("host.planning.").split(".")[0]
    found = [i for i, names in enumerate(PLANNING_LAYERS) if part in names]
    assert found, f"{module} is in no layer of PLANNING_LAYERS: place it there"
    return found[0]


def test_planning_imports_only_downwards() -> None:
    """Every import (at module level or in a function) between host/planning modules goes to
    the importer's own layer or one below."""
    graph = import_graph()
    upward = [
        f"{a} (line {line}, layer {_layer(a)}) -> {b} (layer {_layer(b)})"
        for a, edges in graph.items()
        if a.startswith("host.planning.")
        for b, line in edges.items()
        if b.startswith("host.planning.") and _layer(b) > _layer(a)
    ]
    assert not upward, "host/planning imports upwards: " + "; ".join(upward)
    assert _layer("host.planning.cli") > _layer("host.planning.model.lifetimes")


def reach(graph: dict[str, dict[str, int]], start: str, prefix: str) -> list[str]:
    """A shortest chain of imports from `start` to a module whose name starts with `prefix`,
    each import counted wherever it sits ([] if there is none)."""
    came: dict[str, str] = {start: start}
    todo = [start]
    while todo:
        module = todo.pop(0)
        if module.startswith(prefix):
            chain = [module]
            while chain[-1] != start:
                chain.append(came[chain[-1]])
            return chain[::-1]
        for b in graph.get(module, {}):
            if b not in came:
                came[b] = module
                todo.append(b)
    return []


@pytest.mark.parametrize("package", ["host.planning", "host.runtime"])
def test_package_imports_nothing_of_the_device(package: str) -> None:
    """host/planning and host/runtime know no serial port or board, not even through another
    package: facts a device module shares with them sit below, and host/device imports them
    (TFLM's report categories in host/planning, which the wire record carries; the runtime's
    sources and operators in host/runtime/sources.py, which the board builds read)."""
    graph = import_graph()
    reached = [reach(graph, m, "host.device") for m in graph if m.startswith(f"{package}.")]
    chains = sorted(" -> ".join(c) for c in reached if c)
    assert not chains, f"{package} imports host/device: " + "; ".join(chains)
    assert any(m.startswith(f"{package}.") for m in graph)
    assert "host.planning.tflm.categories" in graph["host.device.wire"]
    assert reach({"a": {"b": 1}, "b": {"c": 1}, "c": {}}, "a", "c") == ["a", "b", "c"]
    assert reach(graph, "host.device.record", "host.planning.tflm")  # the walk is transitive
