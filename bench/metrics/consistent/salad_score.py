"""The word-salad no-signal score (:mod:`bench.metrics.consistent`): unit codes and statistic.

Right on the original, and no signal of it in the salad answer: the per-unit codes, the score
recomputed from code counts (the leaderboard's resamples) and :class:`SaladScore`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bench.metrics.becel import INVALID
from bench.metrics.consistent.score import EPS, correct

#: Name of the word-salad ranked statistic (results ``metrics.ranked_units.statistic``).
SALAD_STATISTIC = "salad_no_signal"


def salad_codes(
    orig_pred: np.ndarray,
    orig_gold: np.ndarray,
    salad_pred: np.ndarray,
    reference: np.ndarray,
    n_labels: int,
    orig_rejected: np.ndarray | None = None,
    salad_rejected: np.ndarray | None = None,
) -> np.ndarray:
    """Per-unit code of everything the word-salad score needs (see :func:`salad_decode`).

    A unit is *gated* when its original is right and not rejected by the confidence threshold.
    Of a gated unit the code also keeps whether its salad is rejected (maximum probability
    below the threshold, or an invalid answer: the model declines to classify it) and, if not,
    the pair (reference label, salad label). The gold class of the original is kept for the
    class balance. Codes are small integers, so units with equal codes are interchangeable and
    the leaderboard's bootstrap resamples their counts.
    """
    orig_pred, salad_pred = np.asarray(orig_pred), np.asarray(salad_pred)
    reference, gold = np.asarray(reference), np.asarray(orig_gold)
    n = len(orig_pred)
    orig_rejected = np.zeros(n, bool) if orig_rejected is None else np.asarray(orig_rejected)
    salad_rejected = np.zeros(n, bool) if salad_rejected is None else np.asarray(salad_rejected)
    gated = correct(orig_pred, gold) & ~orig_rejected & (reference >= 0)
    declined = salad_rejected | (salad_pred == INVALID)
    base = 2 + n_labels * n_labels
    inner = np.where(declined, 1, 2 + np.clip(reference, 0, None) * n_labels
                     + np.clip(salad_pred, 0, None))
    cls = np.where(gold >= 0, gold, -1).astype(np.int64)
    return ((cls + 1) * base + np.where(gated, inner, 0)).astype(np.int64)


def salad_decode(codes: np.ndarray, n_labels: int) -> dict[str, np.ndarray]:
    """Inverse of :func:`salad_codes`: ``cls``, ``gated``, ``declined``, ``ref``, ``sal``."""
    codes = np.asarray(codes, dtype=np.int64)
    base = 2 + n_labels * n_labels
    cls, inner = codes // base - 1, codes % base
    pair = np.clip(inner - 2, 0, None)
    return {"cls": cls, "gated": inner >= 1, "declined": inner == 1,
            "ref": pair // n_labels, "sal": pair % n_labels, "kept": inner >= 2}


def no_signal(agree: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """How close agreement ``a`` is to its signal-free level ``c``, in [0, 1].

    ``a / c`` below ``c`` and ``(1 - a) / (1 - c)`` above it: 1 at ``a = c``, 0 at both
    failures (always keeping the answer, ``a = 1``, and always changing it, ``a = 0``).
    """
    a, c = np.asarray(agree, dtype=float), np.asarray(expected, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(c > EPS, a / np.maximum(c, EPS), 1.0)
        high = np.where(c < 1 - EPS, (1 - a) / np.maximum(1 - c, EPS), 1.0)
    return np.clip(np.where(a <= c, low, high), 0.0, 1.0)


def salad_from_counts(
    codes: np.ndarray, counts: np.ndarray, n_labels: int, copy: bool, *,
    balanced: bool = True,
) -> dict[str, np.ndarray]:
    """The word-salad score from the counts of each distinct unit code (vectorised).

    Args:
        codes: Distinct unit codes, shape ``(K,)``.
        counts: How many units have each code, shape ``(..., K)`` (one row per resample).
        n_labels: Labels of the task.
        copy: The salad is compared with a default label (CopySort / CopyOne), not with the
            original prediction.
        balanced: Weight units by ``1 / (size of their gold class)`` (class balance).

    Returns:
        ``accuracy`` R (class-balanced share of gated units), ``chance`` of R, ``no_signal``
        S, ``agreement`` a and ``expected`` c (over the gated, not declined units),
        ``declined`` (share of gated units whose salad is declined), ``value`` R·S and
        ``score`` (R_cc·S, or R_cc when R_cc <= 0): every array of shape ``counts.shape[:-1]``.

    """
    d = salad_decode(codes, n_labels)
    counts = np.asarray(counts, dtype=float)
    classes = np.unique(d["cls"])
    member = (d["cls"][:, None] == classes[None, :]).astype(float)  # (K, C)
    size = counts @ member  # (..., C)
    present = (size > 0).sum(axis=-1)
    if balanced:
        per_unit = np.where(size > 0, 1.0 / np.maximum(size, 1.0), 0.0) @ member.T  # (..., K)
        weight = counts * per_unit / np.maximum(present, 1)[..., None]
    else:
        weight = counts / np.maximum(counts.sum(axis=-1, keepdims=True), 1.0)
    labelled = (d["cls"] >= 0).astype(float)
    accuracy = weight @ d["gated"].astype(float)
    chance = (weight @ labelled) / n_labels
    gated_w = weight @ d["gated"].astype(float)
    declined = _share(weight @ d["declined"].astype(float), gated_w, 0.0)
    kept = weight * d["kept"]
    kept_w = kept.sum(axis=-1)
    agree = _share(kept @ (d["ref"] == d["sal"]).astype(float), kept_w, 0.0)
    if copy:
        expected = np.full(kept_w.shape, 1.0 / n_labels)
    else:
        onehot = np.eye(n_labels)
        p_ref = kept @ onehot[d["ref"]] / np.maximum(kept_w, EPS)[..., None]
        p_sal = kept @ onehot[d["sal"]] / np.maximum(kept_w, EPS)[..., None]
        expected = (p_ref * p_sal).sum(axis=-1)
    signal = declined + (1.0 - declined) * no_signal(agree, expected)
    signal = np.where(gated_w > EPS, np.where(kept_w > EPS, signal, 1.0), 0.0)
    acc_cc = (accuracy - chance) / (1.0 - 1.0 / n_labels)
    return {"accuracy": accuracy, "chance": chance, "no_signal": signal, "agreement": agree,
            "expected": expected, "declined": declined, "value": accuracy * signal,
            "score": np.where(acc_cc > 0, acc_cc * signal, acc_cc)}


def _share(part: np.ndarray, whole: np.ndarray, empty: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(whole > EPS, part / np.maximum(whole, EPS), empty)


@dataclass(frozen=True)
class SaladScore:
    """The word-salad ranked score of one suite (docs/metrics.md, "Word salad").

    Same interface as :class:`Consistent` (``value``, ``chance``, ``chance_corrected``,
    ``unbalanced``, ``per_unit``, ``weighted_units``), but the score is not a mean of per-unit
    values: agreement and its signal-free level are suite statistics. The per-unit values are
    the codes of :func:`salad_codes`, from which :func:`salad_from_counts` recomputes the score
    of any resample.

    Attributes:
        codes: Per-unit code.
        n_labels: Labels of the task.
        copy: Compared with a default label (CopySort / CopyOne).
        single_label: As in :class:`Consistent` (set by the caller).

    """

    codes: np.ndarray
    n_labels: int
    copy: bool = False
    single_label: bool = False

    @property
    def per_unit(self) -> np.ndarray:
        """One entry per unit (the codes)."""
        return self.codes

    def weighted_units(self) -> np.ndarray:
        """The per-unit values the leaderboard resamples: the codes (as floats)."""
        return np.asarray(self.codes, dtype=float)

    def stats(self, balanced: bool = True) -> dict[str, float] | None:
        """Every statistic of :func:`salad_from_counts` on the suite's units."""
        if not len(self.codes):
            return None
        values, counts = np.unique(self.codes, return_counts=True)
        out = salad_from_counts(values, counts, self.n_labels, self.copy, balanced=balanced)
        return {k: float(v) for k, v in out.items()}

    @cached_property
    def _stats(self) -> dict[str, float] | None:
        return self.stats()

    @property
    def value(self) -> float | None:
        """R·S: class-balanced accuracy on the originals times the no-signal share."""
        return None if self._stats is None else self._stats["value"]

    @property
    def unbalanced(self) -> float | None:
        """R·S without the class balance."""
        found = self.stats(balanced=False)
        return None if found is None else found["value"]

    @property
    def chance(self) -> float | None:
        """Chance level of R (``1/N``), the level a uniform random predictor reaches."""
        return None if self._stats is None else self._stats["chance"]

    @property
    def chance_corrected(self) -> float | None:
        """The ranked score: ``R_cc · S`` (``R_cc`` when ``R_cc <= 0``); ``None`` on one class."""
        if self.single_label or self._stats is None:
            return None
        return self._stats["score"]

    def ranked_units(self) -> dict[str, object]:
        """What the leaderboard needs to recompute the score from resampled codes."""
        return {"statistic": SALAD_STATISTIC, "n_labels": self.n_labels, "copy": self.copy}


