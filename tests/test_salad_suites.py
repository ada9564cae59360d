"""Word-salad suites end to end: build from the mirror, load_dataset, score; metrics by hand."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.metrics import salad as m
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.catalog import SUITES, get_suite
from consistency_bench.builders.export import build_all
from consistency_bench.builders.salad.degenerate import degenerate
from consistency_bench.builders.salad.lexical import transform as lexical

BUILT = ["mrpc_salad_sort", "mrpc_salad_copysort", "sst2_salad_shuffle", "sst2_salad_pbsmt"]


@pytest.fixture(scope="module")
def salad_folder(corpora: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("salad") / "consistency-bench"
    specs = [get_suite(n) for n in BUILT]
    build_all(specs, SourceResolver(corpora, download=False), out, log=lambda _: None)
    return out


def _rows(folder: Path, name: str) -> list[dict]:
    return pq.read_table(folder / name / "test.parquet").to_pylist()


def test_static_registry():
    names = sorted(n for n, s in SUITES.items() if s.family == "salad")
    assert len(names) == 23  # 5 tasks x lexical (no CopySort for SST-2) + 4 PBSMT (no MRPC)
    assert "sst2_salad_copysort" not in names and "mrpc_salad_pbsmt" not in names


def test_load_dataset_and_counts(salad_folder: Path, tmp_path: Path):
    manifest = json.loads((salad_folder / "suites.json").read_text())["suites"]
    card = (salad_folder / "README.md").read_text()
    infos = {i["config_name"]: i for i in yaml.safe_load(card.split("---\n")[1])["dataset_info"]}
    for name in BUILT:  # loads against the card's dataset_info, which matches what it records
        ds = datasets.load_dataset(str(salad_folder), name, split="test", cache_dir=str(tmp_path),
                                   verification_mode="all_checks")
        assert ds.num_rows == manifest[name]["rows"] == 2 * manifest[name]["groups"]
        assert infos[name]["splits"][0]["num_bytes"] == ds.info.splits["test"].num_bytes
    assert "**PBSMT stand-in, not trained on the training split** (`sst2_salad_pbsmt`)" in card
    assert manifest["mrpc_salad_sort"]["groups"] == 408
    assert manifest["sst2_salad_pbsmt"]["groups"] <= 872


def test_rows_follow_the_rules(salad_folder: Path):
    rows = _rows(salad_folder, "mrpc_salad_sort")
    for original, changed in zip(rows[::2], rows[1::2], strict=True):
        assert original["variant"] == "original" and changed["variant"] == "sort"
        assert original["group"] == changed["group"] and changed["label"] is None
        assert changed["text"] == original["text"]  # pair tasks transform the second text
        before = lexical.tokenize(original["text_pair"], lower=True)
        assert Counter(changed["text_pair"].split(" ")) == Counter(before)
        assert changed["text_pair"] == changed["text_pair"].lower()  # the paper's lower case
        assert changed["agreement_with"] == "original"
    copy = _rows(salad_folder, "mrpc_salad_copysort")
    assert {r["agreement_with"] for r in copy[1::2]} == {"equivalent"}
    for original, changed in zip(copy[::2], copy[1::2], strict=True):
        assert Counter(changed["text_pair"].split(" ")) == Counter(
            lexical.tokenize(original["text"], lower=True)
        )
    smt = _rows(salad_folder, "sst2_salad_pbsmt")
    assert len(smt) > 2 * 500  # 515 of 872 dev sentences get a usable output (3.0.0)
    assert all(r["text_pair"] is None for r in smt)
    for o, c in zip(smt[::2], smt[1::2], strict=True):  # none is degenerate (issue 32)
        tokens = lexical.tokenize(o["text"], lower=True)
        output = lexical.tokenize(c["text"], lower=True)
        assert degenerate(output, tokens[: max(1, len(tokens) // 2)], tokens) is None
    assert all(c["text"] != o["text"] for o, c in zip(smt[::2], smt[1::2], strict=True))
    assert all(c["text"] == c["text"].lower() for c in smt[1::2])


def test_no_shuffled_row_keeps_an_original_bigram(corpora: Path):
    """Issue 32 item 7: mnli r03025 "it gets it." became "it it gets ." (1.1.0)."""
    rows = list(get_suite("mnli_salad_shuffle").build(SourceResolver(corpora, download=False)))
    groups = {r["group"] for r in rows}
    assert len(groups) == 9799  # 9,801 in 1.1.0: the two rows without a bigram-free order
    assert not groups & {"mnli_salad_shuffle/r03025", "mnli_salad_shuffle/r08650"}
    for original, changed in zip(rows[::2], rows[1::2], strict=True):
        before = lexical.tokenize(original["text_pair"], lower=True)
        assert lexical.surviving_bigrams(before, changed["text_pair"].split(" ")) == 0


def test_rebuild_is_byte_identical(corpora: Path, salad_folder: Path, tmp_path: Path):
    spec = get_suite("sst2_salad_shuffle")
    build_all([spec], SourceResolver(corpora, download=False), tmp_path, log=lambda _: None)
    digest = hashlib.sha256
    first = digest((salad_folder / spec.name / "test.parquet").read_bytes()).hexdigest()
    again = digest((tmp_path / spec.name / "test.parquet").read_bytes()).hexdigest()
    assert first == again


def test_qqp_skips_with_clear_error(corpora: Path, tmp_path: Path):
    with pytest.raises(SourceError, match="QQP"):
        list(get_suite("qqp_salad_sort").build(SourceResolver(corpora, download=False)))


# ----------------------------------------------------------------------------- scoring


def _predict(folder: Path, out: Path, choose) -> Path:
    with open(out, "w") as handle:
        for name in BUILT:
            for row in _rows(folder, name):
                label, probs = choose(row)
                handle.write(json.dumps({"id": row["id"], "label": label, "probs": probs}) + "\n")
    return out


def test_score_file_by_hand(salad_folder: Path, tmp_path: Path):
    from consistency_bench.bench.scoring.engine import score_file

    def choose(row):  # originals: gold; transformed: label 1 with p=0.6 when the group id is odd
        if row["variant"] == "original":
            return row["label"], [0.05, 0.95] if row["label"] else [0.95, 0.05]
        odd = int(row["group"].rsplit("r", 1)[1]) % 2
        return odd, [0.4, 0.6] if odd else [0.6, 0.4]

    path = _predict(salad_folder, tmp_path / "p.jsonl", choose)
    results = score_file(path, salad_folder, n_boot=200)
    entry = results["suites"]["mrpc_salad_sort"]
    rows = _rows(salad_folder, "mrpc_salad_sort")
    pairs = zip(rows[::2], rows[1::2], strict=True)
    expected = np.mean([choose(c)[0] == o["label"] for o, c in pairs])
    assert entry["main_score"] == pytest.approx(expected)
    assert entry["best_near"] == 0.5 and entry["metrics"]["chance"] == 0.5
    assert entry["metrics"]["accuracy_original"] == 1.0
    assert entry["metrics"]["confidence"] == pytest.approx(0.6)
    threshold = entry["metrics"]["threshold"]  # 0.95 on originals, 0.6 on salad: all separable
    assert threshold["invalid_recognised"] == 1.0 and threshold["clean_accuracy"] == 1.0
    copy = results["suites"]["mrpc_salad_copysort"]  # compared with "equivalent" (index 1)
    crow = _rows(salad_folder, "mrpc_salad_copysort")
    assert copy["main_score"] == pytest.approx(np.mean([choose(c)[0] == 1 for c in crow[1::2]]))
    summary = m.family_summary(results["suites"])
    assert set(summary) == {"mrpc", "sst2"}
    assert summary["mrpc"]["lexical"]["transforms"] == 2
    assert summary["mrpc"]["lexical"]["agreement"] == pytest.approx(
        (entry["main_score"] + copy["main_score"]) / 2
    )


def test_n_invalid_counts_every_row(salad_folder: Path, tmp_path: Path):
    from consistency_bench.bench.scoring.engine import score_file

    rows = _rows(salad_folder, "mrpc_salad_sort")
    bad = {rows[0]["id"], rows[3]["id"]}  # one original, one transformed row answered "maybe"
    with open(tmp_path / "p.jsonl", "w") as handle:
        for row in rows:
            label = "maybe" if row["id"] in bad else 0
            handle.write(json.dumps({"id": row["id"], "label": label}) + "\n")
    metrics = score_file(tmp_path / "p.jsonl", salad_folder, n_boot=10)["suites"][
        "mrpc_salad_sort"]["metrics"]
    assert metrics["n_invalid"] == 2
    assert metrics["invalid_answer_share"] == pytest.approx(1 / 408)


# ----------------------------------------------------------------------------- metrics


def test_metrics_by_hand():
    assert m.agreement(np.array([0, 1, 2, -1]), np.array([0, 2, 2, -1])).tolist() == [1, 0, 1, 0]
    probs = np.array([[0.7, 0.3], [0.2, 0.8]])
    assert m.confidence(probs, np.array([0, -1])).tolist()[0] == 0.7
    assert np.isnan(m.confidence(probs, np.array([0, -1]))[1])
    grid = m.threshold_grid(3)
    assert grid[0] == pytest.approx(1 / 3) and grid[-1] == 1.0
    with pytest.raises(ValueError, match="differ in length"):
        m.agreement(np.array([0]), np.array([0, 1]))
    with pytest.raises(ValueError, match="shape"):
        m.confidence(np.array([0.5, 0.5]), np.array([0]))


def test_select_threshold_respects_tolerance():
    clean = np.array([[0.9, 0.1]] * 8 + [[0.6, 0.4]] * 2)
    correct = np.ones(10)
    salad = np.array([[0.55, 0.45]] * 5 + [[0.65, 0.35]] * 5)
    # Rejecting the two 0.6 originals costs 20% accuracy > 3%: θ must stay <= 0.6; the
    # smallest θ reaching the best share (0.55 < θ) is chosen.
    theta, invalid, accuracy = m.select_threshold(clean, correct, salad)
    assert theta == pytest.approx(0.551) and invalid == 0.5 and accuracy == 1.0
    theta, invalid, accuracy = m.select_threshold(clean, correct, salad, tolerance=0.25)
    assert invalid == 1.0 and accuracy == pytest.approx(0.8) and 0.65 < theta <= 0.9


# ----------------------------------------------------------------------------- PBSMT parts

_WORDS = "a man woman dog plays runs sings on the grass music piano outdoors is are two".split()


def _records(seed: int, count: int, pair: bool) -> list:
    """Random labelled records (three labels; rows out of order, some not numbered 0..n)."""
    import random
    from dataclasses import replace

    from consistency_bench.builders.readers import Example

    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choices(_WORDS, k=rng.randint(2, 9)))

    records = [Example(row=3 * k + rng.randint(0, 2), text=text(),
                       text_pair=text() if pair else None, label=rng.randint(0, 2))
               for k in range(count)]
    # a premise that recurs with the same label and parity (translated once per part)
    return records + [replace(r, row=10 * count + 2 * k + r.row % 2, text_pair=text())
                      for k, r in enumerate(records[: count // 5])]


def _unsplit_rows(task: str, records: list, train: list) -> list[dict]:
    """``statistical_rows`` as one loop over the records (before the parts, 97a1dff)."""
    from consistency_bench.builders.salad.pbsmt.suite_rows import pbsmt_text, train_pbsmt
    from consistency_bench.builders.salad.rows import _pair_rows
    from consistency_bench.builders.salad.sources import TASK_SOURCES

    models = train_pbsmt(train)
    rows = []
    for record in records:
        new = pbsmt_text(models, record)
        if new is not None:
            rows += _pair_rows(f"{task}_salad_pbsmt", task, "pbsmt", record,
                                     TASK_SOURCES[task].path, new)
    return rows


@pytest.mark.parametrize("task", ["mnli", "snli"])
def test_pbsmt_parts_merged_in_any_order_are_the_unsplit_rows(task):
    from consistency_bench.builders.salad.pbsmt.suite_rows import part_rows, pbsmt_parts
    from consistency_bench.builders.suite.spec import merge_parts

    records = _records(1, 90, pair=True)
    train = _records(2, 120, pair=True)
    parts = pbsmt_parts(task)
    assert len(parts) == 3
    built = {part: part_rows(task, records, train, part) for part in parts}
    expected = _unsplit_rows(task, records, train)
    assert expected and merge_parts(built[p] for p in parts) == expected
    assert merge_parts(built[p] for p in reversed(parts)) == expected
    # each record's rows come from one part only, so the merge cannot double a row
    keys = [key for rows in built.values() for key, _ in rows]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("task", ["mnli", "snli", "sst2"])
def test_pbsmt_systems_never_see_an_evaluated_text(corpora: Path, task: str):
    """Issue 21: the systems were trained on the evaluated rows (MNLI cross-fitted on them)."""
    from consistency_bench.builders.salad.pbsmt.suite_rows import _texts, pbsmt_inputs
    from consistency_bench.builders.salad.sources import TASK_SOURCES

    records, train = pbsmt_inputs(task, SourceResolver(corpora, download=False))
    seen = set().union(*map(_texts, records))
    assert train and records and not any(_texts(r) & seen for r in train)
    if TASK_SOURCES[task].train_path is None:  # MNLI: a fixed held-out half by premise
        assert not {r.row for r in records} & {r.row for r in train}
        assert not {r.text for r in records} & {r.text for r in train}
        assert 0.45 < len(records) / (len(records) + len(train)) < 0.55


def test_disjoint_leaves_out_training_pairs_sharing_a_text():
    from consistency_bench.builders.readers import Example
    from consistency_bench.builders.salad.pbsmt.suite_rows import disjoint

    evaluated = [Example(row=0, text="A dog runs.", text_pair="An animal moves.", label=0)]
    train = [Example(row=0, text="a dog runs .", text_pair="x y", label=0),
             Example(row=1, text="p q", text_pair="An animal moves.", label=1),
             Example(row=2, text="p q", text_pair="r s", label=1)]
    assert disjoint(train, evaluated) == train[2:]


def test_merge_parts_rejects_a_record_built_twice():
    from consistency_bench.bench.errors import DataError
    from consistency_bench.builders.suite.spec import merge_parts

    with pytest.raises(DataError, match="source record 4"):
        merge_parts([[(4, [{"id": "a"}])], [(4, [{"id": "b"}])]])


def test_split_pbsmt_suites_declare_their_parts():
    from consistency_bench.builders.salad.pbsmt.suite_rows import pbsmt_parts

    for task in ("mnli", "snli"):
        spec = get_suite(f"{task}_salad_pbsmt")
        assert spec.parts == pbsmt_parts(task) and spec.build_part is not None
    assert get_suite("sst2_salad_pbsmt").parts == ()  # short: one task


# ----------------------------------------------------------------------------- temperature


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_temperature_scaling_from_probabilities_equals_softmax_of_scaled_logits():
    z = np.random.default_rng(0).normal(size=(50, 3)) * 4
    for t in (0.3, 1.0, 2.5):
        assert np.allclose(m.temperature_scale(_softmax(z), t), _softmax(z / t))
    assert np.allclose(m.temperature_scale(np.array([[1.0, 0.0]]), 3.0), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="temperature"):
        m.temperature_scale(_softmax(z), 0.0)


def test_fit_temperature_recovers_the_overconfidence():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(4000, 3)) * 2
    gold = np.array([rng.choice(3, p=p) for p in _softmax(z)])
    overconfident = _softmax(3 * z)  # a model whose logits are 3x too large
    assert m.fit_temperature(overconfident, gold) == pytest.approx(3.0, rel=0.1)
    assert m.fit_temperature(_softmax(z), gold) == pytest.approx(1.0, rel=0.1)


def test_fit_temperature_is_the_full_scan_of_the_plain_loss_bit_for_bit():
    """The loss divides each row's maximum and the gold value by T instead of taking them
    from ``logs / T`` (twice as fast): the same bits, so the same temperature as a scan of
    every grid point with the plain loss (zero probabilities included)."""
    rng = np.random.default_rng(3)
    grid = m.TEMPERATURE_GRID
    for trial in range(12):
        n, k = int(rng.integers(1, 400)), int(rng.integers(2, 5))
        probs = _softmax(rng.normal(size=(n, k)) * rng.uniform(0.2, 8))
        probs[rng.integers(0, n, size=max(1, n // 8)), 0] = 0.0
        probs /= probs.sum(axis=1, keepdims=True)
        gold = rng.integers(0, k, n)
        with np.errstate(divide="ignore"):
            logs = np.log(probs)
        losses = []
        for t in grid:
            scaled = logs / t
            top = scaled.max(axis=1, keepdims=True)
            norm = top[:, 0] + np.log(np.exp(scaled - top).sum(axis=1))
            losses.append(float(np.mean(norm - scaled[np.arange(n), gold])))
        best = min(range(len(grid)), key=lambda i: (losses[i], i))
        expected = float(grid[best]) if np.isfinite(losses[best]) else 1.0
        assert m.fit_temperature(probs, gold) == expected, trial


def test_salad_temperature_param_reaches_the_threshold(salad_folder: Path):
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.scoring.engine import (
        Aligned,
        ScoreOptions,
        SuiteFolder,
        get_scorer,
    )

    data = SuiteFolder(salad_folder).load("mrpc_salad_sort")
    rng = np.random.default_rng(2)
    pred = np.where(data.gold >= 0, data.gold, rng.integers(0, 2, len(data.gold)))
    probs = _softmax(rng.normal(size=(len(pred), 2)) * 3)
    probs[np.arange(len(pred)), pred] = probs.max(axis=1) + 1e-9
    probs /= probs.sum(axis=1, keepdims=True)
    aligned = Aligned(pred=pred.astype(np.int64), probs=probs)
    scorer = get_scorer("salad")
    plain = scorer(data, aligned, ScoreOptions(n_boot=10)).metrics["threshold"]
    # the default: cross-fitted, each half with a temperature and θ of the other half
    assert plain["cross_fitted"] and plain["temperature"] is None and plain["theta"] is None
    assert [h["half"] for h in plain["halves"]] == [0, 1]
    assert all(h["temperature_fitted"] and h["theta_searched"] for h in plain["halves"])
    assert sum(h["units"] for h in plain["halves"]) == len(pred) // 2
    assert plain == scorer(data, aligned, ScoreOptions(n_boot=10, params={
        "salad_temperature": "fit"})).metrics["threshold"]  # "fit" is the default
    fixed = scorer(data, aligned, ScoreOptions(n_boot=10, params={
        "salad_theta": 0.8, "salad_temperature": 4.0})).metrics["threshold"]
    scaled = m.temperature_scale(probs, 4.0)
    second = np.flatnonzero(data.variant != "original")
    assert fixed["temperature"] == 4.0 and fixed["theta"] == 0.8 and not fixed["cross_fitted"]
    assert fixed["invalid_recognised"] == pytest.approx(float((scaled[second].max(1) < 0.8).mean()))
    assert fixed["invalid_recognised"] != scorer(data, aligned, ScoreOptions(
        n_boot=10, params={"salad_theta": 0.8, "salad_temperature": 1})).metrics["threshold"][
        "invalid_recognised"]
    for bad in ("hot", -1, 0):
        with pytest.raises(ConfigError, match="salad_temperature"):
            scorer(data, aligned, ScoreOptions(n_boot=10, params={"salad_temperature": bad}))
