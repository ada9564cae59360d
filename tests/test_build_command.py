"""``build``: up-to-date suites are kept, the pool keeps the output order, a killed or failed
build leaves the folder as it was, and bad ``--out`` / ``--family`` values exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from consistency_bench.bench.errors import ConfigError, DataError
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.build import pool as build_pool
from consistency_bench.builders.catalog import SUITES
from consistency_bench.builders.export import build_all
from consistency_bench.builders.freshness import PACKAGE_ROOT, code_files, code_version
from tests.helpers import CORPORA, python_stdout

SMALL = ["rte_calm", "mrpc_symmetric", "rte_negational"]  # three families of code, < 1 s each


def _resolver(corpora: Path) -> SourceResolver:
    return SourceResolver(corpora, download=False)


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` by relative path: (inode, mtime in ns)."""
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_second_build_keeps_up_to_date_suites(corpora, tmp_path):
    out = tmp_path / "built"
    specs = [SUITES[n] for n in SMALL]
    first = build_all(specs, _resolver(corpora), out, log=lambda _: None)
    assert first.built == SMALL and not first.up_to_date
    assert all(e["code_version"] == code_version() for e in first.manifest.values())
    before = _snapshot(out)
    lines = []
    second = build_all(specs, _resolver(corpora), out, log=lines.append)
    assert second.built == [] and second.up_to_date == SMALL
    assert all(line.endswith("up to date") for line in lines)
    assert _snapshot(out) == before  # nothing rewritten at all
    assert second.manifest == first.manifest


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda e, p: e.update(code_version="0" * 64), "builder code changed"),
        (lambda e, p: e.update(version="0.0.0"), "suite version changed"),
        (lambda e, p: e["sources"][0].update(md5="0" * 32), "source md5 changed"),
        (lambda e, p: p.write_bytes(p.read_bytes() + b"x"), "Parquet file changed"),
    ],
)
def test_a_changed_dependency_rebuilds_the_suite(corpora, tmp_path, change, why):
    out = tmp_path / "built"
    specs = [SUITES[n] for n in SMALL[:2]]
    first = build_all(specs, _resolver(corpora), out, log=lambda _: None)
    manifest_path = out / "suites.json"
    payload = json.loads(manifest_path.read_text())
    change(payload["suites"]["rte_calm"], out / "rte_calm" / "test.parquet")
    manifest_path.write_text(json.dumps(payload))
    again = build_all(specs, _resolver(corpora), out, log=lambda _: None)
    assert again.built == ["rte_calm"], why
    assert again.up_to_date == ["mrpc_symmetric"]
    assert again.manifest == first.manifest  # rebuilt byte-identical


