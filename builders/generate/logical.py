"""Symmetric, transitive and additive candidates (BECEL section 3.2), as pure functions.

Each function takes records (``Pair``: row number, the two inputs, label) and returns the
derivations in a fixed order, so the same input always gives the same rows. Applicability is
checked by the caller with ``consistency_bench.builders.generate.tasktypes`` before anything is
generated.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError
from consistency_bench.builders.becel.additive import length_threshold, merge_texts, plan_pairs


@dataclass(frozen=True)
class Pair:
    """One record as the logical rules see it.

    Attributes:
        row: Source row number.
        text: First input (premise, sentence1, or the single text).
        text_pair: Second input, or ``None``.
        label: Label index.
        word: WiC target word (empty elsewhere).

    """

    row: int
    text: str
    text_pair: str | None
    label: int
    word: str = ""


def symmetric(pairs: Sequence[Pair], keep_labels: Sequence[int]) -> list[Pair]:
    """Rows whose inputs can be swapped without changing the label (one per kept row)."""
    return [p for p in pairs if p.label in keep_labels and p.text_pair is not None]


@dataclass(frozen=True)
class Derived:
    """A row derived by a transitivity rule from two antecedent rows.

    Attributes:
        first: Row number of the first antecedent.
        second: Row number of the second antecedent.
        text: First input of the derived row.
        text_pair: Second input of the derived row.
        label: Label the rule implies, or ``None`` where it only excludes one.
        constraint: ``is:<label>`` or ``not:<label>``.
        rule: The rule, as text.
        word: WiC target word.

    """

    first: int
    second: int
    text: str
    text_pair: str
    label: int | None
    constraint: str
    rule: str
    word: str = ""


#: Function words left out when two sentences are compared by their content words.
STOPWORDS = frozenset(
    "a an the is are was were be been being am do does did has have had of in on at to for "
    "with by from into onto over under up down out off and or but while as it its it's this "
    "that these those there their they them he she his her him we our you your i my me some "
    "any one two three four several many each other another near next very".split()
)
#: Least share of Z's content words that H must hold for an N ∧ C row (see nli_transitive).
OVERLAP = 0.5
#: Least number of content words H and Z must share for an N ∧ C row (a shared subject alone,
#: "The boy is outdoors" / "The boy is asleep", makes entailment no temptation).
MIN_SHARED = 2


def content_words(text: str) -> frozenset[str]:
    """Lower-cased word tokens of ``text`` without :data:`STOPWORDS`."""
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS)


def contradiction_carries_over(premise: str, entailed: str, contradiction: str,
                               share: float = OVERLAP) -> bool:
    """Whether ``E(P,H) ∧ C(P,Z) → C(H,Z)`` plausibly holds for these three sentences.

    Z contradicts P through what P says and Z does not (P's content words missing from Z);
    H keeps that contradiction only when it keeps those words (at least ``share`` of them).
    "A man plays guitar" / "A person plays music" / "A woman plays guitar": H dropped "man",
    so H and Z need not contradict, and the row is left out. Also left out: Z only adds to
    P (nothing of P is missing from Z), where the heuristic cannot tell.
    """
    lost = content_words(premise) - content_words(contradiction)
    return bool(lost) and len(lost & content_words(entailed)) >= share * len(lost)


def entailment_is_tempting(neutral: str, contradiction: str, overlap: float = OVERLAP) -> bool:
    """Whether ``¬E(H,Z)`` is a real test: H shares ``overlap`` of Z's content words, and two.

    Two unrelated sentences never entail each other, so "not entailment" about them is true of
    any sensible model; the rule tests something only where H looks like it could entail Z.
    """
    words = content_words(contradiction)
    shared = words & content_words(neutral)
    return len(shared) >= MIN_SHARED and len(shared) >= overlap * len(words)


def nli_transitive(pairs: Sequence[Pair], labels: Sequence[str]) -> list[Derived]:
    """BECEL's modified NLI rules over rows that share a premise.

    ``E(P,H) ∧ C(P,Z) → C(H,Z)`` and ``N(P,H) ∧ C(P,Z) → ¬E(H,Z)``: the contradiction row is
    symmetric, so (P,Z) can be read as (Z,P) and chained with (P,H). The paper notes the rules
    fail where the hypothesis is less specific than the premise and had people filter the rows;
    these candidates need the same verification. Two filters keep only rows that can hold and
    test something (issue 21): an E ∧ C row only where H keeps what makes Z contradict P
    (:func:`contradiction_carries_over`), an N ∧ C row only where H overlaps Z enough for
    entailment to be tempting (:func:`entailment_is_tempting`).
    """
    folded = [x.strip().lower() for x in labels]
    e, n, c = (folded.index(x) for x in ("entailment", "neutral", "contradiction"))
    by_premise: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        by_premise[p.text].append(p)
    derived = []
    for premise, group in by_premise.items():
        contradictions = [p for p in group if p.label == c]
        for first in group:
            if first.label not in (e, n):
                continue
            for second in contradictions:
                h, z = first.text_pair or "", second.text_pair or ""
                if z == h:
                    continue
                if first.label == e:
                    if not contradiction_carries_over(premise, h, z):
                        continue
                    label, constraint = c, f"is:{labels[c]}"
                    rule = "E(P,H) ∧ C(P,Z) → C(H,Z)"
                else:
                    if not entailment_is_tempting(h, z):
                        continue
                    label, constraint = None, f"not:{labels[e]}"
                    rule = "N(P,H) ∧ C(P,Z) → ¬E(H,Z)"
                derived.append(Derived(first.row, second.row, h, z, label, constraint, rule))
    return sorted(derived, key=lambda d: (d.first, d.second))


WIC_RULES = {
    (1, 1): (1, "T(A,B|w) ∧ T(B,C|w) → T(A,C|w)"),
    (1, 0): (0, "T(A,B|w) ∧ F(B,C|w) → F(A,C|w)"),
    (0, 1): (0, "F(A,B|w) ∧ T(B,C|w) → F(A,C|w)"),
}


def wic_transitive(pairs: Sequence[Pair], labels: Sequence[str]) -> list[Derived]:
    """BECEL's WiC rules over rows that share one sentence and the target word.

    Rows (A,B) and (B,C) give (A,C); WiC is symmetric, so the shared sentence may be in either
    position. F ∧ F implies nothing and is skipped; so are derived pairs with A = C and pairs
    that already exist in the data.
    """
    if len(labels) != 2:
        raise ConfigError(f"WiC needs two labels (false, true), got {list(labels)}")
    by_sentence: dict[tuple[str, str], list[tuple[Pair, str]]] = defaultdict(list)
    existing = set()
    for p in pairs:
        word = p.word.lower()
        by_sentence[(word, p.text)].append((p, p.text_pair or ""))
        by_sentence[(word, p.text_pair or "")].append((p, p.text))
        existing |= {(word, p.text, p.text_pair), (word, p.text_pair, p.text)}
    seen = set()
    derived = []
    for (word, _shared), members in by_sentence.items():
        for a_index, (first, a) in enumerate(members):
            for second, c in members[a_index + 1 :]:
                if first.row == second.row or a == c:
                    continue
                x, y = sorted((first, second), key=lambda p: p.row)
                outer = (a, c) if x is first else (c, a)
                found = WIC_RULES.get((x.label, y.label))
                key = (word, *outer)
                if found is None or key in seen or key in existing:
                    continue
                seen.add(key)
                label, rule = found
                derived.append(Derived(
                    x.row, y.row, outer[0], outer[1], label, f"is:{labels[label]}", rule, x.word,
                ))
    return sorted(derived, key=lambda d: (d.first, d.second, d.text, d.text_pair))


@dataclass(frozen=True)
class AdditiveResult:
    """Additive pairs and the counts behind them."""

    pairs: list[tuple[int, int]]
    threshold: float
    candidates: int
    within_length: int


def additive(
    texts: Sequence[str],
    labels: Sequence[int],
    reference: Sequence[str],
    size: int | None,
    seed: int,
) -> AdditiveResult:
    """Same-label pairs whose merged text is within the 75% length quantile of ``reference``.

    Args:
        texts: Evaluation texts.
        labels: Their labels.
        reference: Texts whose token lengths set the threshold (BECEL: the training data).
        size: Keep this many combinations (drawn with ``seed``); all within the cutoff if None.
        seed: Seed of each combination's merge order (one order per combination) and the draw.

    """
    threshold = length_threshold(reference)
    plan = plan_pairs(list(texts), list(labels), threshold, size, seed)
    return AdditiveResult(plan.pairs, threshold, plan.candidates, plan.within_length)


__all__ = [
    "Derived",
    "Pair",
    "additive",
    "merge_texts",
    "nli_transitive",
    "symmetric",
    "wic_transitive",
]
