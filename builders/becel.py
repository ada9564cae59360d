"""The 19 BECEL test cases (Jang et al., COLING 2022) as suites.

Semantic and negational sets, and the symmetric and transitive sets, come from the BECEL
release; additive sets are generated here (see ``builders/additive.py``). Every group holds an
original row and the row(s) it is compared with; derived rows (transitive, additive) name their
two antecedent rows. docs/suites/becel.md documents each construction and every deviation.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bench.errors import SourceError
from bench.families import FAMILIES
from bench.sources import SourceResolver
from bench.tasks import get_task
from bench.tsv import read_tsv
from builders.additive import length_threshold, maximal_phrases, merge_texts, plan_pairs
from builders.schema import DERIVED_EXTRAS, NEGATION_EXTRAS, WIC_EXTRAS
from builders.suite import Row, SuiteSpec, register_suite

VERSION = "1.0.0"
ADDITIVE_VERSION = "2.0.0"  # every combination within the cutoff, one seeded order (issue 21)
ADDITIVE_SEED = 20221012  # seeds the merge order of each combination

#: Paper, citation and licence notes: declared once in bench/families.py.
BECEL = FAMILIES["becel"]


@dataclass(frozen=True)
class Layout:
    """Where a task's inputs live in the BECEL files.

    Attributes:
        text: Column for the ``text`` input.
        text_pair: Column for ``text_pair``, or ``None``.
        modified: Which of the two inputs the semantic / negational sets change.

    """

    text: str
    text_pair: str | None
    modified: str  # "text" or "text_pair"


LAYOUTS = {
    "snli": Layout("premise", "hypothesis", "text_pair"),
    "rte": Layout("sentence1", "sentence2", "text_pair"),
    "mrpc": Layout("sentence1", "sentence2", "text_pair"),
    "boolq": Layout("question", "passage", "text"),
    "wic": Layout("sentence1", "sentence2", "text_pair"),
    "sst2": Layout("sentence", None, "text"),
    "ag_news": Layout("text", None, "text"),
}

# Column of the perturbed input in each released file (header spellings vary).
PARAPHRASE_COLUMN = {
    "snli": "hypothesis_paraphrase",
    "rte": "sentence2_paraphrase",
    "mrpc": "sentence2_paraphrase",
    "boolq": "question_paraphrase",
    "wic": "sentence2_paraphrase",
    "sst2": "sentence_paraphrase",
    "ag_news": "text_paraphrase",
}
NEGATION_COLUMN = {
    "snli": "hypothesis_neg",
    "rte": "sentence2_neg",
    "mrpc": "sentence2_neg",
    "boolq": "question_neg",
}

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


def _file(task: str, name: str) -> str:
    return f"becel/{task}/{name}.tsv"


def _row(
    suite: str,
    task: str,
    key: str,
    variant: str,
    text: str,
    text_pair: str | None,
    label: int | None,
    source_file: str,
    source_row: int,
    **extras: object,
) -> Row:
    group = f"{suite}/{key}"
    return {
        "id": f"{group}/{variant}",
        "suite": suite,
        "task": task,
        "group": group,
        "variant": variant,
        "text": text,
        "text_pair": text_pair,
        "label": label,
        "source_file": source_file,
        "source_row": source_row,
        **extras,
    }


def _inputs(task: str, record: dict[str, str]) -> tuple[str, str | None]:
    layout = LAYOUTS[task]
    pair = record[layout.text_pair] if layout.text_pair else None
    return record[layout.text], pair


def _wic_spans(record: dict[str, str], start2: str = "start2", end2: str = "end2") -> dict:
    return {
        "word": record["word"],
        "start1": int(record["start1"]),
        "end1": int(record["end1"]),
        "start2": int(record[start2]),
        "end2": int(record[end2]),
    }


def _perturbed(task: str, record: dict[str, str], column: str) -> tuple[str, str | None]:
    text, pair = _inputs(task, record)
    if LAYOUTS[task].modified == "text":
        return record[column], pair
    return text, record[column]


# ----------------------------------------------------------------------------- semantic


def semantic_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_semantic``: each released row gives an original and a paraphrase."""
    suite, path = f"{task}_semantic", _file(task, "semantic")

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for number, record in enumerate(read_tsv(resolver.path(path))):
            key, label = f"r{number:05d}", int(record["label"])
            extra = _wic_spans(record) if task == "wic" else {}
            text, pair = _inputs(task, record)
            yield _row(suite, task, key, "original", text, pair, label, path, number, **extra)
            text, pair = _perturbed(task, record, PARAPHRASE_COLUMN[task])
            if task == "wic":
                extra = _wic_spans(record, "start_para", "end_para")
            yield _row(suite, task, key, "paraphrase", text, pair, label, path, number, **extra)

    return build