def test_pool_gives_the_same_folder_in_the_same_order(corpora, tmp_path):
    specs = [SUITES[n] for n in SMALL]
    lines_1, lines_2 = [], []
    one = build_all(specs, _resolver(corpora), tmp_path / "one", log=lines_1.append, jobs=1)
    two = build_all(specs, _resolver(corpora), tmp_path / "two", log=lines_2.append, jobs=2)
    assert one.manifest == two.manifest
    assert lines_1 == lines_2
    for name in ("suites.json", "README.md"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_pool_started_costliest_first_keeps_the_order(corpora, tmp_path):
    # The last suite is declared the costliest, so the pool starts it first; the folder and
    # the log are still those of a one-process build, in the order asked for.
    from dataclasses import replace

    specs = [replace(SUITES[n], build_cost=float(k + 1)) for k, n in enumerate(SMALL)]
    lines_1, lines_2 = [], []
    one = build_all(specs, _resolver(corpora), tmp_path / "one", log=lines_1.append, jobs=1)
    two = build_all(specs, _resolver(corpora), tmp_path / "two", log=lines_2.append, jobs=2)
    assert one.manifest == two.manifest and lines_1 == lines_2
    # after the suites, the few-shot pools log what they dropped (issue 32, item 9)
    suites = [line.split()[0] for line in lines_2 if not line.startswith("few-shot pool ")]
    assert suites == SMALL


def _parted(spec, count: int):
    """``spec`` built in ``count`` parts: part ``p`` keeps the rows of the groups ``= p`` mod
    ``count``, keyed by the group's first row (the rows are those of ``spec.build``)."""
    from dataclasses import replace

    def build_part(resolver, part):
        keyed, first = [], {}
        for k, row in enumerate(spec.build(resolver)):
            first.setdefault(row["group"], (k, len(first)))
            at, index = first[row["group"]]
            if index % count == part:
                if not keyed or keyed[-1][0] != at:
                    keyed.append((at, []))
                keyed[-1][1].append(row)
        return keyed

    return replace(spec, parts=tuple(range(count)), build_part=build_part, build_cost=5.0)


def test_suite_built_in_parts_by_the_pool_is_the_suite_built_whole(corpora, tmp_path):
    specs = [SUITES["rte_calm"], _parted(SUITES["mrpc_symmetric"], 3), SUITES["rte_negational"]]
    lines_1, lines_2, lines_3 = [], [], []
    one = build_all(specs, _resolver(corpora), tmp_path / "one", log=lines_1.append, jobs=1)
    two = build_all(specs, _resolver(corpora), tmp_path / "two", log=lines_2.append, jobs=2)
    whole = build_all([SUITES[n] for n in SMALL], _resolver(corpora), tmp_path / "whole",
                      log=lines_3.append, jobs=2)
    assert one.manifest == two.manifest == whole.manifest
    assert lines_1 == lines_2 == lines_3
    for name in ("suites.json", "README.md", "mrpc_symmetric/test.parquet"):
        assert ((tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
                == (tmp_path / "whole" / name).read_bytes())


def test_pool_tasks_start_costliest_parts_first():
    from dataclasses import replace

    specs = [replace(SUITES["rte_calm"], build_cost=3.0), _parted(SUITES["mrpc_symmetric"], 2),
             SUITES["rte_negational"]]
    # rte_calm (3) before the parts of the 5-second suite (2.5 each), then the 1-second one
    assert build_pool.pool_tasks(specs) == [(0, None), (1, 0), (1, 1), (2, None)]


def test_a_failed_part_fails_the_build(corpora, tmp_path):
    from dataclasses import replace

    def broken(resolver, part):
        if part == 1:
            raise DataError("part 1 is broken")
        return []

    spec = replace(_parted(SUITES["mrpc_symmetric"], 2), build_part=broken)
    with pytest.raises(DataError, match="part 1 is broken"):
        build_all([spec, SUITES["rte_calm"]], _resolver(corpora), tmp_path / "b", jobs=2,
                  log=lambda _: None)
    assert not (tmp_path / "b").exists()


def test_a_failed_first_build_leaves_no_folder(corpora, tmp_path, monkeypatch):
    real = build_pool.build_suite

    def crash_on_second(spec, resolver, root):
        if spec.name == SMALL[1]:
            raise DataError("simulated crash")
        return real(spec, resolver, root)

    monkeypatch.setattr(build_pool, "build_suite", crash_on_second)  # the workers call it
    out = tmp_path / "built"
    with pytest.raises(DataError, match="simulated"):
        build_all([SUITES[n] for n in SMALL], _resolver(corpora), out, log=lambda _: None)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary sibling left either


def test_a_failed_rebuild_leaves_the_folder_as_it_was(corpora, tmp_path, monkeypatch):
    out = tmp_path / "built"
    build_all([SUITES["mrpc_symmetric"]], _resolver(corpora), out, log=lambda _: None)
    before = {p: (out / p).read_bytes() for p in _snapshot(out)}

    def crash(spec, resolver, root):
        raise DataError("simulated crash")

    monkeypatch.setattr(build_pool, "build_suite", crash)
    with pytest.raises(DataError):
        build_all([SUITES["rte_calm"]], _resolver(corpora), out, log=lambda _: None)
    assert {p: (out / p).read_bytes() for p in _snapshot(out)} == before


def test_killed_build_leaves_no_half_built_folder(corpora, tmp_path):
    """kill -9 during a first build: ``--out`` does not exist afterwards (only a hidden temp)."""
    out = tmp_path / "built"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "consistency_bench", "build", "--sources", str(corpora),
         "--out", str(out), "--family", "calm", "--jobs", "1", "--no-download"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    for line in proc.stdout:  # kill as soon as the first suite has been written
        if "rows" in line:
            proc.kill()
            break
    proc.wait()
    assert not out.exists()


def test_unwritable_out_is_a_clean_error(corpora, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr("tempfile.mkdtemp", refuse)
    with pytest.raises(ConfigError, match="cannot write there"):
        build_all([SUITES["mrpc_symmetric"]], _resolver(corpora), tmp_path / "b", log=print)


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "consistency_bench", "build", *args],
        capture_output=True, text=True, env=env, cwd=cwd or PACKAGE_ROOT,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--family", "becell"], "Unknown family 'becell'. Did you mean: becel?"),
        (["--family", "calm", "--suites", "snli_negational"], "none of --suites"),
        (["--out", "{file}"], "is a file"),
        (["--out", "{other}"], "not a consistency-bench build"),
        (["--jobs", "0"], "--jobs 0"),
        (["--out", "."], "is the current folder"),
    ],
)
def test_bad_build_arguments_exit_2(tmp_path, args, message):
    (tmp_path / "file").write_text("keep me")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep me too")
    args = [a.format(file=tmp_path / "file", other=tmp_path / "other") for a in args]
    result = _cli("--sources", str(CORPORA), "--no-download", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (tmp_path / "file").read_text() == "keep me"
    assert (tmp_path / "other" / "notes.txt").read_text() == "keep me too"


def test_overwrite_replaces_a_foreign_folder(corpora, tmp_path):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    result = _cli("--sources", str(corpora), "--no-download", "--suites", "mrpc_symmetric",
                  "--out", str(tmp_path / "other"), "--overwrite")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == [
        "README.md", "fewshot", "mrpc_symmetric", "suites.json"]
    assert oct((tmp_path / "other").stat().st_mode & 0o777) != oct(0o700)


def test_qqp_skip_is_one_line(corpora, tmp_path):
    result = _cli("--sources", str(corpora), "--no-download", "--family", "calm",
                  "--out", str(tmp_path / "b"), "--jobs", "2")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "skipped" in line]
    assert len(lines) == 2, result.stdout  # the one skip line and the summary
    assert lines[0].startswith("skipped 2 suites (qqp_calm, qqp_calm_t2t)")
    assert "looked in" not in lines[0]
    assert result.stdout.strip().splitlines()[-1].startswith("built 12 suites, 2 skipped")
    again = _cli("--sources", str(corpora), "--no-download", "--family", "calm",
                 "--out", str(tmp_path / "b"))
    assert "built 0 suites, 12 up to date, 2 skipped" in again.stdout


