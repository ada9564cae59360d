"""Views: which suites each view ranks, and an entry's row in a view (pure).

A view's rank key is the mean over its consistency kinds of the mean ranked score over each
kind's suites (:func:`kind_weights`); format variants fold into one slot (:func:`format_slots`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from consistency_bench.leaderboard.ranking.flags import _flag_any
from consistency_bench.leaderboard.ranking.intervals import (
    _aggregate_tests,
    _rank_intervals,
    view_scores,
)
from consistency_bench.leaderboard.ranking.model import (
    ENGLISH_FAMILIES,
    FAMILIES,
    KINDS,
    NON_ENGLISH_TASKS,
    TASKS,
    VIEW_ORDER,
    Cell,
    Row,
    SuiteInfo,
    View,
    _order_key,
    kind_weights,
)
from consistency_bench.leaderboard.ranking.resample import Samples


def view_title(key: str) -> str:
    """A view's tab title: ``SNLI``, ``kind: semantic``, ``family: becel``, ``all suites``."""
    if key == "all":
        return "all suites"
    if key == "lang:en":
        return "English suites"
    attr, _, value = key.partition(":")
    if attr == "task":
        return TASKS.get(value, value)
    return f"{attr}: {value}"


def _dense_ranks(values: Sequence[float]) -> list[int]:
    """Competition ranks ("1224"), best (largest) first.

    The rank of ``v`` is 1 + the number of values ``w > v + 1e-12``, counted by a binary
    search in the sorted values (the same comparisons as counting them one by one).
    """
    array = np.asarray(values, dtype=float)
    above = np.searchsorted(np.sort(array), array + 1e-12, side="right")
    return (1 + len(array) - above).tolist()


def _score(cell: Cell) -> float:
    """A ranked cell's score: a view ranks only cells whose ``goodness`` is set."""
    assert cell.goodness is not None, "a view ranks only cells with a ranked score"
    return cell.goodness


def _beats(a: float, b: float) -> float:
    if abs(a - b) <= 1e-12:
        return 0.5
    return 1.0 if a > b else 0.0


def _wins(values: np.ndarray) -> np.ndarray:
    """Each value's wins against all the others: ``sum(_beats(v, w) for w in others)``.

    Counted in the sorted values: every value more than 2e-12 below ``v`` is beaten, every one
    more than 2e-12 above is not, and the few in between are judged by :func:`_beats`'s own
    comparisons; so the sums (multiples of 0.5) are exactly those of comparing every pair, at
    O(n log n) instead of O(n^2), which a board of hundreds of entries needs.
    """
    ordered = np.sort(values)
    low = np.searchsorted(ordered, values - 2e-12, side="left")
    high = np.searchsorted(ordered, values + 2e-12, side="right")
    wins = low.astype(float)
    for i in np.flatnonzero(high - low > 1):  # other values near this one: judge each pair
        near = ordered[low[i]:high[i]]
        close = np.abs(values[i] - near) <= 1e-12
        wins[i] += 0.5 * np.count_nonzero(close) + np.count_nonzero(~close & (values[i] > near))
        wins[i] -= 0.5  # the value itself, in its own window, was counted as a tie
    return wins


#: Suffix of a format variant: ``X_t2t`` holds the groups of ``X`` formatted for text-to-text
#: models (CALM's ``*_calm_t2t``); within a view the two are one slot, either covers it.
FORMAT_VARIANT = "_t2t"


def format_slots(suites: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Fold format variants into their canonical configs.

    Returns:
        The view's slots (its suites without the variants whose canonical config is in the
        view), and the variant of each slot that has one.

    """
    variant = {s[: -len(FORMAT_VARIANT)]: s for s in suites
               if s.endswith(FORMAT_VARIANT) and s[: -len(FORMAT_VARIANT)] in suites}
    folded = set(variant.values())
    return [s for s in suites if s not in folded], variant


def _kind_mean(values: Mapping[str, float | None], kind_of: Mapping[str, str]) -> float | None:
    """Kind-weighted mean of the slots' values that are not ``None``."""
    known = {s: v for s, v in values.items() if v is not None}
    if not known:
        return None
    weights = kind_weights(list(known), kind_of)
    return float(sum(weights[s] * v for s, v in known.items()))


def _failing(cells: Mapping[str, Cell], kind_of: Mapping[str, str]) -> str | None:
    """A row's failing reason: per kind, its cells' reasons."""
    per_kind: dict[str, list[str]] = {}
    for s, c in cells.items():
        if c.failing:
            per_kind.setdefault(kind_of[s], []).append(c.failing)
    if not per_kind:
        return None
    return "; ".join(f"fails {k}: " + "; ".join(r) for k, r in per_kind.items())



