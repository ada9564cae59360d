"""Spot-check reproduction: run a prediction file's recorded model again on a sample of rows.

A prediction file is a claim; its run record (:mod:`consistency_bench.bench.runrecord`) says how it
was made.
``consistency-bench reproduce`` (docs/maintain.md, "Reproduction") runs the recorded model
with the recorded settings on a seeded sample of groups of each suite, every row of each
sampled group, and compares the labels and probabilities with the stored ones.

Modules, one job each (import from where a name lives):

* :mod:`~consistency_bench.bench.reproduce.sample`: the seeded sample of groups per suite (pure);
* :mod:`~consistency_bench.bench.reproduce.compare`: labels and probabilities compared per row and
  suite (pure);
* :mod:`~consistency_bench.bench.reproduce.thresholds`: the pass thresholds, each with its reason;
* :mod:`~consistency_bench.bench.reproduce.rerun`: the recorded run made again on the sample (model
  identity
  checked first).
"""
