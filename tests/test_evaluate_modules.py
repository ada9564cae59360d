"""The ``evaluate`` metric module (issue 29 item 4), loaded by folder as a Hub metric would be.

Every config is checked against the harness's own scorer (``consistency_bench.bench.scorers``) on
small
in-memory suites built here, with seeded random answers (invalid ones included), so a wrong
formula in the module, or one fed the wrong rows, fails.
"""

import doctest
import io
import re
import runpy
import sys
import types
from pathlib import Path

import evaluate
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.evaluate_modules import path
from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.scorers.contract import Aligned, ScoreOptions, SuiteData
from consistency_bench.bench.scoring.engine import score_suite

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(path())
LABELS = ["a", "b", "c"]


def load(config=None):
    return evaluate.load(str(FOLDER), config)


def suite(kind, rows, label_names=LABELS, main_metric="m"):
    """A SuiteData over ``rows`` (dicts of suite columns), as a built folder holds it."""
    columns = {key: [row.get(key) for row in rows] for key in rows[0]}
    columns.setdefault("text", [""] * len(rows))
    columns.setdefault("source_file", ["f"] * len(rows))
    columns["label"] = pa.array(columns["label"], pa.int64())
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    info = {"family": "t", "task": "t", "kind": kind, "version": "1", "sha256": None,
            "main_metric": main_metric, "higher_is_better": False,
            "label_names": label_names}
    return SuiteData("t", info, pq.ParquetFile(pa.BufferReader(sink.getvalue())))


def answers(rng, n, n_labels=3):
    """Seeded random answers, about one in ten invalid (-1)."""
    pred = rng.integers(0, n_labels, n)
    pred[rng.random(n) < 0.1] = -1
    return pred


def pair_rows(rng, n, perturbed):
    gold = rng.integers(0, 3, n)
    rows = []
    for g in range(n):
        rows.append({"id": f"{g}o", "group": f"g{g}", "variant": "original", "label": int(gold[g])})
        rows.append({"id": f"{g}p", "group": f"g{g}", "variant": perturbed, "label": int(gold[g])})
    return rows


@pytest.mark.parametrize(("config", "kind", "perturbed"), [
    ("tau_sem", "semantic", "paraphrase"), ("tau_sym", "symmetric", "swapped"),
    ("tau_neg", "negational", "negated")])
@pytest.mark.parametrize("seed", [0, 1])
def test_tau_of_pairs_matches_the_scorer(config, kind, perturbed, seed):
    rng = np.random.default_rng(seed)
    data = suite(kind, pair_rows(rng, 40, perturbed), main_metric=config)
    pred = answers(rng, 80)
    want = score_suite(data, Aligned(pred, None), ScoreOptions(n_boot=10))
    got = load(config).compute(predictions=pred[1::2], references=pred[0::2])
    assert got == {config: pytest.approx(want["metrics"][config])}
    assert 0 < got[config] < 1


def test_paper_figure_2_and_c_r():
    sem = load("tau_sem")
    # BECEL Figure 2: symmetric inconsistency 40%.
    original = [1] * 8 + [0] * 2
    swapped = [0, 0] + [1] * 8
    assert sem.compute(predictions=swapped, references=original)["tau_sem"] == pytest.approx(0.4)
    neg = load("tau_neg")
    negated = [0, 0, 0, 0, 1, 1, 0, 0, 0, 0]
    assert neg.compute(predictions=negated, references=original)["tau_neg"] == pytest.approx(0.4)
    c_r = load("c_r")
    assert c_r.compute(predictions=[0, 1, 2, -1], references=[0, 1, 1, -1])["c_r"] == 0.5


def additive_rows(rng, n):
    rows, gold = [], rng.integers(0, 3, n)
    for g in range(n):
        label = int(gold[g])
        for variant in ("first", "second"):
            rows.append({"id": f"{g}{variant}", "group": f"g{g}", "variant": variant,
                         "label": label, "antecedent_ids": None, "constraint": None})
        rows.append({"id": f"{g}m", "group": f"g{g}", "variant": "merged", "label": label,
                     "antecedent_ids": [f"{g}first", f"{g}second"],
                     "constraint": f"is:{LABELS[label]}"})
    return rows, gold