def _unjudged(mine: Mapping[str, Cell], kind_of: Mapping[str, str]) -> str | None:
    """A row's note when the confidence of some of its word-salad cells could not be judged."""
    salad = [c for s, c in mine.items() if kind_of[s] == "salad"]
    hits = sum(1 for c in salad if c.unjudged)
    if not hits:
        return None
    return (f"confidence could not be judged on {hits} of {len(salad)} word-salad suites (no "
            "probabilities): judged on agreement alone")


def _degenerate_tasks(mine: Mapping[str, Cell],
                      infos: Mapping[str, SuiteInfo] | None) -> dict[str, str]:
    """Task -> why the entry is degenerate on it, for the tasks of the view it is degenerate on."""
    out: dict[str, str] = {}
    for s, c in mine.items():
        if c.degenerate:
            out.setdefault(infos[s].task if infos and s in infos else "", c.degenerate)
    return out


def _reference_reason(mine: Mapping[str, Cell], weights: Mapping[str, float],
                      tasks: Mapping[str, str]) -> str | None:
    """Why the entry is a reference row of the view, or ``None`` (it is ranked).

    A view ranks an entry when the tasks it is not degenerate on carry at least half of the
    view's weight over the suites it covers (each kind weighs the same, as in the score). The
    reason names each degenerate task and why, once.
    """
    if not mine:
        return None
    share = sum(weights[s] for s, c in mine.items() if c.degenerate)
    if share <= 0.5 + 1e-12:
        return None
    return ("; ".join(tasks.values()) + f" (degenerate on tasks carrying {100 * share:.0f}% of "
            "this view's weight; an entry is ranked where the tasks it is not degenerate on "
            "carry at least half)")


# One piece (over 60 lines): a view's steps in order (rows, ranks, intervals, tests).
def _view(
    name: str,
    suites: Sequence[str],
    entries: Sequence[str],
    cells: Mapping[str, Mapping[str, Cell]],
    samples: Samples | None,
    unranked: Sequence[str] = (),
    infos: Mapping[str, SuiteInfo] | None = None,
) -> View:
    ranked = {s: {e: c for e, c in cells[s].items() if c.goodness is not None} for s in suites}
    slots, variant = format_slots(suites)
    kind_of = {s: (infos[s].kind if infos and s in infos else "") for s in suites}
    kinds = tuple(sorted({kind_of[s] for s in slots}, key=lambda k: _order_key(k, KINDS)))

    def pick(e: str, slot: str) -> str | None:
        """The suite of ``slot`` that entry ``e`` is scored on: the canonical config first."""
        if e in ranked[slot]:
            return slot
        alt = variant.get(slot)
        return alt if alt is not None and e in ranked[alt] else None

    picks = {s: {e: p for e in entries if (p := pick(e, s)) is not None} for s in slots}
    wins = {s: dict(zip(pk, _wins(np.array([_score(cells[p][e]) for e, p in pk.items()],
                                           dtype=float)).tolist(), strict=True))
            for s, pk in picks.items()}
    stats = {e: _entry_row(e, slots, picks, wins, cells, kind_of, kinds, infos)
             for e in entries}  # entry -> its row before the ranks are known
    complete = [e for e in entries if stats[e].covered == len(slots) and slots]
    # Complete but degenerate: a reference row (constant, random), never ranked.
    reference = [e for e in complete if stats[e].degenerate]
    complete = [e for e in complete if e not in reference]
    partial = [e for e in entries if e not in complete and e not in reference]

    def ranks(value: Callable[[Row], float | None]) -> dict[str, int]:
        vals = [-1e9 if v is None else v for v in (value(stats[e]) for e in complete)]
        return dict(zip(complete, _dense_ranks(vals), strict=False))

    r_mean = ranks(lambda r: r.mean)
    r_borda = ranks(lambda r: r.borda)
    r_win = ranks(lambda r: r.win_rate)
    complete.sort(key=lambda e: (r_mean[e], -stats[e].borda, e))
    reference.sort(key=lambda e: (-(stats[e].mean or 0.0), e))  # complete: mean is set
    # partial rows: real entries before degenerate ones (a baseline covering more suites must
    # not head the block), then by coverage and score; entries covering nothing last
    partial.sort(key=lambda e: (stats[e].covered == 0, stats[e].degenerate is not None,
                                -stats[e].covered, -(stats[e].mean or -1e9), e))
    weights = kind_weights(slots, kind_of)
    # Paired over the slots' canonical configs; an entry scored on a format variant has no
    # sample there, so the view then has no rank intervals (neighbours: interval test).
    boot = view_scores(complete, slots, samples, weights)
    intervals = dict(zip(complete, _rank_intervals(boot[0]), strict=True)) if boot else {}
    rows = []
    for e in complete + reference + partial:
        low, high = intervals.get(e, (None, None))
        share = sum(weights[s] for s in slots if pick(e, s) is not None)
        rows.append(replace(stats[e], rank=r_mean.get(e), rank_borda=r_borda.get(e),
                            rank_win_rate=r_win.get(e), rank_low=low, rank_high=high,
                            coverage_weight=float(share)))
    tests = _aggregate_tests(rows[:len(complete)], slots, samples, weights, boot)
    for i, test in enumerate(tests):  # neighbour tests among ranked rows only
        rows[i] = replace(rows[i], vs_next=test)
    return View(name, tuple(suites), tuple(rows), view_title(name), tuple(unranked), list(kinds),
                note=_note(rows, len(slots)))


