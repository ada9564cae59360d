"""Scorer of the word-salad suites (metric kind ``salad``).

Per suite (one task, one transformation): agreement of the transformed-input predictions with
the original predictions (CopySort / CopyOne: with the default label named in the rows'
``agreement_with``), next to chance ``1/N`` (``best_near``); with probabilities, the mean
confidence of the predicted label next to ``1/N`` and invalid detection by the thresholding
rule; the share of transformed rows answered with an invalid answer (e.g. an ``invalid`` label,
which the prediction contract maps to -1). Parameters (``ScoreOptions.params``):
``salad_theta`` (a fixed threshold; default: searched on the suite itself, see
docs/suites/word-salad.md), ``salad_tolerance`` (default 0.03) and ``salad_temperature``
(temperature scaling of the probabilities before thresholding: a positive number, or
``"fit"`` to fit it on the suite's labelled originals; default none, i.e. T = 1).
"""

from __future__ import annotations

import numpy as np

from bench.bootstrap import proportion_ci
from bench.errors import ConfigError
from bench.metrics import consistent as ca
from bench.metrics.salad import (
    INVALID,
    TOLERANCE,
    TRANSFORM_FAMILY,
    agreement,
    chance,
    confidence,
    fit_temperature,
    rejected,
    select_threshold,
    temperature_scale,
)
from bench.scorers.contract import Aligned, ScoreOptions, SuiteData, SuiteScore, register_scorer


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
    metrics.update(ca.original_stats(pred[first], gold).as_metrics())
    orig_rejected = salad_rejected = None
    if aligned.probs is not None:
        probs = aligned.probs
        metrics["confidence"] = _nanmean(confidence(probs[second], pred[second]))
        metrics["confidence_original"] = _nanmean(confidence(probs[first], pred[first]))
        metrics["confidence_chance"] = level
        scaled, temperature = _calibrated(data, probs, first, options)
        metrics["threshold"] = {**_threshold(data, aligned, scaled, first, second, options),
                                **temperature}
        theta = metrics["threshold"]["theta"]
        if theta is not None:  # the paper's mitigation: reject when max probability < theta
            orig_rejected, salad_rejected = rejected(scaled[first], theta), rejected(
                scaled[second], theta)
    copy = compared_with != ["original"]
    if copy and "original" in compared_with:
        raise ValueError(f"suite {data.name}: rows compare with both the original and "
                         f"a default label ({compared_with}); one per suite")
    ranked = ca.salad(pred[first], gold, pred[second], reference, n_labels,
                      orig_rejected, salad_rejected, copy=copy)
    stats = ranked.stats()
    metrics["ranked_units"] = ranked.ranked_units()
    if stats is not None:  # the parts of the ranked score (docs/metrics.md, "Word salad")
        metrics["salad_score"] = {k: stats[k] for k in (
            "accuracy", "no_signal", "agreement", "expected", "declined")}
    ci = proportion_ci(int(agree.sum()), n, seed=options.seed, n_boot=options.n_boot)
    return SuiteScore(main_score=float(agree.mean()), n=n, ci95=ci, metrics=metrics,
                      best_near=level, units=data.units(first, ranked.weighted_units()),
                      consistent=ranked)


def _nanmean(values: np.ndarray) -> float | None:
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else None


def _calibrated(
    data: SuiteData, probs: np.ndarray, first: np.ndarray, options: ScoreOptions,
) -> tuple[np.ndarray, dict[str, object]]:
    """The probabilities thresholding uses: temperature-scaled when ``salad_temperature`` is set.

    Returns the probabilities and the ``threshold`` metrics that describe the scaling.

    Raises:
        ConfigError: ``salad_temperature`` is neither a positive number nor ``"fit"``, or
            ``"fit"`` on a suite without labelled originals.

    """
    value = options.params.get("salad_temperature")
    if value is None:
        return probs, {"temperature": 1.0, "temperature_fitted": False}
    if value == "fit":
        labelled = first[data.gold[first] >= 0]
        if not len(labelled):
            raise ConfigError(f"salad_temperature=fit: suite {data.name} has no labelled "
                              "originals to fit a temperature on")
        temperature = fit_temperature(probs[labelled], data.gold[labelled])
        return temperature_scale(probs, temperature), {"temperature": temperature,
                                                       "temperature_fitted": True}
    try:
        temperature = float(value)
    except (TypeError, ValueError):
        temperature = float("nan")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ConfigError(f"salad_temperature must be a positive number or \"fit\"; "
                          f"got {value!r}")
    return temperature_scale(probs, temperature), {"temperature": temperature,
                                                   "temperature_fitted": False}


def _threshold(
    data: SuiteData, aligned: Aligned, probs: np.ndarray, first: np.ndarray,
    second: np.ndarray, options: ScoreOptions,
) -> dict[str, object]:
    """Invalid detection by thresholding the maximum probability (fixed or searched θ)."""
    pred, gold = aligned.pred, data.gold
    labelled = first[gold[first] >= 0]
    tolerance = float(options.params.get("salad_tolerance", TOLERANCE))
    theta = options.params.get("salad_theta")
    if theta is None:
        if not len(labelled):
            return {"theta": None, "note": "no gold labels on originals: no threshold search"}
        correct = pred[labelled] == gold[labelled]
        value, invalid, clean = select_threshold(
            probs[labelled], correct, probs[second], tolerance=tolerance
        )
        return {"theta": value, "searched": True, "tolerance": tolerance,
                "invalid_recognised": invalid, "clean_accuracy": clean}
    value = float(theta)
    kept = ~rejected(probs[labelled], value) if len(labelled) else np.array([], bool)
    correct = (pred[labelled] == gold[labelled]) & kept
    return {
        "theta": value, "searched": False,
        "invalid_recognised": float(rejected(probs[second], value).mean()),
        "clean_accuracy": float(correct.mean()) if len(labelled) else None,
    }


register_scorer("salad", score_salad)
