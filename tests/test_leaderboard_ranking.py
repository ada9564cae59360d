import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consistency_bench.bench.errors import BenchError
from consistency_bench.leaderboard.paired import (
    binom_tail_ge,
    ci_overlap_z,
    format_p,
    mcnemar_exact,
    paired_bootstrap,
)
from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry, SuiteInfo, goodness


def suite(score, hib=False, ci=None, family="becel", task="snli", kind="transitive", cc=None,
          chance=0.0, metrics=None, **extra):
    """A results entry; its ranked score defaults to the direction-normalised main score."""
    if cc is None:
        cc = score if hib else 1 - score
    return {
        "family": family, "task": task, "kind": kind, "main_metric": "m",
        "main_score": score, "higher_is_better": hib, "n": 100,
        "ci95": ci if ci is not None else [max(0, score - 0.02), min(1, score + 0.02)],
        "content_hash": "h-" + kind + task,
        "consistent_accuracy": chance + cc * (1 - chance), "consistent_accuracy_chance": chance,
        "consistent_accuracy_cc": cc,
        "metrics": metrics or {"accuracy": 0.9, "consistent_accuracy_n": 100},
        **extra,
    }


def res(**suites):
    return {"schema_version": 1, "suites": suites}


def test_goodness_directions():
    lower = SuiteInfo("a", "", "", "", "tau", False)
    higher = SuiteInfo("b", "", "", "", "cr", True)
    near = SuiteInfo("c", "", "", "", "agree", True, best_near=0.5)
    assert goodness(0.1, lower) == pytest.approx(0.9)
    assert goodness(0.1, higher) == pytest.approx(0.1)
    assert goodness(0.5, near) == 1.0
    assert goodness(0.9, near) == pytest.approx(0.2)
    assert goodness(0.1, near) == pytest.approx(0.2)


def test_per_suite_order_follows_direction():
    lb = rank([
        Entry("a", res(t=suite(0.30), c=suite(0.9, hib=True, kind="cr"))),
        Entry("b", res(t=suite(0.10), c=suite(0.5, hib=True, kind="cr"))),
    ])
    assert lb.suite_order["t"] == ["b", "a"]  # lower tau is better
    assert lb.suite_order["c"] == ["a", "b"]  # higher C_R is better
    assert lb.cells["t"]["b"].rank == 1


def test_best_near_chance_from_results_and_override():
    """The paper metric's direction only shapes `consistency`; the rank follows the cc score."""
    entries = [
        Entry("far", res(w=suite(0.95, hib=True, kind="salad", best_near=1 / 3, cc=0.2))),
        Entry("close", res(w=suite(0.40, hib=True, kind="salad", best_near=1 / 3, cc=0.1))),
    ]
    lb = rank(entries)
    assert lb.suite_order["w"] == ["far", "close"]  # ranked on consistent accuracy
    assert lb.cells["w"]["close"].consistency > lb.cells["w"]["far"].consistency
    assert lb.suites["w"].direction == "near chance (33%)"
    plain = [Entry(e.name, res(w=suite(e.results["suites"]["w"]["main_score"], hib=True)))
             for e in entries]
    lb = rank(plain)
    assert lb.cells["w"]["far"].consistency > lb.cells["w"]["close"].consistency
    lb = rank(plain, best_near={"w": 1 / 3})
    assert lb.cells["w"]["close"].consistency > lb.cells["w"]["far"].consistency


def test_aggregates_borda_and_win_rate():
    lb = rank([
        Entry("a", res(s1=suite(0.1), s2=suite(0.1, kind="k2"))),
        Entry("b", res(s1=suite(0.2), s2=suite(0.05, kind="k2"))),
        Entry("c", res(s1=suite(0.3), s2=suite(0.3, kind="k2"))),
    ])
    rows = {r.name: r for r in lb.views["all"].rows}
    assert rows["a"].mean == pytest.approx(0.9)
    assert rows["b"].mean == pytest.approx((0.8 + 0.95) / 2)
    assert rows["a"].borda == 3 and rows["b"].borda == 3 and rows["c"].borda == 0
    assert rows["a"].win_rate == pytest.approx(0.75)
    assert rows["c"].win_rate == 0
    assert [r.name for r in lb.views["all"].rows] == ["a", "b", "c"]
    assert rows["a"].rank_borda == rows["b"].rank_borda == 1 and rows["c"].rank_borda == 3


