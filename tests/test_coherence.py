"""Coherence: span rules (property tests), builders on the mirror, metrics and scorers."""

from __future__ import annotations

import json
import os

import datasets
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.metrics.coherence import (
    NO_CHOICE,
    choice_correct,
    coherence,
    margin,
    sweep_theta,
)
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.scoring.engine import ScoreOptions, score_file
from consistency_bench.builders.catalog import SUITES
from consistency_bench.builders.coherence import (
    art_span_label,
    conv_ent_records,
    conv_ent_span_label,
    spans,
)
from consistency_bench.builders.export import build_all

os.environ.setdefault("HF_HUB_OFFLINE", "1")
from tests.helpers import CORPORA

# ----------------------------------------------------------------------------- span rules


@given(st.integers(1, 12))
def test_spans_are_all_consecutive_spans_full_first(n):
    result = spans(n)
    assert len(result) == len(set(result)) == n * (n + 1) // 2
    assert result[0] == (0, n - 1)
    assert all(0 <= i <= j < n for i, j in result)


@st.composite
def conv_ent_example(draw):
    n = draw(st.integers(1, 8))
    label = draw(st.integers(0, 1))
    first = draw(st.integers(0, n - 1))
    last = draw(st.integers(first, n - 1))
    return n, label, (first, last)


@given(conv_ent_example())
def test_conv_ent_span_labels_follow_the_rule(case):
    n, label, evidence = case
    labels = {s: conv_ent_span_label(label, evidence if label else None, s) for s in spans(n)}
    if label == 0:
        assert set(labels.values()) == {0}
        return
    assert labels[(0, n - 1)] == 1  # the full dialog entails the hypothesis
    for (i, j), gold in labels.items():
        assert gold == int(i <= evidence[0] and j >= evidence[1])
        if gold:  # every super-span of a positive span is positive
            assert all(labels[(a, b)] for a, b in labels if a <= i and b >= j)


@given(
    st.integers(0, 1),
    st.sampled_from([(0, 1), (1, 2), (1, 1), (0, 2)]),
    st.sampled_from([None, True, False]),
)
def test_art_span_labels_follow_the_rule(label, conflict, plausible_23):
    labels = {s: art_span_label(label, conflict, plausible_23, s) for s in spans(3)}
    assert labels[(0, 2)] == label  # the full stories: the end-task answer
    assert labels[(0, 0)] is None and labels[(2, 2)] is None  # identical stories
    for (i, j), gold in labels.items():
        contains = i <= conflict[0] and j >= conflict[1]
        if contains or (conflict, (i, j), plausible_23) == ((0, 1), (1, 2), False):
            assert gold == label
        else:
            assert gold is None


def test_conv_ent_records_reject_bad_annotations():
    record = {"id": 7, "label": 1, "turns": [{"speaker": "A", "text": "hi"}],
              "hypothesis": "h", "conflict_pair": [0, 3]}
    with pytest.raises(SourceError, match=r"record 0 \(id 7\).*conflict_pair.*\[0, 3\]"):
        list(conv_ent_records([record], "x.json"))
    rows = list(conv_ent_records([{**record, "conflict_pair": [0, 0]}], "x.json"))
    assert [r["variant"] for r in rows] == ["original"] and rows[0]["label"] == 1
    assert rows[0]["text"] == "SpeakerA: hi"


# ----------------------------------------------------------------------------- metrics


def test_coherence_formulas():
    example = np.array([0, 0, 0, 1, 1, 2])
    span_ok = np.array([1, 1, 1, 1, 0, 1], dtype=bool)
    end_ok = np.array([True, True, False])
    result = coherence(example, span_ok, end_ok)
    assert result.accuracy == pytest.approx(2 / 3)
    assert result.strict == pytest.approx(1 / 3)
    assert result.lenient == pytest.approx((1 + 0.5 + 0) / 3)
    with pytest.raises(ValueError, match="no span rows"):
        coherence(np.array([0, 0]), np.array([True, True]), np.array([True, True]))


def test_choice_correct_and_sweep():
    probs = np.array([[0.9, 0.1], [0.55, 0.45], [0.5, 0.5], [0.2, 0.8]])
    assert margin(probs) == pytest.approx([0.8, 0.1, 0.0, 0.6])
    pred = np.array([0, 0, -1, 1])
    gold = np.array([0, NO_CHOICE, NO_CHOICE, 1])
    # theta 0.5: row 0 confident right; row 1 not confident = right; row 2 invalid = wrong
    assert choice_correct(pred, probs, gold, 0.5).tolist() == [True, True, False, True]
    sweep = sweep_theta(np.array([0, 0, 1, 1]), pred, probs, gold, np.array([True, True]),
                        grid=(0.05, 0.5, 0.7, 0.9))
    # example 1 has the invalid row, so only example 0 can be strictly coherent: at 0.05 its
    # no-choice span is (wrongly) confident, at 0.9 its gold span is not confident
    assert sweep.strict.tolist() == [0.0, 0.5, 0.5, 0.0]
    assert sweep.lenient.tolist() == pytest.approx([0.5, 0.75, 0.5, 0.25])
    assert sweep.grid[sweep.best_strict] == 0.5 and sweep.grid[sweep.best_lenient] == 0.5


