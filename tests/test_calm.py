"""CALM: format generators (property tests), builders on the mirror, metrics and scorer."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from consistency_bench.bench.errors import ConfigError, SourceError, SourceUnavailableError
from consistency_bench.bench.metrics.calm import c_r, c_s, entropy_bits, pass_rates
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.scoring.engine import ScoreOptions, score_file
from consistency_bench.builders.calm import (
    FORMATS,
    ORIGINAL_TEMPLATE,
    SIGNALS,
    CalmInput,
    Example,
    calm_input,
    render,
    render_pair,
    reverse,
    signal,
    variants,
)
from consistency_bench.builders.catalog import SUITES
from consistency_bench.builders.export import build_all

os.environ.setdefault("HF_HUB_OFFLINE", "1")
from tests.helpers import CORPORA

sentences = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
indicators = st.sampled_from(["Premise", "Hypothesis", "Question", "문장1", "전제"])
inputs = st.builds(
    CalmInput,
    blocks=st.tuples(st.tuples(indicators, sentences), st.tuples(indicators, sentences)),
    prefix=st.sampled_from(["", "mnli", "rte"]),
)


# ----------------------------------------------------------------------------- generators


@given(inputs)
def test_reverse_of_reverse_is_identity(item):
    assert reverse(reverse(item)) == item
    assert render(reverse(reverse(item))) == render(item)


@given(inputs, st.sampled_from(sorted(SIGNALS)))
def test_signal_keeps_words_and_order(item, symbol):
    perturbed = signal(item, symbol)
    assert perturbed.blocks == item.blocks
    text = render(perturbed)
    for indicator, sentence in item.blocks:
        assert SIGNALS[symbol].format(indicator) + " " + sentence in text
    assert render(reverse(perturbed)) == render(signal(reverse(item), symbol))


@given(inputs)
def test_variants_are_deterministic_and_complete(item):
    first, second = variants(item), variants(item)
    assert first == second
    names = [name for name, _, _ in first]
    assert names == ["original", "reverse", *(f"signal:{s}" for s in SIGNALS)]
    assert len(SIGNALS) == 10  # Table 7
    texts = [render(item), render(reverse(item)), *(render(signal(item, s)) for s in SIGNALS)]
    assert [(text, pair) for _, text, pair in first] == [(t, None) for t in texts]


@given(inputs)
def test_pair_variants_keep_each_indicator_inside_its_text(item):
    item = CalmInput(item.blocks, item.template)  # the pair form has no task prefix
    pairs = variants(item, pair=True)
    assert [name for name, _, _ in pairs] == [name for name, _, _ in variants(item)]
    forms = [item, reverse(item), *(signal(item, s) for s in SIGNALS)]
    for (_, text, pair), form in zip(pairs, forms, strict=True):
        assert (text, pair) == render_pair(form)  # the fast path renders what the spec says
        assert f"{text} {pair}" == render(form)  # joined, the pair is the one-string form
        for block, (indicator, sentence) in zip((text, pair), form.blocks, strict=True):
            assert block == form.template.format(indicator) + " " + sentence
    with pytest.raises(ValueError, match="one string"):
        variants(CalmInput(item.blocks, prefix="rte"), pair=True)


def test_formats_match_the_paper():
    ex = Example(0, "A man sleeps.", "A person rests.", 0)
    assert render(calm_input("rte", ex)) == "Sentence1: A man sleeps. Sentence2: A person rests."
    assert render(reverse(calm_input("qnli", ex))) == (
        "Sentence: A person rests. Question: A man sleeps."
    )
    assert render(signal(calm_input("mrpc", ex), "[]")) == (
        "[Sentence1] A man sleeps. [Sentence2] A person rests."
    )
    assert render(signal(calm_input("rte", ex, t2t=True), "!")) == (
        "rte sentence1! A man sleeps. sentence2! A person rests."
    )
    # T5 was trained on MNLI as "mnli hypothesis: ... premise: ...".
    assert render(calm_input("mnli", ex, t2t=True)) == (
        "mnli hypothesis: A person rests. premise: A man sleeps."
    )
    with pytest.raises(ValueError, match="no text-to-text form"):
        calm_input("klue_nli", ex, t2t=True)
    # The paper's two inputs (Tables 2, 9, 10): each with its own indicator.
    assert render_pair(calm_input("rte", ex)) == ("Sentence1: A man sleeps.",
                                                  "Sentence2: A person rests.")
    assert render_pair(reverse(calm_input("qnli", ex))) == ("Sentence: A person rests.",
                                                            "Question: A man sleeps.")
    assert render_pair(signal(calm_input("mrpc", ex), "<>")) == ("<Sentence1> A man sleeps.",
                                                                 "<Sentence2> A person rests.")
    with pytest.raises(ValueError, match="one string"):
        render_pair(calm_input("rte", ex, t2t=True))


# ----------------------------------------------------------------------------- metrics


def test_metrics_follow_the_formulas():
    o = np.array([0, 1, 2, 1])
    r = np.array([0, 2, 2, -1])  # an invalid answer never agrees
    assert c_r(o, r) == 0.5
    s = np.array([[0, 0], [1, 0], [2, 2], [-1, 1]])
    assert pass_rates(o, s).tolist() == [1.0, 0.5, 1.0, 0.5]
    assert c_s(o, s) == 0.5
    assert c_s(o, s, theta=0.5) == 1.0
    with pytest.raises(ValueError, match="theta"):
        c_s(o, s, theta=1.5)
    with pytest.raises(ValueError, match="signals"):
        pass_rates(o, s[:2])


# ----------------------------------------------------------------------------- builds


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("calm")
    specs = [SUITES[n] for n in ("rte_calm", "rte_calm_t2t", "klue_sts_calm")]
    build_all(specs, SourceResolver(CORPORA, download=False), out, log=lambda _: None)
    return out


def test_load_dataset_and_counts(built):
    rte = datasets.load_dataset(str(built), "rte_calm", split="test")
    assert len(rte) == 277 * 12  # Table 6: RTE validation has 277 examples
    assert rte.features["label"].names == ["entailment", "not_entailment"]
    first, rev, bracket = rte[0], rte[1], rte[2]
    assert first["text"] == f"Sentence1: {first['raw_text']}"
    assert first["text_pair"] == f"Sentence2: {first['raw_text_pair']}"
    assert rev["variant"] == "reverse" and rev["group"] == first["group"]
    assert (rev["text"], rev["text_pair"]) == (first["text_pair"], first["text"])
    assert bracket["variant"] == "signal:[]"
    assert bracket["text"] == f"[Sentence1] {first['raw_text']}"
    sts = datasets.load_dataset(str(built), "klue_sts_calm", split="test")
    assert len(sts) == 519 * 12
    assert sts[0]["text"].startswith("문장1: ") and sts[0]["text_pair"].startswith("문장2: ")
    t2t = datasets.load_dataset(str(built), "rte_calm_t2t", split="test")
    assert len(t2t) == 277 * 12
    assert t2t[0]["text_pair"] is None
    assert t2t[0]["text"] == (
        f"rte sentence1: {first['raw_text']} sentence2: {first['raw_text_pair']}"
    )


def _indicator_pattern(task: str) -> re.Pattern:
    """Any indicator of ``task`` in the original or one of Table 7's SIGNAL forms, then a space."""
    forms = [ORIGINAL_TEMPLATE, *SIGNALS.values()]
    names = FORMATS[task].indicators
    return re.compile("^(" + "|".join(re.escape(f.format(n)) for f in forms for n in names)
                      + ") ")


