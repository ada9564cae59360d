"""``consistency-bench inspect`` and :mod:`consistency_bench.bench.inconsistent` (issue 31, item 1).

The number of inconsistent units of every built suite equals the scorer's count of failures
(τ·n, τ·|C|, (1 - C_R)·n and (1 - C_S)·n, the salad agreement a, accuracy minus strict
coherence), for a noisy entry with probabilities and a random one without; the listing is
sorted by confidence; bad input is one line and exit 2; hostile texts are escaped.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from consistency_bench.bench.inconsistent.formats import to_csv, to_text
from consistency_bench.bench.inconsistent.groups import Group, GroupRow
from consistency_bench.bench.inconsistent.inspect import (
    InspectRequest,
    Report,
    SuiteSummary,
    inspect_predictions,
    judge,
)
from consistency_bench.bench.inconsistent.verdicts import INCONSISTENT, RIGHT, WRONG
from consistency_bench.bench.metrics.consistent.score import correct
from consistency_bench.bench.scoring.engine import Aligned, ScoreOptions, SuiteFolder
from tests.helpers import build_suites, write_predictions
from tests.synthetic_entries import predictions

REPO = Path(__file__).resolve().parents[1]


def _rejections(data, aligned: Aligned) -> tuple[np.ndarray, np.ndarray]:
    """Per unit: original rejected, salad rejected, by the scorer's cross-fitted θ (issue 27).

    Each half of the groups is judged with the temperature and θ fitted on the other half
    (``consistency_bench.bench.metrics.calibration.cross_fit``); no probabilities: nothing is
    rejected.
    """
    from consistency_bench.bench.scorers.salad import _cross_fit, _pairs

    first, second, _ = _pairs(data)
    if aligned.probs is None:
        return np.zeros(len(first), bool), np.zeros(len(first), bool)
    fitted = _cross_fit(data, aligned, first, second, ScoreOptions(n_boot=10))
    return fitted.orig_rejected, fitted.salad_rejected


def _salad_expected(data, aligned: Aligned, score) -> np.ndarray:
    """Gated, not declined and agreeing, recomputed from the raw answers and the scorer's θs."""
    from consistency_bench.bench.scorers.salad import _pairs, _reference

    first, second, _ = _pairs(data)
    pred = aligned.pred
    reference, _ = _reference(data, pred, first, second)
    orig_rej, salad_rej = _rejections(data, aligned)
    gated = correct(pred[first], data.gold[first]) & ~orig_rej
    declined = salad_rej | (pred[second] < 0)
    return gated & ~declined & (pred[second] == reference)


def _check_counts(data, aligned: Aligned) -> None:
    score, verdicts = judge(data, aligned, ScoreOptions(n_boot=10))
    m, kind, n_inc = score.metrics, data.info["kind"], int(verdicts.inconsistent.sum())
    where = f"{data.name} ({kind})"
    if kind in ("semantic", "negational", "symmetric"):
        assert n_inc == round(score.main_score * m["n_groups"]), where
    elif kind in ("transitive", "additive"):
        assert int(verdicts.judged.sum()) == m["n_conditioned"], where
        assert n_inc == round((m[data.info["main_metric"]] or 0.0) * m["n_conditioned"]), where
    elif kind == "calm":
        tags = verdicts.tags.tolist()
        assert sum("reverse" in t for t in tags) == round((1 - m["c_r"]) * m["n_groups"]), where
        assert sum("signal" in t for t in tags) == round((1 - m["c_s"]) * m["n_groups"]), where
    elif kind == "salad":
        expected = _salad_expected(data, aligned, score)
        assert np.array_equal(verdicts.inconsistent, expected), where
        # the salad score's agreement a: class-balanced share among gated, undeclined units
        gold = verdicts.gold
        classes, sizes = np.unique(gold, return_counts=True)
        weight = 1.0 / sizes[np.searchsorted(classes, gold)]
        kept = verdicts.judged & ~_declined(data, aligned, score)
        if kept.any():
            a = weight[expected].sum() / weight[kept].sum()
            assert a == pytest.approx(m["salad_score"]["agreement"], abs=1e-12), where
    else:
        n = m["n_examples"]
        assert n_inc == round((m["accuracy"] - m["strict_coherence"]) * n), where
    assert set(np.unique(verdicts.status)) <= {INCONSISTENT, WRONG, RIGHT}


def _declined(data, aligned: Aligned, score) -> np.ndarray:
    from consistency_bench.bench.scorers.salad import _pairs

    _, second, _ = _pairs(data)
    return (aligned.pred[second] < 0) | _rejections(data, aligned)[1]


@pytest.mark.parametrize(("entry", "probs"), [("gold-25", True), ("random", False)])
def test_inconsistent_counts_equal_the_scorers_on_every_built_suite(all_folder, entry, probs):
    folder = SuiteFolder(all_folder)
    kinds = set()
    for name in folder.manifest:
        data = folder.load(name)
        aligned = predictions(entry, data)
        if not probs:
            aligned = Aligned(aligned.pred, None)
        if data.info["kind"] == "coherence_theta" and not probs:
            assert judge(data, aligned, ScoreOptions(n_boot=10))[1] is None  # needs probs
            continue
        _check_counts(data, aligned)
        kinds.add(data.info["kind"])
    assert len(kinds) >= 8  # every kind of the issue was checked


