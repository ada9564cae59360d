"""Per unit of one suite: inconsistent, wrong or right, and the confidence of the contradiction.

Pure functions over a suite's columns and its aligned predictions, vectorised, one per metric
kind and registered in :data:`VERDICTS`. Each applies the metric functions the scorer of its
kind applies (``consistency_bench.bench.metrics``), to the rows the scorer pairs (the scorers' own
row
helpers), so a suite's count of inconsistent units is the scorer's count of failures:

- semantic, symmetric: the two answers differ, ``not agreement`` (τ_sem / τ_sym counts these);
- negational: the same answer on the original and its negation, ``not disagreement`` (τ_neg);
- transitive, additive: both antecedents right (the set C) and the derived row's constraint
  violated (τ_trn / τ_add over C); a unit outside C is not judged;
- CALM: the REVERSE answer differs from the original's (C_R), or fewer than ``calm_theta``
  of the SIGNAL answers keep it (C_S); ``tags`` says which;
- word salad: right on the original (not rejected by the scorer's threshold θ) and the salad
  answered with the reference label (the original answer, or the default label of
  CopySort / CopyOne) without being declined (maximum probability below θ, or an invalid
  answer): the units counted in the agreement ``a`` of the salad score, read from the
  scorer's own unit codes, so θ is the scorer's;
- coherence: the end prediction right and some span prediction wrong (at the scorer's θ for
  ART): the examples counted in accuracy but not in strict coherence.

A unit that is not inconsistent is *wrong* when one of its labelled rows is answered wrongly
(or, for transitive and additive, an antecedent is wrong, so it is not judged), else *right*.
The confidence of a contradiction is the smaller of two probabilities of the predicted label:
the anchor row's (the original, the end) and that of the most confident row contradicting it
(transitive and additive: the least confident of the three answers, which contradict each
other jointly). NaN without probabilities or for a unit that is not inconsistent; an invalid
answer counts 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from consistency_bench.bench.metrics.becel import (
    INVALID,
    agreement,
    conditional_consistency,
    disagreement,
)
from consistency_bench.bench.metrics.calm import reverse_consistency, signal_consistency
from consistency_bench.bench.metrics.coherence import choice_correct, coherence
from consistency_bench.bench.metrics.consistent.salad_score import salad_decode
from consistency_bench.bench.metrics.consistent.score import correct
from consistency_bench.bench.registries.registry import Registry
from consistency_bench.bench.scorers.contract import Aligned, ScoreOptions, SuiteData, SuiteScore

#: Status codes of a unit, in the order they are listed.
INCONSISTENT, WRONG, RIGHT = 0, 1, 2
STATUS = ("inconsistent", "wrong", "right")


@dataclass(frozen=True)
class Verdicts:
    """Every unit of one suite.

    Attributes:
        rows: ``(units, width)`` row positions of each unit's rows, in display order; -1 pads.
        anchor: Column of ``rows`` holding the row the others are compared with.
        status: :data:`INCONSISTENT`, :data:`WRONG` or :data:`RIGHT` per unit.
        judged: Whether the unit's consistency could be judged (transitive and additive: both
            antecedents right; word salad: right on the original).
        confidence: Confidence of the contradiction per unit (NaN without probabilities).
        broken: ``(units, width)``: the rows that contradict the anchor (inconsistent units).
        gold: Gold label index of each unit (the anchor's; -1 when unlabelled).
        tags: Per unit, which relation broke (CALM: ``reverse``, ``signal``); else ``""``.
        relation: What an inconsistent unit of this kind did, one phrase.
        reference: Per unit, the label the salad answer is compared with (word salad), else
            ``None``.

    """

    rows: np.ndarray
    anchor: int
    status: np.ndarray
    judged: np.ndarray
    confidence: np.ndarray
    broken: np.ndarray
    gold: np.ndarray
    tags: np.ndarray
    relation: str
    reference: np.ndarray | None = None

    @property
    def inconsistent(self) -> np.ndarray:
        """Boolean mask of the inconsistent units."""
        return self.status == INCONSISTENT


Judge = Callable[[SuiteData, Aligned, SuiteScore, ScoreOptions], "Verdicts | None"]
#: The judge of each metric kind (``None`` from a judge: the suite cannot be judged, e.g. ART
#: without probabilities).
VERDICTS: Registry[Judge] = Registry("metric kind")


def row_confidence(aligned: Aligned, rows: np.ndarray) -> np.ndarray:
    """Probability of the predicted label at each of ``rows`` (any shape; -1 gives NaN).

    NaN everywhere without probabilities; 0 for an invalid answer.
    """
    rows = np.asarray(rows, dtype=np.int64)
    out = np.full(rows.shape, np.nan)
    if aligned.probs is None:
        return out
    real = rows >= 0
    picked = rows[real]
    pred = aligned.pred[picked]
    values = np.zeros(len(picked))
    valid = pred != INVALID
    values[valid] = aligned.probs[picked[valid], pred[valid]]
    out[real] = values
    return out


def contradiction_confidence(aligned: Aligned, rows: np.ndarray, anchor: int,
                             broken: np.ndarray) -> np.ndarray:
    """``min(p(anchor), max over broken rows p)`` per unit; NaN where nothing is broken."""
    conf = row_confidence(aligned, rows)
    other = np.where(broken, conf, -np.inf)
    top = other.max(axis=1) if other.shape[1] else np.full(len(rows), -np.inf)
    with np.errstate(invalid="ignore"):
        out = np.minimum(conf[:, anchor], top)
    return np.where(np.isfinite(out), out, np.nan)


def _status(inconsistent: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.where(inconsistent, INCONSISTENT, np.where(right, RIGHT, WRONG)).astype(np.int8)


def judge_pairwise(data: SuiteData, aligned: Aligned, score: SuiteScore,
                   options: ScoreOptions) -> Verdicts:
    """Semantic, symmetric and negational pairs (τ's failures)."""
    from consistency_bench.bench.scorers.becel import PERTURBED, _pairs

    kind = data.info["kind"]
    first, second = _pairs(data, PERTURBED[kind])
    a, b = aligned.pred[first], aligned.pred[second]
    negational = kind == "negational"
    consistent = disagreement(a, b) if negational else agreement(a, b)
    gold_b = data.gold[second]
    right = correct(a, data.gold[first]) & ((gold_b < 0) | correct(b, gold_b))
    rows = np.stack([first, second], axis=1)
    broken = np.zeros(rows.shape, dtype=bool)
    broken[:, 1] = ~consistent
    relation = ("the same answer on the original and its negation" if negational else
                "a different answer on the " + PERTURBED[kind] + " version")
    return Verdicts(rows, 0, _status(~consistent, right), np.ones(len(a), bool),
                    contradiction_confidence(aligned, rows, 0, broken), broken,
                    data.gold[first], np.full(len(a), "", dtype=object), relation)


def judge_derived(data: SuiteData, aligned: Aligned, score: SuiteScore,
                  options: ScoreOptions) -> Verdicts:
    """Transitive and additive: C (both antecedents right) and the constraint violated."""
    from consistency_bench.bench.io.arrays import indices
    from consistency_bench.bench.scorers.becel import _antecedent_rows, _constraints

    kind = data.info["kind"]
    derived = np.flatnonzero(data.is_variant("transitive" if kind == "transitive" else "merged"))
    antecedents = data.arrow("antecedent_ids").combine_chunks().take(indices(derived))
    positions = _antecedent_rows(data.ids(), antecedents.flatten(), derived)
    positions = positions.reshape(len(derived), 2)
    gold_ante = data.gold[positions]
    antecedent_correct = (aligned.pred[positions] == gold_ante) & (gold_ante >= 0)
    derived_ok = _constraints(data, derived).satisfied(aligned.pred[derived])
    in_c, _ = conditional_consistency(derived_ok, antecedent_correct)
    inconsistent = in_c & ~derived_ok
    gold_d = data.gold[derived]
    right = in_c & ((gold_d < 0) | correct(aligned.pred[derived], gold_d))
    rows = np.concatenate([positions, derived[:, None]], axis=1)
    broken = np.zeros(rows.shape, dtype=bool)
    broken[:, 0:2] = inconsistent[:, None]  # the derived row contradicts what both imply
    with np.errstate(invalid="ignore"):  # all three answers contradict: the least confident
        confidence = np.where(inconsistent, row_confidence(aligned, rows).min(axis=1), np.nan)
    relation = ("an answer on the inferred pair that the two right answers rule out"
                if kind == "transitive" else
                "the combined item lost the label both of its parts have")
    gold = np.where(gold_d >= 0, gold_d, gold_ante[:, 0])
    return Verdicts(rows, 2, _status(inconsistent, right), in_c, confidence, broken, gold,
                    np.full(len(derived), "", dtype=object), relation)


def judge_calm(data: SuiteData, aligned: Aligned, score: SuiteScore,
               options: ScoreOptions) -> Verdicts:
    """CALM: the REVERSE answer differs (C_R) or the SIGNAL pass rate is below calm_theta."""
    from consistency_bench.bench.scorers.calm import SIGNAL_PREFIX, _positions, calm_theta

    symbols = sorted(v for v in data.variant_names if v.startswith(SIGNAL_PREFIX))
    original, reverse = _positions(data, "original"), _positions(data, "reverse")
    signals = np.stack([_positions(data, s) for s in symbols], axis=1)
    pred = aligned.pred
    o, r, s = pred[original], pred[reverse], pred[signals]
    ok_r = reverse_consistency(o, r)
    ok_s = signal_consistency(o, s, calm_theta(options))
    inconsistent = ~ok_r | ~ok_s
    rows = np.concatenate([original[:, None], reverse[:, None], signals], axis=1)
    differs = (pred[rows] != o[:, None]) | (pred[rows] == INVALID)
    broken = np.zeros(rows.shape, dtype=bool)
    broken[:, 1] = ~ok_r
    broken[:, 2:] = differs[:, 2:] & ~ok_s[:, None]
    tags = np.array([", ".join(t for t, bad in (("reverse", not a), ("signal", not b)) if bad)
                     for a, b in zip(ok_r.tolist(), ok_s.tolist(), strict=True)], dtype=object)
    gold = data.gold[original]
    return Verdicts(rows, 0, _status(inconsistent, correct(o, gold)), np.ones(len(o), bool),
                    contradiction_confidence(aligned, rows, 0, broken), broken, gold, tags,
                    "the format changed the answer")


def judge_salad(data: SuiteData, aligned: Aligned, score: SuiteScore,
                options: ScoreOptions) -> Verdicts:
    """Word salad: right on the original and the reference answer kept on the salad."""
    from consistency_bench.bench.scorers.salad import _pairs

    first, second, _ = _pairs(data)
    codes = getattr(score.consistent, "codes", None)
    if codes is None:
        raise ValueError(f"suite {data.name}: the salad scorer gave no unit codes")
    n_labels = len(data.label_names)
    parts = salad_decode(codes, n_labels)
    inconsistent = parts["kept"] & (parts["ref"] == parts["sal"])
    rows = np.stack([first, second], axis=1)
    broken = np.zeros(rows.shape, dtype=bool)
    broken[:, 1] = inconsistent
    reference = np.where(parts["gated"], parts["ref"], -1)
    return Verdicts(rows, 0, _status(inconsistent, parts["gated"]), parts["gated"],
                    contradiction_confidence(aligned, rows, 0, broken), broken,
                    data.gold[first], np.full(len(first), "", dtype=object),
                    "kept the answer on a salad without meaning, and did not decline it",
                    reference)


def judge_coherence(data: SuiteData, aligned: Aligned, score: SuiteScore,
                    options: ScoreOptions) -> Verdicts | None:
    """Coherence: the end prediction right and a span prediction wrong (``None``: no θ)."""
    from consistency_bench.bench.scorers.coherence import _end_rows

    end = _end_rows(data)
    pred, gold = aligned.pred, data.gold
    end_right = (pred[end] == gold[end]) & (pred[end] != INVALID)
    if data.info["kind"] == "coherence_theta":
        theta = score.metrics.get("theta_strict")
        if not isinstance(theta, (int, float)) or aligned.probs is None:
            return None
        span_right = choice_correct(pred, aligned.probs, gold, float(theta))
    else:
        span_right = (pred == gold) & (pred != INVALID)
    strict = coherence(data.group, span_right, end_right).strict_per_example
    inconsistent = end_right & ~strict
    order = np.lexsort((np.arange(len(pred)) != end[data.group], data.group))
    sizes = np.bincount(data.group, minlength=len(end))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    column = np.arange(len(order)) - starts[data.group[order]]
    rows = np.full((len(end), int(sizes.max()) if len(end) else 0), -1, dtype=np.int64)
    rows[data.group[order], column] = order  # the end row first, then the spans in row order
    broken = (rows >= 0) & ~span_right[np.maximum(rows, 0)] & inconsistent[:, None]
    broken[:, 0] = False
    return Verdicts(rows, 0, _status(inconsistent, end_right), np.ones(len(end), bool),
                    contradiction_confidence(aligned, rows, 0, broken), broken, gold[end],
                    np.full(len(end), "", dtype=object),
                    "the sub-span answers contradict the right answer on the whole")


for _kind in ("semantic", "negational", "symmetric"):
    VERDICTS.register(_kind, judge_pairwise)
for _kind in ("transitive", "additive"):
    VERDICTS.register(_kind, judge_derived)
VERDICTS.register("calm", judge_calm)
VERDICTS.register("salad", judge_salad)
VERDICTS.register("coherence", judge_coherence)
VERDICTS.register("coherence_theta", judge_coherence)
