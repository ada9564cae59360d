"""The layout figures of docs/design.md: modules, facades, long functions, duplicate names.

Run from the repository root, on any checkout (before or after a layout change)::

    python scripts/layout_numbers.py            # a table
    python scripts/layout_numbers.py --json     # the same figures as JSON
    python scripts/layout_numbers.py --list     # also every facade, long function, name

What it counts, by reading the code with :mod:`ast` (nothing is imported or run):

* **modules** and **lines** of the installed code: every ``.py`` under the layer folders
  (``bench/``, ``builders/``, ``leaderboard/``, ``consistency_bench/``), whatever namespace
  they are installed under.
* **re-exported names**: a name a module imports at its top level and never uses itself,
  which some other module (tests, scripts and benchmarks included) imports *from it*; this is
  what a facade is for. A **facade** is a module whose top level holds nothing but its
  docstring, imports and ``__all__`` and that re-exports at least one name; a **partial
  facade** also defines things of its own. Package ``__init__`` files are counted apart.
* **long functions**: ``def`` statements (methods and nested functions included) whose
  ``end_lineno - lineno + 1`` is over 60 and over 80 lines, decorators not counted.
* **duplicate file names**: module file names (``inputs.py``) found in more than one folder,
  ``__init__.py`` and ``__main__.py`` left out.
* **prefix-named siblings**: files of one folder that share a ``prefix_`` with another file
  or with a module named ``prefix`` there (``publish.py``, ``publish_commit.py``).
* **file sha256 functions**: functions named ``*sha256*`` whose job is the sha256 of a file's
  bytes (``hashlib.sha256`` over a ``read_bytes()`` or a loop of ``read`` calls).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

#: Folders of installed code, floor to roof.
LAYER_FOLDERS = ("bench", "builders", "leaderboard", "consistency_bench")
#: Folders whose imports count as importers too (never installed).
OTHER_FOLDERS = ("tests", "scripts", "benchmarks")
LONG, TOO_LONG = 60, 80


def module_name(root: Path, path: Path) -> str:
    """Dotted name of ``path`` as imported (``consistency_bench.bench.x`` after issue 29)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    setup = root / "setup.py"
    if (parts[0] in LAYER_FOLDERS[:-1] and setup.is_file()
            and "package_dir" in setup.read_text(encoding="utf-8")):
        parts.insert(0, LAYER_FOLDERS[-1])
    return ".".join(parts)


def python_files(root: Path, folders: tuple[str, ...]) -> list[Path]:
    """Every ``.py`` file under ``folders`` (generated site folders and caches left out)."""
    found = []
    for folder in folders:
        found += [p for p in sorted((root / folder).rglob("*.py"))
                  if "__pycache__" not in p.parts and ".venv" not in p.parts]
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def top_level_imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Name bound at the top level -> ``source.name`` it was imported from (``from`` only)."""
    bound = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            source = _absolute(module, is_package, node)
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def used_names(tree: ast.Module) -> set[str]:
    """Names the module reads anywhere, ``__all__``'s strings not counted."""
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                used.add(base.id)
    return used


def imported_from(tree: ast.AST, module: str, is_package: bool) -> list[tuple[str, str]]:
    """``(module, name)`` of every ``from module import name`` in a file, any depth."""
    pairs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, is_package, node)
            pairs += [(source, alias.name) for alias in node.names]
    return pairs


