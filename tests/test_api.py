"""The Python API (``import consistency_bench as cb``): docs/api.md's examples, run as doctests.

The examples run against a folder of two built suites (``rte_symmetric``, ``rte_negational``),
a tiny random BERT with RTE's labels and a submissions folder of two entries; the tests below
add what a doctest does not show well (light import, records against files, the CLI's
agreement).
"""

from __future__ import annotations

import doctest
import json
import os
import random
import sys
from pathlib import Path

import pytest

from tests.helpers import python_stdout

ROOT = Path(__file__).resolve().parent.parent
API_DOC = ROOT / "docs" / "api.md"
SUITES = ("rte_symmetric", "rte_negational")


@pytest.fixture(scope="module")
def two_suites(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``rte_symmetric`` and ``rte_negational`` built from the mirror."""
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.catalog import get_suite
    from consistency_bench.builders.export import build_all

    out = tmp_path_factory.mktemp("api") / "consistency-bench"
    build_all([get_suite(n) for n in SUITES], SourceResolver(corpora, download=False), out,
              log=lambda _: None)
    return out


def _rows(data: Path) -> list[dict]:
    import consistency_bench as cb

    return [row for name in SUITES for row in cb.load_suite(name, data=data)]


@pytest.fixture(scope="module")
def submissions(two_suites: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two stored entries: ``gold`` (every row right) and ``noisy`` (one row in five flipped)."""
    from consistency_bench.leaderboard.submissions.storage import submit

    folder = tmp_path_factory.mktemp("api-subs")
    root = folder / "submissions"
    rng = random.Random(0)
    for name, flip in (("gold", 0.0), ("noisy", 0.2)):
        path = folder / f"{name}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for row in _rows(two_suites):
                label = 1 - row["label"] if rng.random() < flip else row["label"]
                handle.write(json.dumps({"id": row["id"], "label": label}) + "\n")
        meta = folder / f"{name}.yaml"
        meta.write_text(f"model: {name}\nrevision: '1'\nlicense: Apache-2.0\n"
                        "link: https://example.org\ncontact: test\n", encoding="utf-8")
        submit(path, name=name, meta_path=meta, root=root, data_dir=two_suites)
    return root


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.tiny_models import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("api-model") / "bert",
                     labels=("entailment", "not_entailment"))


def test_the_examples_of_docs_api_md_run(two_suites, submissions, tiny_model, tmp_path,
                                         monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write gold.jsonl and tiny.jsonl here
    found = doctest.testfile(
        str(API_DOC), module_relative=False, report=True, verbose=False,
        globs={"data": str(two_suites), "submissions": str(submissions),
               "model": str(tiny_model)},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert found.attempted >= 20, found  # the examples are there and were run
    assert found.failed == 0, f"{found.failed} of {found.attempted} examples of docs/api.md failed"


def test_import_is_light_and_names_load_on_first_use():
    """``import consistency_bench`` loads no layer and no library; a name loads its module."""
    code = ("import sys, consistency_bench as cb; "
            "before = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('bench', 'builders', 'leaderboard', 'numpy', 'pyarrow', 'datasets', "
            "'consistency_bench')); "
            "cb.score; "
            "print(before, 'consistency_bench.api' in sys.modules, callable(cb.score), "
            "set(cb.__all__) == {n for n in cb.API if not n.startswith('_')} <= set(dir(cb)))")
    assert python_stdout(code).split() == ["['consistency_bench']", "True", "True", "True"]
    import consistency_bench as cb

    with pytest.raises(AttributeError, match="has no attribute 'scor'"):
        cb.scor  # noqa: B018


def test_records_score_as_the_same_lines_of_a_file(two_suites, tmp_path):
    """Records, a pandas table and the JSONL file they make give the same results and hash."""
    import pandas as pd

    import consistency_bench as cb

    rng = random.Random(1)
    records = [{"id": row["id"], "label": ["entailment", "not_entailment"][rng.random() < 0.5],
                "probs": [0.6, 0.4]} for row in _rows(two_suites)]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    from_file = cb.score(path, data=two_suites, n_boot=200)
    for given in (records, pd.DataFrame(records), iter(records)):
        from_memory = cb.score(given, data=two_suites, n_boot=200)
        assert from_memory["suites"] == from_file["suites"]
        assert from_memory["predictions"]["sha256"] == from_file["predictions"]["sha256"]
        assert from_memory["predictions"]["path"] == "predictions"


def test_the_api_and_the_command_give_the_same_results(two_suites, tmp_path):
    import consistency_bench as cb
    from consistency_bench.cli import main

    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": row["id"], "label": row["label"] ^ (i % 3 == 0)})
                            + "\n" for i, row in enumerate(_rows(two_suites))), encoding="utf-8")
    out = tmp_path / "r.json"
    assert main(["score", str(path), "--data", str(two_suites), "--out", str(out),
                 "--n-boot", "300", "--param", "calm_theta=0.5"]) == 0
    by_cli = json.loads(out.read_text(encoding="utf-8"))
    by_api = cb.score(str(path), data=two_suites, n_boot=300, params={"calm_theta": 0.5},
                      out=tmp_path / "api.json")
    assert by_api["suites"] == by_cli["suites"] and by_api["params"] == by_cli["params"]
    assert json.loads((tmp_path / "api.json").read_text(encoding="utf-8"))["suites"] == \
        by_cli["suites"]