def test_partial_entry_is_never_ranked_among_complete():
    lb = rank([
        Entry("full", res(s1=suite(0.5), s2=suite(0.5, kind="k2"))),
        Entry("partial", res(s1=suite(0.0))),  # perfect, but on one suite only
    ])
    rows = lb.views["all"].rows
    assert [r.name for r in rows] == ["full", "partial"]
    assert rows[0].rank == 1 and rows[0].complete
    assert rows[1].rank is None and rows[1].covered == 1 and rows[1].total == 2
    assert rows[1].mean == 1.0  # shown, with coverage, but unranked
    # in the view of the one suite it covers, it is complete and ranked first
    assert lb.views["kind:transitive"].rows[0].name == "partial"
    assert lb.views["kind:transitive"].rows[0].rank == 1


def test_undefined_score_counts_as_not_covered():
    undefined = {**suite(0.0), "main_score": None, "ci95": None, "consistent_accuracy_cc": None}
    lb = rank([
        Entry("full", res(s1=suite(0.5), s2=suite(0.5, kind="k2"))),
        Entry("undefined", res(s1=undefined, s2=suite(0.1, kind="k2"))),
    ])
    rows = lb.views["all"].rows
    assert [r.name for r in rows] == ["full", "undefined"]
    assert rows[1].rank is None and rows[1].covered == 1


def test_views_per_family_kind_task():
    lb = rank([Entry("a", res(
        x=suite(0.1, family="becel", task="snli", kind="transitive"),
        y=suite(0.9, hib=True, family="calm", task="lama", kind="cr"),
    ))])
    # reading order: tasks (known ones first), kinds, families, English suites, all last
    assert list(lb.views) == ["task:snli", "task:lama", "kind:transitive", "kind:cr",
                              "family:becel", "family:calm", "lang:en", "all"]
    assert lb.views["family:calm"].suites == ("y",)
    assert lb.views["task:snli"].title == "SNLI" and lb.views["all"].title == "all suites"
    assert lb.views["lang:en"].title == "English suites"
    assert lb.views["all"].kinds == ["transitive", "cr"]


def test_conflicting_hash_or_direction_rejected():
    with pytest.raises(BenchError, match="content_hash"):
        rank([Entry("a", res(s=suite(0.1))),
              Entry("b", res(s=suite(0.1) | {"content_hash": "other"}))])
    with pytest.raises(BenchError, match="direction"):
        rank([Entry("a", res(s=suite(0.1))), Entry("b", res(s=suite(0.1, hib=True)))])
    with pytest.raises(BenchError, match=r"main_score|higher_is_better"):
        rank([Entry("a", res(s={"main_metric": "m", "main_score": 0.1}))])


def test_neighbour_test_from_intervals():
    lb = rank([
        Entry("a", res(s=suite(0.10, ci=[0.09, 0.11]))),
        Entry("b", res(s=suite(0.11, ci=[0.10, 0.12]))),
        Entry("c", res(s=suite(0.50, ci=[0.49, 0.51]))),
    ])
    rows = lb.views["all"].rows
    assert rows[0].vs_next.method == "ci-overlap"
    assert not rows[0].vs_next.distinguishable  # a vs b overlap
    assert rows[1].vs_next.distinguishable  # b vs c far apart
    assert rows[2].vs_next is None
    assert [t.distinguishable for t in lb.suite_tests["s"]] == [False, True]


