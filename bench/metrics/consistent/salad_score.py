"""The word-salad score (:mod:`consistency_bench.bench.metrics.consistent`): unit codes and statistic.

Right on the original, and on the salad the paper's two behaviours of a reliable model
(word-salad paper l. 158): no signal of the original answer in the salad answer, picked among
the labels at random, and low confidence. The per-unit codes, the score recomputed from code
counts (the leaderboard's resamples) and :class:`SaladScore`.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.metrics.consistent.score import EPS, correct

#: Name of the word-salad ranked statistic (results ``metrics.ranked_units.statistic``).
#: Version 3 (issue 27): the salad answer's confidence and label spread count.
SALAD_STATISTIC = "salad_no_signal_confidence"
#: Statistics of earlier versions: results naming one are refused with "rescore".
OLD_SALAD_STATISTICS = ("salad_no_signal",)
#: Levels of the uncertainty kept in a code: ``u = q / UNCERTAINTY_STEPS``.
UNCERTAINTY_STEPS = 10_000
#: Code level of a unit whose confidence is unknown (a file without ``probs``).
UNJUDGED = UNCERTAINTY_STEPS + 1
_LEVELS = UNCERTAINTY_STEPS + 2


def uncertainty(confidence: np.ndarray, n_labels: int) -> np.ndarray:
    """How unsure an answer is, in [0, 1]: ``(1 - p) / (1 - 1/N)``, clipped.

    ``p`` is the probability of the predicted label (the paper's confidence, l. 164): 1 at a
    uniform answer (``p = 1/N``), 0 at certainty. NaN (an invalid answer: the model declines)
    counts as 1.
    """
    p = np.asarray(confidence, dtype=float)
    u = (1.0 - p) / (1.0 - 1.0 / n_labels)
    return np.clip(np.where(np.isnan(u), 1.0, u), 0.0, 1.0)


def salad_codes(
    orig_pred: np.ndarray,
    orig_gold: np.ndarray,
    salad_pred: np.ndarray,
    reference: np.ndarray,
    n_labels: int,
    orig_rejected: np.ndarray | None = None,
    salad_rejected: np.ndarray | None = None,
    salad_uncertainty: np.ndarray | None = None,
) -> np.ndarray:
    """Per-unit code of everything the word-salad score needs (see :func:`salad_decode`).

    A unit is *gated* when its original is right and not rejected by the confidence threshold.
    Of a gated unit the code also keeps whether its salad is rejected (maximum probability
    below the threshold, or an invalid answer: the model declines to classify it), if not the
    pair (reference label, salad label), and the salad answer's uncertainty (:func:`uncertainty`)
    in :data:`UNCERTAINTY_STEPS` steps, or :data:`UNJUDGED` without probabilities
    (``salad_uncertainty`` None). The gold class of the original is kept for the class
    balance.

    The uncertainty kept is the mean over the units of the same *group* (same class, gated or
    not, declined or not, reference and salad label): the score needs only its class-weighted
    mean over the gated units, and a unit's weight depends on its class alone, so the suite's
    score is the same (to 1 / :data:`UNCERTAINTY_STEPS`), while the codes stay few (one per
    group). Units with equal codes are interchangeable, and the leaderboard's bootstrap
    resamples their counts; it does not resample the spread of the uncertainty within a
    group (docs/metrics.md, "Codes").
    """
    orig_pred, salad_pred = np.asarray(orig_pred), np.asarray(salad_pred)
    reference, gold = np.asarray(reference), np.asarray(orig_gold)
    n = len(orig_pred)
    orig_rejected = np.zeros(n, bool) if orig_rejected is None else np.asarray(orig_rejected)
    salad_rejected = np.zeros(n, bool) if salad_rejected is None else np.asarray(salad_rejected)
    gated = correct(orig_pred, gold) & ~orig_rejected & (reference >= 0)
    declined = salad_rejected | (salad_pred == INVALID)
    pair = 1 + np.clip(reference, 0, None) * n_labels + np.clip(salad_pred, 0, None)
    cls = np.where(gold >= 0, gold, -1).astype(np.int64)
    group = (cls + 1) * _base(n_labels) + np.where(gated, 1 + _LEVELS * np.where(
        declined, 0, pair), 0).astype(np.int64)  # the code without its uncertainty level
    if salad_uncertainty is None:
        level = np.full(n, UNJUDGED, dtype=np.int64)
    else:
        u = np.clip(np.asarray(salad_uncertainty, dtype=float), 0.0, 1.0)
        _, which = np.unique(group, return_inverse=True)
        mean = np.bincount(which, weights=u) / np.maximum(np.bincount(which), 1)
        level = np.rint(mean[which] * UNCERTAINTY_STEPS).astype(np.int64)
    return (group + np.where(gated, level, 0)).astype(np.int64)


def _base(n_labels: int) -> int:
    return 1 + _LEVELS * (1 + n_labels * n_labels)


def salad_decode(codes: np.ndarray, n_labels: int) -> dict[str, np.ndarray]:
    """Inverse of :func:`salad_codes`.

    Returns ``cls``, ``gated``, ``declined``, ``kept``, ``ref``, ``sal``, ``judged`` (the
    confidence is known) and ``uncertainty`` (in [0, 1]; 1 where not judged).
    """
    codes = np.asarray(codes, dtype=np.int64)
    base = _base(n_labels)
    cls, inner = codes // base - 1, codes % base
    gated = inner >= 1
    rest = np.clip(inner - 1, 0, None)
    level, which = rest % _LEVELS, rest // _LEVELS
    pair = np.clip(which - 1, 0, None)
    judged = gated & (level <= UNCERTAINTY_STEPS)
    return {"cls": cls, "gated": gated, "declined": gated & (which == 0),
            "kept": gated & (which >= 1), "ref": pair // n_labels, "sal": pair % n_labels,
            "judged": judged,
            "uncertainty": np.where(judged, level / UNCERTAINTY_STEPS, 1.0)}


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


def evenness(shares: np.ndarray) -> np.ndarray:
    """Pielou's evenness of label shares (last axis): ``H(p) / log N``, in [0, 1].

    1 when every label is answered equally often (picked at random, l. 158), 0 when one label
    is always answered (a constant answer).
    """
    p = np.asarray(shares, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(axis=-1)
    return np.clip(h / np.log(p.shape[-1]), 0.0, 1.0) + 0.0  # + 0.0: no -0.0


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
        ``accuracy`` R (class-balanced share of gated units), ``chance`` of R; over the gated
        units ``declined`` (share whose salad is declined) and, over those not declined,
        ``agreement`` a, ``expected`` c and ``evenness`` J of the salad labels; ``no_signal``
        (the label part, ``d + (1 - d) · S_kept(a, c) · J``), ``uncertainty`` U (mean over
        the gated units whose confidence is known; 1 when none is), ``confidence_judged``
        (share of gated units whose confidence is known), ``salad`` (``no_signal · (1 + U) / 2``),
        ``value`` R·salad and ``score`` (R_cc·salad, or R_cc when R_cc <= 0): every array of
        shape ``counts.shape[:-1]``.

    """
    d = salad_decode(codes, n_labels)
    weight = _unit_weights(d["cls"], np.asarray(counts, dtype=float), balanced)
    labelled = (d["cls"] >= 0).astype(float)
    accuracy = weight @ d["gated"].astype(float)
    chance = (weight @ labelled) / n_labels
    gated_w = accuracy
    declined = _share(weight @ d["declined"].astype(float), gated_w, 0.0)
    kept = weight * d["kept"]
    kept_w = kept.sum(axis=-1)
    agree = _share(kept @ (d["ref"] == d["sal"]).astype(float), kept_w, 0.0)
    onehot = np.eye(n_labels)
    p_sal = kept @ onehot[d["sal"]] / np.maximum(kept_w, EPS)[..., None]
    if copy:
        expected = np.full(kept_w.shape, 1.0 / n_labels)
    else:
        p_ref = kept @ onehot[d["ref"]] / np.maximum(kept_w, EPS)[..., None]
        expected = (p_ref * p_sal).sum(axis=-1)
    spread = evenness(p_sal)
    signal = declined + (1.0 - declined) * no_signal(agree, expected) * spread
    signal = np.where(gated_w > EPS, np.where(kept_w > EPS, signal, 1.0), 0.0)
    judged = weight * d["judged"]
    judged_w = judged.sum(axis=-1)
    unsure = np.where(judged_w > EPS, _share(judged @ d["uncertainty"], judged_w, 1.0), 1.0)
    salad = signal * (1.0 + unsure) / 2.0
    acc_cc = (accuracy - chance) / (1.0 - 1.0 / n_labels)
    return {"accuracy": accuracy, "chance": chance, "no_signal": signal, "agreement": agree,
            "expected": expected, "evenness": np.where(kept_w > EPS, spread, 1.0),
            "declined": declined, "uncertainty": unsure,
            "confidence_judged": _share(judged_w, gated_w, 0.0), "salad": salad,
            "value": accuracy * salad, "score": np.where(acc_cc > 0, acc_cc * salad, acc_cc)}


def _unit_weights(cls: np.ndarray, counts: np.ndarray, balanced: bool) -> np.ndarray:
    """Weight of each distinct code (summing to 1): by class size when ``balanced``."""
    classes = np.unique(cls)
    member = (cls[:, None] == classes[None, :]).astype(float)  # (K, C)
    if not balanced:
        return counts / np.maximum(counts.sum(axis=-1, keepdims=True), 1.0)
    size = counts @ member  # (..., C)
    present = (size > 0).sum(axis=-1)
    per_unit = np.where(size > 0, 1.0 / np.maximum(size, 1.0), 0.0) @ member.T  # (..., K)
    return counts * per_unit / np.maximum(present, 1)[..., None]


def _share(part: np.ndarray, whole: np.ndarray, empty: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(whole > EPS, part / np.maximum(whole, EPS), empty)


@dataclass(frozen=True)
class SaladScore:
    """The word-salad ranked score of one suite (docs/metrics.md, "Word salad").

    ``S`` (``salad``) is the label part (no signal, labels spread, or declined) times
    ``(1 + U) / 2``, ``U`` the mean uncertainty of the salad answers.

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
        """R·S: class-balanced accuracy on the originals times the salad factor."""
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
    salad_uncertainty: np.ndarray | None = None,
    *,
    copy: bool = False,
) -> SaladScore:
    """Word salad: right on the original; on the salad no signal of it, and low confidence.

    Gated units: the original is right and (with a confidence threshold) not rejected. Over
    them, the salad answer should carry no signal of the reference (the original prediction,
    or the default label for CopySort / CopyOne): agreement ``a`` near the agreement ``c`` an
    answerer without signal would reach with the model's own label marginals,
    ``c = Σ_k p_ref(k) p_salad(k)`` (``1/N`` for CopySort / CopyOne), its labels spread over
    the label set (evenness J; a constant answer has none), or the salad declined (maximum
    probability below the threshold θ of the paper's mitigation, or an invalid answer); and
    the salad answer should be unsure (``salad_uncertainty``, :func:`uncertainty`; None
    without probabilities: judged on the labels alone). See :func:`salad_from_counts` and
    docs/metrics.md.
    """
    codes = salad_codes(orig_pred, orig_gold, salad_pred, reference, n_labels, orig_rejected,
                        salad_rejected, salad_uncertainty)
    return SaladScore(codes, n_labels, copy)


#: Unit statistics the leaderboard can recompute from resampled unit codes.
UNIT_STATISTICS = {SALAD_STATISTIC: salad_from_counts}