# One piece (over 60 lines): the Args of its docstring and one Row, field by field.
def _entry_row(
    e: str,
    slots: Sequence[str],
    picks: Mapping[str, Mapping[str, str]],
    wins: Mapping[str, Mapping[str, float]],
    cells: Mapping[str, Mapping[str, Cell]],
    kind_of: Mapping[str, str],
    kinds: Sequence[str],
    infos: Mapping[str, SuiteInfo] | None,
) -> Row:
    """Entry ``e``'s row of a view before the ranks are known.

    Args:
        e: The entry.
        slots: The view's slots (canonical suite configs).
        picks: Per slot, entry -> the suite it is scored on there.
        wins: Per slot, entry -> its Borda points there.
        cells: Per suite, entry -> its cell.
        kind_of: Suite -> its metric kind.
        kinds: The view's kinds, in display order.
        infos: The suites' information, if known.

    Returns:
        The row, with every rank ``None``.

    """
    picked = {s: picks[s][e] for s in slots if e in picks[s]}
    covered = list(picked)
    borda = 0.0
    rates = []
    for s in covered:  # Borda: one point per other entry beaten on the slot, half per tie
        borda += wins[s][e]
        if len(picks[s]) > 1:
            rates.append(wins[s][e] / (len(picks[s]) - 1))
    mine = {s: cells[p][e] for s, p in picked.items()}
    weights = kind_weights(covered, kind_of)
    sds = {s: c.sd_goodness for s, c in mine.items()}
    known_sds = {s: sd for s, sd in sds.items() if sd is not None}
    kind_means: dict[str, float | None] = {}
    for k in kinds:
        values = [_score(c) for s, c in mine.items() if kind_of[s] == k]
        kind_means[k] = float(np.mean(values)) if values else None
    degenerate_tasks = _degenerate_tasks(mine, infos)
    degenerate = _reference_reason(mine, weights, degenerate_tasks)
    return Row(
        name=e,
        rank=None,
        covered=len(covered),
        total=len(slots),
        mean=_kind_mean({s: c.goodness for s, c in mine.items()}, kind_of),
        kind_means=kind_means,
        borda=borda,
        win_rate=float(np.mean(rates)) if rates else None,
        rank_borda=None,
        rank_win_rate=None,
        sd_mean=(
            float(np.sqrt(sum((weights[s] * sd) ** 2 for s, sd in known_sds.items())))
            if sds and len(known_sds) == len(sds) else None
        ),
        accuracy=_kind_mean({s: c.accuracy for s, c in mine.items()}, kind_of),
        consistency=_kind_mean({s: c.consistency for s, c in mine.items()}, kind_of),
        degenerate=degenerate,
        contaminated=_flag_any([c.contaminated for c in mine.values()], covered),
        failing=None if degenerate else _failing(mine, kind_of),
        degenerate_tasks=degenerate_tasks,
        unjudged=_unjudged(mine, kind_of),
    )


def _note(rows: Sequence[Row], slots: int) -> str | None:
    """The one sentence shown above a view that ranks nobody, saying why; ``None`` otherwise."""
    if any(r.status == "ranked" for r in rows):
        return None
    references = [r for r in rows if r.status == "reference"]
    covers = "its only suite" if slots == 1 else f"all {slots} suites"
    if not references:
        return (f"No entry is ranked here: none covers {covers} of this view (partial rows show "
                "their coverage).")
    first = references[0]
    why = "; ".join(first.degenerate_tasks.values())
    names = ", ".join(r.name for r in references)
    return (f"No entry is ranked here: every entry that covers {covers} ({names}) is "
            f"degenerate on the tasks carrying most of its weight, e.g. {first.name}: {why}.")


def _view_keys(infos: Mapping[str, SuiteInfo]) -> list[tuple[str, list[str]]]:
    """View keys with their suites, in reading order: tasks, kinds, families, English, all."""
    names = list(infos)
    out = []
    orders: dict[str, Sequence[str]] = {"task": tuple(TASKS), "kind": KINDS, "family": FAMILIES}
    for attr in VIEW_ORDER[:-2]:
        values = sorted({getattr(infos[s], attr) for s in names} - {""},
                        key=partial(_order_key, order=orders[attr]))
        for value in values:
            out.append((f"{attr}:{value}", [s for s in names if getattr(infos[s], attr) == value]))
    english = [s for s in names if infos[s].family in ENGLISH_FAMILIES
               and infos[s].task not in NON_ENGLISH_TASKS]
    if english:
        out.append(("lang:en", english))
    out.append(("all", names))
    return out