def test_neighbour_test_with_outcomes_uses_mcnemar_and_bootstrap():
    units_a = {f"g{i}": 1.0 for i in range(200)}
    units_b = {f"g{i}": (1.0 if i % 2 else 0.0) for i in range(200)}
    lb = rank(
        [Entry("a", res(s=suite(0.0))), Entry("b", res(s=suite(0.5)))],
        outcomes={"a": {"s": units_a}, "b": {"s": units_b}},
    )
    assert lb.suite_tests["s"][0].method == "mcnemar"
    assert lb.suite_tests["s"][0].distinguishable
    agg = lb.views["all"].rows[0].vs_next
    assert agg.method == "paired-bootstrap" and agg.distinguishable and agg.n == 200


def test_mcnemar_exact_values():
    # 10 discordant pairs all one way: p = 2 * 0.5**10
    r = mcnemar_exact([1] * 10 + [1] * 5, [0] * 10 + [1] * 5)
    assert r.p_value == pytest.approx(2 * 0.5**10)
    assert mcnemar_exact([1, 0], [0, 1]).p_value == 1.0
    with pytest.raises(BenchError):
        mcnemar_exact([0.5], [1])
    with pytest.raises(BenchError):
        mcnemar_exact([1, 0], [1])


def test_paired_bootstrap_deterministic_and_sensitive():
    a = [0.9, 0.8, 0.85, 0.95] * 20
    b = [x - 0.1 for x in a]
    r1 = paired_bootstrap(a, b, seed=3, key="k")
    r2 = paired_bootstrap(a, b, seed=3, key="k")
    assert r1 == r2 and r1.distinguishable
    assert not paired_bootstrap(a, a).distinguishable


def test_ci_overlap_z():
    assert math.isnan(ci_overlap_z(0.1, None, 0.1).p_value)
    assert ci_overlap_z(0.0, 0.01, 0.01).p_value == 1.0
    assert ci_overlap_z(0.1, 0.01, 0.01).distinguishable


def test_to_dict_is_json_ready():
    import json

    lb = rank([Entry("a", res(s=suite(0.1))), Entry("b", res(s=suite(0.2)))])
    text = json.dumps(lb.to_dict())
    assert '"direction": "lower"' in text


def test_mcnemar_large_n_does_not_overflow():
    from consistency_bench.leaderboard.paired import _binom_two_sided

    assert _binom_two_sided(3, 10) == pytest.approx(0.34375)
    assert _binom_two_sided(400, 1000) == pytest.approx(2.7284641560660184e-10, rel=1e-9)
    assert 0.3 < _binom_two_sided(24_900, 50_000) < 0.4  # n far beyond 2**1023


def test_results_without_consistent_accuracy_ask_for_a_rescore():
    old = suite(0.1)
    del old["consistent_accuracy_cc"]
    with pytest.raises(BenchError, match="rescore"):
        rank([Entry("a", res(s=old))])


def test_degenerate_flags_name_the_reason():
    majority = {"accuracy": 0.55, "n_original": 200, "n_original_correct": 110,
                "majority_rate": 0.55, "top_prediction_share": 1.0}
    near_majority = {"accuracy": 0.58, "n_original": 200, "n_original_correct": 116,
                     "majority_rate": 0.55, "top_prediction_share": 0.6}
    good = {"accuracy": 0.9, "n_original": 200, "n_original_correct": 180,
            "majority_rate": 0.55, "top_prediction_share": 0.5}
    lb = rank([Entry("const", res(s=suite(0.1, metrics=majority))),
               Entry("weak", res(s=suite(0.2, metrics=near_majority))),
               Entry("good", res(s=suite(0.3, metrics=good)))])
    rows = {r.name: r for r in lb.views["all"].rows}
    assert "near-constant" in rows["const"].degenerate
    assert "not significantly above the majority rate" in rows["weak"].degenerate
    assert rows["good"].degenerate is None and rows["good"].flags == []
    assert rows["const"].flags == ["degenerate"]


