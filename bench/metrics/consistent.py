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
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import ceil, comb

import numpy as np

from bench.metrics.becel import INVALID

#: Tolerance of ``p_t >= theta`` comparisons (same as bench.metrics.calm).
EPS = 1e-9


@dataclass(frozen=True)
class Consistent:
    """Consistent accuracy of one suite, balanced over the gold classes of its originals.

    The score is the mean over gold classes of the per-class share of units that are right and
    consistent (as balanced accuracy is): on a suite whose originals are 72% one label, a
    constant predictor would otherwise beat a model with 25% label noise. A unit's class is the
    gold label of its (first) original row.

    Attributes:
        per_unit: 0/1 per unit.
        chance_per_unit: Probability per unit that a uniform random predictor gets it.
        classes: Gold class per unit (the balancing key).
        single_label: Every labelled row of the suite has the same gold label, so a constant
            predictor is right and consistent everywhere; the chance-corrected score is then
            undefined (set by the caller, who sees the whole suite).

    """

    per_unit: np.ndarray
    chance_per_unit: np.ndarray
    classes: np.ndarray
    single_label: bool = False

    @property
    def n_classes(self) -> int:
        """Distinct gold classes among the units."""
        return len(np.unique(self.classes))

    def weights(self) -> np.ndarray:
        """Per-unit weights with mean 1 whose weighted mean is the class-balanced mean."""
        return self._weights

    @cached_property
    def _weights(self) -> np.ndarray:
        """:meth:`weights`, computed once (counted with ``bincount`` for label indices)."""
        counts = _label_counts(self.classes)
        if counts is not None:
            present = counts[counts > 0]
            return len(self.classes) / (len(present) * counts[np.asarray(self.classes) + 1])
        _, inverse, counts = np.unique(self.classes, return_inverse=True, return_counts=True)
        return len(self.classes) / (len(counts) * counts[inverse])

    def weighted_units(self) -> np.ndarray:
        """Per-unit outcomes times their weight: their plain mean is :attr:`value`.

        The paired tests and rank bootstraps resample these.
        """
        return np.asarray(self.per_unit, dtype=float) * self.weights()

    @property
    def value(self) -> float | None:
        """Class-balanced consistent accuracy, ``None`` without units."""
        if not len(self.per_unit):
            return None
        return float(np.mean(self.weighted_units()))

    @property
    def unbalanced(self) -> float | None:
        """Plain share of units right and consistent."""
        return float(np.mean(self.per_unit)) if len(self.per_unit) else None

    @property
    def chance(self) -> float | None:
        """Expected (balanced) consistent accuracy of a uniform random predictor."""
        if not len(self.chance_per_unit):
            return None
        return float(np.mean(np.asarray(self.chance_per_unit, dtype=float) * self.weights()))

    @property
    def chance_corrected(self) -> float | None:
        """``(ca - chance) / (1 - chance)``; ``None`` on a single-label suite.

        With one gold label a constant predictor is right on every row, so accuracy cannot
        tell models apart; the suite keeps its paper metric but is not ranked.
        """
        if self.single_label:
            return None
        return chance_corrected(self.value, self.chance)


def _label_counts(values: np.ndarray) -> np.ndarray | None:
    """Counts of ``values + 1`` by ``bincount`` for label indices (integers >= -1); else None.

    ``counts[v + 1]`` is the count of ``v``; the same integers ``np.unique(...,
    return_counts=True)`` gives, without a sort.
    """
    values = np.asarray(values)
    if values.dtype.kind not in "iu" or not len(values):
        return None
    low, high = int(values.min()), int(values.max())
    if low < -1 or high > 1 << 16:
        return None
    return np.bincount(values.astype(np.int64) + 1)


def chance_corrected(value: float | None, chance: float | None) -> float | None:
    """``(value - chance) / (1 - chance)``: 0 at chance, 1 when perfect, negative below chance.

    ``None`` when either input is ``None`` or chance is 1 (nothing to correct against).
    """
    if value is None or chance is None or chance >= 1.0 - EPS:
        return None
    return float((value - chance) / (1.0 - chance))