def test_code_version_covers_every_module_the_catalogue_imports():
    script = (
        "import sys, consistency_bench.builders.catalog\n"
        "for name, module in sorted(sys.modules.items()):\n"
        "    parts = name.split('.')\n"
        "    parts = parts[1:] if parts[0] == 'consistency_bench' else parts\n"  # issue 29
        "    if parts and parts[0] in ('bench', 'builders') and getattr(module, '__file__', 0):\n"
        "        print(module.__file__)\n"
    )
    loaded = python_stdout(script).split()
    hashed = {str(p) for p in code_files()}
    assert loaded and set(loaded) <= hashed, sorted(set(loaded) - hashed)


@pytest.mark.parametrize("jobs", [1, 2])
def test_suites_are_built_with_rare_collections_and_the_threshold_comes_back(corpora, tmp_path,
                                                                            jobs):
    import gc
    from dataclasses import replace

    def build(resolver, part=None):  # build_part runs in a pool worker when jobs=2
        raise DataError(f"threshold {gc.get_threshold()[0]}")

    before = gc.get_threshold()
    spec = replace(_parted(SUITES["mrpc_symmetric"], 2), build=build, build_part=build)
    with pytest.raises(DataError, match=f"threshold {build_pool.BUILD_GC_THRESHOLD}$"):
        build_all([spec], _resolver(corpora), tmp_path / "b", jobs=jobs, log=lambda _: None)
    assert gc.get_threshold() == before != (build_pool.BUILD_GC_THRESHOLD, *before[1:])