def test_degenerate_entry_is_a_reference_never_ranked():
    """A constant scoring above every real entry is still listed below them, unranked."""
    const = {"accuracy": 0.55, "n_original": 200, "n_original_correct": 110,
             "majority_rate": 0.55, "top_prediction_share": 1.0, "consistent_accuracy_n": 100}
    good = {"accuracy": 0.9, "n_original": 200, "n_original_correct": 180,
            "majority_rate": 0.55, "top_prediction_share": 0.5, "consistent_accuracy_n": 100}
    lb = rank([Entry("const", res(s=suite(0.0, cc=0.5, metrics=const))),
               Entry("weak", res(s=suite(0.0, cc=-0.1, metrics=good))),
               Entry("good", res(s=suite(0.0, cc=0.3, metrics=good)))])
    view = lb.views["all"]
    assert [(r.name, r.rank, r.status) for r in view.rows] == [
        ("good", 1, "ranked"), ("weak", 2, "ranked"), ("const", None, "reference")]
    assert view.rows[1].vs_next is None  # no test against a reference row
    assert lb.cells["s"]["const"].rank is None and lb.cells["s"]["good"].rank == 1
    assert lb.suite_order["s"] == ["good", "weak", "const"]
    assert lb.suite_tests["s"][0] is not None and len(lb.suite_tests["s"]) == 1
    row = lb.to_dict()["views"]["all"]["rows"][2]
    assert (row["name"], row["rank"], row["status"]) == ("const", None, "reference")


def test_single_class_originals_use_the_chance_test():
    """Where every original has one gold label, a constant is right on all of them: the
    degenerate test is then whether the ranked score is significantly above chance."""
    def one_class(correct):
        return {"accuracy": correct / 200, "n_original": 200, "n_original_correct": correct,
                "majority_rate": 1.0, "top_prediction_share": 1.0, "consistent_accuracy_n": 200}

    lb = rank([Entry("const", res(s=suite(0.0, cc=-0.3, chance=0.25, metrics=one_class(200)))),
               Entry("random", res(s=suite(0.0, cc=0.02, chance=0.25, metrics=one_class(66)))),
               Entry("model", res(s=suite(0.0, cc=0.3, chance=0.25, metrics=one_class(170))))])
    rows = {r.name: r for r in lb.views["all"].rows}
    assert "not significantly above chance" in rows["const"].degenerate
    assert "not significantly above chance" in rows["random"].degenerate
    assert rows["model"].degenerate is None and rows["model"].rank == 1
    assert rows["const"].rank is None and rows["random"].rank is None


def test_format_variant_and_its_config_are_one_slot():
    """A classifier covers `x_calm`, a text-to-text model `x_calm_t2t`: both are complete."""
    calm = dict(hib=True, family="calm", task="mrpc", kind="calm")
    lb = rank([
        Entry("clf", res(mrpc_calm=suite(0.9, cc=0.6, **calm), s=suite(0.1, task="mrpc"))),
        Entry("t5", res(mrpc_calm_t2t=suite(0.9, cc=0.4, **calm), s=suite(0.1, task="mrpc"))),
        Entry("half", res(s=suite(0.1, task="mrpc"))),
    ])
    rows = {r.name: r for r in lb.views["task:mrpc"].rows}
    assert (rows["clf"].rank, rows["t5"].rank) == (1, 2)
    assert rows["clf"].total == rows["t5"].total == 2 and rows["half"].status == "partial"
    assert rows["t5"].mean == pytest.approx((0.4 + 0.9) / 2)


def test_contamination_flag_from_training_data():
    a = suite(0.1, source_files=["becel/mrpc/train.tsv", "becel/mrpc/symmetric.tsv"])
    b = suite(0.1, kind="k2", source_files=["becel/mrpc/test.tsv"])
    lb = rank([Entry("m", res(s=a, t=b), meta={"training_data": ["becel/mrpc/train.tsv"]})])
    assert "becel/mrpc/train.tsv" in lb.cells["s"]["m"].contaminated
    assert lb.cells["t"]["m"].contaminated is None
    assert lb.views["all"].rows[0].flags == ["contaminated"]
    with pytest.raises(BenchError, match="training_data"):
        rank([Entry("m", res(s=a), meta={"training_data": ["../x#half=3"]})])


