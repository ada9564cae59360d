"""Scorers of the BECEL metric kinds: semantic, negational, symmetric, transitive, additive."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from consistency_bench.bench.io.arrays import indices, int64
from consistency_bench.bench.metrics.becel import (
    INVALID,
    Constraint,
    accuracy,
    agreement,
    conditional_consistency,
    disagreement,
)
from consistency_bench.bench.metrics.consistent.kinds import derived as consistent_derived
from consistency_bench.bench.metrics.consistent.kinds import pairwise
from consistency_bench.bench.metrics.consistent.originals import original_stats
from consistency_bench.bench.scorers.contract import (
    Aligned,
    ScoreOptions,
    SuiteData,
    SuiteScore,
    register_scorer,
)
from consistency_bench.bench.scoring.bootstrap import proportion_ci

PERTURBED = {"semantic": "paraphrase", "negational": "negated", "symmetric": "swapped"}
TAU = {"semantic": "tau_sem", "negational": "tau_neg", "symmetric": "tau_sym"}


def _pairs(data: SuiteData, perturbed: str) -> tuple[np.ndarray, np.ndarray]:
    """Row positions of (original, perturbed) per group, ordered by group code."""
    n_groups = int(data.group.max()) + 1 if len(data.group) else 0
    first = np.full(n_groups, -1, dtype=np.int64)
    second = np.full(n_groups, -1, dtype=np.int64)
    rows = np.arange(len(data.group))
    is_orig = data.is_variant("original")
    is_pert = data.is_variant(perturbed)
    first[data.group[is_orig]] = rows[is_orig]
    second[data.group[is_pert]] = rows[is_pert]
    if (first < 0).any() or (second < 0).any():
        raise ValueError(f"suite {data.name}: a group lacks its original or {perturbed} row")
    return first, second


def _confidence(probs: np.ndarray | None, rows: np.ndarray, consistent: np.ndarray) -> dict | None:
    """Mean max-probability of the group rows, for consistent and inconsistent groups."""
    if probs is None:
        return None
    top = probs.max(axis=1)[rows].mean(axis=1)
    out = {}
    for name, mask in (("consistent", consistent), ("inconsistent", ~consistent)):
        out[name] = float(top[mask].mean()) if mask.any() else None
    return out


def _original_accuracy(data: SuiteData, aligned: Aligned, variants: tuple[str, ...]) -> float:
    mask = data.variant_mask(variants) & (data.gold >= 0)
    return accuracy(aligned.pred[mask], data.gold[mask])


def score_pairwise(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> SuiteScore:
    """tau_sem / tau_neg / tau_sym over (original, perturbed) pairs."""
    kind = data.info["kind"]
    first, second = _pairs(data, PERTURBED[kind])
    a, b = aligned.pred[first], aligned.pred[second]
    consistent = disagreement(a, b) if kind == "negational" else agreement(a, b)
    n = len(consistent)
    failures = int(n - consistent.sum())
    tau = failures / n
    ci = proportion_ci(failures, n, seed=options.seed, n_boot=options.n_boot)
    metrics: dict[str, object] = {
        TAU[kind]: tau,
        "accuracy": _original_accuracy(data, aligned, ("original",)),
        "accuracy_perturbed": accuracy(
            b[data.gold[second] >= 0], data.gold[second][data.gold[second] >= 0]
        ),
        "n_groups": n,
        "n_invalid": int((aligned.pred == INVALID).sum()),
    }
    metrics.update(original_stats(a, data.gold[first]).as_metrics())
    confidence = _confidence(aligned.probs, np.stack([first, second], axis=1), consistent)
    if confidence is not None:
        metrics["confidence"] = confidence
    ranked = pairwise(a, data.gold[first], b, data.gold[second], len(data.label_names),
                      negational=kind == "negational")
    return SuiteScore(tau, n, ci, metrics, units=data.units(first, ranked.weighted_units()),
                      consistent=ranked, originals=first)


def _per_class(
    data: SuiteData, derived: np.ndarray, in_c: np.ndarray, consistent: np.ndarray
) -> dict[str, dict[str, object]]:
    """Tau and conditioned count per gold label of the derived rows (None where n = 0)."""
    gold = data.gold[derived][in_c]
    out: dict[str, dict[str, object]] = {}
    for code, name in enumerate(data.label_names):
        mine = gold == code
        n = int(mine.sum())
        out[name] = {"tau": float(1 - consistent[mine].mean()) if n else None, "n_conditioned": n}
    return out


def _antecedent_rows(ids: pa.Array, antecedents: pa.Array, derived: np.ndarray) -> np.ndarray:
    """Row of each antecedent id (-1 when not a row), flat, two per derived row.

    Additive suites list a derived row right after its two antecedents: that layout is
    checked by one comparison of ids; any other is looked up by hashing.
    """
    guess = (derived[:, None] + np.array([-2, -1])).ravel()
    if len(derived) and guess.min() >= 0 and ids.take(indices(guess)).equals(antecedents):
        return guess
    return int64(pc.index_in(antecedents, value_set=ids))


def _constraints(data: SuiteData, derived: np.ndarray) -> Constraint:
    """The constraints of the derived rows, each distinct constraint text parsed once.

    Same result as ``Constraint.parse`` of every row's text; on a malformed text, that call
    makes the error name its row.
    """
    codes, texts = data.codes("constraint")
    codes = codes[derived]
    if len(codes) and codes.min() >= 0:
        used = np.flatnonzero(np.bincount(codes, minlength=len(texts)))
        try:
            parsed = Constraint.parse(np.asarray([texts[i] for i in used], dtype=object),
                                      data.label_names).allowed
        except ValueError:
            parsed = None
        if parsed is not None:
            table = np.zeros((len(texts), len(data.label_names)), dtype=bool)
            table[used] = parsed
            return Constraint(table[codes])
    return Constraint.parse(data.column("constraint")[derived], data.label_names)


def score_conditional(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> SuiteScore:
    """tau_trn / tau_add: constraint violations among rows whose antecedents are right."""
    kind = data.info["kind"]
    derived_variant = "transitive" if kind == "transitive" else "merged"
    derived = np.flatnonzero(data.is_variant(derived_variant))
    ids = data.ids()
    antecedents = data.arrow("antecedent_ids").combine_chunks().take(indices(derived))
    positions = _antecedent_rows(ids, antecedents.flatten(), derived)
    if (positions < 0).any() or len(positions) != 2 * len(derived):
        raise ValueError(f"suite {data.name}: antecedent ids must name two rows of the suite")
    positions = positions.reshape(len(derived), 2)
    gold_ante = data.gold[positions]
    pred_ante = aligned.pred[positions]
    antecedent_correct = (pred_ante == gold_ante) & (gold_ante >= 0)
    constraint = _constraints(data, derived)
    derived_ok = constraint.satisfied(aligned.pred[derived])
    in_c, consistent = conditional_consistency(derived_ok, antecedent_correct)
    n = int(in_c.sum())
    failures = int(n - consistent.sum())
    tau = failures / n if n else float("nan")
    ci = proportion_ci(failures, n, seed=options.seed, n_boot=options.n_boot)
    source_variants = ("source",) if kind == "transitive" else ("first", "second")
    metrics: dict[str, object] = {
        data.info["main_metric"]: tau if n else None,
        "n_conditioned": n,
        "n_derived": len(derived),
        "share_conditioned": n / len(derived) if len(derived) else None,
        "accuracy": _original_accuracy(data, aligned, source_variants),
        "derived_satisfied_all": float(derived_ok.mean()) if len(derived) else None,
        "n_invalid": int((aligned.pred == INVALID).sum()),
    }
    sources = data.variant_mask(source_variants)
    metrics.update(original_stats(aligned.pred[sources], data.gold[sources]).as_metrics())
    if kind == "additive":  # the classes are uneven after the length filter (ag_news)
        metrics["tau_add_per_class"] = _per_class(data, derived, in_c, consistent)
    if aligned.probs is not None and n:
        rows = np.concatenate([positions, derived[:, None]], axis=1)[in_c]
        conf = _confidence(aligned.probs, rows, consistent)
        metrics["confidence"] = conf
    ranked = consistent_derived(antecedent_correct, derived_ok, constraint.allowed, gold_ante[:, 0])
    return SuiteScore(tau, n, ci, metrics, units=data.units(derived, ranked.weighted_units()),
                      consistent=ranked, originals=np.flatnonzero(sources))


for _kind in ("semantic", "negational", "symmetric"):
    register_scorer(_kind, score_pairwise)
for _kind in ("transitive", "additive"):
    register_scorer(_kind, score_conditional)
