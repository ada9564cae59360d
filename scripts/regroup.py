"""Issue 29, item 3: regroup the flat, prefix-named modules into subpackages by job.

One explicit map, :data:`MOVES` (old file -> new file, paths of the repository), is applied
to a tree whose layers already install under ``consistency_bench`` (run
``scripts/relayout.py`` first)::

    .venv/bin/python scripts/relayout.py     # namespace (a no-op when already done)
    .venv/bin/python scripts/regroup.py      # move the modules, rewrite every reference
    .venv/bin/python -m pip install -e . --no-deps --no-build-isolation

For each move whose old file exists it ``git mv``-s the file (creating the new package with an
``__init__.py`` that has a one-line docstring, :data:`PACKAGES`), then rewrites every reference
in the same files ``scripts/relayout.py`` rewrites (code, tests, scripts, benchmarks, docs):

1. dotted names, namespaced or not (imports, ``mock.patch("...x.f")`` targets, ``"-m"``
   arguments, ``"module:object"`` strings, docstrings): the longest old module prefix is
   replaced by the new module, always namespaced (``bench.tsv`` in code merged from a branch
   written before the move becomes ``consistency_bench.bench.io.tsv``); a name whose longest
   prefix is a module of the current tree longer than the old one (``...review.checks`` once
   ``review.py`` became ``review/``) is left;
2. ``from PACKAGE import old_leaf`` (a module imported by its name): the moved module is
   imported from its new package, under its old name when the file was renamed
   (``from consistency_bench.leaderboard.hub import pull_requests as hub_requests``);
3. file paths (``leaderboard/hub_eval.py``, ``consistency_bench/bench/scoring.py``).

Then ruff sorts the imports it touched and the lines made too long are re-wrapped as
scripts/relayout.py does. Idempotent: a second run, or a run on a tree that later gains code
written against the old names (a merged branch), changes only those references. A tree where
both the old and the new file exist (a merge that did not follow the rename) is refused:
merge the old file's changes into the new one by hand, delete it, and run again.

``--check`` changes nothing and exits 1 if there is something to do.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "consistency_bench"
LAYERS = ("bench", "builders", "leaderboard")

#: Old file -> new file. The only list of the regroup; everything else is derived from it.
MOVES = {
    # bench: input/output helpers
    "bench/atomic_write.py": "bench/io/write.py",
    "bench/atomic_folder.py": "bench/io/staged_folder.py",
    "bench/json_input.py": "bench/io/json_input.py",
    "bench/safe_yaml.py": "bench/io/safe_yaml.py",
    "bench/tsv.py": "bench/io/tsv.py",
    "bench/arrays.py": "bench/io/arrays.py",
    "bench/output_checks.py": "bench/io/output_checks.py",
    "bench/manifest.py": "bench/io/manifest.py",
    # bench: the lm-evaluation-harness route
    "bench/lm_eval_export.py": "bench/lm_eval/export_tasks.py",
    "bench/lm_eval_convert.py": "bench/lm_eval/convert_samples.py",
    # bench: running models
    "bench/predict.py": "bench/runner/predict_run.py",
    "bench/causal.py": "bench/runner/causal.py",
    "bench/distributed.py": "bench/runner/distributed.py",
    # bench: what a model sees (inputs, prompts, few-shot pools; builders read the pools too)
    "bench/inputs.py": "bench/prompting/row_inputs.py",
    "bench/prompts.py": "bench/prompting/prompts.py",
    "bench/fewshot.py": "bench/prompting/demonstrations.py",
    "bench/training.py": "bench/baselines/training.py",
    "bench/runner/inputs.py": "bench/runner/unique_inputs.py",
    "bench/served/run.py": "bench/served/served_run.py",
    "bench/modeling/labels.py": "bench/modeling/label_map.py",
    "bench/modeling/kinds.py": "bench/modeling/model_kinds.py",
    # bench: registries
    "bench/registry.py": "bench/registries/registry.py",
    "bench/tasks.py": "bench/registries/tasks.py",
    "bench/families.py": "bench/registries/families.py",
    "bench/sources.py": "bench/registries/source_files.py",
    # bench: scoring
    "bench/scoring.py": "bench/scoring/engine.py",
    "bench/bootstrap.py": "bench/scoring/bootstrap.py",
    "bench/report.py": "bench/scoring/text_report.py",
    "bench/results.py": "bench/scoring/results_json.py",
    "bench/contamination.py": "bench/scoring/contamination.py",
    "bench/convert_becel.py": "bench/predictions/becel_arrays.py",
    # builders
    "builders/additive.py": "builders/becel/additive.py",
    "builders/salad/pbsmt_train.py": "builders/salad/pbsmt/phrase_table.py",
    "builders/salad/pbsmt_lm.py": "builders/salad/pbsmt/language_model.py",
    "builders/salad/pbsmt_decode.py": "builders/salad/pbsmt/decode.py",
    "builders/salad/pbsmt_constants.py": "builders/salad/pbsmt/decoder_constants.py",
    "builders/salad/pbsmt_rows.py": "builders/salad/pbsmt/suite_rows.py",
    "builders/salad/stack_decoder.py": "builders/salad/pbsmt/stack_decoder.py",
    "builders/generate/run.py": "builders/generate/generate_run.py",
    # builders: the prefix-named siblings left after the first regroup (stop 37)
    "builders/build.py": "builders/build/run.py",
    "builders/build_pool.py": "builders/build/pool.py",
    "builders/card.py": "builders/card/render.py",
    "builders/card_data.py": "builders/card/data.py",
    "builders/card_figures.py": "builders/card/figures.py",
    "builders/suite.py": "builders/suite/spec.py",
    "builders/suite_write.py": "builders/suite/write.py",
    "builders/salad/gradient.py": "builders/salad/gradient/transform.py",
    "builders/salad/gradient_rows.py": "builders/salad/gradient/suites.py",
    "builders/salad/lexical.py": "builders/salad/lexical/transform.py",
    "builders/salad/lexical_rows.py": "builders/salad/lexical/rows.py",
    # leaderboard
    "leaderboard/hub_eval.py": "leaderboard/hub/eval_results.py",
    "leaderboard/hub_requests.py": "leaderboard/hub/pull_requests.py",
    "leaderboard/hub_verify.py": "leaderboard/hub/verify_published.py",
    "leaderboard/publish_commit.py": "leaderboard/publish/commit.py",
    "leaderboard/publish_plans.py": "leaderboard/publish/plans.py",
    "leaderboard/publish_model.py": "leaderboard/publish/model_results.py",
    "leaderboard/publish_run.py": "leaderboard/publish/steps.py",
    "leaderboard/submissions_meta.py": "leaderboard/submissions/meta.py",
    "leaderboard/submissions_store.py": "leaderboard/submissions/storage.py",
    "leaderboard/submissions_read.py": "leaderboard/submissions/reader.py",
    "leaderboard/submissions_rescore.py": "leaderboard/submissions/rescore.py",
    "leaderboard/review.py": "leaderboard/review/loop.py",
    "leaderboard/review_checks.py": "leaderboard/review/checks.py",
    "leaderboard/reviewer.py": "leaderboard/review/reviewer.py",
    "leaderboard/page.py": "leaderboard/webpage/page.py",
    "leaderboard/page_assets.py": "leaderboard/webpage/static.py",
    "leaderboard/render.py": "leaderboard/webpage/render.py",
    "leaderboard/render_format.py": "leaderboard/webpage/formatting.py",
    "leaderboard/build_site.py": "leaderboard/webpage/build_site.py",
    "leaderboard/reproduce/entry.py": "leaderboard/reproduce/rerun.py",
    "leaderboard/reproduce/entry_files.py": "leaderboard/reproduce/run_records.py",
}

#: The docstring of each package the map creates.
PACKAGES = {
    "bench/io": "Input and output helpers: atomic files and folders, bounded JSON and YAML, TSV.",
    "bench/lm_eval": "The lm-evaluation-harness route: suites as tasks, samples back to "
                     "predictions.",
    "bench/prompting": "What a model sees: each row's input, causal-LM prompts and verbalisers, "
                       "few-shot pools.",
    "bench/registries": "The registries: the registry type, tasks, families, source files.",
    "bench/scoring": "Scoring: suites against predictions, bootstrap, results JSON, text "
                     "report.",
    "builders/build": "One ``build`` run and the pool of processes that builds its suites.",
    "builders/card": "The dataset card: its rendering, what it states as data, the figures "
                     "of the rows.",
    "builders/suite": "Suites: the typed spec and its registry, and writing one built suite.",
    "builders/salad/gradient": "Gradient-based word salad (Drop, Repeat, Replace, CopyOne): "
                               "transforms, suite specs.",
    "builders/salad/lexical": "Lexical-overlap word salad (Sort, Reverse, Shuffle, CopySort): "
                              "transforms, rows.",
    "leaderboard/hub": "The leaderboard on the Hub: Eval Results, pull-request submissions, "
                       "verify.",
    "leaderboard/publish": "Publishing: plans, the one commit, a model's results, the "
                           "command's steps.",
    "leaderboard/submissions": "The ``submissions/`` folder: metadata, storage, reader, rescore.",
    "leaderboard/review": "``review``: the maintainer's loop over submission pull requests.",
}


def _relayout():
    """scripts/relayout.py as a module (its file list and line re-wrapping are shared)."""
    spec = importlib.util.spec_from_file_location("relayout", ROOT / "scripts" / "relayout.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def dotted(path: str) -> str:
    """``bench/io/write.py`` -> ``consistency_bench.bench.io.write``."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([NAMESPACE, *parts])


OLD = {dotted(old): dotted(new) for old, new in MOVES.items()}


def current_modules(root: Path) -> set[str]:
    """Namespaced dotted names of every module and package of the layer folders now."""
    names = set()
    for layer in LAYERS:
        for path in (root / layer).rglob("*.py"):
            relative = path.relative_to(root)
            names.add(dotted(relative.as_posix()))
            names.update(dotted(f"{p.as_posix()}/__init__.py")
                         for p in relative.parents if str(p) != ".")
    return names


DOTTED = re.compile(r"(?<![\w.\-/])((?:" + NAMESPACE + r"\.)?)((?:" + "|".join(LAYERS)
                    + r")(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"(?<![\w.\-])((?:" + NAMESPACE + r"/)?)((?:" + "|".join(LAYERS)
                  + r")(?:/\w+)+\.py)\b")


IMPORTED = re.compile(r"\s+import\s+(\w+)")


def rewrite_dotted(text: str, current: set[str]) -> str:
    """Dotted references to old modules put on the new ones (namespaced or not, as found)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(2)
        full = f"{NAMESPACE}.{name}"
        parts = full.split(".")
        prefixes = [".".join(parts[:i]) for i in range(len(parts), 1, -1)]
        old = next((p for p in prefixes if p in OLD), None)
        if old is None:
            return match.group(0)
        now = next((p for p in prefixes if p in current), "")
        if len(now) > len(old):
            return match.group(0)  # already a module of the new layout
        after = IMPORTED.match(text, match.end())
        if full == old and after and f"{full}.{after.group(1)}" in current:
            return match.group(0)  # ``from PACKAGE import module``: the package, new layout
        return OLD[old] + full[len(old):]  # namespaced: the tree is (relayout.py ran)

    return DOTTED.sub(one, text)


def rewrite_paths(text: str) -> str:
    """File paths of moved modules replaced by their new paths."""

    def one(match: re.Match[str]) -> str:
        prefix, path = match.groups()
        return prefix + MOVES.get(path, path)

    return PATH.sub(one, text)


def rewrite_from_imports(text: str) -> str:
    """``from PACKAGE import leaf`` of a moved module: imported from its new package."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
            continue
        base = node.module if node.module.startswith(NAMESPACE) else f"{NAMESPACE}.{node.module}"
        if not any(f"{base}.{a.name}" in OLD for a in node.names):
            continue
        edits.append((node, base))
    for node, base in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        first, last = node.lineno - 1, node.end_lineno or node.lineno
        indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
        tail = lines[last - 1][node.end_col_offset:].strip()
        kept, out = [], []
        for alias in node.names:
            new = OLD.get(f"{base}.{alias.name}")
            if new is None:
                kept.append(alias.name if alias.asname is None
                            else f"{alias.name} as {alias.asname}")
                continue
            package, _, leaf = new.rpartition(".")
            bound = alias.asname or alias.name
            out.append(f"{indent}from {package} import {leaf}"
                       + (f" as {bound}" if bound != leaf else ""))
        if kept:
            out.insert(0, f"{indent}from {node.module} import {', '.join(kept)}")
        if tail.startswith("#"):
            out = [f"{line}  {tail}" for line in out]
        lines[first:last] = [line + "\n" for line in out]
    return "".join(lines)


FROM_LINE = re.compile(r"""(?m)(^[ \t]*(?:>>> |\.\.\. )?|["']|\\n)from ((?:""" + NAMESPACE
                       + r"\.)?(?:" + "|".join(LAYERS) + r""")(?:\.\w+)*) import ([\w ,]+?)"""
                       + r"""(\\n|(?=["'])|$)""")


def rewrite_from_lines(text: str) -> str:
    """One-line ``from PACKAGE import a, b as c`` in strings and docs, rewritten as in code.

    The AST sees only code; a child process's source held in a string, a doctest or a docs
    page imports the moved module from its new package too.
    """

    def one(match: re.Match[str]) -> str:
        lead, module, names, end = match.groups()
        base = module if module.startswith(NAMESPACE) else f"{NAMESPACE}.{module}"
        aliases = [n.strip().split(" as ") for n in names.split(",")]
        if not any(f"{base}.{a[0].strip()}" in OLD for a in aliases):
            return match.group(0)
        kept, out = [], []
        for alias in aliases:
            name, bound = alias[0].strip(), alias[-1].strip()
            new = OLD.get(f"{base}.{name}")
            if new is None:
                kept.append(name if bound == name else f"{name} as {bound}")
                continue
            package, _, leaf = new.rpartition(".")
            out.append(f"from {package} import {leaf}" + (f" as {bound}" if bound != leaf else ""))
        if kept:
            out.insert(0, f"from {module} import {', '.join(kept)}")
        if end == "\\n" or lead in ("\"", "'", "\\n"):  # in a string: joined by a \\n escape
            return lead + "\\n".join(out) + end
        return lead + ("\n" + lead).join(out) + end

    return FROM_LINE.sub(one, text)


def move_files(root: Path, report: list[str]) -> list[Path]:
    """``git mv`` each old file that exists; new packages get an ``__init__.py``."""
    created = []
    for old, new in MOVES.items():
        source, target = root / old, root / new
        if not source.is_file():
            continue
        if target.exists():
            raise SystemExit(f"error: both {old} and {new} exist: merge {old}'s changes into "
                             f"{new}, delete {old}, and run again")
        package = target.parent
        if not (package / "__init__.py").is_file():
            package.mkdir(parents=True, exist_ok=True)
            doc = PACKAGES.get(package.relative_to(root).as_posix(), "")
            (package / "__init__.py").write_text(f'"""{doc}"""\n' if doc else "",
                                                 encoding="utf-8")
            subprocess.run(["git", "add", str(package / "__init__.py")], cwd=root,
                           check=False, capture_output=True)
            created.append(package / "__init__.py")
        moved = subprocess.run(["git", "mv", old, new], cwd=root, capture_output=True)
        if moved.returncode != 0:  # not a git tree, or an untracked file
            source.rename(target)
        report.append(f"moved {old} -> {new}")
        created.append(target)
    return created


def rewrite(text: str, current: set[str], python: bool) -> str:
    """One file's text with every reference to a moved module rewritten."""
    new = rewrite_from_imports(text) if python else text
    return rewrite_paths(rewrite_dotted(rewrite_from_lines(new), current))


def main(argv: list[str] | None = None) -> int:
    """Move and rewrite (or, with ``--check``, say whether there is something to do)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when something is left to do")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    relayout = _relayout()
    if not (root / "setup.py").is_file():
        print("error: run scripts/relayout.py first (the layers are not namespaced)",
              file=sys.stderr)
        return 2
    if args.check:
        current = current_modules(root)
        todo = [root / old for old in MOVES if (root / old).is_file()]
        me = Path(__file__).resolve()
        todo += [p for p in relayout.files_to_rewrite(root) if p.resolve() != me
                 and rewrite(p.read_text(encoding="utf-8"), current, p.suffix == ".py")
                 != p.read_text(encoding="utf-8")]
        for path in todo:
            print(f"to do: {path.relative_to(root)}")
        return 1 if todo else 0
    report: list[str] = []
    changed = move_files(root, report)
    current = current_modules(root)
    for path in relayout.files_to_rewrite(root):
        if path.resolve() == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, current, path.suffix == ".py")
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    python = sorted({str(p) for p in changed if p.suffix == ".py" and p.is_file()})
    ruff = Path(sys.executable).with_name("ruff")
    ruff_command = str(ruff if ruff.exists() else "ruff")
    if python:
        subprocess.run([ruff_command, "check", "--quiet", "--fix", "--select", "I,F401",
                        *python], cwd=root, check=False)
        for name in python:
            path = Path(name)
            text = path.read_text(encoding="utf-8")
            new = relayout.shorten_lines(text)
            if new != text:
                path.write_text(new, encoding="utf-8")
        subprocess.run([ruff_command, "check", "--quiet", "--fix", "--fixable", "RUF100",
                        *python], cwd=root, check=False)
    for line in report:
        print(line)
    print(f"{len(set(changed))} files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
