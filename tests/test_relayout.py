"""scripts/relayout.py (issue 29, phase B) on a planted tree: what it rewrites, what it leaves,
and that a second run changes nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _relayout():
    spec = importlib.util.spec_from_file_location("relayout", ROOT / "scripts" / "relayout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLANTED = {
    "bench/__init__.py": '__version__ = "1"\n',
    "bench/core.py": "def f():\n    return 1\n",
    "bench/facade.py": '"""Re-exports."""\n\nfrom bench.core import f\n\n__all__ = ["f"]\n',
    "builders/__init__.py": "",
    "builders/use.py": (
        "import bench\n"
        "import bench.core\n"
        "from bench import core\n"
        "from bench.facade import f  # noqa: E402\n"
        'JSON = "leaderboard.json"\n'
        'LAZY = "bench:__version__"\n'
        'PATCH = "bench.core.f"\n'
        'VERSION = "bench.__version__"\n'
        'CHILD = ["-m", "builders.use"]\n'
        "VALUE = bench.core.f() + core.f() + f()\n"
        "# leaderboard layer, bench/core.py, consistency-bench.bench\n"),
    "leaderboard/__init__.py": "",
    "consistency_bench/__init__.py": "",
    "tests/test_x.py": 'TARGET = "bench.facade.f"\n',
    "docs/a.md": "`bench.core.f`, leaderboard.json, `bench/core.py`; run `python -m mypy`.\n",
    "pyproject.toml": ('[tool.setuptools.packages.find]\ninclude = ["bench*"]\n\n'
                       '[tool.setuptools.package-data]\nbench = ["data/*"]\n\n'
                       '[tool.ruff.lint.isort]\nknown-first-party = ["bench", "builders"]\n'),
}


def test_relayout_rewrites_names_deletes_facades_and_is_idempotent(tmp_path):
    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    relayout = _relayout()
    _, report = relayout.relayout(tmp_path)
    assert "deleted facade bench.facade (1 names)" in report
    assert not (tmp_path / "bench" / "facade.py").exists()
    use = (tmp_path / "builders" / "use.py").read_text()
    assert use == (
        "from consistency_bench import bench\n"
        "import consistency_bench.bench.core\n"
        "from consistency_bench.bench import core\n"
        "from consistency_bench.bench.core import f  # noqa: E402\n"
        'JSON = "leaderboard.json"\n'
        'LAZY = "consistency_bench.bench:__version__"\n'
        'PATCH = "consistency_bench.bench.core.f"\n'
        'VERSION = "consistency_bench.bench.__version__"\n'
        'CHILD = ["-m", "consistency_bench.builders.use"]\n'
        "VALUE = consistency_bench.bench.core.f() + core.f() + f()\n"
        "# leaderboard layer, bench/core.py, consistency-bench.bench\n")
    assert (tmp_path / "tests" / "test_x.py").read_text() == (
        'TARGET = "consistency_bench.bench.core.f"\n')
    assert (tmp_path / "docs" / "a.md").read_text() == (
        "`consistency_bench.bench.core.f`, leaderboard.json, `bench/core.py`; "
        "run `python scripts/typecheck.py`.\n")
    pyproject = (tmp_path / "pyproject.toml").read_text()
    assert "packages.find" not in pyproject
    assert '"consistency_bench.bench" = ["data/*"]' in pyproject
    assert 'known-first-party = ["consistency_bench"]' in pyproject
    assert "package_dir" in (tmp_path / "setup.py").read_text()
    assert relayout.relayout(tmp_path)[0] == []  # a second run changes nothing


def test_long_lines_are_wrapped_in_docstrings_and_comments_and_marked_in_code():
    relayout = _relayout()
    word = "consistency_bench.bench.scoring"
    text = (f'"""{"S" * 80} {word}."""\n\n'
            f'def f():\n    """Summary.\n\n    {"x " * 40}{word} and {word} end.\n    """\n'
            f"    # {'y ' * 40}{word} {word}\n"
            f"    return '{word}' + '{word}' + '{word}' + '{word}'\n")
    lines = relayout.shorten_lines(text).split("\n")
    assert lines[0].endswith("# noqa: E501")  # a summary line: the directive after the quotes
    assert all(len(x) <= 100 for x in lines[1:-2]), lines
    assert lines[-2].endswith("  # noqa: E501")
    assert relayout.shorten_lines("\n".join(lines)) == "\n".join(lines)