def test_every_classification_row_is_a_pair_with_an_indicator_in_each_text(tmp_path):
    """Issue 21: every `*_calm` row gives the paper's two inputs; `_t2t` rows one string."""
    names = [n for n, s in SUITES.items() if s.family == "calm" and not n.startswith("qqp")]
    assert len(names) == 12
    build_all([SUITES[n] for n in names], SourceResolver(CORPORA, download=False), tmp_path,
              log=lambda _: None)
    for name in names:
        table = pq.read_table(tmp_path / name / "test.parquet").to_pylist()
        task = SUITES[name].task
        if name.endswith("_t2t"):
            assert all(r["text_pair"] is None for r in table), name
            continue
        pattern = _indicator_pattern(task)
        first, second = FORMATS[task].indicators
        for row in table:
            assert row["text_pair"] is not None, row["id"]
            head, pair_head = pattern.match(row["text"]), pattern.match(row["text_pair"])
            assert head and pair_head, row["id"]
            order = (second, first) if row["variant"] == "reverse" else (first, second)
            assert head.group(1).strip("[]{}()<>:;#!@~-") == order[0], row["id"]
            assert pair_head.group(1).strip("[]{}()<>:;#!@~-") == order[1], row["id"]
            sentences = (row["raw_text"].strip(), row["raw_text_pair"].strip())
            if row["variant"] == "reverse":
                sentences = sentences[::-1]
            assert row["text"][head.end():] == sentences[0], row["id"]
            assert row["text_pair"][pair_head.end():] == sentences[1], row["id"]


def test_rebuild_is_byte_identical(built, tmp_path):
    build_all([SUITES["rte_calm"]], SourceResolver(CORPORA, download=False), tmp_path,
              log=lambda _: None)
    assert (tmp_path / "rte_calm" / "test.parquet").read_bytes() == (
        built / "rte_calm" / "test.parquet"
    ).read_bytes()