def only_reexports(tree: ast.Module) -> bool:
    """The top level is a docstring, imports and ``__all__``, nothing else."""
    for index, node in enumerate(tree.body):
        if (index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                continue
        return False
    return True


def long_functions(tree: ast.AST, module: str) -> list[tuple[str, int]]:
    """``(module:qualified name, lines)`` of every def over :data:`LONG` lines."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > LONG:
                        found.append((f"{module}:{name}", lines))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def file_sha256(tree: ast.AST, module: str) -> list[str]:
    """Functions named ``*sha256*`` that hash a file's bytes."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        text = ast.unparse(node)
        if "sha256" in node.name and "hashlib.sha256(" in text and re.search(
                r"read_bytes\(\)|\.read\(", text):
            found.append(f"{module}:{node.name}")
    return found


def prefix_groups(files: list[Path], root: Path) -> dict[str, list[str]]:
    """``folder/prefix`` -> the files of that folder named ``prefix.py`` or ``prefix_*.py``."""
    by_folder: dict[Path, list[str]] = defaultdict(list)
    for path in files:
        if path.stem not in ("__init__", "__main__"):
            by_folder[path.parent].append(path.stem)
    groups = {}
    for folder, stems in by_folder.items():
        for prefix in sorted({s.split("_")[0] for s in stems if "_" in s}):
            members = sorted(s for s in stems if s == prefix or s.startswith(prefix + "_"))
            if len(members) > 1:
                groups[f"{folder.relative_to(root).as_posix()}/{prefix}"] = members
    return groups


def measure(root: Path) -> dict:
    """Every figure, with the lists behind the counts."""
    files = python_files(root, LAYER_FOLDERS)
    others = python_files(root, OTHER_FOLDERS)
    trees = {}
    for path in files + others:
        trees[path] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = {path: module_name(root, path) for path in trees}
    importers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path, tree in trees.items():
        for pair in imported_from(tree, names[path], path.name == "__init__.py"):
            importers[pair].add(names[path])
    facades, partial, packages = {}, {}, {}
    longs, hashers = [], []
    for path in files:
        tree, module = trees[path], names[path]
        bound = top_level_imports(tree, module, path.name == "__init__.py")
        unused = set(bound) - used_names(tree)
        reexported = sorted(n for n in unused
                            if any(m != module for m in importers.get((module, n), ())))
        if reexported:
            users = sorted({m for n in reexported for m in importers[(module, n)] if m != module})
            record = {"names": len(reexported), "importers": len(users)}
            if path.name == "__init__.py":
                packages[module] = record
            elif only_reexports(tree):
                facades[module] = record
            else:
                partial[module] = record
        longs += long_functions(tree, module)
        hashers += file_sha256(tree, module)
    stems = Counter(p.name for p in files if p.stem not in ("__init__", "__main__"))
    duplicates = {name: sorted(str(p.relative_to(root)) for p in files if p.name == name)
                  for name, count in sorted(stems.items()) if count > 1}
    groups = prefix_groups(files, root)
    longs.sort(key=lambda item: -item[1])
    return {
        "modules": len(files),
        "lines": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files),
        "facades": facades,
        "partial_facades": partial,
        "reexporting_packages": packages,
        "functions_over_60": [f"{n} {k}" for n, k in longs],
        "functions_over_80": [f"{n} {k}" for n, k in longs if k > TOO_LONG],
        "duplicate_file_names": duplicates,
        "prefix_groups": groups,
        "file_sha256": sorted(hashers),
    }


def summary(found: dict) -> dict[str, int]:
    """The counts of :func:`measure`."""
    return {
        "modules": found["modules"],
        "lines": found["lines"],
        "facades": len(found["facades"]),
        "partial facades": len(found["partial_facades"]),
        "re-exporting package __init__s": len(found["reexporting_packages"]),
        "re-exported names": sum(r["names"] for key in ("facades", "partial_facades",
                                                        "reexporting_packages")
                                 for r in found[key].values()),
        "functions over 60 lines": len(found["functions_over_60"]),
        "functions over 80 lines": len(found["functions_over_80"]),
        "duplicate file names": len(found["duplicate_file_names"]),
        "prefix-named sibling groups": len(found["prefix_groups"]),
        "file sha256 functions": len(found["file_sha256"]),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the figures of the checkout in ``--root`` (default: the current folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".", help="repository root")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--list", action="store_true", help="also list what is counted")
    args = parser.parse_args(argv)
    found = measure(Path(args.root).resolve())
    counts = summary(found)
    if args.json:
        print(json.dumps(found if args.list else counts, indent=2))
        return 0
    width = max(map(len, counts))
    for key, value in counts.items():
        print(f"{key:<{width}}  {value:>6,}")
    if args.list:
        for key in ("facades", "partial_facades", "reexporting_packages"):
            for module, record in sorted(found[key].items()):
                print(f"{key}: {module} ({record['names']} names, "
                      f"{record['importers']} importers)")
        for key in ("functions_over_60", "file_sha256"):
            for item in found[key]:
                print(f"{key}: {item}")
        for key in ("duplicate_file_names", "prefix_groups"):
            for name, members in found[key].items():
                print(f"{key}: {name}: {', '.join(members)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