@pytest.mark.parametrize("seed", [0, 1])
def test_tau_add_matches_the_scorer(seed):
    rng = np.random.default_rng(seed)
    rows, gold = additive_rows(rng, 60)
    data = suite("additive", rows, main_metric="tau_add")
    # right more often than chance, so that C is not tiny
    pred = np.where(rng.random(180) < 0.6, np.repeat(gold, 3), answers(rng, 180))
    want = score_suite(data, Aligned(pred, None), ScoreOptions(n_boot=10))
    got = load("tau_add").compute(predictions=pred[2::3], references=gold,
                                  first_predictions=pred[0::3], second_predictions=pred[1::3])
    assert got == {"tau_add": pytest.approx(want["main_score"]),
                   "n_conditioned": want["metrics"]["n_conditioned"]}
    with pytest.raises(ValueError, match="first_predictions"):
        load("tau_add").compute(predictions=[1], references=[1])


def calm_rows(rng, n, symbols=("x", "y", "z")):
    rows, gold = [], rng.integers(0, 3, n)
    for g in range(n):
        for variant in ("original", "reverse", *(f"signal:{s}" for s in symbols)):
            rows.append({"id": f"{g}{variant}", "group": f"g{g}", "variant": variant,
                         "label": int(gold[g])})
    return rows


@pytest.mark.parametrize(("seed", "theta"), [(0, 1.0), (1, 0.5), (2, 0.6)])
def test_c_r_and_c_s_match_the_scorer(seed, theta):
    rng = np.random.default_rng(seed)
    data = suite("calm", calm_rows(rng, 50), main_metric="c_r")
    pred = answers(rng, 250)
    pred[rng.random(250) < 0.5] = 1  # agreement common enough that C_S is not 0
    want = score_suite(data, Aligned(pred, None),
                       ScoreOptions(n_boot=10, params={"calm_theta": theta}))["metrics"]
    per = pred.reshape(50, 5)
    assert load("c_r").compute(predictions=per[:, 1], references=per[:, 0]) == {
        "c_r": pytest.approx(want["c_r"])}
    got = load("c_s").compute(predictions=per[:, 2:].tolist(), references=per[:, 0],
                              theta=theta)
    assert got == {"c_s": pytest.approx(want["c_s"]),
                   "mean_pass_rate": pytest.approx(want["mean_pass_rate"])}
    assert 0 < got["c_s"] < 1


def test_c_s_needs_k_answers_per_example():
    with pytest.raises(ValueError, match="same number k"):
        load("c_s").compute(predictions=[[0, 1], [1]], references=[0, 1])


def salad_rows(rng, n, compared_with="original"):
    gold = rng.integers(0, 3, n)
    rows = []
    for g in range(n):
        for variant in ("original", "sort"):
            rows.append({"id": f"{g}{variant}", "group": f"g{g}", "variant": variant,
                         "label": int(gold[g]) if variant == "original" else None,
                         "agreement_with": None if variant == "original" else compared_with})
    return rows


@pytest.mark.parametrize(("seed", "compared_with"), [(0, "original"), (1, "b")])
def test_word_salad_matches_the_scorer(seed, compared_with):
    rng = np.random.default_rng(seed)
    data = suite("salad", salad_rows(rng, 60, compared_with), main_metric="agreement")
    pred = answers(rng, 120)
    probs = rng.dirichlet([1, 1, 1], 120)
    want = score_suite(data, Aligned(pred, probs), ScoreOptions(n_boot=10))["metrics"]
    reference = pred[0::2] if compared_with == "original" else [1] * 60
    got = load("word_salad").compute(predictions=pred[1::2], references=reference, n_labels=3,
                                     probs=probs[1::2].tolist())
    assert got == {"agreement": pytest.approx(want["agreement"]), "chance": want["chance"],
                   "invalid_answer_share": pytest.approx(want["invalid_answer_share"]),
                   "confidence": pytest.approx(want["confidence"])}
    without = load("word_salad").compute(predictions=pred[1::2], references=reference,
                                         n_labels=3)
    assert without["confidence"] is None
    with pytest.raises(ValueError, match="n_labels"):
        load("word_salad").compute(predictions=[0], references=[0])


