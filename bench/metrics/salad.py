"""Word-salad metrics (Gupta et al., AAAI 2021), pure functions over aligned numpy arrays.

* Agreement: share of transformed inputs whose prediction equals the original prediction
  (CopySort / CopyOne: equals the default label, entailment / paraphrase). Best near chance
  ``1/N``. An invalid answer (-1) never agrees.
* Confidence: mean probability of the predicted label on transformed inputs. Best near ``1/N``.
* Invalid detection, thresholding rule (paper, "Mitigation Strategies" and appendix "Finding
  best thresholds"): an input is deemed invalid when its maximum probability is below ``θ``;
  ``θ`` is searched on the grid ``[1/N, 1.0]`` with step 0.001, keeping the thresholds whose
  clean accuracy (rejected originals count as wrong) is within ``tolerance`` (0.03, absolute) of
  the accuracy without rejection, and taking the one that recognises most transformed inputs
  as invalid (the smallest such θ on ties).
* Temperature scaling (the paper calibrates the classifier with it before thresholding):
  ``softmax(z / T)`` computed from the probabilities ``softmax(z)`` alone, as ``p ** (1/T)``
  renormalised (the same distribution, since ``log p = z - log Z``), so no logits are needed;
  ``T`` is fitted by minimising the negative log-likelihood of gold labels (Guo et al. 2017).
* Family averages: unweighted mean over the transformations of a family (lexical, gradient,
  statistical), per task.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

INVALID = -1
GRID_STEP = 0.001
TOLERANCE = 0.03

#: Transformation -> family (paper Tables 2 and 3, PBSMT section).
TRANSFORM_FAMILY = {
    "sort": "lexical", "reverse": "lexical", "shuffle": "lexical", "copysort": "lexical",
    "drop": "gradient", "repeat": "gradient", "replace": "gradient", "copyone": "gradient",
    "pbsmt": "statistical",
}
#: Label CopySort / CopyOne predictions are compared with (paper, "Agreement").
DEFAULT_LABEL = {
    "mnli": "entailment", "snli": "entailment", "mrpc": "equivalent", "qqp": "duplicate",
}


def _labels(name: str, values: np.ndarray) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer label indices, got dtype {array.dtype}")
    return array.astype(np.int64)


def _probs(probs: np.ndarray, n_rows: int | None = None) -> np.ndarray:
    array = np.asarray(probs, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] < 2:
        raise ValueError(f"probs must have shape (rows, labels >= 2), got {array.shape}")
    if n_rows is not None and array.shape[0] != n_rows:
        raise ValueError(f"probs has {array.shape[0]} rows, expected {n_rows}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise ValueError("probs must be finite and non-negative")
    return array


#: Temperatures tried when fitting: 601 points, log-spaced over [0.05, 20].
TEMPERATURE_GRID = np.geomspace(0.05, 20.0, 601)


def temperature_scale(probs: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(z / T)`` of the rows of ``probs = softmax(z)``: ``p ** (1/T)``, renormalised.

    Raises:
        ValueError: ``temperature`` is not a finite positive number, or bad ``probs``.

    """
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite positive number, got {temperature!r}")
    array = _probs(probs)
    with np.errstate(divide="ignore"):
        logs = np.log(array) / temperature
    logs -= logs.max(axis=1, keepdims=True)
    scaled = np.exp(logs)
    return scaled / scaled.sum(axis=1, keepdims=True)


def fit_temperature(probs: np.ndarray, gold: np.ndarray,
                    grid: np.ndarray = TEMPERATURE_GRID) -> float:
    """The temperature of ``grid`` with the least mean negative log-likelihood of ``gold``.

    Deterministic (a fixed grid, the smallest temperature on ties). A gold label of
    probability 0 at every temperature makes every candidate infinite; 1.0 is then returned.
    The loss is convex in ``1/T`` (a log-sum-exp minus a linear term), so over an increasing
    grid it falls, then rises: a ternary search over the grid's indices finds its minimum
    with about 30 evaluations instead of one per grid point (``grid`` must be increasing).

    Raises:
        ValueError: No rows, or ``gold`` not aligned with ``probs``.

    """
    array, labels = _probs(probs), _labels("gold", gold)
    if not len(labels) or len(labels) != len(array):
        raise ValueError(f"need aligned, non-empty probs and gold; got {len(array)} and "
                         f"{len(labels)} rows")
    with np.errstate(divide="ignore"):
        logs = np.log(array)
    # division by a positive number is monotone and rounded per value, so each row's maximum
    # and the gold label's value, divided by T, are bit for bit those of ``logs / T``
    peak, picked = logs.max(axis=1, keepdims=True), logs[np.arange(len(labels)), labels]
    losses: dict[int, float] = {}

    def loss(i: int) -> float:
        if i not in losses:
            scaled, top = logs / grid[i], peak / grid[i]
            norm = top[:, 0] + np.log(np.exp(scaled - top).sum(axis=1))
            losses[i] = float(np.mean(norm - picked / grid[i]))
        return losses[i]

    lo, hi = 0, len(grid) - 1
    while hi - lo > 2:  # keeps the left part on ties: the smallest temperature wins
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if loss(m1) <= loss(m2):
            hi = m2
        else:
            lo = m1
    best = min(range(lo, hi + 1), key=lambda i: (loss(i), i))
    return float(grid[best]) if np.isfinite(loss(best)) else 1.0