def test_rank_intervals_from_paired_bootstrap():
    n = 300
    outcomes = {
        "a": {"s": {f"g{i}": 1.0 for i in range(n)}},
        "b": {"s": {f"g{i}": float(i % 10 != 0) for i in range(n)}},  # 90%
        "c": {"s": {f"g{i}": float(i % 10 > 1) for i in range(n)}},  # 80%, ties b often
        "d": {"s": {f"g{i}": float(i % 10 > 2) for i in range(n)}},  # 70%
    }
    entries = [Entry(k, res(s=suite(0.0, hib=True, cc=sum(v["s"].values()) / n)))
               for k, v in outcomes.items()]
    rows = {r.name: r for r in rank(entries, outcomes=outcomes).views["all"].rows}
    assert (rows["a"].rank_low, rows["a"].rank_high) == (1, 1)
    assert rows["b"].rank_low <= 2 <= rows["b"].rank_high
    assert rows["d"].rank_high == 4
    assert rows["a"].vs_next.p_value < 0.001 and format_p(rows["a"].vs_next.p_value) == "< 0.001"
    assert all(r.rank_low is None for r in rank(entries).views["all"].rows)  # no outcomes


def test_format_p_and_binomial_tail():
    assert format_p(0.0) == "< 0.001" and format_p(0.0123) == "0.012"
    assert format_p(float("nan")) == "n/a"
    assert binom_tail_ge(10, 10, 0.5) == pytest.approx(0.5**10)
    assert binom_tail_ge(0, 10, 0.5) == 1.0
    assert binom_tail_ge(6, 10, 0.5) == pytest.approx(sum(math.comb(10, i) for i in range(6, 11))
                                                      / 1024)


def test_training_data_is_validated_and_halves_are_fixed():
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.scoring.contamination import half_of
    from consistency_bench.leaderboard.submissions.meta import validate_meta

    base = {"model": "m", "revision": "r", "license": "mit", "link": "https://x.org",
            "contact": "c", "date": "2024-01-01"}
    meta = validate_meta({**base, "training_data": ["becel/mrpc/train.tsv",
                                                    "mnli/dev.jsonl#half=1"]})
    assert meta["training_data"] == ["becel/mrpc/train.tsv", "mnli/dev.jsonl#half=1"]
    for bad in (["../etc/passwd"], ["a.tsv#half=2"], "a.tsv", [3], ["/abs/path.tsv"]):
        with pytest.raises(ConfigError, match="training_data"):
            validate_meta({**base, "training_data": bad}, "m.yaml")
    halves = [half_of("mnli/dev.jsonl", r) for r in range(1000)]
    assert halves == [half_of("mnli/dev.jsonl", r) for r in range(1000)]
    assert 400 < sum(halves) < 600


SALAD_UNITS = {"ranked_units": {"statistic": "salad_no_signal_confidence", "n_labels": 3,
                                "copy": False}}


def _snli(extra: float | None = None, semantic: float = 0.6) -> dict:
    """An SNLI-like task: 3 BECEL kinds with one suite each, and 5 (or 6) salad suites."""
    suites = {
        "snli_semantic": suite(0.1, kind="semantic", cc=semantic),
        "snli_negational": suite(0.1, kind="negational", cc=0.4),
        "snli_transitive": suite(0.1, kind="transitive", cc=0.5),
    }
    for i, cc in enumerate([0.1, 0.2, 0.0, 0.3, 0.1]):
        suites[f"snli_salad_{i}"] = suite(0.4, hib=True, family="salad", kind="salad", cc=cc,
                                          metrics={"accuracy": 0.9, "consistent_accuracy_n": 100,
                                                   **SALAD_UNITS})
    if extra is not None:
        suites["snli_salad_extra"] = suite(0.4, hib=True, family="salad", kind="salad", cc=extra,
                                           metrics={"accuracy": 0.9,
                                                    "consistent_accuracy_n": 100, **SALAD_UNITS})
    return suites


