"""The leaderboard's plots (issue 31, item 4): what they draw, and the PNG files.

The points of every view are the ranking's own accuracy and consistency (recomputed with
their interval bars, equal to the rows' values); the interval of a one-suite view is the
suite's binomial and bootstrap interval; the PNG files are the same bytes on every run, an
entry name with mathtext (``$``) is drawn as text, and a bad ``--profile`` is one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from math import sqrt
from pathlib import Path

import pytest

from consistency_bench.leaderboard.plots.png import PROFILE, SCATTER, render_plots
from consistency_bench.leaderboard.plots.points import profile_rows, view_points
from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry
from consistency_bench.leaderboard.submissions.reader import load_all

ROOT = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def board():
    subs = load_all(ROOT / "submissions")
    return rank([Entry(s.slug, s.results, s.meta) for s in subs])


def test_points_are_the_rows_values_with_intervals(board):
    drawn = 0
    for key, view in board.views.items():
        rows = {r.name: r for r in view.rows}
        for p in view_points(board, key):
            row = rows[p.name]
            assert row.status in ("ranked", "reference")
            assert p.accuracy == pytest.approx(row.accuracy, abs=1e-12), (key, p.name)
            assert p.consistency == pytest.approx(row.consistency, abs=1e-12), (key, p.name)
            assert p.consistency_half is None or 0 <= p.consistency_half < 0.5
            drawn += 1
    assert drawn > 40


def test_a_one_suite_interval_is_the_suites(board):
    key = "task:qnli"  # one ranked slot: qnli_calm (+ its t2t variant)
    (point,) = [p for p in view_points(board, key) if p.name == "minilm-ft"]
    cell = board.cells["qnli_calm"]["minilm-ft"]
    assert point.accuracy_half == pytest.approx(
        1.96 * sqrt(cell.accuracy * (1 - cell.accuracy) / cell.n))
    low, high = cell.ci95  # C_R, higher is better: the interval as it is
    assert point.consistency_half == pytest.approx((high - low) / 2)


def test_profile_rows_default_and_chosen(board):
    top, other = profile_rows(board)
    assert top.name == board.views["all"].rows[0].name and other is not None
    assert other.name != top.name
    assert profile_rows(board, chosen="vader")[1].name == "vader"
    assert profile_rows(board, "no-such-view") is None


def test_a_panel_draws_one_errorbar_per_style_and_a_few_labels(board, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from consistency_bench.leaderboard.plots import png

    monkeypatch.setattr(png, "LABELS", 2, raising=False)
    key = max(board.views, key=lambda k: len(view_points(board, k)))
    points = view_points(board, key)
    fig, ax = plt.subplots()
    png._panel(ax, board, key, points)
    styles = {p.status == "ranked" for p in points}
    assert len(points) > 2 and len(ax.containers) == len(styles)  # not one per point
    first = sorted(points, key=lambda p: (p.status != "ranked", p.rank or 0, p.name))[:2]
    assert [t.get_text() for t in ax.texts] == [
        f"#{p.rank} {p.name}" if p.status == "ranked" else f"{p.name} (reference)"
        for p in first]
    assert ax.get_title().endswith(f"(labels: first 2 of {len(points)})")
    plt.close(fig)


def test_board_points_are_each_views_points(board):
    """One memo of cell values across the views gives what each view computes alone."""
    from consistency_bench.leaderboard.plots.points import board_points

    every = board_points(board)
    assert list(every) == list(board.views)
    assert any(every.values())
    for key in board.views:
        assert every[key] == view_points(board, key)


def test_png_files_are_deterministic_and_survive_mathtext_names(board, tmp_path):
    a = render_plots(board, tmp_path / "a", "vader")
    render_plots(board, tmp_path / "b", "vader")
    assert [p.relative_to(tmp_path / "a").as_posix() for p in a] == [SCATTER, PROFILE]
    for path in (SCATTER, PROFILE):
        first = (tmp_path / "a" / path).read_bytes()
        assert first[:8] == PNG and first == (tmp_path / "b" / path).read_bytes()
    evil = "x$\\frac{a}{$b"  # unbalanced mathtext: matplotlib would raise on it
    renamed = replace(board, views={k: replace(v, rows=tuple(
        replace(r, name=evil if r.name == "minilm-ft" else r.name) for r in v.rows))
        for k, v in board.views.items()})
    assert render_plots(renamed, tmp_path / "c")  # drawn, not raised


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "consistency_bench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_leaderboard_profile_option_and_the_card(tmp_path):
    bad = _cli("leaderboard", "--submissions", str(ROOT / "submissions"), "--out",
               str(tmp_path / "site"), "--profile", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "--profile 'nope': not an entry" in bad.stderr
    assert not (tmp_path / "site").exists()  # refused before anything was written
    good = _cli("leaderboard", "--submissions", str(ROOT / "submissions"), "--out",
                str(tmp_path / "site"), "--profile", "vader", cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    site = tmp_path / "site"
    assert (site / PROFILE).read_bytes()[:8] == PNG
    owned = json.loads((site / ".consistency-bench-owned.json").read_text())
    assert {SCATTER, PROFILE} <= set(owned["files"])  # published with the site
    from consistency_bench.leaderboard.publish.plans import leaderboard_card

    card = leaderboard_card(site, "org/lb")
    assert f"]({SCATTER})" in card and f"]({PROFILE})" in card