def correct(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Per-row 0/1: a valid prediction equal to the gold label (gold -1 is never matched)."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    return (pred == gold) & (pred != INVALID) & (gold >= 0)


def pairwise(
    orig_pred: np.ndarray,
    orig_gold: np.ndarray,
    pert_pred: np.ndarray,
    pert_gold: np.ndarray,
    n_labels: int,
    *,
    negational: bool = False,
) -> Consistent:
    """Semantic, symmetric and negational pairs.

    Semantic / symmetric: the original is right and the perturbed prediction agrees with it.
    Negational: the original is right and the negated prediction differs from it, or, where
    the negated row has a gold label, the negated prediction is right.

    Chance (uniform over ``N`` labels): ``1/N * 1/N`` for agreement, ``1/N * (N-1)/N`` for
    disagreement, ``1/N * 1/N`` for a labelled negated row.
    """
    orig_pred, pert_pred = np.asarray(orig_pred), np.asarray(pert_pred)
    pert_gold = np.asarray(pert_gold)
    right = correct(orig_pred, orig_gold)
    valid = (orig_pred != INVALID) & (pert_pred != INVALID)
    p = 1.0 / n_labels
    if negational:
        labelled = pert_gold >= 0
        differs = valid & (orig_pred != pert_pred)
        relation = np.where(labelled, correct(pert_pred, pert_gold), differs)
        chance = p * np.where(labelled, p, 1.0 - p)
    else:
        relation = valid & (orig_pred == pert_pred)
        chance = np.full(len(orig_pred), p * p)
    return Consistent(right & relation, chance, np.asarray(orig_gold))


def derived(
    antecedent_correct: np.ndarray, derived_ok: np.ndarray, allowed: np.ndarray,
    classes: np.ndarray,
) -> Consistent:
    """Transitive and additive: both antecedents right and the derived row's constraint holds.

    Over all derived rows (unconditional, unlike tau_trn / tau_add). ``allowed`` is the
    ``(rows, N)`` constraint mask; chance is ``1/N**2 * allowed.sum(1) / N``; ``classes`` is
    the gold label of each row's first antecedent.
    """
    antecedent_correct = np.asarray(antecedent_correct, dtype=bool)
    allowed = np.asarray(allowed, dtype=bool)
    n_labels = allowed.shape[1]
    per_unit = antecedent_correct.all(axis=1) & np.asarray(derived_ok, dtype=bool)
    chance = (1.0 / n_labels) ** 2 * allowed.sum(axis=1) / n_labels
    return Consistent(per_unit, chance, np.asarray(classes))


def calm(
    orig_pred: np.ndarray, orig_gold: np.ndarray, perturbed: np.ndarray, n_labels: int,
    theta: float = 1.0,
) -> Consistent:
    """CALM: the original is right and its pass rate over the perturbations is at least theta.

    The perturbations are the REVERSE input and the ``k`` SIGNAL inputs (``perturbed`` is
    ``(N, k + 1)``); the pass rate is the share of them predicted as the original.
    Chance: ``1/N * P(Binomial(k + 1, 1/N) >= ceil(theta (k + 1)))``.
    """
    orig_pred, perturbed = np.asarray(orig_pred), np.asarray(perturbed)
    passed = (perturbed == orig_pred[:, None]) & (perturbed != INVALID)
    passed &= (orig_pred != INVALID)[:, None]
    rate = passed.mean(axis=1)
    per_unit = correct(orig_pred, orig_gold) & (rate >= theta - EPS)
    m = perturbed.shape[1]
    p = 1.0 / n_labels
    need = max(0, ceil(theta * m - EPS))
    tail = sum(comb(m, j) * p**j * (1 - p) ** (m - j) for j in range(need, m + 1))
    return Consistent(per_unit, np.full(len(orig_pred), p * tail), np.asarray(orig_gold))


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


def coherence(strict_per_example: np.ndarray, rows_per_example: np.ndarray,
              n_labels: int, end_gold: np.ndarray,
              choices_right: np.ndarray | None = None) -> Consistent:
    """Coherence: strict coherence (end prediction and every span right) is already accurate.

    Chance: each of an example's ``r`` rows right with probability ``1/N``, so ``N**-r``; for
    multiple choice (ART) a uniform random choice with a one-hot probability (always
    confident), so a span whose gold is "no confident choice" is never right:
    ``choices_right`` gives, per example, how many of its rows can be right (0 when any
    cannot).
    """
    rows = np.asarray(rows_per_example, dtype=float)
    chance = (1.0 / n_labels) ** rows
    if choices_right is not None:
        chance = np.where(np.asarray(choices_right, dtype=bool), chance, 0.0)
    return Consistent(np.asarray(strict_per_example, dtype=bool), chance, np.asarray(end_gold))


@dataclass(frozen=True)
class OriginalStats:
    """What the degenerate-entry flags need about the predictions on the originals.

    Attributes:
        n: Labelled original rows.
        correct: Of them, predicted right.
        majority_rate: Share of the most frequent gold label.
        top_prediction_share: Share of the most frequent prediction (invalid answers count as
            one answer).

    """

    n: int
    correct: int
    majority_rate: float | None
    top_prediction_share: float | None

    def as_metrics(self) -> dict[str, object]:
        """The fields written into a results entry's ``metrics``."""
        return {
            "n_original": self.n,
            "n_original_correct": self.correct,
            "majority_rate": self.majority_rate,
            "top_prediction_share": self.top_prediction_share,
        }


def original_stats(pred: np.ndarray, gold: np.ndarray) -> OriginalStats:
    """Counts behind the degenerate-entry test over the labelled original rows."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    keep = gold >= 0
    pred, gold = pred[keep], gold[keep]
    if not len(gold):
        return OriginalStats(0, 0, None, None)
    gold_counts, pred_counts = _label_counts(gold), _label_counts(pred)
    if gold_counts is None:
        _, gold_counts = np.unique(gold, return_counts=True)
    if pred_counts is None:
        _, pred_counts = np.unique(pred, return_counts=True)
    return OriginalStats(
        n=len(gold),
        correct=int(correct(pred, gold).sum()),
        majority_rate=float(gold_counts.max() / len(gold)),
        top_prediction_share=float(pred_counts.max() / len(pred)),
    )