@pytest.mark.parametrize("seed", [0, 1])
def test_coherence_matches_the_scorer(seed):
    rng = np.random.default_rng(seed)
    spans = rng.integers(1, 5, 40)  # sub-span rows per example, after the end-task row
    rows, gold = [], []
    for g, k in enumerate(spans):
        labels = rng.integers(0, 2, k + 1).tolist()
        gold.append(labels)
        for i, label in enumerate(labels):
            rows.append({"id": f"{g}-{i}", "group": f"g{g}",
                         "variant": "original" if i == 0 else f"span{i}", "label": label})
    data = suite("coherence", rows, label_names=["no", "yes"],
                 main_metric="strict_coherence")
    flat = np.concatenate(gold)
    pred = np.where(rng.random(len(flat)) < 0.8, flat, answers(rng, len(flat), 2))
    want = score_suite(data, Aligned(pred, None), ScoreOptions(n_boot=10))["metrics"]
    cuts = np.cumsum(spans + 1)[:-1]
    got = load("coherence").compute(predictions=[p.tolist() for p in np.split(pred, cuts)],
                                    references=gold)
    assert got == {key: pytest.approx(want[key]) for key in (
        "strict_coherence", "lenient_coherence", "accuracy", "span_accuracy")}
    assert got["strict_coherence"] < got["lenient_coherence"] < got["accuracy"]


def default_compute(data, pred, probs=None, **columns):
    kind = data.info["kind"]
    return load().compute(predictions=pred, references=data.gold.tolist(),
                          groups=data.group_names(np.arange(len(pred))),
                          variants=data.variant.tolist(), kind=kind,
                          label_names=data.label_names, probs=probs, n_boot=10, **columns)


RANKED = ("main_score", "consistent_accuracy", "consistent_accuracy_chance",
          "consistent_accuracy_cc")


def test_default_is_the_ranked_score_by_hand():
    # 4 pairs, gold 0 1 0 1; the third pair's paraphrase changes the answer
    inputs = {"predictions": [0, 0, 1, 1, 0, 1, 1, 1], "references": [0, 0, 1, 1, 0, 0, 1, 1],
              "groups": list("aabbccdd"), "variants": ["original", "paraphrase"] * 4,
              "kind": "semantic", "label_names": ["x", "y"]}
    out = load().compute(**inputs)
    assert out["main_metric"] == "tau_sem"
    assert out["main_score"] == pytest.approx(0.25)
    # balanced: class 0 right and consistent 1 of 2, class 1 2 of 2; chance 1/2 * 1/2
    assert out["consistent_accuracy"] == pytest.approx(0.75)
    assert out["consistent_accuracy_chance"] == pytest.approx(0.25)
    assert out["consistent_accuracy_cc"] == pytest.approx((0.75 - 0.25) / 0.75)
    assert load("suite").compute(**inputs) == out  # the alias


def transitive_rows(rng, n):
    """SNLI-like transitive rows: two source pairs, then the inferred pair and its constraint."""
    rows = []
    for g in range(n):
        for i in (1, 2):
            rows.append({"id": f"{g}s{i}", "group": f"g{g}", "variant": "source",
                         "label": int(rng.integers(0, 3)), "antecedent_ids": None,
                         "constraint": None})
        rows.append({"id": f"{g}t", "group": f"g{g}", "variant": "transitive", "label": None,
                     "antecedent_ids": [f"{g}s1", f"{g}s2"],
                     "constraint": f"{'is' if g % 2 else 'not'}:{LABELS[g % 3]}"})
    return rows


@pytest.mark.parametrize("kind", ["negational", "transitive", "additive", "calm", "salad",
                                  "coherence"])
