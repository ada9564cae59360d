"""The committed leaderboard (`leaderboard/site/`) is current and ranks as a researcher would.

Two checks a stale or misleading page would fail:

- the committed ``leaderboard.json`` holds, per view, exactly the (name, rank, status) rows that
  ranking the committed ``submissions/`` gives today (ranks do not depend on the per-unit
  outcomes; only the rank intervals do);
- the constant (``majority``) and random baselines are never ranked, in any view or on any
  suite, and every real entry that covers a view and is not flagged there is ranked in it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry
from consistency_bench.leaderboard.submissions.reader import load_all

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "leaderboard/site/leaderboard.json"
BASELINES = ("majority", "random")


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(SITE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fresh():
    subs = load_all(ROOT / "submissions")
    return rank([Entry(s.slug, s.results, s.meta) for s in subs])


def test_committed_page_matches_the_submissions(committed, fresh):
    assert committed["view_order"] == list(fresh.views)
    for key, view in fresh.views.items():
        got = [(r["name"], r["rank"], r["status"]) for r in committed["views"][key]["rows"]]
        want = [(r.name, r.rank, r.status) for r in view.rows]
        assert got == want, f"{key}: regenerate with `consistency-bench leaderboard`"


def test_constant_and_random_are_never_ranked(committed):
    for key, view in committed["views"].items():
        for row in view["rows"]:
            if row["name"] in BASELINES and row["covered"]:
                assert row["rank"] is None and row["status"] in ("reference", "partial"), key
        ranked = [r for r in view["rows"] if r["rank"] is not None]
        assert all(r["name"] not in BASELINES for r in ranked), key
        statuses = [r["status"] for r in view["rows"]]
        assert statuses == sorted(statuses, key=("ranked", "reference", "partial").index), key
    for suite, cells in committed["cells"].items():
        for name in BASELINES:
            if name in cells and cells[name]["goodness"] is not None:
                assert cells[name]["rank"] is None, suite


def test_real_entries_are_ranked_where_they_cover_a_view(committed):
    ranked_somewhere = {r["name"] for v in committed["views"].values() for r in v["rows"]
                        if r["rank"] is not None}
    assert {"minilm-ft", "tfidf-lr"} <= ranked_somewhere
    for key, view in committed["views"].items():
        for row in view["rows"]:
            if row["complete"] and not row["degenerate"]:
                assert row["rank"] is not None, (key, row["name"])


def test_docs_figures_are_generated_from_the_committed_page(committed):
    """Issue 27 item 8: docs/leaderboard.md quoted 33.4 where the page said 33.8."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "leaderboard_figures", ROOT / "scripts/leaderboard_figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    doc = (ROOT / "docs/leaderboard.md").read_text(encoding="utf-8")
    block = figures.figures(committed)
    assert figures.BEGIN + "\n" + block + figures.END in doc, (
        "docs/leaderboard.md: stale figures; run `python scripts/leaderboard_figures.py`")
    # the block holds the page's own numbers: each ranked row of English suites, as printed
    for row in committed["views"]["lang:en"]["rows"]:
        if row["status"] == "ranked":
            assert f"`{row['name']}` #{row['rank']} {figures.pct(row['mean'])}" in block
    assert figures.main(["--check", "--site", str(SITE.parent),
                         "--doc", str(ROOT / "docs/leaderboard.md")]) == 0


def test_mrpc_case_one_test_per_task_on_distinct_originals(fresh):
    """Issue 27 item 3: on MRPC one correct answer decided who was a model.

    The four MRPC salad suites and ``mrpc_calm`` reuse the same 408 originals: judged suite by
    suite, ``minilm-ft`` (295/408 right, p = 0.048) was a model and ``lexical-overlap``
    (294/408, p = 0.060) a baseline, and the 408 items were counted 4-5 times among 7 suites.
    Now the task is judged once, on its distinct originals: both are judged on the same items,
    and each entry has one status on every MRPC suite and in every view of MRPC alone.
    """
    from consistency_bench.leaderboard.paired import binom_tail_ge

    subs = {s.slug: s for s in load_all(ROOT / "submissions")}
    old = {}
    for name in ("minilm-ft", "lexical-overlap"):
        m = subs[name].results["suites"]["mrpc_salad_sort"]["metrics"]
        old[name] = binom_tail_ge(m["n_original_correct"], m["n_original"], m["majority_rate"])
        assert m["n_original"] == 408
    assert old["minilm-ft"] < 0.05 <= old["lexical-overlap"]  # the split the issue reported
    tasks = {n: subs[n].results["tasks"]["mrpc"] for n in ("minilm-ft", "lexical-overlap",
                                                           "tfidf-lr")}
    # one test on the distinct originals of the testable MRPC suites: the same items for all
    assert len({t["n_original"] for t in tasks.values()}) == 1
    n = tasks["minilm-ft"]["n_original"]
    assert 408 < n < tasks["minilm-ft"]["n_original_rows"]  # repeats counted once
    mrpc = [s for s, info in fresh.suites.items() if info.task == "mrpc"]
    for name in tasks:
        verdicts = {fresh.cells[s][name].degenerate for s in mrpc if name in fresh.cells[s]
                    and fresh.cells[s][name].goodness is not None}
        assert verdicts == {None}, (name, verdicts)  # a model on MRPC, on every suite
        assert {r.status for r in fresh.views["task:mrpc"].rows if r.name == name} == {"ranked"}


def test_one_status_per_entry_and_task_in_every_view(fresh):
    """Issue 27 item 4: minilm-ft was a reference of kind:negational, #1 elsewhere."""
    for key, view in fresh.views.items():
        for row in view.rows:
            for task, reason in row.degenerate_tasks.items():
                for suite in view.suites:
                    cell = fresh.cells[suite].get(row.name)
                    if fresh.suites[suite].task == task and cell and cell.goodness is not None:
                        assert cell.degenerate == reason, (key, row.name, suite)
            if row.status == "reference":  # the reason names each task once
                for task in row.degenerate_tasks:
                    title = fresh.views["task:" + task].title
                    assert row.degenerate.count(f"{title} (") == 1, (key, row.name, task)