def chance(n_labels: int) -> float:
    """Random-chance level ``1/N`` of agreement and of confidence."""
    if n_labels < 2:
        raise ValueError(f"a classification task has at least 2 labels, got {n_labels}")
    return 1.0 / n_labels


def agreement(reference: np.ndarray, transformed: np.ndarray) -> np.ndarray:
    """Per example, 1 when the transformed prediction equals the reference, else 0.

    Args:
        reference: Original predictions, or the default label repeated (CopySort / CopyOne).
        transformed: Predictions on the transformed inputs.

    """
    a, b = _labels("reference", reference), _labels("transformed", transformed)
    if a.shape != b.shape:
        raise ValueError(f"reference and transformed differ in length: {a.shape} vs {b.shape}")
    return ((a == b) & (a != INVALID) & (b != INVALID)).astype(np.int64)


def confidence(probs: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Probability of the predicted label per row; NaN where the answer is invalid."""
    p = _labels("pred", pred)
    array = _probs(probs, len(p))
    if (p >= array.shape[1]).any():
        raise ValueError(f"pred holds a label index >= {array.shape[1]}")
    out = np.full(len(p), np.nan)
    ok = p != INVALID
    out[ok] = array[np.flatnonzero(ok), p[ok]]
    return out


def rejected(probs: np.ndarray, theta: float) -> np.ndarray:
    """Thresholding rule: deemed invalid when the maximum probability is below ``theta``."""
    return _probs(probs).max(axis=1) < theta


def threshold_grid(n_labels: int, step: float = GRID_STEP) -> np.ndarray:
    """The grid ``[1/N, 1.0]`` with the paper's step 0.001."""
    count = round((1.0 - chance(n_labels)) / step) + 1
    return np.round(np.minimum(chance(n_labels) + step * np.arange(count), 1.0), 6)


def select_threshold(
    clean_probs: np.ndarray,
    clean_correct: np.ndarray,
    salad_probs: np.ndarray,
    *,
    tolerance: float = TOLERANCE,
    step: float = GRID_STEP,
) -> tuple[float, float, float]:
    """The paper's threshold search.

    Args:
        clean_probs: Probabilities on the original (valid) inputs.
        clean_correct: Whether each original prediction is right (0/1).
        salad_probs: Probabilities on the transformed inputs.
        tolerance: Allowed absolute drop of clean accuracy.
        step: Grid step.

    Returns:
        ``(theta, invalid_share, clean_accuracy)`` at the selected threshold.

    """
    clean = _probs(clean_probs)
    salad = _probs(salad_probs)
    correct = np.asarray(clean_correct).astype(bool)
    if correct.shape != (clean.shape[0],):
        raise ValueError("clean_correct needs one value per clean row")
    if clean.shape[1] != salad.shape[1]:
        raise ValueError("clean and transformed probs differ in label count")
    if not len(clean) or not len(salad):
        raise ValueError("threshold search needs clean and transformed rows")
    grid = threshold_grid(clean.shape[1], step)
    clean_top, salad_top = clean.max(axis=1), salad.max(axis=1)
    base = correct.mean()
    # counts by binary search, not a (grid x rows) matrix: the same integers, so the same shares
    right_top = np.sort(clean_top[correct])
    kept = len(right_top) - np.searchsorted(right_top, grid, side="left")  # top >= theta
    accuracy = kept / len(clean_top)
    invalid = np.searchsorted(np.sort(salad_top), grid, side="left") / len(salad_top)
    allowed = accuracy >= base - tolerance - 1e-12
    best = int(np.flatnonzero(allowed)[np.argmax(invalid[allowed])])
    return float(grid[best]), float(invalid[best]), float(accuracy[best])


def family_summary(results: Mapping[str, Mapping]) -> dict[str, dict[str, dict[str, float]]]:
    """Per task and family, the unweighted mean agreement (and confidence) over transformations.

    Args:
        results: The ``suites`` mapping of a results JSON (suite name -> entry with ``task``,
            ``family`` and ``metrics``); entries of other families are ignored.

    Returns:
        ``{task: {family: {"agreement": ..., "confidence": ... (when every suite has it),
        "chance": ..., "transforms": n}}}``.

    """
    collected: dict[tuple[str, str], list[Mapping]] = {}
    for entry in results.values():
        if entry.get("family") != "salad":
            continue
        metrics = entry["metrics"]
        family = TRANSFORM_FAMILY[metrics["transform"]]
        collected.setdefault((entry["task"], family), []).append(metrics)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (task, family), items in sorted(collected.items()):
        summary = {
            "agreement": float(np.mean([m["agreement"] for m in items])),
            "chance": float(items[0]["chance"]),
            "transforms": len(items),
        }
        if all(m.get("confidence") is not None for m in items):
            summary["confidence"] = float(np.mean([m["confidence"] for m in items]))
        out.setdefault(task, {})[family] = summary
    return out