@settings(max_examples=40, deadline=None)
@given(extra=st.floats(-0.5, 1.0), delta=st.floats(0.01, 0.3))
def test_a_sixth_salad_transformation_does_not_change_the_other_kinds_weight(extra, delta):
    """Issue 18, item 2: a view is the mean over kinds of the mean over the kind's suites."""
    def row(**kw):
        lb = rank([Entry("m", res(**_snli(**kw)))])
        return lb.views["task:snli"].rows[0], lb.views["task:snli"]

    five, view = row()
    six, _ = row(extra=extra)
    assert view.kinds == ["semantic", "negational", "transitive", "salad"]
    for kind in ("semantic", "negational", "transitive"):
        assert six.kind_means[kind] == five.kind_means[kind]
    assert six.kind_means["salad"] == pytest.approx((0.7 + extra) / 6)
    assert six.mean == pytest.approx((0.6 + 0.4 + 0.5 + (0.7 + extra) / 6) / 4)
    # the weight of the semantic kind is 1/4 with five salad suites and with six
    for kw in ({}, {"extra": extra}):
        base, moved = row(**kw)[0], row(semantic=0.6 + delta, **kw)[0]
        assert (moved.mean - base.mean) == pytest.approx(delta / 4)


def test_kind_weighting_in_the_neighbour_tests_and_intervals():
    """The paired bootstrap weighs suites by kind, as the mean does."""
    n = 200
    a = {f"g{i}": 1.0 for i in range(n)}
    b = {f"g{i}": float(i % 2) for i in range(n)}
    # 'x' is a kind with one suite where A wins; 'y' a kind with three suites where B wins
    suites_of = {"x1": "x", "y1": "y", "y2": "y", "y3": "y"}
    outcomes = {"A": {s: (a if s == "x1" else b) for s in suites_of},
                "B": {s: (b if s == "x1" else a) for s in suites_of}}
    entries = [Entry(e, res(**{s: suite(0.0, hib=True, kind=k, task="t",
                                        cc=sum(outcomes[e][s].values()) / n)
                               for s, k in suites_of.items()}))
               for e in ("A", "B")]
    view = rank(entries, outcomes=outcomes).views["task:t"]
    rows = {r.name: r for r in view.rows}
    # by suites B would lead 3.5 : 2.5; by kinds it is a tie (0.75 each)
    assert rows["A"].mean == pytest.approx(rows["B"].mean) == pytest.approx(0.75)
    assert view.rows[0].vs_next.diff == pytest.approx(0.0)
    assert view.rows[0].vs_next.p_value > 0.5