# ----------------------------------------------------------------------------- negational


def negational_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_negational``: an original and its opposite-meaning version."""
    suite, path = f"{task}_negational", _file(task, "negational")

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for number, record in enumerate(read_tsv(resolver.path(path))):
            key, tag = f"r{number:05d}", record["tag"]
            text, pair = _inputs(task, record)
            label, negated_label = int(record["label"]), int(record["neg_label"])
            yield _row(suite, task, key, "original", text, pair, label, path, number, tag="")
            text, pair = _perturbed(task, record, NEGATION_COLUMN[task])
            yield _row(
                suite, task, key, "negated", text, pair, negated_label, path, number, tag=tag
            )

    return build


# ----------------------------------------------------------------------------- symmetric


def _swapped_extra(task: str, record: dict[str, str]) -> dict:
    return _wic_spans(record) if task == "wic" else {}


def _normalised(*texts: str | None) -> tuple[str, ...]:
    """Texts lower-cased with everything but letters and digits removed, for matching."""
    return tuple("".join(ch for ch in (t or "").lower() if ch.isalnum()) for t in texts)


def symmetric_rows(task: str, original_split: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_symmetric``: an original row and the released swapped row.

    SNLI's released swapped rows carry no index: their original is found in the test file by
    text. The other tasks' swapped rows carry in ``index`` the 0-based position of their
    training row (for MRPC this differs from the training file's own ``index`` column).
    """
    suite = f"{task}_symmetric"
    path, original_path = _file(task, "symmetric"), _file(task, original_split)

    def build(resolver: SourceResolver) -> Iterator[Row]:
        originals = read_tsv(resolver.path(original_path))
        if task == "snli":
            where = {}
            for number, record in enumerate(originals):
                where.setdefault((record["premise"], record["hypothesis"]), number)
                where.setdefault(_normalised(record["premise"], record["hypothesis"]), number)
        else:  # ``index`` is the position of the original in the training file
            where = {str(number): number for number in range(len(originals))}
        for number, record in enumerate(read_tsv(resolver.path(path))):
            text, pair = _inputs(task, record)
            lookup = (pair, text) if task == "snli" else record["index"]
            if task == "snli" and lookup not in where:
                lookup = _normalised(pair, text)  # one released row differs by a typo
            if lookup not in where:
                raise SourceError(f"{path}: data row {number} has no original in {original_path}")
            origin = originals[where[lookup]]
            o_text, o_pair = _inputs(task, origin)
            if _normalised(o_text, o_pair) != _normalised(pair, text):
                raise SourceError(
                    f"{path}: data row {number} is not the swap of {original_path} row "
                    f"{where[lookup]}"
                )
            key, label = f"r{number:05d}", int(record["label"])
            if int(origin["label"]) != label:
                raise SourceError(f"{path}: data row {number}: label differs from its original")
            o_extra, s_extra = _swapped_extra(task, origin), _swapped_extra(task, record)
            yield _row(
                suite,
                task,
                key,
                "original",
                o_text,
                o_pair,
                label,
                original_path,
                where[lookup],
                **o_extra,
            )
            yield _row(suite, task, key, "swapped", text, pair, label, path, number, **s_extra)

    return build


# ----------------------------------------------------------------------------- transitive


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