# ----------------------------------------------------------------------------- builds


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("coherence")
    specs = [SUITES["conv_ent_coherence"], SUITES["art_coherence"]]
    build_all(specs, SourceResolver(CORPORA, download=False), out, log=lambda _: None)
    return out


def test_counts_and_rules_on_the_mirror(built):
    conv = datasets.load_dataset(str(built), "conv_ent_coherence", split="test")
    assert len(conv) == 1119 and len(set(conv["group"])) == 172
    assert conv.features["label"].names == ["not_entailment", "entailment"]
    art = datasets.load_dataset(str(built), "art_coherence", split="test")
    assert len(art) == 189 * 6
    original = art.filter(lambda r: r["variant"] == "original")
    assert len(original) == 189 and None not in original["label"]
    ids = [g.rsplit("/", 1)[1] for g in original["group"]]
    lines = (CORPORA / "art" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    for row, ident in zip(original, ids, strict=True):  # val_i = line i of art/dev.jsonl
        dev = json.loads(lines[int(ident[4:])])
        assert row["source_row"] == int(ident[4:])
        assert row["text"] == " ".join(dev[k].strip() for k in ("obs1", "hyp1", "obs2"))
    no_choice = art.filter(lambda r: r["span_label"] == "no_confident_choice")
    assert set(no_choice["label"]) == {None}


def test_card_gives_the_paper_sizes(built):
    # Paper section 4.1: CE "testing (178 examples)"; ART 200 annotated, 11 discarded.
    card = (built / "README.md").read_text(encoding="utf-8")
    assert "| `conv_ent_coherence` | coherence | conv_ent | coherence | 1119 | 172 | 178 |" in card
    assert "| `art_coherence` | coherence | art | coherence_theta | 1134 | 189 | 189 |" in card
    assert "1,119 rows, 172 test items; paper: 178 (-6, see Deviations)" in card
    assert "1,134 rows, 189 test items; paper: 189 (equal)" in card


def _oracle(data, *, probs: bool):
    rows = []
    for row in data:
        gold = row["label"]
        record = {"id": row["id"], "label": 0 if gold is None else gold}
        if probs:
            record["probs"] = [0.5, 0.5] if gold is None else [1.0 - gold, float(gold)]
        rows.append(record)
    return rows


def test_scorers_end_to_end(built, tmp_path):
    conv = datasets.load_dataset(str(built), "conv_ent_coherence", split="test")
    art = datasets.load_dataset(str(built), "art_coherence", split="test")
    path = tmp_path / "p.jsonl"
    rows = _oracle(conv, probs=False) + _oracle(art, probs=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = score_file(path, built, n_boot=200)["suites"]
    assert result["conv_ent_coherence"]["main_score"] == 1.0
    assert result["art_coherence"]["main_score"] == 1.0
    assert result["art_coherence"]["metrics"]["theta_strict"] == 0.05
    # all spans predicted not_entailment: accuracy = share of negatives, strict = same
    flat = [{"id": r["id"], "label": 0} for r in conv]
    path.write_text("".join(json.dumps(r) + "\n" for r in flat), encoding="utf-8")
    conv_score = score_file(path, built, n_boot=200)["suites"]["conv_ent_coherence"]
    assert conv_score["metrics"]["accuracy"] == pytest.approx(73 / 172)
    assert conv_score["main_score"] == pytest.approx(73 / 172)
    # ART without probs: no coherence, and the reason says so
    path.write_text("".join(json.dumps({"id": r["id"], "label": r["label"]}) + "\n"
                            for r in _oracle(art, probs=False)), encoding="utf-8")
    art_score = score_file(path, built, n_boot=200)["suites"]["art_coherence"]
    assert art_score["main_score"] is None
    assert "needs probabilities" in art_score["metrics"]["missing"]
    assert art_score["metrics"]["accuracy"] == 1.0
    path.write_text("".join(json.dumps(r) + "\n" for r in _oracle(art, probs=True)),
                    encoding="utf-8")
    fixed = score_file(path, built,
                       options=ScoreOptions(n_boot=10, params={"coherence_theta": 1.0}))
    art_fixed = fixed["suites"]["art_coherence"]["metrics"]
    assert art_fixed["sweep"]["theta"] == [1.0] and art_fixed["strict_coherence"] == 1.0
