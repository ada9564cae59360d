"""The leaderboard page's parts that are data.

The node format (:mod:`~consistency_bench.leaderboard.webpage.nodes`), the lazily loaded files
(:mod:`~consistency_bench.leaderboard.webpage.lazy`), and the tables
(:mod:`~consistency_bench.leaderboard.webpage.tables`), entry
panels and heatmap rows (:mod:`~consistency_bench.leaderboard.webpage.entries`) built in that
format;
``consistency_bench.leaderboard.webpage.page`` assembles ``index.html`` (docs/leaderboard.md,
"Lazily loaded
files").
"""