def _write_predictions(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_scorer_end_to_end(built, tmp_path):
    data = datasets.load_dataset(str(built), "rte_calm_t2t", split="test")
    rows = []
    for row in data:  # gold everywhere, except: reverse wrong on r00000, free text on one signal
        label = row["label"]
        if row["group"].endswith("r00000") and row["variant"] == "reverse":
            label = 1 - label
        if row["group"].endswith("r00001") and row["variant"] == "signal:#":
            label = "sentence2# Humans died"
        rows.append({"id": row["id"], "label": label})
    preds = tmp_path / "p.jsonl"
    _write_predictions(preds, rows)
    result = score_file(preds, built, n_boot=200)
    score = result["suites"]["rte_calm_t2t"]
    assert score["main_metric"] == "c_r"
    assert score["main_score"] == pytest.approx(276 / 277)
    assert score["metrics"]["c_s"] == pytest.approx(276 / 277)
    assert score["metrics"]["accuracy"] == 1.0
    assert score["metrics"]["n_invalid"] == 1
    lenient = score_file(preds, built, options=ScoreOptions(n_boot=200, params={"calm_theta": 0.9}))
    assert lenient["suites"]["rte_calm_t2t"]["metrics"]["c_s"] == 1.0
    with pytest.raises(ConfigError, match="calm_theta"):
        score_file(preds, built, options=ScoreOptions(params={"calm_theta": "high"}))


def test_entropy_in_bits_matches_the_papers_examples():
    # CALM section 4: "the entropy of confidence scores 0.7 and 0.9 are 0.88 and 0.47"
    h = entropy_bits(np.array([[0.7, 0.3], [0.9, 0.1], [1.0, 0.0], [0.5, 0.5]]))
    assert h.round(2).tolist() == [0.88, 0.47, 0.0, 1.0]
    with pytest.raises(ValueError, match="shape"):
        entropy_bits(np.array([0.5, 0.5]))


def test_scorer_reports_entropy_on_inconsistent_examples(built, tmp_path):
    data = datasets.load_dataset(str(built), "rte_calm", split="test")
    rows = []
    for row in data:  # r00000: reverse flipped, original confident at 0.9; r00001: at 0.7
        label, p = row["label"], 0.6
        if row["group"].endswith("r00000"):
            p = 0.9
            if row["variant"] == "reverse":
                label = 1 - label
        if row["group"].endswith("r00001") and row["variant"] == "original":
            p = 0.7
        probs = [p, 1 - p] if label == 0 else [1 - p, p]
        rows.append({"id": row["id"], "label": label, "probs": probs})
    preds = tmp_path / "p.jsonl"
    _write_predictions(preds, rows)
    metrics = score_file(preds, built, n_boot=50)["suites"]["rte_calm"]["metrics"]
    assert metrics["entropy"]["reverse_inconsistent"] == pytest.approx(0.469, abs=1e-3)
    assert metrics["entropy"]["signal_inconsistent"] is None
    assert metrics["entropy"]["uniform"] == 1.0
    assert metrics["top_probability"]["reverse_inconsistent"] == pytest.approx(0.9)


# ----------------------------------------------------------------------------- QQP


def test_qqp_is_skipped_when_building_all_but_fails_when_named(tmp_path):
    resolver = SourceResolver(CORPORA, cache_dir=tmp_path / "cache", download=False)
    lines = []
    build_all([SUITES["qqp_calm"]], resolver, tmp_path / "out", log=lines.append,
              skip_unavailable=True)
    assert "skipped" in lines[0] and "qqp/dev.tsv" in lines[0]
    with pytest.raises(SourceUnavailableError, match=r"qqp/dev\.tsv"):
        build_all([SUITES["qqp_calm"]], resolver, tmp_path / "out", log=lines.append)


def test_qqp_builds_from_a_local_copy(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "qqp").mkdir(parents=True)
    (mirror / "qqp" / "dev.tsv").write_text(
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        '1\t2\t3\tHow do I "learn" Python?\tWhat is the best way to learn Python?\t1\n'
        "4\t5\t6\tWhy is the sky blue?\tHow far is the moon?\t0\n",
        encoding="utf-8",
    )
    resolver = SourceResolver(mirror, cache_dir=tmp_path / "cache", download=False)
    build_all([SUITES["qqp_calm"]], resolver, tmp_path / "out", log=lambda _: None)
    qqp = datasets.load_dataset(str(tmp_path / "out"), "qqp_calm", split="test")
    assert len(qqp) == 24
    assert (qqp[0]["text"], qqp[0]["text_pair"]) == (
        'Question1: How do I "learn" Python?', "Question2: What is the best way to learn Python?"
    )
    assert qqp.features["label"].int2str(qqp[0]["label"]) == "duplicate"
    (mirror / "qqp" / "dev.tsv").write_text(
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n1\t2\t3\ta\tb\tmaybe\n",
        encoding="utf-8",
    )
    with pytest.raises(SourceError, match=r"is_duplicate.*'maybe'"):
        build_all([SUITES["qqp_calm"]], SourceResolver(mirror, cache_dir=tmp_path / "c2",
                                                       download=False), tmp_path / "o2",
                  log=lambda _: None)
