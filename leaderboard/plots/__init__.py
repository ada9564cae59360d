"""The leaderboard's plots (issue 31, item 4): accuracy against consistency, per-kind profiles.

:mod:`~consistency_bench.leaderboard.plots.points` computes what is drawn from a ranked
:class:`~consistency_bench.leaderboard.ranking.model.Leaderboard` (pure): each entry's point in a
view with its
interval bars, and the per-kind profile of an entry beside the view's #1;
:mod:`~consistency_bench.leaderboard.plots.png` draws them as PNG files for the site and the dataset
card.
"""
