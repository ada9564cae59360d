"""The explorer panel and the interactive plots of the page (issue 31, items 2 and 4).

:mod:`~leaderboard.explorer.payload` makes each entry's explorer file (a seeded sample of
each suite's inconsistent groups, :mod:`bench.inconsistent.sample`) and reuses an earlier
render's file when nothing it depends on changed; :mod:`~leaderboard.explorer.plots` the
per-view files of the interactive plots; :mod:`~leaderboard.explorer.panel` the two sections
of the first page, the small inline script that loads the panels' code on first use, and
their style; :mod:`~leaderboard.explorer.assets` that code (``assets/explorer.js``).
"""
