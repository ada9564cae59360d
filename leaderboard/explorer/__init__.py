"""The explorer panel and the interactive plots of the page (issue 31, items 2 and 4).

:mod:`~consistency_bench.leaderboard.explorer.payload` makes each entry's explorer file (a seeded
sample of
each suite's inconsistent groups, :mod:`consistency_bench.bench.inconsistent.sample`) and reuses an
earlier
render's file when nothing it depends on changed;
:mod:`~consistency_bench.leaderboard.explorer.plots` the
per-view files of the interactive plots; :mod:`~consistency_bench.leaderboard.explorer.panel` the
two sections
of the first page, the small inline script that loads the panels' code on first use, and
their style; :mod:`~consistency_bench.leaderboard.explorer.assets` that code
(``assets/explorer.js``).
"""
