import math

import pytest

from bench.errors import BenchError
from leaderboard.paired import ci_overlap_z, mcnemar_exact, paired_bootstrap
from leaderboard.ranking import Entry, SuiteInfo, goodness, rank


def suite(score, hib=False, ci=None, family="becel", task="snli", kind="transitive", **extra):
    return {
        "family": family, "task": task, "kind": kind, "main_metric": "m",
        "main_score": score, "higher_is_better": hib, "n": 100,
        "ci95": ci if ci is not None else [max(0, score - 0.02), min(1, score + 0.02)],
        "content_hash": "h-" + kind + task, **extra,
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
    entries = [
        Entry("far", res(w=suite(0.95, hib=True, kind="salad", best_near=1 / 3))),
        Entry("close", res(w=suite(0.40, hib=True, kind="salad", best_near=1 / 3))),
    ]
    assert rank(entries).suite_order["w"] == ["close", "far"]
    plain = [Entry(e.name, res(w=suite(e.results["suites"]["w"]["main_score"], hib=True)))
             for e in entries]
    assert rank(plain).suite_order["w"] == ["far", "close"]
    assert rank(plain, best_near={"w": 1 / 3}).suite_order["w"] == ["close", "far"]


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
    undefined = {**suite(0.0), "main_score": None, "ci95": None}
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
    assert set(lb.views) == {"all", "family:becel", "family:calm", "kind:transitive", "kind:cr",
                             "task:snli", "task:lama"}
    assert lb.views["family:calm"].suites == ("y",)


def test_conflicting_hash_or_direction_rejected():
    with pytest.raises(BenchError, match="content_hash"):
        rank([Entry("a", res(s=suite(0.1))),
              Entry("b", res(s=suite(0.1) | {"content_hash": "other"}))])
    with pytest.raises(BenchError, match="direction"):
        rank([Entry("a", res(s=suite(0.1))), Entry("b", res(s=suite(0.1, hib=True)))])
    with pytest.raises(BenchError, match="main_score|higher_is_better"):
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
    from leaderboard.paired import _binom_two_sided

    assert _binom_two_sided(3, 10) == pytest.approx(0.34375)
    assert _binom_two_sided(400, 1000) == pytest.approx(2.7284641560660184e-10, rel=1e-9)
    assert 0.3 < _binom_two_sided(24_900, 50_000) < 0.4  # n far beyond 2**1023