def test_default_matches_the_scorer_for_every_family(kind):
    rng = np.random.default_rng(3)
    extra, probs = {}, None
    if kind == "negational":
        data = suite(kind, pair_rows(rng, 30, "negated"), main_metric="tau_neg")
    elif kind in ("transitive", "additive"):
        rows = additive_rows(rng, 30)[0] if kind == "additive" else transitive_rows(rng, 40)
        data = suite(kind, rows, main_metric="tau_trn" if kind == "transitive" else "tau_add")
        extra = {"ids": data.column("id").tolist(),
                 "antecedent_ids": data.arrow("antecedent_ids").to_pylist(),
                 "constraints": data.arrow("constraint").to_pylist()}
    elif kind == "calm":
        data = suite(kind, calm_rows(rng, 30), main_metric="c_r")
    elif kind == "salad":
        data = suite(kind, salad_rows(rng, 60), main_metric="agreement")
        extra = {"agreement_with": data.arrow("agreement_with").to_pylist()}
        probs = rng.dirichlet([1, 1, 1], 120)
    else:
        rows = [{"group": f"g{g}", "variant": "original" if i == 0 else "span", "label": i % 2,
                 "id": f"{g}{i}"} for g in range(30) for i in range(3)]
        data = suite(kind, rows, label_names=["no", "yes"], main_metric="strict_coherence")
    n = len(data.gold)
    pred = np.where(rng.random(n) < 0.7, np.maximum(data.gold, 0), answers(rng, n,
                                                                           len(data.label_names)))
    want = score_suite(data, Aligned(pred, probs), ScoreOptions(n_boot=10))
    got = default_compute(data, pred.tolist(), None if probs is None else probs.tolist(), **extra)
    assert {k: got[k] for k in RANKED} == pytest.approx({k: want[k] for k in RANKED})
    assert got["consistent_accuracy_cc"] is not None
    if kind == "salad":
        assert got["metrics"]["salad_score"] == pytest.approx(want["metrics"]["salad_score"])


def test_default_refuses_what_it_cannot_score():
    base = {"predictions": [0], "references": [0], "groups": ["g"], "variants": ["original"]}
    with pytest.raises(ValueError, match="kind"):
        load().compute(**base, label_names=["x", "y"])
    with pytest.raises(TypeError, match="unknown arguments"):
        load().compute(**base, kind="semantic", label_names=["x", "y"], texts=["t"])
    with pytest.raises(ConfigError, match="unknown key 'calm_thetaa'"):
        load().compute(**base, kind="calm", label_names=["x", "y"], params={"calm_thetaa": 1})
    with pytest.raises(ConfigError, match="n-boot 0"):
        load().compute(**base, kind="calm", label_names=["x", "y"], n_boot=0)
    with pytest.raises(KeyError, match="Unknown config 'tau_xyz'"):
        load("tau_xyz")


def test_loads_without_the_package_and_says_what_to_install(monkeypatch):
    metric = load("c_r")  # loading reads no module of the package
    for top in ("bench", "consistency_bench"):  # today's layout and issue 29's
        for name in [m for m in sys.modules if m == top or m.startswith(f"{top}.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, top, None)
    with pytest.raises(ImportError, match="pip install consistency-bench"):
        metric.compute(predictions=[0], references=[0])


def test_card_is_a_hub_metric_card(monkeypatch):
    assert sorted(p.name for p in FOLDER.iterdir() if p.name != "__pycache__") == [
        "README.md", "app.py", "consistency_bench.py", "requirements.txt"]
    assert "consistency-bench" in (FOLDER / "requirements.txt").read_text().split()
    text = (FOLDER / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["tags"] == ["evaluate", "metric"]
    module = (FOLDER / "consistency_bench.py").read_text(encoding="utf-8")
    for config in re.findall(r'^    "(\w+)": ', module.split("FEATURES = {")[1].split("}\n")[0],
                             flags=re.M):
        assert f"`{config}`" in text, config
    for family in FAMILIES.values():  # the papers, as the families cite them
        assert family.citation.strip() in text
        assert family.citation.strip() in load().citation
    monkeypatch.chdir(ROOT)  # the examples load the module by its folder in the repository
    tests = doctest.DocTestParser().get_doctest(text, {}, "README.md", "README.md", 0)
    assert len(tests.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(tests)
    assert runner.summarize(verbose=False).failed == 0


def test_space_app_launches_the_widget_on_tau_sem(monkeypatch):
    launched = []
    monkeypatch.setattr(evaluate.utils, "launch_gradio_widget", launched.append)
    runpy.run_path(str(FOLDER / "app.py"))
    (module,) = launched
    assert module.config_name == "tau_sem"
    assert module.compute(predictions=[1, 0], references=[1, 1]) == {"tau_sem": 0.5}


def test_the_installed_layout_of_issue_29_is_imported_first(monkeypatch):
    # after the move the package is consistency_bench.bench (scripts/relayout.py leaves
    # evaluate_modules/ as it is): the module must compute with it, not with a stray `bench`
    moved = types.ModuleType("consistency_bench.bench.metrics.calm")
    moved.c_r = lambda original, reverse: "moved"
    monkeypatch.setitem(sys.modules, moved.__name__, moved)
    assert load("c_r").compute(predictions=[0], references=[0]) == {"c_r": "moved"}