@pytest.fixture(scope="module")
def small(corpora, tmp_path_factory) -> tuple[Path, Path]:
    """snli_negational and rte_semantic, and a prediction file wrong on a third of the rows."""
    out = build_suites(corpora, tmp_path_factory.mktemp("inspect") / "cb",
                       ["snli_negational", "rte_semantic"])

    def choose(row, names):  # every third group: the negation ignored, the paraphrase flipped
        gold = int(row["label"]) if row["label"] is not None else 0
        if int(row["source_row"]) % 3 or row["variant"] == "original":
            return gold
        return 0 if row["variant"] == "negated" else (gold + 1) % len(names)

    preds = write_predictions(out, out.parent / "p.jsonl", ["snli_negational", "rte_semantic"],
                              choose)
    return out, preds


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "consistency_bench", "inspect", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=300)


def test_listing_sorted_filtered_and_the_same_from_an_entry_folder(small, tmp_path):
    data, preds = small
    report = inspect_predictions(InspectRequest(preds, data, limit=None, include_wrong=True))
    by_suite = {s.suite: s for s in report.suites}
    assert by_suite["snli_negational"].inconsistent > 0
    for suite in by_suite:
        mine = [g for g in report.groups if g.suite == suite]
        status = [g.status for g in mine]
        assert status == sorted(status, key=["inconsistent", "wrong"].index)  # wrong after
        assert len(mine) == by_suite[suite].matching
    # a label filter keeps only that gold label; the limit cuts each suite
    one = inspect_predictions(InspectRequest(preds, data, labels=("entailment",), limit=3))
    assert all(g.gold == "entailment" for g in one.groups)
    assert all(s.shown <= 3 for s in one.suites)
    # a stored entry folder reads its predictions.jsonl.gz: the same groups
    entry = tmp_path / "my-entry"
    entry.mkdir()
    import gzip

    (entry / "predictions.jsonl.gz").write_bytes(gzip.compress(preds.read_bytes(), mtime=0))
    same = inspect_predictions(InspectRequest(entry, data, limit=None, include_wrong=True))
    assert [g.to_dict() for g in same.groups] == [g.to_dict() for g in report.groups]


def test_cli_formats(small):
    data, preds = small
    out = _cli(str(preds), "--data", str(data), "--suite", "snli_negational", "--format",
               "json", "--limit", "0")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    (summary,) = report["suites"]
    assert len(report["groups"]) == summary["inconsistent"] == summary["matching"]
    negated = [r for g in report["groups"] for r in g["rows"] if r["variant"] == "negated"]
    assert all(r["edit"]["type"] == "diff" for r in negated)  # the negation words are shown
    rows = list(csv.DictReader(io.StringIO(_cli(str(preds), "--data", str(data), "--format",
                                                "csv", "--kind", "semantic").stdout)))
    assert rows and {r["suite"] for r in rows} == {"rte_semantic"}
    text = _cli(str(preds), "--data", str(data), "--limit", "2").stdout
    assert "snli_negational (negational; tau_neg" in text and "rte_semantic" in text


@pytest.mark.parametrize(("args", "message"), [
    (["--suite", "nope"], "Unknown suite 'nope'"),
    (["--kind", "negation"], "Unknown kind 'negation'"),
    (["--label", "maybe"], "--label 'maybe': not a label of any suite"),
    (["--limit", "-1"], "--limit -1: must be >= 0"),
    (["--suite", "snli_negational", "--kind", "semantic"], "no suite it covers matches"),
    (["--param", "salad_theta=2"], "salad_theta must be"),
])
def test_bad_input_is_one_line_and_exit_2(small, args, message):
    data, preds = small
    out = _cli(str(preds), "--data", str(data), *args)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_bad_sources_are_one_line_and_exit_2(small, tmp_path):
    data, _ = small
    (tmp_path / "empty").mkdir()
    for source, message in ((tmp_path / "none.jsonl", "no such prediction file"),
                            (tmp_path / "empty", "a folder without predictions.jsonl.gz")):
        out = _cli(str(source), "--data", str(data))
        assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "snli_negational/r00000/original", "label": "maybe"}\n{oops\n')
    out = _cli(str(bad), "--data", str(data))
    assert out.returncode == 2 and "bad.jsonl:2:" in out.stderr and out.stderr.count("\n") == 1


def _hostile_report() -> Report:
    evil = "\x1b[2J\x1b]0;owned\x07=HYPERLINK(\"http://x\")\u2028<script>"
    row = GroupRow(id="s/1/original", variant="original", text=evil, text_pair="-2+3",
                   gold="a", prediction="a", probs=[0.9, 0.1], contradicts=False, anchor=True,
                   edit=None, extra={})
    other = GroupRow(id="s/1/negated", variant="negated", text=evil + " not", text_pair=None,
                     gold="b", prediction="a", probs=[0.8, 0.2], contradicts=True,
                     anchor=False, edit={"type": "diff", "text": [["=", evil], ["+", " not"]],
                                         "text_pair": None}, extra={})
    group = Group("s", "negational", "s/1", "inconsistent", True, 0.8, "a", "same answer", "",
                  None, (row, other))
    summary = SuiteSummary("s", "negational", "t", "tau_neg", 1.0, 1, 1, 1, 0, 1, 1, "x")
    return Report("p.jsonl", "0" * 64, "d", (summary,), (group,))


def test_hostile_texts_are_escaped_in_text_and_csv():
    report = _hostile_report()
    text = to_text(report)
    assert "\x1b" not in text and "\x07" not in text and "\u2028" not in text
    assert "\\x1b[2J" in text
    cells = [c for r in csv.reader(io.StringIO(to_csv(report))) for c in r]
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
    assert "'-2+3" in cells
