"""Property test of the ranking (issue 9, item 6): synthetic entries come out in the right order.

Seeded synthetic entries (tests/synthetic_entries.py) are scored by the real scorers on every
suite the mirror builds, then ranked. In every view: gold with 5% noise > gold with 25% noise >
uniform random, gold with 25% noise > a constant, gold with 5% noise > "accurate on originals,
random on perturbations" (in views of word-salad suites only, where answering the salad at random
is the paper's ideal, "accurate on originals, random on perturbations" > gold with 25% noise
instead); the constant and the random entry are never ranked at all (they are
degenerate: reference rows below every ranked entry), in any view or on any suite. Orderings
only, never particular numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from consistency_bench.leaderboard.ranking.board import rank
from tests.synthetic_entries import ENTRIES, order, score_entries


@pytest.fixture(scope="module")
def scored(all_folder):
    return score_entries(all_folder)


@pytest.fixture(scope="module")
def board(scored):
    entries, outcomes = scored
    return rank(entries, outcomes=outcomes)


def test_every_family_is_in_the_synthetic_run(board):
    families = {info.family for info in board.suites.values()}
    assert families == {"becel", "calm", "salad", "coherence"}
    keys = list(board.views)
    assert keys[0].startswith("task:") and keys[-1] == "all"


DEGENERATE = ("constant", "random")


def _before(view, better: str, worse: str) -> bool:
    """``better`` is listed (and, where both are ranked, ranked) ahead of ``worse``."""
    order = [r.name for r in view.rows]
    rows = {r.name: r for r in view.rows}
    if rows[better].rank is None:
        return False
    ahead = order.index(better) < order.index(worse)
    return ahead and (rows[worse].rank is None or rows[better].rank < rows[worse].rank)


def test_right_order_in_every_view(board):
    wrong = []
    for key, view in board.views.items():
        if not view.suites:
            continue
        rows = {r.name: r for r in view.rows}
        assert all(rows[e].complete for e in ENTRIES), key  # every entry covers every suite
        for better, worse in order(view.kinds):
            if not (rows[better].mean > rows[worse].mean and _before(view, better, worse)):
                wrong.append(f"{key}: {better} !> {worse}")
        if view.rows[0].name in DEGENERATE:
            wrong.append(f"{key}: {view.rows[0].name} ranks first")
        for name in DEGENERATE:
            if rows[name].rank is not None or rows[name].status != "reference":
                wrong.append(f"{key}: {name} is ranked ({rows[name].rank})")
        statuses = [r.status for r in view.rows]
        if statuses != sorted(statuses, key=("ranked", "reference", "partial").index):
            wrong.append(f"{key}: rows out of order {statuses}")
    assert wrong == []


def test_degenerate_entries_are_never_ranked_on_a_suite(board):
    wrong = []
    for suite, cells in board.cells.items():
        for name in DEGENERATE:
            if cells[name].degenerate and cells[name].rank is not None:
                wrong.append(f"{suite}: degenerate {name} ranked {cells[name].rank}")
        order = board.suite_order[suite]
        if cells[order[0]].goodness is not None and order[0] in DEGENERATE:
            wrong.append(f"{suite}: {order[0]} listed first")
    assert wrong == []


def test_right_order_on_every_ranked_suite(board):
    for suite, cells in board.cells.items():
        if cells["gold-5"].goodness is None:  # single-label suite: shown, not ranked
            continue
        assert cells["gold-5"].goodness > cells["gold-25"].goodness > cells["random"].goodness, (
            suite)


def test_rank_intervals_and_flags(board):
    view = board.views["all"]
    rows = {r.name: r for r in view.rows}
    assert rows["gold-5"].rank_low == rows["gold-5"].rank_high == 1
    for row in view.rows:
        if row.rank is not None:
            assert row.rank_low <= row.rank <= row.rank_high
        else:
            assert row.rank_low is None and row.rank_high is None
    assert "degenerate" in rows["constant"].flags and "degenerate" in rows["random"].flags
    assert rows["gold-5"].flags == [] and rows["gold-25"].flags == []


def test_negative_control_consistency_alone_ranks_the_constant_high(board):
    """The paper metrics alone would put the constant above the 5%-noise entry somewhere."""
    beaten = []
    for key, view in board.views.items():
        shared = [s for s in view.suites
                  if all(board.cells[s][e].consistency is not None for e in ("gold-5", "constant"))]
        if not shared:
            continue
        means = {e: float(np.mean([board.cells[s][e].consistency for s in shared]))
                 for e in ("gold-5", "constant")}
        if means["constant"] > means["gold-5"]:
            beaten.append(key)
    assert beaten, "the synthetic entries no longer separate consistency from consistent accuracy"


def test_views_weigh_kinds_not_suites(board):
    """Every view's mean is the mean over its kinds of the kind means (MTEB's Mean(TaskType))."""
    for key, view in board.views.items():
        if not view.suites:
            continue
        for row in view.rows:
            kinds = [m for m in row.kind_means.values() if m is not None]
            assert row.mean == pytest.approx(float(np.mean(kinds))), (key, row.name)
            assert list(row.kind_means) == list(view.kinds)


def test_english_view_has_every_english_suite_and_nothing_else(board):
    view = board.views["lang:en"]
    infos = board.suites
    want = {s for s, i in infos.items() if i.family in ("becel", "calm", "salad")
            and i.task not in ("kornli", "klue_nli", "klue_sts")}
    assert set(view.suites) | set(view.unranked_suites) == want
    assert "salad" in view.kinds and "coherence" not in view.kinds
