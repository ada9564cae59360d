"""The ``details`` config of the leaderboard dataset repo (issue 31, item 3).

:mod:`~consistency_bench.leaderboard.details.publish` writes each published entry's details (its
suite rows
joined with its answers and the group verdicts, :mod:`consistency_bench.bench.inconsistent.details`)
as one
Parquet file per metric kind and adds them, with the ``details`` config, to a leaderboard
publish.
"""
