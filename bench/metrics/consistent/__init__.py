"""Consistent accuracy: the accuracy-aware score the leaderboard ranks on (issue 9).

A consistency score alone rewards degenerate models: a constant predictor never changes its
answer (tau_sem = 0, C_R = 1). BECEL reads consistency together with accuracy (section 3.4) and
builds tau from *robust accuracy*, being right on the original and on its perturbation. The
consistent accuracy of a suite is the share of its units (groups, or derived rows) where the
model is right on the original row(s) *and* the unit's consistency relation holds
(docs/metrics.md, one formula per kind).

Its chance level is the exact expected value for a predictor that answers every row with a
label drawn uniformly at random (no probabilities, so no confidence rejection), given the suite's
gold labels and constraints; the chance-corrected score maps that level to 0 and a perfect
score to 1: ``cc = (ca - chance) / (1 - chance)``. Everything here is a pure function over
aligned numpy arrays; ``INVALID`` (-1) answers are never right and never consistent.

The parts live in modules of one job each: :mod:`~consistency_bench.bench.metrics.consistent.score`
(the
:class:`Consistent` score, chance correction, per-row correctness),
:mod:`~consistency_bench.bench.metrics.consistent.kinds` (pairs, derived rows, CALM, coherence),
:mod:`~consistency_bench.bench.metrics.consistent.salad_score` (the word-salad score and its unit
statistic) and :mod:`~consistency_bench.bench.metrics.consistent.originals` (the statistics on the
originals).
Import each name from its module; this package re-exports nothing.
"""
