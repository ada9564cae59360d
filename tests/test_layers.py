"""The import graph of the four layers: no circles, no arrow that runs upward.

The layers, floor to roof: ``bench`` (tasks, predictions, scoring) < ``builders`` (suites) <
``leaderboard`` (ranking, publishing) < ``consistency_bench`` (the CLI only). A module may
import its own layer and the layers below it, never one above (docs/design.md).

Every ``import`` and ``from ... import`` is read with :mod:`ast`, function-level ones
included, and so are the imports hidden in strings: ``importlib.import_module("x.y")`` and
``__import__("x.y")`` with a literal name, and a child Python run as ``[..., "-m", "x.y"]``.
``from package import name`` points at ``package.name`` when that is a module, else at
``package``; importing a submodule is not counted as importing its package's ``__init__`` (a
package that imports its own submodules would otherwise always be a circle). The modules a
family declaration names (``Family(builder="consistency_bench.builders.becel",
scorer="consistency_bench.bench.scorers.becel")``
in ``bench/registries/families.py``) are arrows from the module that imports them by that name
(:data:`DECLARED`).
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

from tests.helpers import python_stdout

ROOT = Path(__file__).resolve().parent.parent
#: The layers, floor first: each may import only itself and the ones before it. The first
#: three are folders of the repository that the package installs under :data:`NAMESPACE`.
LAYERS = ("bench", "builders", "leaderboard", "consistency_bench")
#: The import prefix of the first three layers: "" while they install as top-level packages,
#: "consistency_bench." once scripts/relayout.py (issue 29) has put them under one namespace.
NAMESPACE = "consistency_bench."
#: The file of the family declarations, and per declared field the module that imports the
#: declared module with ``importlib`` (the arrow the graph draws for it).
FAMILIES_FILE = "bench/registries/families.py"
DECLARED = {"builder": "consistency_bench.builders.catalog",
            "scorer": "consistency_bench.bench.scoring.engine"}


def modules(root: Path = ROOT, namespace: str | None = None) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under the layer folders.

    ``namespace`` (default :data:`NAMESPACE` for the repository, "" for another root) prefixes
    the names of the first three layers.
    """
    if namespace is None:
        namespace = NAMESPACE if root == ROOT else ""
    found = {}
    for layer in LAYERS:
        prefix = namespace if layer != LAYERS[-1] else ""
        for path in sorted((root / layer).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[prefix + ".".join(parts)] = path
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


def _string_imports(tree: ast.AST) -> list[str]:
    """Module names imported through strings: ``import_module("m")``, ``__import__("m")``,
    and ``"-m", "m"`` in a list or tuple (a child ``python -m m``)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (called in ("import_module", "__import__") and isinstance(first, ast.Constant)
                    and isinstance(first.value, str)):
                names.append(first.value)
        elif isinstance(node, (ast.List, ast.Tuple)):
            items = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            pairs = itertools.pairwise(items)
            names += [m for flag, m in pairs if flag == "-m" and isinstance(m, str)]
    return names


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the layer modules it imports (anywhere in the file, strings included)."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
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
        targets.update(filter(None, (_resolve(m, known) for m in _string_imports(tree))))
        targets.discard(name)
        graph[name] = targets
    for loader, target in declared_imports(root):
        if loader in graph and target in known:
            graph[loader].add(target)
    return graph


def declared_imports(root: Path = ROOT) -> list[tuple[str, str]]:
    """``(loader, module)`` for every module a ``Family(...)`` declaration names."""
    path = root / FAMILIES_FILE
    if not path.is_file():
        return []
    arrows = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Family":
            for keyword in node.keywords:
                value = keyword.value
                if (keyword.arg in DECLARED and isinstance(value, ast.Constant)
                        and isinstance(value.value, str)):
                    arrows.append((DECLARED[keyword.arg], value.value))
    return arrows


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


def layer_of(module: str) -> int:
    """The module's layer: its index in :data:`LAYERS` (0 is the floor)."""
    parts = module.split(".")
    if parts[0] == LAYERS[-1] and len(parts) > 1 and parts[1] in LAYERS[:-1]:
        return LAYERS.index(parts[1])  # consistency_bench.bench...: a namespaced layer
    return LAYERS.index(parts[0])


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Arrows against the layers: a module importing a module of a higher layer."""
    return [(source, target) for source, targets in sorted(graph.items())
            for target in sorted(targets) if layer_of(target) > layer_of(source)]


def measure(root: Path = ROOT) -> dict[str, int]:
    """The numbers docs/design.md records: modules, arrows, upward arrows, circles."""
    graph = import_graph(root)
    return {"modules": len(graph), "arrows": sum(map(len, graph.values())),
            "upward": len(upward_imports(graph)), "circles": len(cycles(graph))}


def test_graph_sees_function_level_and_from_imports():
    graph = import_graph()
    assert ("consistency_bench.bench.scorers.contract"
            in graph["consistency_bench.bench.scorers.becel"])
    assert ("consistency_bench.leaderboard.webpage.render"  # in a def
            in graph["consistency_bench.leaderboard.webpage.build_site"])


def test_graph_sees_the_modules_family_declarations_name():
    """Each family's builder and scorer: arrows from the module that imports them by name."""
    from consistency_bench.bench.registries.families import FAMILIES

    graph = import_graph()
    assert {f.builder for f in FAMILIES.values()} <= graph["consistency_bench.builders.catalog"]
    assert {f.scorer for f in FAMILIES.values()} <= graph["consistency_bench.bench.scoring.engine"]
    assert len(declared_imports()) == 2 * len(FAMILIES)


def test_the_cli_is_the_roof():
    """The CLI package imports every command by name; nothing below imports it."""
    graph = import_graph()
    commands = {m for m in graph if m.startswith("consistency_bench.commands.")}
    assert len(commands) >= 14 and commands <= graph["consistency_bench.cli"]
    assert "consistency_bench.cli" in graph["consistency_bench.__main__"]
    below = {m for m, targets in graph.items() if layer_of(m) < layer_of("consistency_bench")
             and any(layer_of(t) == layer_of("consistency_bench") for t in targets)}
    assert not below, below


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, f"{len(found)} import cycle(s): " + "; ".join(" -> ".join(c) for c in found)


def test_no_upward_imports():
    arrows = upward_imports(import_graph())
    assert not arrows, f"{len(arrows)} upward import(s): {arrows}"


PLANTED = {
    "bench/__init__.py": "",
    "bench/floor.py": "def f():\n    from leaderboard import top  # upward, in a def\n",
    "bench/child.py": "import subprocess, sys\n"
                      "subprocess.run([sys.executable, '-m', 'consistency_bench.cli'])\n",
    "builders/__init__.py": "",
    "builders/mid.py": "import importlib\nimportlib.import_module('leaderboard.top')\n",
    "leaderboard/__init__.py": "",
    "leaderboard/top.py": "from leaderboard import other\n",
    "leaderboard/other.py": "from . import top\n",  # a circle
    "consistency_bench/__init__.py": "",
    "consistency_bench/cli.py": "from bench import floor\n",
}


def test_the_guard_fails_on_a_planted_upward_import_and_circle(tmp_path):
    """The measurement finds what it must: an upward arrow of each kind, and a circle."""
    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == [("bench.child", "consistency_bench.cli"),
                                     ("bench.floor", "leaderboard.top"),
                                     ("builders.mid", "leaderboard.top")]
    assert cycles(graph) == [["leaderboard.other", "leaderboard.top", "leaderboard.other"]]
    assert measure(tmp_path) == {"modules": 10, "arrows": 6, "upward": 3, "circles": 1}


def test_the_task_registry_is_complete_without_builders():
    """bench (the floor) knows every task a registered suite is built for, builders unloaded.

    ``consistency_bench.bench.baselines.training`` imported ``consistency_bench.builders.catalog``
    only so that the family modules filled ``TASKS``; the family tasks are registered in
    ``bench/registries/tasks.py`` now.
    """
    code = ("import sys; from consistency_bench.bench.registries.tasks import TASKS; known = set(TASKS); "  # noqa: E501
            "assert not [m for m in sys.modules if 'builders' in m.split('.')[:2]]; "
            "from consistency_bench.builders.catalog import SUITES; "
            "print(sorted({s.task for s in SUITES.values()} - known), sorted(set(TASKS) - known))")
    assert python_stdout(code).split() == ["[]", "[]"]  # none missing, none added by builders
