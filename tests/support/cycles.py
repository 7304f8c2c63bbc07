"""Cycles in a dependency graph (node -> the nodes it depends on), for the tests that hold the
code to layers: host/'s imports (tests/test_imports.py) and the firmware core's calls
(tests/runtime/test_core_calls.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """One cycle as the nodes along it (its first node repeated last), or [] if there is none.
    Nodes are visited in sorted order, so the answer does not depend on the mapping's order."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []
