"""Issue 29, phase B: install the layer folders under ``consistency_bench.*``; delete facades.

Run once on main after the branches have merged (idempotent: a second run changes nothing)::

    .venv/bin/python scripts/relayout.py            # rewrite the tree in place
    .venv/bin/python -m pip install -e . --no-deps  # the editable install with the new mapping

The repository's folders stay where they are (``bench/``, ``builders/``, ``leaderboard/``);
``setup.py`` maps them into the ``consistency_bench`` package (setuptools ``package_dir``), so
the wheel installs ``consistency_bench/bench/...`` and never ``benchmarks``, ``scripts`` or
``tests``. The script then:

1. rewrites every dotted name of a module of the three layers, in code, strings
   (``mock.patch("bench.x.f")``, ``"-m", "bench.x"``, ``"bench:__version__"``) and docs:
   ``bench.scoring`` -> ``consistency_bench.bench.scoring``; ``from bench import x`` ->
   ``from consistency_bench.bench import x``. A dotted name is rewritten only when its
   longest prefix is a module file or package of the tree, so ``leaderboard.json`` stays;
2. deletes the pure re-export facades (a module whose body is a docstring, ``from ... import``
   lines and ``__all__``): each ``from FACADE import a, b`` becomes imports from where ``a``
   and ``b`` live. A facade that some file imports as a module (``from P import facade``)
   is kept and named in the summary;
3. edits ``pyproject.toml`` (package data key, isort's first-party list) and
   ``tests/test_layers.py``'s namespace switch, then sorts the imports it touched
   (``ruff check --fix --select I,F401``).

Prints what it changed; ``--check`` changes nothing and exits 1 if there is something to do.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "consistency_bench"
LAYERS = ("bench", "builders", "leaderboard")
#: Folders and files whose text is rewritten (generated outputs and data are not).
TREES = ("bench", "builders", "leaderboard", "consistency_bench", "tests", "benchmarks",
         "scripts", "docs", ".ci")
FILES = ("README.md", "pyproject.toml")
SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt", ".cfg", ".yaml", ".yml", ""}
#: Generated or data folders never rewritten.
SKIP_PARTS = {"site", "data", "__pycache__", "evaluate_modules"}
SELF = Path(__file__).resolve()
#: Files that hold old-layout names on purpose (the codemod's own test plants them).
KEEP = ("tests/test_relayout.py",)

SETUP_PY = '''"""Install the layer folders under one import namespace (issue 29).

The repository keeps ``bench/``, ``builders/`` and ``leaderboard/`` at its top; the wheel
installs them as ``consistency_bench.bench``, ``consistency_bench.builders`` and
``consistency_bench.leaderboard`` (setuptools ``package_dir``). ``benchmarks/``, ``scripts/``
and ``tests/`` are never installed (tests/test_wheel.py). Everything else is in
pyproject.toml.
"""

from setuptools import find_packages, setup

LAYERS = ("bench", "builders", "leaderboard")
PACKAGES = ["consistency_bench", *find_packages(include=["consistency_bench.*"])]
for layer in LAYERS:
    PACKAGES += [f"consistency_bench.{name}"
                 for name in find_packages(include=[layer, f"{layer}.*"])]

setup(packages=PACKAGES, package_dir={f"consistency_bench.{layer}": layer for layer in LAYERS})
'''


def layer_modules(root: Path) -> set[str]:
    """Dotted names (old layout) of every module and package of the three layer folders."""
    names = set()
    for layer in LAYERS:
        for path in (root / layer).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return names


# A dotted name that starts with a layer, not preceded by a name character, a dot (already
# namespaced, or an attribute), a slash or a hyphen (a path, ``consistency-bench.x``).
DOTTED = re.compile(r"(?<![\w.\-/])(" + "|".join(LAYERS) + r")((?:\.[A-Za-z_]\w*)+)")
# ``from bench import x`` / ``import bench`` / ``import bench.x`` at the start of a line.
IMPORT = re.compile(r"^(\s*(?:>>> |\.\.\. )?)(from|import)(\s+)(" + "|".join(LAYERS)
                    + r")(?=[\s.,;)]|$)", re.MULTILINE)
# ``"bench:__version__"``: a lazy ``module:object`` reference to a layer package itself.
COLON = re.compile(r"""(?<=["'])(""" + "|".join(LAYERS) + r""")(?=:[A-Za-z_])""")


# mypy cannot follow the editable install's import hook: scripts/typecheck.py runs it.
MYPY = re.compile(r"(\bpython) -m mypy\b")


def package_attributes(root: Path) -> dict[str, set[str]]:
    """Layer -> the names its ``__init__.py`` defines at top level (``__version__``)."""
    found: dict[str, set[str]] = {}
    for layer in LAYERS:
        init = root / layer / "__init__.py"
        names: set[str] = set()
        if init.is_file():
            for node in ast.parse(init.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign):
                    names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
                elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    names.add(node.name)
        found[layer] = {n for n in names if not n.startswith("_") or n.startswith("__")}
    return found


def rewrite_names(text: str, known: set[str],
                  known_attributes: dict[str, set[str]] | None = None) -> str:
    """Text with every layer module reference put under the namespace."""
    known_attributes = known_attributes or {}

    def dotted(match: re.Match[str]) -> str:
        layer, rest = match.group(1), match.group(2)
        parts = [layer, *rest[1:].split(".")]
        longest = max((i for i in range(2, len(parts) + 1) if ".".join(parts[:i]) in known),
                      default=0)
        # "bench.__version__": a name the layer package's __init__ defines
        longest = longest or int(parts[1] in known_attributes.get(layer, ()))
        return f"{NAMESPACE}.{match.group(0)}" if longest else match.group(0)

    def imported(match: re.Match[str]) -> str:
        lead, keyword, space, layer = match.groups()
        line_rest = text[match.end():text.find("\n", match.end()) % (len(text) + 1)]
        if keyword == "import" and not line_rest.startswith("."):
            # ``import bench`` (or ``import bench as b``) binds the name ``bench``
            if line_rest.startswith(" as "):
                return f"{lead}from{space}{NAMESPACE} import {layer}"
            return f"{lead}from{space}{NAMESPACE} import {layer}"
        return f"{lead}{keyword}{space}{NAMESPACE}.{layer}"

    text = DOTTED.sub(dotted, text)
    text = IMPORT.sub(imported, text)
    return COLON.sub(lambda m: f"{NAMESPACE}.{m.group(1)}", text)


def files_to_rewrite(root: Path) -> list[Path]:
    """Every text file of the trees the move touches (generated and data folders left out)."""
    found = [root / name for name in FILES if (root / name).is_file()]
    for tree in TREES:
        for path in sorted((root / tree).rglob("*")):
            rel = path.relative_to(root).parts
            if (path.is_file() and not path.is_symlink() and path.suffix in SUFFIXES
                    and not SKIP_PARTS.intersection(rel[1:-1]) and path.resolve() != SELF
                    and "/".join(rel) not in KEEP):
                found.append(path)
    return found


def facade_origins(path: Path, module: str) -> dict[str, str] | None:
    """Name -> module it lives in, when ``path`` only re-exports; None for a real module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    origins: dict[str, str] = {}
    package = module.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                if alias.asname not in (None, alias.name):
                    return None  # a rename: not mechanical
                origins[alias.name] = base
            continue
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", "") == "__all__"):
            continue
        return None
    return origins or None


def _split_import(node: ast.ImportFrom, origins: dict[str, str], indent: str) -> str:
    """``from facade import a, b as c`` as imports from where each name lives."""
    grouped: dict[str, list[str]] = {}
    for alias in node.names:
        origin = origins.get(alias.name)
        if origin is None:
            raise KeyError(alias.name)
        grouped.setdefault(origin, []).append(
            alias.name if alias.asname is None else f"{alias.name} as {alias.asname}")
    return "\n".join(f"{indent}from {origin} import {', '.join(names)}"
                     for origin, names in sorted(grouped.items()))


def redirect_facade_imports(text: str, facade: str, origins: dict[str, str]) -> str:
    """Source with each ``from FACADE import ...`` statement replaced; strings redirected."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = [node for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and node.module == facade and not node.level]
    for node in sorted(edits, key=lambda n: n.lineno, reverse=True):
        first, last = node.lineno - 1, node.end_lineno or node.lineno
        indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
        tail = lines[last - 1][node.end_col_offset:].strip()  # a directive, kept
        split = _split_import(node, origins, indent).splitlines()
        if tail.startswith("#"):
            split = [f"{line}  {tail}" for line in split]
        lines[first:last] = [line + "\n" for line in split]
    text = "".join(lines)
    for name, origin in origins.items():  # "facade.name" in strings (mock.patch targets)
        text = re.sub(rf"(?<![\w.]){re.escape(facade)}\.{name}\b", f"{origin}.{name}", text)
    return text


def module_imports(text: str, facade: str) -> bool:
    """Whether the source imports ``facade`` as a module (``import f``, ``from p import f``)."""
    package, _, leaf = facade.rpartition(".")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == facade for a in node.names):
            return True
        if (isinstance(node, ast.ImportFrom) and node.module == package
                and any(a.name == leaf for a in node.names)):
            return True
    # a module imported by its dotted name in Python code held in a string
    return bool(re.search(rf"from {re.escape(package)} import [^\n]*\b{leaf}\b", text))


def keep_docstring(root: Path, path: Path, module: str, origins: dict[str, str]) -> Path | None:
    """Append a facade's docstring to the docstring of the module most of its names live in.

    Nothing is lost: a facade's docstring often documents the whole job (a folder's layout,
    a protocol). Its text goes, as written, after a line that names where it came from.
    """
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    if not (tree.body and isinstance(tree.body[0], ast.Expr)
            and isinstance(tree.body[0].value, ast.Constant)):
        return None
    node = tree.body[0]
    raw = "\n".join(text.splitlines()[node.lineno - 1:node.end_lineno]).strip()
    if raw[:3] != QUOTES or raw[-3:] != QUOTES:
        return None
    body = raw[3:-3].strip().replace(" Their names are importable from here too.", "")
    counts: dict[str, int] = {}
    for origin in origins.values():
        counts[origin] = counts.get(origin, 0) + 1
    parts = max(sorted(counts), key=lambda m: counts[m]).split(".")
    parts = parts[1:] if parts[0] == NAMESPACE else parts
    found = next((c for c in (root / Path(*parts).with_suffix(".py"),
                              root / Path(*parts) / "__init__.py") if c.is_file()), None)
    if found is None:
        return None
    target = found.read_text(encoding="utf-8")
    first = ast.parse(target).body[:1]
    if not (first and isinstance(first[0], ast.Expr) and isinstance(first[0].value, ast.Constant)
            and isinstance(first[0].value.value, str)) or f"``{module}``" in target:
        return None
    lines = target.split("\n")
    end = (first[0].end_lineno or first[0].lineno) - 1
    closing = lines[end].rstrip()
    if not closing.endswith(QUOTES):
        return None
    addition = ["", f"From ``{module}``, a re-export module that issue 29 deleted:", "",
                *body.split("\n")]
    head = closing[:-3].rstrip()
    if head.strip():  # a one-line docstring: its closing quotes go on a line of their own
        lines[end:end + 1] = [head, *addition, QUOTES]
    else:
        lines[end:end] = [*addition, ""]
    found.write_text("\n".join(lines), encoding="utf-8")
    return found


def remove_facades(root: Path, known: set[str], report: list[str]) -> list[Path]:
    """Redirect the imports of every pure facade and delete it; the files changed."""
    changed: list[Path] = []
    files = [p for p in files_to_rewrite(root) if p.suffix == ".py"]
    prefix = f"{NAMESPACE}." if (root / "setup.py").is_file() else ""  # a second run
    for old in sorted(known):
        path = root / Path(*old.split(".")).with_suffix(".py")
        if not path.is_file():
            continue
        module = prefix + old
        origins = facade_origins(path, module)
        if origins is None:
            continue
        texts = {p: p.read_text(encoding="utf-8") for p in files if p != path and p.is_file()}
        holders = [p for p, t in texts.items() if module_imports(t, module)]
        if holders:
            report.append(f"kept facade {module}: imported as a module by "
                          + ", ".join(str(p.relative_to(root)) for p in holders))
            continue
        for file, text in texts.items():
            if module not in text:
                continue
            new = redirect_facade_imports(text, module, origins)
            if new != text:
                file.write_text(new, encoding="utf-8")
                changed.append(file)
        keeper = keep_docstring(root, path, module, origins)
        if keeper is not None:
            changed.append(keeper)
        path.unlink()
        moved = f"; docstring appended to {keeper.relative_to(root)}" if keeper else ""
        report.append(f"deleted facade {module} ({len(origins)} names){moved}")
    return changed


def edit_config(root: Path, report: list[str]) -> list[Path]:
    """setup.py, pyproject.toml's package finding and isort list, test_layers' switch."""
    changed = []
    setup = root / "setup.py"
    if not setup.is_file() or setup.read_text(encoding="utf-8") != SETUP_PY:
        setup.write_text(SETUP_PY, encoding="utf-8")
        changed.append(setup)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    new = re.sub(r"\[tool\.setuptools\.packages\.find\]\ninclude = \[[^\]]*\]\n\n", "", text)
    new = re.sub(r"^bench = (\[.*\])$", r'"consistency_bench.bench" = \1', new, flags=re.M)
    new = re.sub(r"^known-first-party = \[.*\]$", f'known-first-party = ["{NAMESPACE}"]',
                 new, flags=re.M)
    if new != text:
        pyproject.write_text(new, encoding="utf-8")
        changed.append(pyproject)
    layers_test = root / "tests" / "test_layers.py"
    if layers_test.is_file():
        text = layers_test.read_text(encoding="utf-8")
        new = text.replace('NAMESPACE = ""', f'NAMESPACE = "{NAMESPACE}."')
        if new != text:
            layers_test.write_text(new, encoding="utf-8")
            changed.append(layers_test)
    report.extend(f"edited {p.relative_to(root)}" for p in changed)
    return changed


LINE_LENGTH = 100
QUOTES = '"' * 3
NOQA = "# no" "qa: "  # split, so that ruff does not read this line's own directive
PRAGMA = re.compile(r"\s*#\s*(?:noqa|type:)[^#]*$")
BULLET = re.compile(r"^(\s*)((?:[*-]|\d+\.|#:?)\s+)?")


def _docstring_rows(text: str) -> tuple[dict[int, int], set[int]]:
    """Docstring rows (1-based) -> the docstring's last row; rows of other long strings."""
    docs: dict[int, int] = {}
    other: set[int] = set()
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            rows = set(range(token.start[0], token.end[0] + 1))
            is_doc = previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                  tokenize.NL)
            if is_doc:
                docs.update(dict.fromkeys(rows, token.end[0]))
            else:
                other.update(rows)
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
        elif token.type == tokenize.NL and previous in (tokenize.NEWLINE, tokenize.INDENT):
            previous = tokenize.NEWLINE
    return docs, other


def _wrap(line: str, continuation: str) -> list[str]:
    """``line`` broken at spaces into lines of at most LINE_LENGTH characters."""
    out = []
    while len(line) > LINE_LENGTH:
        cut = line.rfind(" ", len(continuation) + 1, LINE_LENGTH + 1)
        if cut <= len(line) - len(line.lstrip()):
            break  # one long word: leave it
        out.append(line[:cut].rstrip())
        line = continuation + line[cut + 1:].lstrip()
    return [*out, line]


def shorten_lines(text: str) -> str:
    """Lines the namespace made too long: docstrings and comments re-wrapped, code marked."""
    lines = text.split("\n")
    if not any(len(x) > LINE_LENGTH and NAMESPACE in x for x in lines):
        return text
    try:
        docs, other = _docstring_rows(text)
    except (tokenize.TokenError, SyntaxError):
        return text
    out: list[str] = []
    marked: set[int] = set()  # last rows of docstrings whose summary line stays long
    for row, line in enumerate(lines, start=1):
        code = PRAGMA.sub("", line)  # ruff does not count a trailing pragma comment
        if len(code) <= LINE_LENGTH or NAMESPACE not in line or "E501" in line:
            out.append(line)
            continue
        lead, marker = BULLET.match(line).groups()  # type: ignore[union-attr]
        stripped = line.lstrip()
        if row in docs:
            if stripped.startswith(('"""', 'r"""')):  # a summary line cannot be wrapped
                marked.add(docs[row])
                out.append(line)
            else:
                out += _wrap(line, lead + " " * len(marker or "") if marker and
                             not marker.startswith("#") else lead)
        elif stripped.startswith("#") and row not in other:
            out += _wrap(line, lead + (marker or "# "))
        elif row in other:
            out.append(line)  # text of a string: left as is, named by ruff
        elif NOQA in line:
            out.append(line.replace(NOQA, f"{NOQA}E501, ", 1))
        else:
            out.append(f"{line}  {NOQA}E501")
    if not marked:
        return "\n".join(out)
    # a directive after a docstring's closing quotes covers the whole docstring (ruff)
    text = "\n".join(out)
    docs, _ = _docstring_rows(text)
    lines = text.split("\n")
    for end in sorted({docs[r] for r, x in enumerate(lines, 1) if r in docs
                       and x.lstrip().startswith(('"""', 'r"""'))
                       and len(x) > LINE_LENGTH and NAMESPACE in x}):
        if "E501" not in lines[end - 1]:
            lines[end - 1] += f"  {NOQA}E501"
    return "\n".join(lines)


def relayout(root: Path) -> tuple[list[Path], list[str]]:
    """Apply the move to the tree at ``root``; the files changed and a summary."""
    report: list[str] = []
    known = layer_modules(root)
    changed = remove_facades(root, known, report)
    known = layer_modules(root)
    attributes = package_attributes(root)
    for path in files_to_rewrite(root):
        text = path.read_text(encoding="utf-8")
        new = rewrite_names(text, known, attributes)
        new = MYPY.sub(r"\1 scripts/typecheck.py", new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    changed += edit_config(root, report)
    return sorted(set(changed)), report


def main(argv: list[str] | None = None) -> int:
    """Rewrite the tree (or, with ``--check``, say whether there is something to rewrite)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when the tree is not yet moved")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.check:
        known = layer_modules(root)
        attributes = package_attributes(root)
        todo = [p for p in files_to_rewrite(root)
                if rewrite_names(p.read_text(encoding="utf-8"), known, attributes)
                != p.read_text(encoding="utf-8")]
        todo += [root / "setup.py"] if not (root / "setup.py").is_file() else []
        for path in todo:
            print(f"to rewrite: {path.relative_to(root)}")
        return 1 if todo else 0
    changed, report = relayout(root)
    python = [p for p in changed if p.suffix == ".py" and p.is_file()]
    if python:
        ruff = Path(sys.executable).with_name("ruff")
        subprocess.run([str(ruff if ruff.exists() else "ruff"), "check", "--quiet", "--fix",
                        "--select", "I,F401", *map(str, python)], cwd=root, check=False)
    for path in python:  # after ruff has wrapped the imports
        text = path.read_text(encoding="utf-8")
        new = shorten_lines(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
    if python:  # a line over the length that ruff exempts (no space after column 100)
        subprocess.run([str(ruff if ruff.exists() else "ruff"), "check", "--quiet", "--fix",
                        "--fixable", "RUF100", *map(str, python)], cwd=root, check=False)
    for line in report:
        print(line)
    print(f"{len(changed)} files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
