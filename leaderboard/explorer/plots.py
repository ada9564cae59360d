"""The interactive plots' files: ``data/plot/<view-id>.js``, one per view.

Per view (``webpage.lazy`` format): the points of the accuracy-consistency plot
(:func:`consistency_bench.leaderboard.plots.points.view_points`: accuracy, consistency and their 95%
half-widths, ranked and reference rows) and, for the per-kind profile, every covering row's
mean ranked score per kind (``Row.kind_means``). The page's plot script draws them as SVG.
"""

from __future__ import annotations

from collections.abc import Mapping

from consistency_bench.leaderboard.plots.points import Point, board_points
from consistency_bench.leaderboard.ranking.model import Leaderboard
from consistency_bench.leaderboard.webpage.lazy import data_path, data_script


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), 5)


def view_payload(lb: Leaderboard, key: str, points: list[Point]) -> dict:
    """What the plots of view ``key`` draw (``points``: its :func:`board_points`)."""
    view = lb.views[key]
    shown = [{"name": p.name, "status": p.status, "rank": p.rank, "acc": _r(p.accuracy),
               "acc_half": _r(p.accuracy_half), "cons": _r(p.consistency),
               "cons_half": _r(p.consistency_half), "score": _r(p.score)}
              for p in points]
    profiles = [{"name": r.name, "status": r.status, "rank": r.rank, "covered": r.covered,
                 "total": r.total, "kinds": {k: _r(v) for k, v in r.kind_means.items()}}
                for r in view.rows if r.covered]
    return {"key": key, "title": view.title, "kinds": list(view.kinds), "points": shown,
            "profiles": profiles}


def plot_files(lb: Leaderboard, ids: Mapping[str, str],
               points: Mapping[str, list[Point]] | None = None) -> dict[str, str]:
    """Path -> text of every view's plot file (``ids``: the page's view ids).

    ``points``: the board's :func:`board_points`, when the caller has them already.
    """
    out = {}
    every = board_points(lb) if points is None else points
    for key in lb.views:
        path = data_path("plot", ids[key])
        out[path] = data_script(path, view_payload(lb, key, every[key]))
    return out
