"""Run mypy on the files ``[tool.mypy]`` names, under the names the package installs them as.

Once the layer folders install under ``consistency_bench`` (setup.py's ``package_dir``,
issue 29), ``bench/metrics/x.py`` is the module ``consistency_bench.bench.metrics.x``. mypy
cannot follow setuptools' editable import hook, so this script builds the installed layout
as a tree of symbolic links in ``build/mypy-tree/`` (ignored by git; remade each run) and runs
mypy there with the repository's ``pyproject.toml``. Before the move (no ``package_dir`` in
setup.py) it runs plain ``python scripts/typecheck.py`` in the repository. Exit status: mypy's.

Usage: ``.venv/bin/python scripts/typecheck.py [MYPY ARGS...]``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "consistency_bench"
LAYERS = ("bench", "builders", "leaderboard")
TREE = ROOT / "build" / "mypy-tree"


def namespaced(root: Path = ROOT) -> bool:
    """Whether setup.py installs the layer folders under :data:`PACKAGE`."""
    setup = root / "setup.py"
    return setup.is_file() and "package_dir" in setup.read_text(encoding="utf-8")


def link_tree(root: Path = ROOT, tree: Path = TREE) -> Path:
    """``tree/consistency_bench/`` linking the package's entries and the three layer folders."""
    if tree.is_symlink() or tree.is_file():
        raise SystemExit(f"error: {tree} is not a folder this script made")
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / PACKAGE
    package.mkdir(parents=True)
    for entry in sorted((root / PACKAGE).iterdir()):
        if entry.name not in LAYERS and entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for layer in LAYERS:
        (package / layer).symlink_to(root / layer, target_is_directory=True)
    return tree


def main(argv: list[str]) -> int:
    """Run mypy (in the link tree once the layers are namespaced); its exit status."""
    if not namespaced():
        return subprocess.call([sys.executable, "-m", "mypy", *argv], cwd=ROOT)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    files = config["tool"]["mypy"]["files"]
    tree = link_tree()
    names = [f"{PACKAGE}/{f}" if f.split("/")[0] in LAYERS else f for f in files]
    return subprocess.call([sys.executable, "-m", "mypy", "--config-file",
                            str(ROOT / "pyproject.toml"), "--cache-dir",
                            str(ROOT / ".mypy_cache"), *argv, *names], cwd=tree)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
