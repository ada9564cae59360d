"""Baselines: pure parts on inline data, the registry on suites built from the mirror."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from consistency_bench.bench.baselines import BASELINES, Context, get_baseline, run_baseline
from consistency_bench.bench.baselines.overlap import fit_threshold, overlap_score, predict_overlap
from consistency_bench.bench.baselines.simple import majority_label, random_label, vader_label
from consistency_bench.bench.baselines.train_data import label_counts, load_train
from consistency_bench.bench.errors import SourceError, UnknownNameError
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.cli import main

SUITES = ["sst2_semantic", "rte_semantic", "wic_semantic", "boolq_negational"]


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    from consistency_bench.builders.catalog import get_suite
    from consistency_bench.builders.export import build_all

    out = tmp_path_factory.mktemp("baselines") / "cb"
    build_all(
        [get_suite(s) for s in SUITES],
        SourceResolver(corpora, download=False),
        out,
        log=lambda _: None,
    )
    return out


@pytest.fixture(scope="module")
def ctx(corpora: Path) -> Context:
    return Context(SourceResolver(corpora, download=False), seed=0)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_majority_ties_go_to_lowest_index():
    assert majority_label([3, 5, 5]) == 1
    assert majority_label([2, 2]) == 0


def test_random_is_seeded_per_row_and_order_free():
    task = get_task("snli")
    ids = [f"snli_semantic/r{i:05d}/original" for i in range(300)]
    first = [random_label(task, i, seed=1) for i in ids]
    assert [random_label(task, i, seed=1) for i in reversed(ids)] == first[::-1]
    assert first != [random_label(task, i, seed=2) for i in ids]
    assert set(first) == {0, 1, 2}


def test_overlap_heuristic():
    assert overlap_score("rte", "a man sleeps on a bed", "a man sleeps") == 1.0
    assert overlap_score("mrpc", "a b", "b c") == pytest.approx(1 / 3)
    assert predict_overlap("snli", "A man sleeps.", "A man sleeps.", 0.9) == 0
    assert predict_overlap("snli", "A man sleeps.", "Nobody is awake.", 0.9) == 2
    assert predict_overlap("snli", "A man sleeps.", "A dog barks.", 0.9) == 1
    assert predict_overlap("mrpc", "a b", "a b", 0.5) == 1
    pairs = [("a b c", "a b c"), ("a b c", "x y z"), ("a b", "a b"), ("p q", "r s")]
    assert fit_threshold("rte", pairs, [0, 1, 0, 1]) == 1.0


def test_vader_threshold():
    assert vader_label(0.0) == 1 and vader_label(-0.01) == 0


def test_training_data_from_mirror(ctx):
    rte = load_train("rte", ctx.resolver)
    assert len(rte) == 2490 and {e.label for e in rte} == {0, 1}
    wic = load_train("wic", ctx.resolver)
    assert wic[0].word == "place"
    assert label_counts("boolq", ctx.resolver) == ([1237, 2033], "becel/boolq/validation.tsv")
    with pytest.raises(SourceError, match="no training split for task 'qqp'"):
        load_train("qqp", ctx.resolver)


@pytest.mark.parametrize(
    ("task", "rows", "train", "repeated"),
    [("boolq", 3270, 895, 0), ("ag_news", 3800, 1844, 3), ("qnli", 5463, 2793, 0)],
)
def test_evaluated_split_halves_are_fixed_disjoint_and_declared(task, rows, train, repeated, ctx):
    """BoolQ, AG News, QNLI: half 0 of the evaluated split trains, half 1 is held out."""
    import yaml

    from consistency_bench.bench.baselines.train_data import DEV_FILES, TRAIN_FILES, load_examples
    from consistency_bench.bench.scoring.contamination import half_of, parse_item

    spec = TRAIN_FILES[task]
    source = parse_item(spec)
    assert source.half == 0 and DEV_FILES[task] == (f"{source.path}#half=1",)
    key = lambda e: (e.text, e.text_pair, e.label)  # noqa: E731
    halves = [load_examples(task, f"{source.path}#half={h}", ctx.resolver) for h in (0, 1)]
    whole = load_examples(task, source.path, ctx.resolver)
    assert len(whole) == rows and len(halves[0]) + len(halves[1]) == rows
    assert sorted(map(key, halves[0] + halves[1])) == sorted(map(key, whole))
    # fixed: the half of each row is the hash of path and row, the same on every call
    assert [key(e) for e in halves[0]] == [
        key(e) for r, e in enumerate(whole) if half_of(source.path, r) == 0
    ]
    trained = load_train(task, ctx.resolver)
    assert len(trained) == train and set(map(key, trained)) <= set(map(key, halves[0]))
    # the halves split rows; AG News repeats 4 texts, 3 of them across the two halves
    assert len(set(map(key, trained)) & set(map(key, halves[1]))) == repeated
    meta = Path(__file__).resolve().parents[1] / "bench" / "baselines" / "meta"
    for name in ("minilm-ft", "tfidf-lr"):
        declared = yaml.safe_load((meta / f"{name}.yaml").read_text())["training_data"]
        if name == "minilm-ft" or task != "qnli":
            assert spec in declared, (name, spec)


def test_boolq_training_drops_the_rows_its_suites_are_built_from(ctx):
    """The BoolQ suites come from derived files (not flagged by the declaration): none of
    their passages is a training row."""
    from consistency_bench.bench.baselines.train_data import (
        TRAIN_EXCLUDE,
        excluded_values,
        load_examples,
    )

    suite_passages = excluded_values("boolq", ctx.resolver)
    assert TRAIN_EXCLUDE["boolq"][0] == ("becel/boolq/semantic.tsv", "becel/boolq/negational.tsv")
    half0 = load_examples("boolq", "becel/boolq/validation.tsv#half=0", ctx.resolver)
    assert sum(e.text_pair.strip() in suite_passages for e in half0) == 1625 - 895
    assert not any(e.text_pair.strip() in suite_passages for e in load_train("boolq", ctx.resolver))


def test_mnli_halves_partition_the_file_and_only_half_0_trains(ctx):
    from consistency_bench.bench.baselines.train_data import (
        DEV_FILES,
        MNLI_DEV,
        TRAIN_FILES,
        load_examples,
    )

    assert TRAIN_FILES["snli"] == TRAIN_FILES["mnli"] == f"{MNLI_DEV}#half=0"
    assert DEV_FILES["snli"] == (f"{MNLI_DEV}#half=1",)
    key = lambda e: (e.text, e.text_pair)  # noqa: E731
    halves = [load_examples("mnli", f"{MNLI_DEV}#half={h}", ctx.resolver) for h in (0, 1)]
    whole = load_examples("mnli", MNLI_DEV, ctx.resolver)
    assert len(halves[0]) + len(halves[1]) == len(whole) == 9815
    assert 0.45 < len(halves[0]) / len(whole) < 0.55
    assert sorted(map(key, halves[0] + halves[1])) == sorted(map(key, whole))
    assert load_train("snli", ctx.resolver) == halves[0]


def test_korsts_scores_are_binarised_like_klue_sts(ctx):
    import csv

    from consistency_bench.bench.baselines.train_data import STS_THRESHOLD, load_examples
    from consistency_bench.bench.io.tsv import read_tsv

    rows = read_tsv(ctx.resolver.path("korsts/sts-dev.tsv"), quoting=csv.QUOTE_NONE)
    examples = load_examples("klue_sts", "korsts/sts-dev.tsv", ctx.resolver)
    assert len(examples) == len(rows) == 1500
    assert [e.label for e in examples] == [int(float(r["score"]) >= STS_THRESHOLD) for r in rows]
    assert load_train("klue_sts", ctx.resolver)[0].text == "비행기가 이륙하고 있다."


def test_registry_errors():
    with pytest.raises(UnknownNameError, match="Did you mean: majority"):
        get_baseline("majorty")
    assert set(BASELINES) == {"majority", "random", "lexical-overlap", "vader", "tfidf-lr"}


@pytest.mark.parametrize("name", ["majority", "random", "vader", "lexical-overlap"])
def test_baseline_files_score(name, folder, ctx, tmp_path):
    from consistency_bench.bench.scoring.engine import score_file

    out = tmp_path / f"{name}.jsonl"
    written = run_baseline(name, folder, out, ctx)
    covered = {
        s
        for s in SUITES
        if get_task(
            pq.read_table(folder / s / "test.parquet", columns=["task"]).column(0)[0].as_py()
        ).name
        in get_baseline(name).tasks
    }
    assert set(written) == covered
    assert len(read_jsonl(out)) == sum(written.values())
    results = score_file(out, folder, n_boot=10)
    assert set(results["suites"]) == covered


def test_majority_predicts_train_majority(folder, ctx, tmp_path):
    out = tmp_path / "m.jsonl"
    run_baseline("majority", folder, out, ctx, ["sst2_semantic", "boolq_negational"])
    labels = {r["id"].split("/")[0]: r["label"] for r in read_jsonl(out)}
    assert labels == {"sst2_semantic": 1, "boolq_negational": 1}


def test_tfidf_beats_chance_on_sst2(folder, ctx, tmp_path):
    out = tmp_path / "t.jsonl"
    run_baseline("tfidf-lr", folder, out, ctx, ["sst2_semantic"])
    gold = {
        r["id"]: r["label"]
        for r in pq.read_table(folder / "sst2_semantic" / "test.parquet").to_pylist()
    }
    records = read_jsonl(out)
    accuracy = sum(r["label"] == gold[r["id"]] for r in records) / len(records)
    assert accuracy > 0.75
    assert all(abs(sum(r["probs"]) - 1) < 1e-3 for r in records)


def test_cli_baseline(folder, corpora, tmp_path, capsys):
    out = tmp_path / "v.jsonl"
    code = main(
        [
            "baseline",
            "vader",
            "--data",
            str(folder),
            "--out",
            str(out),
            "--sources",
            str(corpora),
            "--no-download",
        ]
    )
    assert code == 0 and "vader: wrote 374 rows of 1 suites" in capsys.readouterr().out
    code = main(["baseline", "vadr", "--data", str(folder), "--out", str(out)])
    assert code == 2 and "Did you mean: vader" in capsys.readouterr().err


def test_submission_meta_files_are_valid():
    import yaml

    from consistency_bench.leaderboard.submissions.meta import validate_meta

    root = Path(__file__).resolve().parents[1] / "bench" / "baselines" / "meta"
    names = sorted(p.stem for p in root.glob("*.yaml"))
    assert names == sorted([*BASELINES, "minilm-ft"])
    for path in root.glob("*.yaml"):
        meta = validate_meta(yaml.safe_load(path.read_text()), str(path))
        assert meta["date"] and meta["notes"]
        assert "training_data" in meta, path  # declared, even when empty


def test_pair_baselines_skip_single_string_calm_suites(corpora, ctx, tmp_path):
    """`rte_calm_t2t` is one string (skipped); `rte_calm` holds the pair since CALM 2.0.0."""
    from consistency_bench.builders.catalog import get_suite
    from consistency_bench.builders.export import build_all

    out = tmp_path / "cb"
    build_all(
        [get_suite("rte_calm"), get_suite("rte_calm_t2t"), get_suite("rte_semantic")],
        SourceResolver(corpora, download=False),
        out,
        log=lambda _: None,
    )
    assert set(run_baseline("lexical-overlap", out, tmp_path / "o.jsonl", ctx)) == {
        "rte_calm",
        "rte_semantic",
    }
    assert set(run_baseline("majority", out, tmp_path / "m.jsonl", ctx)) == {
        "rte_calm",
        "rte_calm_t2t",
        "rte_semantic",
    }
