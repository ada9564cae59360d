"""The leaderboard page's parts that are data.

The node format (:mod:`~leaderboard.webpage.nodes`), the lazily loaded files
(:mod:`~leaderboard.webpage.lazy`), and the tables (:mod:`~leaderboard.webpage.tables`), entry
panels and heatmap rows (:mod:`~leaderboard.webpage.entries`) built in that format;
``leaderboard.page`` assembles ``index.html`` (docs/leaderboard.md, "Lazily loaded files").
"""
