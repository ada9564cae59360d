"""Scorers of the coherence metric kinds.

- ``coherence`` (Conversational Entailment): every span predicted as a label.
- ``coherence_theta`` (ART): spans are choices between two stories; a span is right when the
  prediction is confident (probability margin >= theta) and picks the gold story, or, where
  the gold answer is "no confident choice", when it is not confident. Needs ``probs``.
"""

from __future__ import annotations

import numpy as np

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.metrics.calibration import cross_fit_choice, halves
from consistency_bench.bench.metrics.coherence import THETA_GRID, coherence, sweep_theta
from consistency_bench.bench.metrics.consistent.kinds import coherence as consistent_coherence
from consistency_bench.bench.metrics.consistent.originals import original_stats
from consistency_bench.bench.scorers.contract import (
    Aligned,
    ScoreOptions,
    SuiteData,
    SuiteScore,
    register_scorer,
)
from consistency_bench.bench.scoring.bootstrap import proportion_ci

NEEDS_PROBS = (
    "ART coherence needs probabilities: a span is judged by whether the model is confident "
    "(margin between the two story probabilities >= theta); add `probs` to every row of "
    "this suite in the prediction file"
)


def _end_rows(data: SuiteData) -> np.ndarray:
    """Row of the end-task input (variant ``original``, the full span) per group."""
    n_groups = int(data.group.max()) + 1 if len(data.group) else 0
    where = np.full(n_groups, -1, dtype=np.int64)
    rows = np.flatnonzero(data.is_variant("original"))
    where[data.group[rows]] = rows
    if (where < 0).any():
        raise ValueError(f"suite {data.name}: a group lacks its 'original' (full span) row")
    return where


def _result(
    data: SuiteData, end: np.ndarray, strict: np.ndarray, main: float, options: ScoreOptions,
    metrics: dict, choices_right: np.ndarray | None = None,
    ranked_strict: np.ndarray | None = None,
) -> SuiteScore:
    """Strict coherence is the ranked consistent accuracy; units are examples.

    ``strict`` (per example) gives the main score's interval; ``ranked_strict`` (default:
    ``strict``) the ranked score (ART: cross-fitted θ).
    """
    n = len(strict)
    ci = proportion_ci(int(strict.sum()), n, seed=options.seed, n_boot=options.n_boot)
    rows = np.bincount(data.group, minlength=n)
    ranked = consistent_coherence(strict if ranked_strict is None else ranked_strict, rows,
                                  len(data.label_names), data.gold[end], choices_right)
    # group code g has its end row at end[g]
    return SuiteScore(main, n, ci, metrics, units=data.units(end, ranked.weighted_units()),
                      consistent=ranked, originals=end)


def score_coherence(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> SuiteScore:
    """Accuracy, strict coherence (main) and lenient coherence of labelled spans."""
    if (data.gold < 0).any():
        raise ValueError(f"suite {data.name}: every span row needs a gold label")
    end = _end_rows(data)
    pred = aligned.pred
    span_correct = (pred == data.gold) & (pred != INVALID)
    result = coherence(data.group, span_correct, span_correct[end])
    metrics = {
        "strict_coherence": result.strict,
        "lenient_coherence": result.lenient,
        "accuracy": result.accuracy,
        "span_accuracy": result.span_accuracy,
        "n_examples": len(end),
        "n_spans": len(pred),
        "n_invalid": int((pred == INVALID).sum()),
        **original_stats(pred[end], data.gold[end]).as_metrics(),
    }
    return _result(data, end, result.strict_per_example, result.strict, options, metrics)


def _grid(options: ScoreOptions) -> tuple[float, ...]:
    """``coherence_theta`` (one fixed threshold) or ``coherence_theta_grid``; default grid."""
    params = options.params
    if "coherence_theta" in params:
        values = [params["coherence_theta"]]
    else:
        values = list(params.get("coherence_theta_grid", THETA_GRID))
    try:
        grid = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        grid = ()
    if not grid or not all(0.0 <= t <= 1.0 for t in grid):
        raise ConfigError(f"coherence thresholds must be numbers in [0, 1]; got {values!r}")
    return grid


def score_coherence_theta(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> SuiteScore:
    """ART: accuracy, and strict / lenient coherence at the best threshold of the grid."""
    end = _end_rows(data)
    pred = aligned.pred
    end_correct = (pred[end] == data.gold[end]) & (pred[end] != INVALID)
    accuracy = float(end_correct.mean())
    base = {
        "accuracy": accuracy,
        "n_examples": len(end),
        "n_spans": len(pred),
        "n_invalid": int((pred == INVALID).sum()),
        **original_stats(pred[end], data.gold[end]).as_metrics(),
    }
    if aligned.probs is None:
        metrics = {**base, "strict_coherence": None, "lenient_coherence": None,
                   "missing": NEEDS_PROBS}
        return SuiteScore(float("nan"), len(end), None, metrics, originals=end)
    grid = _grid(options)
    sweep = sweep_theta(data.group, pred, aligned.probs, data.gold, end_correct, grid)
    best_s, best_l = sweep.results[sweep.best_strict], sweep.results[sweep.best_lenient]
    metrics = {
        **base,
        "strict_coherence": best_s.strict,
        "theta_strict": sweep.grid[sweep.best_strict],
        "lenient_coherence": best_l.lenient,
        "theta_lenient": sweep.grid[sweep.best_lenient],
        "sweep": {
            "theta": list(sweep.grid),
            "strict_coherence": [float(v) for v in sweep.strict],
            "lenient_coherence": [float(v) for v in sweep.lenient],
        },
        "note": "theta is chosen on the scored examples themselves (as in the paper's "
        "Table 1), so both coherences are optimistic; the ranked score is cross-fitted "
        "(theta_ranked); fix theta with params coherence_theta",
    }
    # The ranked score (consistent accuracy): each half of the examples at the θ that is best
    # on the other half, never at a θ chosen on itself
    # (consistency_bench.bench.metrics.calibration).
    ranked, chosen = cross_fit_choice(
        np.stack([r.strict_per_example for r in sweep.results]),
        data.memo("halves", end, lambda rows: halves(data.group_names(rows))))
    metrics["theta_ranked"] = {"cross_fitted": len(sweep.grid) > 1,
                               "halves": [sweep.grid[i] for i in chosen]}
    labelled = np.bincount(data.group, weights=data.gold >= 0, minlength=len(end))
    choices_right = labelled == np.bincount(data.group, minlength=len(end))
    return _result(data, end, best_s.strict_per_example, best_s.strict, options, metrics,
                   choices_right, ranked.astype(bool))


register_scorer("coherence", score_coherence)
register_scorer("coherence_theta", score_coherence_theta)