# ----------------------------------------------------------------------------- registry

TABLE1 = {  # BECEL Table 1: new test data points per task and type
    ("boolq", "semantic"): 1076,
    ("snli", "semantic"): 4406,
    ("rte", "semantic"): 248,
    ("mrpc", "semantic"): 202,
    ("wic", "semantic"): 140,
    ("sst2", "semantic"): 187,
    ("ag_news", "semantic"): 540,
    ("boolq", "negational"): 401,
    ("snli", "negational"): 2204,
    ("rte", "negational"): 153,
    ("mrpc", "negational"): 290,
    ("snli", "symmetric"): 3237,
    ("rte", "symmetric"): 1241,
    ("mrpc", "symmetric"): 3668,
    ("wic", "symmetric"): 5428,
    ("snli", "transitive"): 2375,
    ("wic", "transitive"): 3162,
    ("sst2", "additive"): 53_000,
    ("ag_news", "additive"): 53_000,
}

DESCRIPTIONS = {
    "semantic": "Human-verified paraphrases of one input; a consistent model predicts the same "
    "label for the original and the paraphrase. Main metric tau_sem = 1 - agreement.",
    "negational": "Human-verified opposite-meaning versions (negation or antonym) of one input "
    "of rows whose label flips; a consistent model changes its prediction. Main metric "
    "tau_neg = share of unchanged predictions.",
    "symmetric": "The two inputs swapped, for rows where the label is symmetric; a consistent "
    "model predicts the same label. Main metric tau_sym = 1 - agreement.",
    "transitive": "Rows derived by a transitivity rule from two source rows (included as "
    "variant 'source'); scored only where the model is right on both sources. Main metric "
    "tau_trn = share of those derived rows whose constraint is violated.",
    "additive": "Two same-label texts merged; scored only where the model is right on both. "
    "Main metric tau_add = share of those merged rows predicted with another label.",
}

MAIN_METRIC = {
    "semantic": "tau_sem",
    "negational": "tau_neg",
    "symmetric": "tau_sym",
    "transitive": "tau_trn",
    "additive": "tau_add",
}


def _sources(task: str, kind: str) -> tuple[str, ...]:
    if kind == "symmetric":
        split = "test" if task == "snli" else "train"
        return (_file(task, "symmetric"), _file(task, split))
    if kind == "transitive":
        split = "test" if task == "snli" else "train"
        return (_file(task, "transitive"), _file(task, split))
    if kind == "additive":
        source = ADDITIVE_SOURCES[task]
        return (source.eval_path, source.train_path)
    return (_file(task, kind),)


def _builder(task: str, kind: str) -> Callable[[SourceResolver], Iterator[Row]]:
    if kind == "semantic":
        return semantic_rows(task)
    if kind == "negational":
        return negational_rows(task)
    if kind == "symmetric":
        return symmetric_rows(task, "test" if task == "snli" else "train")
    if kind == "transitive":
        return transitive_rows(task, "test" if task == "snli" else "train")
    return additive_rows(task)


def _extras(task: str, kind: str) -> dict[str, object]:
    extras: dict[str, object] = dict(WIC_EXTRAS) if task == "wic" else {}
    if kind == "negational":
        extras.update(NEGATION_EXTRAS)
    if kind in ("transitive", "additive"):
        extras.update(DERIVED_EXTRAS)
    return extras


for (_task, _kind), _size in TABLE1.items():
    register_suite(
        SuiteSpec(
            name=f"{_task}_{_kind}",
            task=_task,
            family="becel",
            kind=_kind,
            version=ADDITIVE_VERSION if _kind == "additive" else VERSION,
            sources=_sources(_task, _kind),
            build=_builder(_task, _kind),
            description=DESCRIPTIONS[_kind],
            main_metric=MAIN_METRIC[_kind],
            higher_is_better=False,
            extras=_extras(_task, _kind),
            expected_rows=_size,
            citation=BECEL.citation,
            license=BECEL.licenses[_task],
        )
    )
