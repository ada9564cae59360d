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

from leaderboard.ranking import Entry, rank
from leaderboard.submissions import load_all

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
