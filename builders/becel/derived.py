"""Derived-row builders: transitive rows (from the release) and additive rows (generated).

A derived row names its two antecedent rows (``antecedent_ids``) and the constraint a
consistent model satisfies when it is right on both; the additive pairs are planned by
``builders/becel/additive.py``.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from consistency_bench.bench.io.tsv import read_tsv
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.builders.becel.additive import (
    length_threshold,
    maximal_phrases,
    merge_texts,
    plan_pairs,
)
from consistency_bench.builders.becel.layouts import _file, _inputs, _row, _wic_spans
from consistency_bench.builders.becel.metadata import ADDITIVE_SEED
from consistency_bench.builders.suite.spec import Row

# SNLI transitive: released label -> (constraint, rule). Labels 2 and 3 come from the modified
# rules of section 3.2; 4 from rule (3) of section 2.2. The release uses only 2 and 3.
SNLI_TRANSITIVE = {
    2: ("is:contradiction", "E(P,H) ∧ C(P,Z) → C(H,Z)"),
    3: ("not:entailment", "N(P,H) ∧ C(P,Z) → ¬E(H,Z)"),
    4: ("not:contradiction", "N(P,H) ∧ E(H,Z) → ¬C(P,Z)"),
}
WIC_TRANSITIVE = {
    (1, 1): "T(A,B|w) ∧ T(B,C|w) → T(A,C|w)",
    (1, 0): "T(A,B|w) ∧ F(B,C|w) → F(A,C|w)",
    (0, 1): "F(A,B|w) ∧ T(B,C|w) → F(A,C|w)",
}


# ----------------------------------------------------------------------------- transitive


# One piece (over 60 lines): a factory whose closure builds the rows.
def transitive_rows(task: str, origin_split: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_transitive``: the whole origin split, then the derived rows.

    Derived rows name their two antecedent rows (``antecedent_ids``) and the constraint a
    consistent model satisfies when it is right on both antecedents.
    """
    suite = f"{task}_transitive"
    path, origin_path = _file(task, "transitive"), _file(task, origin_split)
    no_derivation = {"antecedent_ids": [], "constraint": "", "rule": ""}

    def build(resolver: SourceResolver) -> Iterator[Row]:
        origins = read_tsv(resolver.path(origin_path))
        ids = []
        for number, record in enumerate(origins):
            key = f"{origin_split}-{number:05d}"
            extra = _wic_spans(record) if task == "wic" else {}
            text, pair = _inputs(task, record)
            row = _row(
                suite,
                task,
                key,
                "source",
                text,
                pair,
                int(record["label"]),
                origin_path,
                number,
                **extra,
                **no_derivation,
            )
            ids.append(row["id"])
            yield row
        for number, record in enumerate(read_tsv(resolver.path(path))):
            first, second = (int(x) for x in record["originated_idx"].split("|"))
            released = int(record["label"])
            if task == "snli":
                constraint, rule = SNLI_TRANSITIVE[released]
                label = released if constraint.startswith("is:") else None
                extra = {}
            else:
                label = released
                constraint = f"is:{get_task(task).label_names[label]}"
                antecedent_labels = (int(origins[first]["label"]), int(origins[second]["label"]))
                rule = WIC_TRANSITIVE.get(antecedent_labels, "")
                extra = _wic_spans(record)
            text, pair = _inputs(task, record)
            yield _row(
                suite,
                task,
                f"t{number:05d}",
                "transitive",
                text,
                pair,
                label,
                path,
                number,
                **extra,
                antecedent_ids=[ids[first], ids[second]],
                constraint=constraint,
                rule=rule,
            )

    return build


# ----------------------------------------------------------------------------- additive


@dataclass(frozen=True)
class AdditiveSource:
    """Where an additive set's evaluation texts and length reference come from."""

    eval_path: str
    eval_text: str
    train_path: str
    train_text: str
    train_quoting: int = csv.QUOTE_MINIMAL
    sentences_only: bool = False  # keep the phrases inside no other phrase (SST-2 train)

    def reference_texts(self, resolver: SourceResolver) -> list[str]:
        """The texts whose token lengths give the threshold."""
        rows = read_tsv(resolver.path(self.train_path), quoting=self.train_quoting)
        texts = [r[self.train_text] for r in rows]
        if self.sentences_only:
            texts = [texts[k] for k in maximal_phrases(texts)]
        return texts


ADDITIVE_SOURCES = {
    # GLUE's SST-2 train holds every parse-tree phrase; the phrases inside no other phrase
    # (6,885) are the training sentences, whose lengths the paper's quantile is read from.
    "sst2": AdditiveSource(
        "becel/sst2/validation.tsv",
        "sentence",
        "sst2/glue_train.tsv",
        "sentence",
        csv.QUOTE_NONE,
        sentences_only=True,
    ),
    # AG News train is not mirrored: the BECEL validation half of the original test split
    # (disjoint from the evaluation half) stands in for the training-length distribution.
    "ag_news": AdditiveSource(
        "becel/ag_news/test.tsv",
        "text",
        "becel/ag_news/validation.tsv",
        "text",
    ),
}


def additive_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_additive``: first, second and merged row per kept combination."""
    suite, source = f"{task}_additive", ADDITIVE_SOURCES[task]

    def build(resolver: SourceResolver) -> Iterator[Row]:
        records = read_tsv(resolver.path(source.eval_path))
        threshold = length_threshold(source.reference_texts(resolver))
        texts = [r[source.eval_text] for r in records]
        labels = [int(r["label"]) for r in records]
        plan = plan_pairs(texts, labels, threshold, None, ADDITIVE_SEED)
        rule = "f(x) = f(y) = c → f(x + y) = c"
        path = source.eval_path
        for i, j in plan.pairs:
            key, label = f"p{i:05d}-{j:05d}", labels[i]
            plain = {"antecedent_ids": [], "constraint": "", "rule": ""}
            first = _row(suite, task, key, "first", texts[i], None, label, path, i, **plain)
            second = _row(suite, task, key, "second", texts[j], None, label, path, j, **plain)
            merged = _row(
                suite,
                task,
                key,
                "merged",
                merge_texts(texts[i], texts[j]),
                None,
                label,
                path,
                i,
                antecedent_ids=[first["id"], second["id"]],
                constraint=f"is:{get_task(task).label_names[label]}",
                rule=rule,
            )
            yield first
            yield second
            yield merged

    return build
