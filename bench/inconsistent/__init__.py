"""Where a model contradicts itself: the inconsistent groups of each suite (issue 31).

One job per module: :mod:`~consistency_bench.bench.inconsistent.verdicts` decides, for every unit of
a suite
and vectorised, whether it is inconsistent by the suite's own definition (the same metric
functions and row layout the scorers use, so the counts equal the scorers'), wrong, or right,
and how confident the contradiction is; :mod:`~consistency_bench.bench.inconsistent.groups` turns
the chosen
units into groups with the texts of every variant and the edit that makes each variant
(:mod:`~consistency_bench.bench.inconsistent.edits`);
:mod:`~consistency_bench.bench.inconsistent.inspect` reads a prediction
file or a stored entry and selects, sorts and limits (``consistency-bench inspect``), and
:mod:`~consistency_bench.bench.inconsistent.formats` writes the report as text, JSON or CSV. The
definitions,
with the papers' lines, are in docs/metrics.md ("Inconsistent groups").
"""
