"""Lexical-overlap heuristics: the shortcut the consistency papers say models learn.

- NLI (SNLI, MNLI, RTE): the share of ``text_pair`` (hypothesis) words that occur in ``text``
  (premise). At or above a threshold -> entailment. Below it, SNLI and MNLI predict
  contradiction when the hypothesis has a negation word the premise lacks, else neutral; RTE
  predicts not_entailment.
- QNLI: the share of ``text`` (question) words that occur in ``text_pair`` (the sentence that
  may answer it); at or above a threshold -> entailment, else not_entailment.
- Paraphrase (MRPC) and WiC: Jaccard similarity of the two word sets; at or above a threshold
  -> equivalent / true.

Each threshold is the one that maximises accuracy on the task's training data
(``consistency_bench.bench.baselines.train_data``), searched over the observed values: one fitted
number.
BoolQ, SST-2 and AG News are not pair-similarity tasks and are not covered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NEGATIONS = frozenset(
    "not no never nobody nothing none nowhere neither nor n't cannot without".split()
)
TASKS = ("snli", "mnli", "rte", "qnli", "mrpc", "wic")
#: Tasks whose low-overlap answer is contradiction (with a new negation) or neutral.
THREE_WAY = ("snli", "mnli")
_WORD = re.compile(r"n't|\w+")


def words(text: str) -> set[str]:
    """Lower-case word set (``n't`` kept as its own word)."""
    return set(_WORD.findall(text.lower()))


def overlap_score(task: str, text: str, text_pair: str | None) -> float:
    """Similarity of the two inputs used by the heuristic of ``task``."""
    a, b = words(text), words(text_pair or "")
    if task in ("snli", "mnli", "rte"):
        return len(b & a) / len(b) if b else 0.0
    if task == "qnli":  # the question's words found in the sentence
        return len(a & b) / len(a) if a else 0.0
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def has_new_negation(text: str, text_pair: str | None) -> bool:
    """Whether the hypothesis has a negation word the premise does not."""
    return bool((words(text_pair or "") - words(text)) & NEGATIONS)


def positive_label(task: str) -> int:
    """Label index predicted at high overlap: entailment, equivalent or true."""
    return {"snli": 0, "mnli": 0, "rte": 0, "qnli": 0, "mrpc": 1, "wic": 1}[task]


def predict_overlap(task: str, text: str, text_pair: str | None, threshold: float) -> int:
    """Label index the heuristic predicts."""
    score = overlap_score(task, text, text_pair)
    if score >= threshold:
        return positive_label(task)
    if task in THREE_WAY:
        return 2 if has_new_negation(text, text_pair) else 1
    return 1 - positive_label(task)


def fit_threshold(
    task: str, pairs: Sequence[tuple[str, str | None]], labels: Sequence[int]
) -> float:
    """The threshold with the best training accuracy (lowest such value on ties).

    Candidates are the observed scores rounded to two decimals (at most 101 values).
    """
    scores = [overlap_score(task, t, p) for t, p in pairs]
    low = [
        (2 if has_new_negation(t, p) else 1) if task in THREE_WAY else 1 - positive_label(task)
        for t, p in pairs
    ]
    best, best_correct = 0.0, -1
    for threshold in sorted({round(s, 2) for s in scores}):
        correct = sum(
            (positive_label(task) if s >= threshold else fallback) == y
            for s, fallback, y in zip(scores, low, labels, strict=True)
        )
        if correct > best_correct:
            best, best_correct = threshold, correct
    return best
