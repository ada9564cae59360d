"""The verified-cells cache of ``leaderboard --data`` (issue 33, item 1).

``leaderboard --data`` scores every entry's stored predictions again and compares them with its
``results.json`` (:mod:`consistency_bench.leaderboard.stored`). What that pass computes depends only
on the
predictions, the suites they touch, the scoring parameters and the code, so it is kept, per
entry, in ``<submissions>/.verified-cells/<slug>.cells`` and recomputed only when one of those
changes. The modules: :mod:`~consistency_bench.leaderboard.cache.keys` (what a record is keyed on),
:mod:`~consistency_bench.leaderboard.cache.store` (the record files: written atomically,
authenticated) and
:mod:`~consistency_bench.leaderboard.cache.verified` (the render's verification, through the cache).
"""
