"""Scorer of the word-salad suites (metric kind ``salad``).

Per suite (one task, one transformation): agreement of the transformed-input predictions with
the original predictions (CopySort / CopyOne: with the default label named in the rows'
``agreement_with``), next to chance ``1/N`` (``best_near``); with probabilities, the mean
confidence of the predicted label next to ``1/N`` and invalid detection by the thresholding
rule; the share of transformed rows answered with an invalid answer (e.g. an ``invalid`` label,
which the prediction contract maps to -1). The temperature and the threshold are cross-fitted
(:mod:`consistency_bench.bench.metrics.calibration`): each half of the groups is scored with a
temperature
fitted and a θ searched on the other half. Parameters (``ScoreOptions.params``), overrides:
``salad_theta`` (a fixed threshold, no search), ``salad_tolerance`` (default 0.03) and
``salad_temperature`` (a fixed temperature, no fitting; ``"fit"``: the default, fitted).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.metrics.calibration import CrossFit, cross_fit, halves
from consistency_bench.bench.metrics.consistent.originals import original_stats
from consistency_bench.bench.metrics.consistent.salad_score import salad
from consistency_bench.bench.metrics.salad import (
    INVALID,
    TOLERANCE,
    TRANSFORM_FAMILY,
    agreement,
    chance,
    confidence,
)
from consistency_bench.bench.scorers.contract import (
    Aligned,
    ScoreOptions,
    SuiteData,
    SuiteScore,
    register_scorer,
)
from consistency_bench.bench.scoring.bootstrap import proportion_ci


def _pairs(data: SuiteData) -> tuple[np.ndarray, np.ndarray, str]:
    """Row positions of (original, transformed) per group, and the transformation name."""
    n_groups = int(data.group.max()) + 1 if len(data.group) else 0
    first = np.full(n_groups, -1, dtype=np.int64)
    second = np.full(n_groups, -1, dtype=np.int64)
    rows = np.arange(len(data.group))
    is_orig = data.is_variant("original")
    first[data.group[is_orig]] = rows[is_orig]
    second[data.group[~is_orig]] = rows[~is_orig]
    if n_groups == 0 or (first < 0).any() or (second < 0).any():
        raise ValueError(f"suite {data.name}: a group lacks its original or transformed row")
    transforms = sorted(data.variants_of(~is_orig))
    if len(transforms) != 1 or transforms[0] not in TRANSFORM_FAMILY:
        raise ValueError(f"suite {data.name}: expected one known transformation, got {transforms}")
    return first, second, transforms[0]


def _reference(data: SuiteData, pred: np.ndarray, first: np.ndarray, second: np.ndarray):
    """What each transformed prediction is compared with: original prediction or default."""
    codes, values = data.codes("agreement_with")
    target = codes[second]
    used = {values[code] if code >= 0 else None: code for code in np.unique(target).tolist()}
    names = data.label_names
    reference = pred[first].copy()
    for name in sorted(set(used) - {"original"}):
        if name not in names:
            raise ValueError(f"suite {data.name}: agreement_with {name!r} is not a label")
        reference[target == used[name]] = names.index(name)
    return reference, sorted(used)


def score_salad(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> SuiteScore:
    """Agreement (main), confidence and invalid detection of one word-salad suite."""
    first, second, transform = _pairs(data)
    n_labels = len(data.label_names)
    level = chance(n_labels)
    pred = aligned.pred
    reference, compared_with = _reference(data, pred, first, second)
    agree = agreement(reference, pred[second])
    n = len(agree)
    gold = data.gold[first]
    labelled = gold >= 0
    metrics: dict[str, object] = {
        "agreement": float(agree.mean()),
        "chance": level,
        "transform": transform,
        "transform_family": TRANSFORM_FAMILY[transform],
        "compared_with": compared_with,
        "accuracy_original": float((pred[first][labelled] == gold[labelled]).mean())
        if labelled.any() else None,
        "n_groups": n,
        "n_invalid": int((pred == INVALID).sum()),  # every row, as in every family
        "invalid_answer_share": float((pred[second] == INVALID).mean()),
        "invalid_answer_share_original": float((pred[first] == INVALID).mean()),
        "confidence": None,
    }
    metrics.update(original_stats(pred[first], gold).as_metrics())
    orig_rejected = salad_rejected = unsure = None
    if aligned.probs is not None:
        probs = aligned.probs
        metrics["confidence"] = _nanmean(confidence(probs[second], pred[second]))
        metrics["confidence_original"] = _nanmean(confidence(probs[first], pred[first]))
        metrics["confidence_chance"] = level
        fitted = _cross_fit(data, aligned, first, second, options)
        metrics["threshold"] = _threshold_metrics(fitted, pred[first], gold, options)
        orig_rejected, salad_rejected = fitted.orig_rejected, fitted.salad_rejected
        unsure = fitted.salad_uncertainty
    copy = compared_with != ["original"]
    if copy and "original" in compared_with:
        raise ValueError(f"suite {data.name}: rows compare with both the original and "
                         f"a default label ({compared_with}); one per suite")
    ranked = salad(pred[first], gold, pred[second], reference, n_labels,
                   orig_rejected, salad_rejected, unsure, copy=copy)
    stats = ranked.stats()
    metrics["ranked_units"] = ranked.ranked_units()
    if stats is not None:  # the parts of the ranked score (docs/metrics.md, "Word salad")
        metrics["salad_score"] = {k: stats[k] for k in SCORE_PARTS}
    ci = proportion_ci(int(agree.sum()), n, seed=options.seed, n_boot=options.n_boot)
    return SuiteScore(main_score=float(agree.mean()), n=n, ci95=ci, metrics=metrics,
                      best_near=level, units=data.units(first, ranked.weighted_units()),
                      consistent=ranked, originals=first)


def _nanmean(values: np.ndarray) -> float | None:
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else None


#: The parts of the ranked score written into ``metrics.salad_score``.
SCORE_PARTS = ("accuracy", "no_signal", "agreement", "expected", "evenness", "declined",
               "uncertainty", "confidence_judged", "salad")


def _temperature(value: object) -> float | None:
    """The ``salad_temperature`` override: a number, or ``None`` (fitted: default, ``"fit"``).

    Raises:
        ConfigError: Neither a positive number nor ``"fit"``.

    """
    if value is None or value == "fit":
        return None
    try:
        temperature = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        temperature = float("nan")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ConfigError(f"salad_temperature must be a positive number or \"fit\"; "
                          f"got {value!r}")
    return temperature


def _cross_fit(
    data: SuiteData, aligned: Aligned, first: np.ndarray, second: np.ndarray,
    options: ScoreOptions,
) -> CrossFit:
    """Temperature and θ of each half fitted on the other half (consistency_bench.bench.metrics.calibration)."""  # noqa: E501
    probs = aligned.probs
    assert probs is not None
    theta = options.params.get("salad_theta")
    return cross_fit(
        probs[first], aligned.pred[first], data.gold[first], probs[second],
        aligned.pred[second],
        data.memo("halves", first, lambda rows: halves(data.group_names(rows))),
        temperature=_temperature(options.params.get("salad_temperature")),
        theta=None if theta is None else float(theta),  # type: ignore[arg-type]
        tolerance=float(options.params.get("salad_tolerance", TOLERANCE)),  # type: ignore[arg-type]
    )


def _threshold_metrics(fitted: CrossFit, orig_pred: np.ndarray, gold: np.ndarray,
                       options: ScoreOptions) -> dict[str, object]:
    """``metrics.threshold``: per half what was applied, and the shares over the suite."""
    labelled = gold >= 0
    folds = [asdict(f) for f in fitted.folds]
    fixed_t = options.params.get("salad_temperature") not in (None, "fit")
    return {
        "cross_fitted": any(f["temperature_fitted"] or f["theta_searched"] for f in folds),
        "tolerance": float(options.params.get("salad_tolerance", TOLERANCE)),  # type: ignore[arg-type]
        "theta": options.params.get("salad_theta"),
        "temperature": folds[0]["temperature"] if fixed_t else None,
        "halves": folds,
        "invalid_recognised": float(fitted.salad_rejected.mean()),
        "clean_accuracy": float(((orig_pred == gold) & ~fitted.orig_rejected)[labelled].mean())
        if labelled.any() else None,
    }


register_scorer("salad", score_salad)
