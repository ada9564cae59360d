"""The plots as PNG files (matplotlib, Agg, no date metadata: the same bytes on every run).

``plots/accuracy-consistency.png``: one panel per view with at least one entry covering it,
accuracy on the originals against consistency with 95% interval bars
(:func:`consistency_bench.leaderboard.plots.points.view_points`), ranked entries filled and
numbered, reference
rows (degenerate baselines) hollow and grey. ``plots/profile.png``: per consistency kind, the
ranked score of an entry beside the #1 of the "all suites" view.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

from consistency_bench.bench.io.write import atomic_path
from consistency_bench.leaderboard.plots.points import Point, board_points, profile_rows
from consistency_bench.leaderboard.ranking.model import Leaderboard
from consistency_bench.leaderboard.webpage.formatting import clean

SCATTER = "plots/accuracy-consistency.png"
PROFILE = "plots/profile.png"
#: Panels per line of the scatter figure.
COLUMNS = 4
#: Points labelled per panel (ranked in rank order, then reference rows): past a dozen the
#: labels cover each other; the page's interactive plot names every point on hover.
LABELS = 12
#: Inches: each line of panels, above the first (the figure's title), below the last.
PANEL_HEIGHT, TOP, BOTTOM = 3.2, 0.55, 0.45


def _plain(text: object) -> str:
    """A label for matplotlib: one line, ``$`` escaped (no mathtext from an entry name)."""
    return clean(text).replace("$", r"\$")


def _save(fig, target: Path) -> None:
    """Write ``fig`` as PNG (Agg), then close it if pyplot made it."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)


def _halves(values) -> list[float]:
    """Bar half-widths in %, NaN where a point has none (matplotlib draws no bar there)."""
    return [math.nan if v is None else 100 * v for v in values]


def _panel(ax, lb: Leaderboard, key: str, points: list[Point]) -> None:
    """One view's points and labels on the first :data:`LABELS` of them.

    One ``errorbar`` call per style, not per point: at 100 entries, a call and a label per
    point made the scatter take 222 of the render's 255 s (cProfile, shared machine).
    """
    for ranked in (True, False):
        group = [p for p in points if (p.status == "ranked") == ranked]
        if not group:
            continue
        ax.errorbar([100 * p.consistency for p in group], [100 * p.accuracy for p in group],
                    xerr=_halves(p.consistency_half for p in group),
                    yerr=_halves(p.accuracy_half for p in group),
                    fmt="o" if ranked else "s", markersize=6 if ranked else 5,
                    color="#1f5fa8" if ranked else "#888888",
                    markerfacecolor="#1f5fa8" if ranked else "none", elinewidth=1, capsize=2)
    order = sorted(points, key=lambda p: (p.status != "ranked", p.rank or 0, p.name))
    for p in order[:LABELS]:
        ranked = p.status == "ranked"
        label = f"#{p.rank} {p.name}" if ranked else f"{p.name} (reference)"
        ax.annotate(_plain(label), (100 * p.consistency, 100 * p.accuracy), fontsize=7,
                    xytext=(4, 3), textcoords="offset points",
                    color="black" if ranked else "#666666")
    title = lb.views[key].title
    if len(points) > LABELS:
        title += f" (labels: first {LABELS} of {len(points)})"
    ax.set_title(_plain(title), fontsize=9)
    ax.set_xlim(-5, 105)
    ax.set_ylim(-5, 105)
    ax.grid(True, linewidth=0.4, color="#dddddd")
    ax.tick_params(labelsize=7)


def render_scatter(lb: Leaderboard, target: Path,
                   points: Mapping[str, list[Point]] | None = None) -> bool:
    """Accuracy against consistency, one panel per view with a complete row; False: none.

    ``points``: the board's :func:`board_points`, when the caller has them already.

    Fixed margins in inches (not ``tight_layout``, which draws the figure once more to
    measure its texts: 3.2 of 8.9 s at 500 entries), and matplotlib's object API (no pyplot
    state).
    """
    from matplotlib.figure import Figure

    every = board_points(lb) if points is None else points
    keys = [k for k in lb.views if every[k]]
    if not keys:
        return False
    rows = math.ceil(len(keys) / COLUMNS)
    height = PANEL_HEIGHT * rows + TOP + BOTTOM
    fig = Figure(figsize=(14, height), dpi=100)
    axes = fig.subplots(rows, COLUMNS, squeeze=False)
    fig.subplots_adjust(left=0.045, right=0.99, bottom=BOTTOM / height, top=1 - TOP / height,
                        wspace=0.2, hspace=0.42)
    for ax, key in zip(axes.flat, keys, strict=False):
        _panel(ax, lb, key, every[key])
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy on the originals %", fontsize=8)
    for ax in axes[-1, :]:
        ax.set_xlabel("consistency % (papers' metrics)", fontsize=8)
    fig.suptitle("consistency-bench: accuracy against consistency per view (bars: 95% "
                 "intervals; filled: ranked, hollow grey: reference rows, degenerate; "
                 "entries covering the view only)", fontsize=10, y=1 - 0.15 / height)
    _save(fig, target)
    return True


def render_profile(lb: Leaderboard, target: Path, chosen: str | None = None,
                   key: str = "all") -> bool:
    """The chosen entry's score per kind beside the #1's; False: nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    found = profile_rows(lb, key, chosen)
    if found is None:
        return False
    top, other = found
    rows = [r for r in (top, other) if r is not None]
    kinds = list(lb.views[key].kinds) or sorted({k for r in rows for k in r.kind_means})
    fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
    width = 0.8 / len(rows)
    x = np.arange(len(kinds))
    for i, (row, colour) in enumerate(zip(rows, ("#1f5fa8", "#e08a1e"), strict=False)):
        values = [row.kind_means.get(k) for k in kinds]
        heights = [100 * v if v is not None else 0.0 for v in values]
        where = x + (i - (len(rows) - 1) / 2) * width
        what = f"#{row.rank} " if row.rank else f"{row.status}: "
        ax.bar(where, heights, width, color=colour, label=_plain(what + row.name))
        for xi, v in zip(where, values, strict=True):
            ax.annotate("n/c" if v is None else f"{100 * v:.0f}", (xi, 100 * v if v else 0),
                        ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                        textcoords="offset points")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, [_plain(k) for k in kinds], fontsize=8)
    ax.set_ylabel("score % per kind (0 = chance)", fontsize=8)
    ax.set_title(_plain(f"{lb.views[key].title}: per-kind profile (n/c: kind not covered)"),
                 fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, target)
    return True


def render_plots(lb: Leaderboard, out: str | os.PathLike, profile: str | None = None,
                 points: Mapping[str, list[Point]] | None = None) -> list[Path]:
    """Write both plots into ``out`` (the site); the files written.

    ``points``: the board's :func:`board_points`, when the caller has them already.
    """
    out = Path(out)
    written = []
    if render_scatter(lb, out / SCATTER, points):
        written.append(out / SCATTER)
    if render_profile(lb, out / PROFILE, profile):
        written.append(out / PROFILE)
    return written
