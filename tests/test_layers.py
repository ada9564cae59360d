"""The import graph of bench/, builders/ and leaderboard/: no circles; upward arrows counted.

Every ``import`` and ``from ... import`` is read with :mod:`ast`, function-level ones
included. ``from package import name`` points at ``package.name`` when that is a module,
else at ``package``; importing a submodule is not counted as importing its package's
``__init__`` (a package that imports its own submodules would otherwise always be a circle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("bench", "builders", "leaderboard")


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under the layer folders."""
    found = {}
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in; None outside the layers."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the layer modules it imports (anywhere in the file)."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(filter(None, (_resolve(a.name, known) for a in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    target = full if full in known else _resolve(base, known)
                    if target:
                        targets.add(target)
        targets.discard(name)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a closed path) per strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(start: str) -> None:  # iterative Tarjan
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, component) for component in components]


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A closed path through the component's first module (breadth-first, so a shortest one)."""
    start = min(component)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no cycle in component {sorted(component)}")  # pragma: no cover


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Arrows against the layers: bench or builders -> leaderboard, and bench -> builders
    outside the roof (bench.commands, bench.cli)."""
    arrows = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            layer, into = source.split(".")[0], target.split(".")[0]
            roof = source == "bench.cli" or source.startswith("bench.commands")
            if ((layer in ("bench", "builders") and into == "leaderboard")
                    or (layer == "bench" and into == "builders" and not roof)):
                arrows.append((source, target))
    return arrows


def test_graph_sees_function_level_and_from_imports():
    graph = import_graph()
    assert "bench.scorers.contract" in graph["bench.scorers.becel"]
    assert {"bench.scorers.becel", "bench.scorers.salad"} <= graph["bench.scoring"]  # in a def


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, f"{len(found)} import cycle(s): " + "; ".join(" -> ".join(c) for c in found)


#: Measured on the tree of issue 20, step 1 (docs/design.md): 15 arrows from bench.commands
#: into leaderboard, plus bench.training -> builders.catalog and
#: bench.baselines.train_data -> builders.tsv.
UPWARD_NOW = 17


@pytest.mark.xfail(strict=True, reason=f"{UPWARD_NOW} upward imports remain (15 bench.commands "
                   "-> leaderboard, bench.training -> builders.catalog, "
                   "bench.baselines.train_data -> builders.tsv); issue 20's later steps "
                   "remove them")
def test_no_upward_imports():
    arrows = upward_imports(import_graph())
    assert not arrows, f"{len(arrows)} upward import(s): {arrows}"


def test_upward_import_count_matches_the_xfail_reason():
    """The count in the reason above stays true: fewer arrows (or more) fail here."""
    assert len(upward_imports(import_graph())) == UPWARD_NOW