def salad(
    orig_pred: np.ndarray,
    orig_gold: np.ndarray,
    salad_pred: np.ndarray,
    reference: np.ndarray,
    n_labels: int,
    orig_rejected: np.ndarray | None = None,
    salad_rejected: np.ndarray | None = None,
    *,
    copy: bool = False,
) -> SaladScore:
    """Word salad: right on the original, and no signal of it in the salad answer.

    Gated units: the original is right and (with a confidence threshold) not rejected. Over
    them, the salad answer should carry no signal of the reference (the original prediction,
    or the default label for CopySort / CopyOne): agreement ``a`` near the agreement ``c`` an
    answerer without signal would reach with the model's own label marginals,
    ``c = Σ_k p_ref(k) p_salad(k)`` (``1/N`` for CopySort / CopyOne), or the salad declined
    (maximum probability below the threshold θ of the paper's mitigation, or an invalid
    answer), which is ideal. See :func:`salad_from_counts` and docs/metrics.md.
    """
    codes = salad_codes(orig_pred, orig_gold, salad_pred, reference, n_labels, orig_rejected,
                        salad_rejected)
    return SaladScore(codes, n_labels, copy)


#: Unit statistics the leaderboard can recompute from resampled unit codes.
UNIT_STATISTICS = {SALAD_STATISTIC: salad_from_counts}