def test_failing_a_kind_is_ranked_with_a_reason_not_a_baseline():
    """Issue 18, item 3: a real model that never flips under negation is ranked, last."""
    def originals(correct, top, rate=0.5, n=200):
        return {"accuracy": correct / n, "n_original": n, "n_original_correct": correct,
                "majority_rate": rate, "top_prediction_share": top, "consistent_accuracy_n": n}

    one_class = dict(majority_rate=1.0)

    def entry(name, sem_correct, sem_top, sem_cc, neg_cc, neg_tau, neg_correct):
        return Entry(name, res(
            rte_semantic=suite(0.1, task="rte", kind="semantic", cc=sem_cc,
                               metrics=originals(sem_correct, sem_top)),
            rte_negational=suite(neg_tau, task="rte", kind="negational", cc=neg_cc, chance=0.25,
                                 metrics=originals(neg_correct, 1.0) | one_class),
        ))

    lb = rank([
        entry("model", 190, 0.5, 0.8, 0.6, 0.1, 190),
        entry("never-flips", 200, 0.5, 0.9, -0.33, 1.0, 200),  # tau_neg = 1: never flips
        entry("constant", 100, 1.0, 0.0, -0.33, 1.0, 200),
        entry("random", 100, 0.5, 0.0, 0.01, 0.5, 66),
    ])
    for key in ("task:rte", "kind:negational", "all"):
        rows = {r.name: r for r in lb.views[key].rows}
        assert rows["never-flips"].status == "ranked", key
        assert rows["never-flips"].degenerate is None
        assert "never flips under negation (rte_negational)" in rows["never-flips"].failing
        assert "failing" in rows["never-flips"].flags
        assert rows["constant"].status == rows["random"].status == "reference", key
        assert rows["model"].failing is None
    assert [r.name for r in lb.views["kind:negational"].rows][:2] == ["model", "never-flips"]
    cells = lb.cells["rte_negational"]
    assert cells["never-flips"].rank == 2 and cells["never-flips"].failing
    assert cells["constant"].rank is None and cells["constant"].degenerate.startswith("RTE (")
    assert cells["random"].rank is None
    out = lb.to_dict()
    row = out["views"]["kind:negational"]["rows"][1]
    assert row["failing"] and row["kind_means"] == {"negational": pytest.approx(-0.33)}
    assert out["views"]["all"]["kinds"] == ["semantic", "negational"]
    assert out["cells"]["rte_negational"]["never-flips"]["failing"]
    assert "goodness_ci95" in out["cells"]["rte_semantic"]["model"]


def test_old_salad_results_ask_for_a_rescore():
    old = suite(0.4, hib=True, family="salad", kind="salad", cc=0.1)
    with pytest.raises(BenchError, match="rescore"):
        rank([Entry("m", res(snli_salad_sort=old))])


def test_partial_block_lists_real_entries_before_degenerate_baselines():
    """Issue 18: in "all suites" the baselines covered more suites and headed the page."""
    const = {"accuracy": 0.55, "n_original": 200, "n_original_correct": 110,
             "majority_rate": 0.55, "top_prediction_share": 1.0, "consistent_accuracy_n": 100}
    good = {"accuracy": 0.9, "n_original": 200, "n_original_correct": 180,
            "majority_rate": 0.55, "top_prediction_share": 0.5, "consistent_accuracy_n": 100}
    lb = rank([
        Entry("baseline", res(a=suite(0.0, cc=0.1, metrics=const),
                              b=suite(0.0, kind="k2", cc=0.1, metrics=const))),
        Entry("model", res(a=suite(0.0, cc=0.5, metrics=good))),
        Entry("full", res(a=suite(0.0, cc=0.2, metrics=good), b=suite(0.0, kind="k2", cc=0.2,
                                                                       metrics=good),
                          c=suite(0.0, kind="k3", cc=0.2, metrics=good))),
        Entry("elsewhere", res(d=suite(0.0, task="rte", cc=0.9, metrics=good))),
    ])
    rows = lb.views["task:snli"].rows
    assert [(r.name, r.status) for r in rows] == [
        ("full", "ranked"), ("model", "partial"), ("baseline", "partial"),
        ("elsewhere", "partial")]  # covers none of the view's suites: last


