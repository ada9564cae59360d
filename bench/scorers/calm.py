"""Scorer of the CALM metric kind: C_R (main), C_S and accuracy on the originals."""

from __future__ import annotations

import numpy as np

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.metrics.becel import INVALID, accuracy
from consistency_bench.bench.metrics.calm import (
    entropy_bits,
    pass_rates,
    reverse_consistency,
    signal_consistency,
)
from consistency_bench.bench.metrics.consistent.kinds import calm
from consistency_bench.bench.metrics.consistent.originals import original_stats
from consistency_bench.bench.scorers.contract import (
    Aligned,
    ScoreOptions,
    SuiteData,
    SuiteScore,
    register_scorer,
)
from consistency_bench.bench.scoring.bootstrap import proportion_ci

SIGNAL_PREFIX = "signal:"


def _positions(data: SuiteData, variant: str) -> np.ndarray:
    """Row position of ``variant`` in every group, ordered by group code."""
    n_groups = int(data.group.max()) + 1 if len(data.group) else 0
    where = np.full(n_groups, -1, dtype=np.int64)
    rows = np.flatnonzero(data.is_variant(variant))
    where[data.group[rows]] = rows
    if (where < 0).any():
        missing = int(np.argmax(where < 0))
        raise ValueError(f"suite {data.name}: group code {missing} has no {variant!r} row")
    return where


def _mean(values: np.ndarray, where: np.ndarray) -> float | None:
    return float(values[where].mean()) if where.any() else None


#: Pass-rate threshold of the ranked consistent accuracy (docs/metrics.md says why not 1.0).
CA_THETA = 0.5


def calm_theta(options: ScoreOptions, name: str = "calm_theta", default: float = 1.0) -> float:
    """A pass-rate threshold from ``options.params[name]``.

    ``calm_theta``: the C_S threshold (default 1.0, the paper's); ``calm_ca_theta``: the
    threshold of the consistent accuracy (default ``CA_THETA``).
    """
    value = options.params.get(name, default)
    try:
        theta = float(value)
    except (TypeError, ValueError):
        theta = float("nan")
    if not 0.0 <= theta <= 1.0:
        raise ConfigError(f"{name} must be a number in [0, 1]; got {value!r}")
    return theta


def score_calm(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> SuiteScore:
    """C_R, C_S at ``calm_theta`` and accuracy on the originals, per source example."""
    theta = calm_theta(options)
    symbols = sorted(v for v in data.variant_names if v.startswith(SIGNAL_PREFIX))
    if not symbols:
        raise ValueError(f"suite {data.name}: no signal:<symbol> rows")
    original = _positions(data, "original")
    reverse = _positions(data, "reverse")
    signal_rows = np.stack([_positions(data, s) for s in symbols], axis=1)
    pred = aligned.pred
    o, r, s = pred[original], pred[reverse], pred[signal_rows]
    consistent_r = reverse_consistency(o, r)
    consistent_s = signal_consistency(o, s, theta)
    rates = pass_rates(o, s)
    n = len(original)
    agree_r = int(consistent_r.sum())
    gold = data.gold[original]
    labelled = gold >= 0
    metrics: dict[str, object] = {
        "c_r": agree_r / n,
        "c_s": float(consistent_s.mean()),
        "calm_theta": theta,
        "k_signals": len(symbols),
        "accuracy": accuracy(o[labelled], gold[labelled]) if labelled.any() else None,
        "accuracy_reverse": accuracy(r[labelled], gold[labelled]) if labelled.any() else None,
        "mean_pass_rate": float(rates.mean()),
        "signal_agreement": {
            sym[len(SIGNAL_PREFIX):]: float(((s[:, i] == o) & (o != INVALID)).mean())
            for i, sym in enumerate(symbols)
        },
        "c_s_ci95": proportion_ci(
            int(consistent_s.sum()), n, seed=options.seed, n_boot=options.n_boot
        ),
        "n_groups": n,
        "n_invalid": int((pred == INVALID).sum()),
    }
    if aligned.probs is not None:
        # CALM Figures 2-3: mean entropy (bits) of the predictive distribution of the original
        # input on inconsistent examples; ``top_probability``: the mean top probability there.
        probs = aligned.probs[original]
        entropy, top = entropy_bits(probs), probs.max(axis=1)
        bad_r, bad_s = ~consistent_r, ~consistent_s
        metrics["entropy"] = {
            "reverse_inconsistent": _mean(entropy, bad_r),
            "signal_inconsistent": _mean(entropy, bad_s),
            "uniform": float(np.log2(probs.shape[1])),
        }
        metrics["top_probability"] = {
            "reverse_inconsistent": _mean(top, bad_r),
            "signal_inconsistent": _mean(top, bad_s),
        }
    metrics.update(original_stats(o, gold).as_metrics())
    ca_theta = calm_theta(options, "calm_ca_theta", CA_THETA)
    metrics["calm_ca_theta"] = ca_theta
    ranked = calm(o, gold, np.concatenate([r[:, None], s], axis=1), len(data.label_names),
                  ca_theta)
    ci = proportion_ci(agree_r, n, seed=options.seed, n_boot=options.n_boot)
    units = data.units(original, ranked.weighted_units())
    return SuiteScore(agree_r / n, n, ci, metrics, units=units, consistent=ranked,
                      originals=original)


register_scorer("calm", score_calm)
