"""Reproduced entries: the run record and the reproduction stored in a submission entry.

An entry (``submissions/<slug>/``) may hold, beside its predictions, metadata and results:

* ``run.json``: the run record ``submit`` stored (:mod:`consistency_bench.bench.runrecord`);
* ``reproduction.json``: what ``consistency-bench reproduce`` found when it ran the recorded
  model again on a sample of rows.

Modules, one job each (import from where a name lives):

* :mod:`~consistency_bench.leaderboard.reproduce.run_records`: reading and checking those two files,
  and the
  record ``submit`` stores;
* :mod:`~consistency_bench.leaderboard.reproduce.rerun`: ``reproduce``: one entry made again and
  judged;
* :mod:`~consistency_bench.leaderboard.reproduce.shown`: what ``leaderboard.json`` and the Markdown
  show
  (``reproduced``, ``setup``);
* :mod:`~consistency_bench.leaderboard.reproduce.review_step`: ``review --reproduce N``: the step of
  the review
  loop that reproduces a pull request's entry.
"""
