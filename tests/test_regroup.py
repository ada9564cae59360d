"""scripts/regroup.py (issue 29, item 3) on a planted tree: files moved, every kind of reference
rewritten, a second run changes nothing, and code added later with the old names is rewritten
by a third run (what the lead does after merging a branch written before the regroup)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def regroup(monkeypatch):
    spec = importlib.util.spec_from_file_location("regroup", ROOT / "scripts" / "regroup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    moves = {"bench/old_mod.py": "bench/pkg/new_mod.py", "bench/thing.py": "bench/thing/core.py"}
    monkeypatch.setattr(module, "MOVES", moves)
    monkeypatch.setattr(module, "OLD", {module.dotted(a): module.dotted(b)
                                        for a, b in moves.items()})
    monkeypatch.setattr(module, "PACKAGES", {"bench/pkg": "Planted."})
    return module


PLANTED = {
    "setup.py": "",
    "bench/__init__.py": "",
    "bench/old_mod.py": "def f():\n    return 1\n",
    "bench/thing.py": "def g():\n    return 2\n",
    "builders/__init__.py": "",
    "builders/use.py": (
        "from consistency_bench.bench import old_mod\n"
        "from consistency_bench.bench.old_mod import f\n"
        "from consistency_bench.bench.thing import g\n"
        'PATCH = "consistency_bench.bench.old_mod.f"\n'
        'CHILD = ["-m", "consistency_bench.bench.thing"]\n'
        'CODE = "from consistency_bench.bench import old_mod, thing as t\\n"\n'
        "VALUE = old_mod.f() + f() + g()\n"),
    "leaderboard/__init__.py": "",
    "docs/a.md": "`bench/old_mod.py` and `consistency_bench.bench.thing.g`; `bench/other.py`.\n",
}


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _texts(root: Path) -> dict[Path, str]:
    return {p: p.read_text() for p in root.rglob("*") if p.suffix in (".py", ".md")}


def test_regroup_moves_rewrites_and_is_rerunnable(regroup, tmp_path):
    _plant(tmp_path, PLANTED)
    assert regroup.main(["--root", str(tmp_path), "--check"]) == 1
    assert regroup.main(["--root", str(tmp_path)]) == 0
    assert not (tmp_path / "bench/old_mod.py").exists()
    assert (tmp_path / "bench/pkg/new_mod.py").read_text() == "def f():\n    return 1\n"
    assert (tmp_path / "bench/pkg/__init__.py").read_text() == '"""Planted."""\n'
    assert (tmp_path / "bench/thing/core.py").is_file()
    use = (tmp_path / "builders/use.py").read_text()
    assert "from consistency_bench.bench.pkg import new_mod as old_mod\n" in use
    assert "from consistency_bench.bench.pkg.new_mod import f\n" in use
    assert "from consistency_bench.bench.thing.core import g\n" in use
    assert '"consistency_bench.bench.pkg.new_mod.f"' in use
    assert '"-m", "consistency_bench.bench.thing.core"' in use
    assert ('"from consistency_bench.bench.pkg import new_mod as old_mod\\n'
            'from consistency_bench.bench.thing import core as t\\n"') in use
    assert (tmp_path / "docs/a.md").read_text() == (
        "`bench/pkg/new_mod.py` and `consistency_bench.bench.thing.core.g`; `bench/other.py`.\n")
    assert regroup.main(["--root", str(tmp_path), "--check"]) == 0
    snapshot = _texts(tmp_path)
    assert regroup.main(["--root", str(tmp_path)]) == 0  # a second run changes nothing
    assert _texts(tmp_path) == snapshot
    # a merged branch's code written against the old names, namespaced or not
    _plant(tmp_path, {"leaderboard/late.py": "from bench.old_mod import f\n"
                                              "import consistency_bench.bench.thing\n"
                                              "X = consistency_bench.bench.thing.g\n"
                                              "Y = f\n"})
    assert regroup.main(["--root", str(tmp_path), "--check"]) == 1
    assert regroup.main(["--root", str(tmp_path)]) == 0
    late = (tmp_path / "leaderboard/late.py").read_text()
    assert "from consistency_bench.bench.pkg.new_mod import f\n" in late
    assert "X = consistency_bench.bench.thing.core.g\n" in late


def test_regroup_refuses_a_tree_with_old_and_new_file(regroup, tmp_path):
    _plant(tmp_path, {**PLANTED, "bench/pkg/__init__.py": "", "bench/pkg/new_mod.py": ""})
    with pytest.raises(SystemExit, match=r"both bench/old_mod\.py and bench/pkg/new_mod\.py"):
        regroup.main(["--root", str(tmp_path)])