@pytest.mark.parametrize(("given", "message"), [
    ([{"id": "rte_negational/r00000/original"}],
     "predictions record 1: field 'label': required field is missing"),
    ([{"id": "rte_negational/r00000/original", "label": 0, "probs": [0.5, float("nan")]}],
     "predictions record 1: field 'probs' value [0.5, nan]: probabilities must be finite"),
    ([{"id": "rte_negational/r00000/original", "label": 0}, "a line"],
     "predictions record 2: value 'a line': each line must be a JSON object"),
    ([{"id": "rte_negational/r00000/original", "label": 0},
      {"id": "rte_negational/r00000/original", "label": 1}],
     "predictions record 2: field 'id' value 'rte_negational/r00000/original': duplicate id "
     "(first seen in record 1)"),
    ([{"id": "rte_negational/r00000/original", "label": 5}],
     "predictions record 1: field 'label' value 5: "),
    ([], "predictions: no prediction records were given"),
])
def test_a_bad_record_is_named_with_its_field_and_value(two_suites, given, message):
    import consistency_bench as cb
    from consistency_bench.bench.errors import PredictionFileError

    with pytest.raises(PredictionFileError) as info:
        cb.score(given, data=two_suites)
    assert str(info.value).startswith(message), str(info.value)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"suites": ["rte_symetric"]}, "UnknownNameError", "Did you mean: rte_symmetric"),
    ({"seed": -1}, "ConfigError", "--seed -1: must be >= 0"),
    ({"params": {"calm_theta": 2}}, "ConfigError", "calm_theta must be a number in [0, 1]"),
    ({"params": ["nope=1"]}, "ConfigError", "unknown key 'nope'"),
])
def test_bad_options_are_refused_before_the_records_are_read(two_suites, kwargs, error,
                                                             message):
    import consistency_bench as cb
    from consistency_bench.bench import errors

    def records():
        raise AssertionError("read before the options were checked")
        yield

    with pytest.raises(getattr(errors, error)) as info:
        cb.score(records(), data=two_suites, **kwargs)
    assert message in str(info.value)


def test_the_output_file_is_checked_before_scoring(two_suites, tmp_path):
    import consistency_bench as cb
    from consistency_bench.bench.errors import BenchError

    with pytest.raises(BenchError, match="folder"):
        cb.score([], data=two_suites, out=tmp_path)


def test_evaluate_refuses_bad_scoring_options_before_loading_a_model(two_suites):
    import consistency_bench as cb
    from consistency_bench.bench.errors import ConfigError

    with pytest.raises(ConfigError, match="--n-boot 0"):
        cb.evaluate("no/such-model", data=two_suites, n_boot=0)


def test_leaderboard_without_data_warns_of_an_unreadable_entry(submissions, tmp_path):
    import shutil

    import consistency_bench as cb

    copy = tmp_path / "subs"
    shutil.copytree(submissions, copy)
    (copy / "noisy" / "results.json").write_text("{", encoding="utf-8")
    with pytest.warns(UserWarning, match="noisy"):
        board = cb.leaderboard(submissions=copy)
    assert [row.name for row in board.views["all"].rows] == ["gold"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_load_suite_refuses_a_changed_file(two_suites, tmp_path):
    import shutil

    import consistency_bench as cb
    from consistency_bench.bench.errors import DataError

    copy = tmp_path / "data"
    shutil.copytree(two_suites, copy)
    target = copy / "rte_negational" / "test.parquet"
    os.chmod(target, 0o644)
    with open(target, "ab") as handle:
        handle.write(b"x")
    with pytest.raises(DataError, match=r"does not match suites\.json"):
        cb.load_suite("rte_negational", data=copy)