def test_degenerate_is_judged_once_per_entry_and_task():
    """A kind view and the task views agree on who is a baseline (the merged page showed
    minilm-ft as a reference row of ``kind:semantic`` while ranking it on MRPC and WiC)."""
    def originals(correct, n=200, rate=0.5):
        return {"accuracy": correct / n, "n_original": n, "n_original_correct": correct,
                "majority_rate": rate, "top_prediction_share": 0.5, "consistent_accuracy_n": n}

    weak, good = originals(100), originals(190)  # 50% is not above a 50% majority class

    def entry(name, mrpc_semantic):
        return Entry(name, res(
            rte_semantic=suite(0.1, task="rte", kind="semantic", cc=0.3, metrics=weak),
            rte_symmetric=suite(0.1, task="rte", kind="symmetric", cc=0.3, metrics=weak),
            mrpc_semantic=suite(0.1, task="mrpc", kind="semantic", cc=0.5,
                                metrics=mrpc_semantic),
            mrpc_symmetric=suite(0.1, task="mrpc", kind="symmetric", cc=0.5, metrics=good),
            mrpc_calm=suite(0.9, hib=True, family="calm", task="mrpc", kind="calm", cc=0.5,
                            metrics=good),
            wic_semantic=suite(0.1, task="wic", kind="semantic", cc=0.5, metrics=good),
            wic_symmetric=suite(0.1, task="wic", kind="symmetric", cc=0.5, metrics=good),
        ))

    # "model" is weak on RTE (both suites) and on one small MRPC suite, fine elsewhere
    lb = rank([entry("model", weak), entry("other", good)])
    status = {key: {r.name: r.status for r in v.rows} for key, v in lb.views.items()}
    assert status["task:rte"]["model"] == "reference"  # degenerate on its RTE suites
    assert status["task:mrpc"]["model"] == "ranked"
    # the task verdicts, not the per-suite tests, decide every cell: RTE's two cells are
    # degenerate, MRPC's weak suite is not (MRPC as a task is fine: 1 of 3 suites flagged)
    cells = lb.cells
    assert cells["rte_semantic"]["model"].degenerate
    assert cells["mrpc_semantic"]["model"].degenerate is None
    # so the semantic kind view (RTE, MRPC, WiC) ranks it: 1 of 3 cells degenerate
    assert status["kind:semantic"]["model"] == "ranked"
    assert lb.cells["mrpc_semantic"]["model"].rank is not None


def test_views_explain_themselves_and_carry_what_the_page_needs():
    """Issue 27 items 5-7 (data side): a view that ranks nobody says why in ``note``; a view
    with no rankable suite is not published; rows carry their coverage; meta carries an
    integer ``parameters`` (or null) and ``variant``."""
    good = {"accuracy": 0.9, "n_original": 200, "n_original_correct": 190, "majority_rate": 0.5,
            "top_prediction_share": 0.5, "consistent_accuracy_n": 200}
    weak = {**good, "n_original_correct": 100}
    one_class = suite(0.1, task="boolq", kind="symmetric", cc=None, metrics=good)
    one_class["consistent_accuracy_cc"] = None  # single-class originals: shown, not ranked
    lb = rank([
        Entry("a", res(s1=suite(0.1, cc=0.5, metrics=good),
                       r1=suite(0.1, task="rte", kind="semantic", cc=0.4, metrics=weak),
                       b1=one_class),
              {"parameters": 110_000_000, "variant": "5-shot"}),
        Entry("b", res(s1=suite(0.1, cc=0.3, metrics=good),
                       r1=suite(0.1, task="rte", kind="semantic", cc=0.2, metrics=weak)),
              {"parameters": "1 threshold per task"}),
        Entry("c", res(s1=suite(0.1, cc=0.6, metrics=good))),
    ])
    assert "task:boolq" not in lb.views  # its only suite is single-class: no tab
    assert lb.views["task:snli"].note is None
    note = lb.views["task:rte"].note
    assert note.startswith("No entry is ranked here: every entry that covers its only suite "
                           "(a, b) is degenerate")
    assert "RTE (200 originals of one suite): accuracy 50.0% not significantly above" in note
    rows = {r.name: r for r in lb.views["all"].rows}
    assert rows["c"].status == "partial" and rows["c"].coverage_weight == pytest.approx(0.5)
    assert rows["a"].coverage_weight == pytest.approx(1.0)
    # a: degenerate on RTE (half the weight), a model on SNLI (the other half): ranked
    assert rows["a"].status == "ranked" and list(rows["a"].degenerate_tasks) == ["rte"]
    out = lb.to_dict()
    assert out["views"]["task:rte"]["note"] == note
    assert out["meta"]["a"]["parameters"] == 110_000_000 and out["meta"]["a"]["variant"] == "5-shot"
    assert out["meta"]["b"]["parameters"] is None and out["meta"]["c"]["variant"] is None
    assert "contaminated" in out["filters"]["hide_contaminated"]
