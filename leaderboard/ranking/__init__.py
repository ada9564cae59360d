"""Pure ranking over a table of results: views, aggregates, flags, rank intervals, paired tests.

Input is one results JSON (docs/contracts.md) per entry; nothing here reads files. The package
has one module per job: :mod:`~consistency_bench.leaderboard.ranking.model` (the types and the task,
kind and
family tables), :mod:`~consistency_bench.leaderboard.ranking.flags` (degenerate, failing and
contaminated
cells), :mod:`~consistency_bench.leaderboard.ranking.resample` (the suites' shared resamples and
each cell's score on
them), :mod:`~consistency_bench.leaderboard.ranking.intervals` (bootstrap cell and rank intervals,
neighbour
tests), :mod:`~consistency_bench.leaderboard.ranking.views` (which suites a view holds, the mean
over kinds) and
:mod:`~consistency_bench.leaderboard.ranking.board` (:func:`rank`, which puts them together). Names
with a
leading underscore are shared between these modules only.

**What is ranked.** Every suite entry carries ``consistent_accuracy_cc``, the chance-corrected
consistent accuracy (docs/metrics.md): the share of units where the model is right on the
original(s) *and* consistent, mapped so that a uniform random predictor scores 0 and a perfect
one 1 (word salad: right on the originals times the share of signal removed from the salad
answers, docs/metrics.md). A constant or random predictor cannot win it. A cell's ``goodness`` is
that value, with its own interval ``goodness_ci95`` and unit count ``goodness_n``. The
paper's own metric (tau, C_R, agreement, coherence) is kept as the cell's ``score`` and, direction
normalised, as ``consistency`` (higher is better, in [0, 1]):

- ``higher_is_better: true``  -> ``s``
- ``higher_is_better: false`` -> ``1 - s``  (BECEL's tau)
- ``best_near: c``            -> ``s / c`` below ``c``, ``(1 - s) / (1 - c)`` above (word-salad
  agreement: 0 when always keeping and when always changing the answer)

**Aggregates** over the suites of a view that an entry covers: ``mean`` (the rank key: the mean
over the view's consistency kinds of the mean goodness over each kind's suites, MTEB's
"Mean (TaskType)"; ``kind_means`` per kind), ``borda`` (as MTEB: per suite one point per other
entry beaten, half per tie) and ``win_rate`` (as HELM: mean share of other entries beaten), both
per suite. Only entries that cover every suite
of the view are ranked; partial entries are listed with their coverage and ``rank = None``. A
format variant (``X_t2t``: the groups of ``X`` formatted for text-to-text models) and ``X`` are one
slot of a view: a classifier covers it with ``X``, a text-to-text model with ``X_t2t``.

**Degenerate entries are references, never ranked.** An entry flagged degenerate in a view (see
Flags) is listed below the ranked entries with ``rank = None`` and ``status = "reference"``;
per suite, a degenerate cell is shown with ``rank = None`` below the ranked cells. A constant or
random predictor is always flagged, so it can never rank first, however weak the other entries
are (a real model below chance on consistent accuracy loses to random on the score itself).

**Views** come in reading order: per task first, then per consistency kind, per family, the
English suites (``lang:en``: BECEL, CALM and word salad without the Korean tasks), and ``all``
last (``VIEW_ORDER`` in ``Leaderboard.view_order``).

**Rank intervals.** With per-unit outcomes, ranks are bootstrapped: each suite's units are
resampled (:mod:`~consistency_bench.leaderboard.ranking.resample`: one set of 1000 resamples per
suite and unit
set, seeded by the suite, shared by every entry and every view, so the bootstrap is paired),
every entry's view score recomputed (per suite its ranked score, recomputed from the resampled
units, word salad included; then kind-weighted) and ranked; the 2.5% and 97.5% quantiles of an
entry's rank are its 95% rank interval. A cell's resampled scores depend on its own units only,
so ``leaderboard --data`` computes them once per entry and caches them (``leaderboard/cache``).

**Flags.** A cell is *degenerate* when one label takes at least 95% of the predictions on the
originals, or the accuracy on the originals is not significantly above the majority-class rate
(exact one-sided binomial test, p >= 0.05). Both need originals of more than one gold class.
Where at least 95% of the originals share one gold label (BECEL's negational sets), a constant
is right on them and neither test means anything; there the entry is judged where the tests can
tell: the cell is degenerate when the entry is flagged on at least half of its testable suites
of the same task (else of all its testable suites), so a random or constant predictor is flagged
there too; with no testable suite at all, when the ranked score is not significantly above
chance (one-sided z test against 0 with its binomial standard error, z < 1.645). A cell that is
not degenerate but not significantly above chance is *failing* (``Cell.failing``, e.g. "never
flips under negation (rte_negational)"): a real model failing a kind is ranked, last if need
be, with that reason (``Row.failing``), never turned into a reference row. An entry is flagged
degenerate in a view when at least half of its covered suites are. A cell is *contaminated*
when the entry's ``training_data`` (bench/scoring/contamination.py) names a file the suite
draws from.
"""
