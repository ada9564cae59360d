"""What the plots draw, from a ranked leaderboard (pure functions).

**Accuracy against consistency** (BECEL l. 183: "the high accuracy does not necessarily
guarantee high consistency"): per view, each entry that covers the view (ranked or reference
row) is a point at its accuracy on the originals and its consistency (the papers' metrics,
direction-normalised), both the view's kind-weighted means (docs/leaderboard.md), with 95%
interval bars: ``mean ± 1.96 sqrt(Σ_s w_s² se_s²)`` over the view's suites with their kind
weights ``w_s``; a suite's ``se`` of accuracy is binomial with the suite's unit count (the
paper metric's ``n``; for transitive and additive that is |C|, fewer than the originals, so
the bar is wider than the truth), of consistency the half-width of the paper metric's
bootstrap interval (mapped through the normalisation) over 1.96. Suites are taken as
independent: suites sharing originals (MRPC's salads and CALM) make the bars too narrow.

**Profile**: an entry's mean ranked score per consistency kind in a view beside the view's
#1 (``Row.kind_means``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import isfinite, sqrt

from consistency_bench.leaderboard.ranking.model import (
    Cell,
    Leaderboard,
    Row,
    SuiteInfo,
    consistency,
)
from consistency_bench.leaderboard.ranking.views import format_slots, kind_weights

Z95 = 1.96


@dataclass(frozen=True)
class Point:
    """One entry in one view's accuracy-consistency plot.

    Attributes:
        name: Entry.
        status: ``ranked`` or ``reference`` (complete rows only are drawn).
        rank: Its rank, or ``None``.
        accuracy: Kind-weighted mean accuracy on the originals.
        accuracy_half: Half-width of its 95% interval, or ``None`` (a suite without units).
        consistency: Kind-weighted mean of the direction-normalised paper metrics.
        consistency_half: Half-width of its 95% interval, or ``None`` (a suite without one).
        score: The ranked score (chance-corrected consistent accuracy).

    """

    name: str
    status: str
    rank: int | None
    accuracy: float
    accuracy_half: float | None
    consistency: float
    consistency_half: float | None
    score: float | None


def _number(value: object) -> bool:
    """A real number (a hand-edited results file may hold anything where one belongs)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and isfinite(value)


def _accuracy_se(cell: Cell) -> float | None:
    accuracy, n = cell.accuracy, cell.n
    if not isinstance(accuracy, (int, float)) or not isinstance(n, int) or n <= 0 \
            or not _number(accuracy):
        return None
    a = min(max(float(accuracy), 0.0), 1.0)
    return sqrt(a * (1 - a) / n)


def _consistency_se(cell: Cell, info: SuiteInfo) -> float | None:
    if cell.ci95 is None or len(cell.ci95) != 2 or not all(map(_number, cell.ci95)):
        return None
    low, high = cell.ci95
    values = [consistency(low, info), consistency(high, info)]
    if info.best_near is not None and low <= info.best_near <= high:
        values.append(1.0)  # the no-signal map peaks at chance inside the interval
    return (max(values) - min(values)) / 2 / Z95


def _picked(lb: Leaderboard, key: str, name: str) -> dict[str, Cell]:
    """The cells the view's row of ``name`` averages: one per slot, as the ranking picks."""
    suites = list(lb.views[key].suites)
    slots, variant = format_slots(suites)
    out = {}
    for slot in slots:
        for suite in (slot, variant.get(slot)):
            cell = lb.cells.get(suite or "", {}).get(name)
            if cell is not None and cell.goodness is not None:
                out[suite or slot] = cell
                break
    return out


def _mean_and_half(values: Mapping[str, float | None], ses: Mapping[str, float | None],
                   kind_of: Mapping[str, str]) -> tuple[float | None, float | None]:
    known = {s: float(v) for s, v in values.items() if _number(v)}  # type: ignore[arg-type]
    if not known:
        return None, None
    weights = kind_weights(list(known), kind_of)
    mean = sum(weights[s] * v for s, v in known.items())
    parts = {s: ses.get(s) for s in known}
    var = 0.0
    for s, se in parts.items():
        if se is None:
            return mean, None
        var += (weights[s] * se) ** 2
    return mean, Z95 * sqrt(var)


def view_points(lb: Leaderboard, key: str,
                memo: dict[tuple[str, str], tuple] | None = None) -> list[Point]:
    """The points of view ``key``: its ranked rows, then its reference rows.

    ``memo``: each cell's accuracy, consistency and standard errors, kept across the views
    of one board (:func:`board_points`): a suite's cell is in several views (its suite, kind,
    family and language, all suites), and a word-salad cell's consistency is recomputed from
    its score each time it is read.
    """
    kind_of = {s: info.kind for s, info in lb.suites.items()}
    memo = {} if memo is None else memo
    points = []
    for row in lb.views[key].rows:
        if row.status not in ("ranked", "reference"):
            continue
        cells = _picked(lb, key, row.name)
        found = {}
        for s, c in cells.items():
            if (s, row.name) not in memo:
                memo[s, row.name] = (c.accuracy, _accuracy_se(c), c.consistency,
                                     _consistency_se(c, lb.suites[s]))
            found[s] = memo[s, row.name]
        acc, acc_half = _mean_and_half({s: v[0] for s, v in found.items()},
                                       {s: v[1] for s, v in found.items()}, kind_of)
        cons, cons_half = _mean_and_half({s: v[2] for s, v in found.items()},
                                         {s: v[3] for s, v in found.items()}, kind_of)
        if acc is None or cons is None:
            continue
        points.append(Point(row.name, row.status, row.rank, acc, acc_half, cons, cons_half,
                            row.mean))
    return points


def board_points(lb: Leaderboard) -> dict[str, list[Point]]:
    """Every view's points (:func:`view_points`), each cell's values computed once."""
    memo: dict[tuple[str, str], tuple] = {}
    return {key: view_points(lb, key, memo) for key in lb.views}


def profile_rows(lb: Leaderboard, key: str = "all",
                 chosen: str | None = None) -> tuple[Row, Row | None] | None:
    """The view's #1 (its first row) and the chosen entry's row (default: the next row).

    ``None`` when the view has no row. The chosen entry may be any row of the view.
    """
    if key not in lb.views or not lb.views[key].rows:
        return None
    rows = lb.views[key].rows
    top = rows[0]
    if chosen is None:
        other = next((r for r in rows[1:] if r.covered), None)
    else:
        other = next((r for r in rows if r.name == chosen), None)
    return top, other
