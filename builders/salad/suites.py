"""Word-salad suites: static lexical and statistical (PBSMT) configs, model-specific gradient specs.

One config per task and transformation, ``<task>_salad_<transform>``. A group is one source
example: its ``original`` row (gold label) and its transformed row (variant = transformation
name, no label: a destroyed input has no correct label). Pair tasks transform one text, as the
paper does: the hypothesis (MNLI, SNLI), the second question (QQP), the second sentence (MRPC);
CopySort and CopyOne put (material from) the first text into the second. Extra columns:
``transform``, ``transform_family`` and ``agreement_with`` (``original``, or the default label
CopySort / CopyOne rows are compared with). Gradient configs depend on the model under test:
``consistency-bench salad`` makes them with :func:`gradient_specs`.

Splits (the paper transforms each task's validation set): MNLI dev matched, SNLI dev
(``becel/snli/validation.tsv``), MRPC GLUE dev (``becel/mrpc/validation.tsv``), SST-2 GLUE dev,
QQP GLUE dev (not mirrored: built from ``qqp/dev.tsv`` where a QQP source is registered
and present, else the build raises ``SourceError``). docs/suites/word-salad.md has the details.
"""

from __future__ import annotations

import csv
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import datasets

from bench.errors import SourceError
from bench.families import FAMILIES
from bench.metrics.salad import DEFAULT_LABEL, TRANSFORM_FAMILY
from bench.sources import SOURCES, SourceResolver
from bench.tasks import get_task
from builders import readers
from builders.additive import maximal_phrases
from builders.readers import Example, Reader
from builders.salad import lexical, pbsmt
from builders.suite import KeyedRows, Row, SuiteSpec, merge_parts, register_suite

VERSION = "1.1.0"
#: ``<task>_salad_pbsmt``: 1.2.0 drops outputs that copy the source side (issue 13 audit);
#: 2.0.0 trains on data disjoint from the evaluated rows (MNLI: a fixed held-out half by
#: premise, so only the other half is evaluated), prefers translation over copying and
#: rejects outputs that are a permutation of their source (issue 21).
PBSMT_VERSION = "2.0.0"
SEED = 20210202
#: Lower-case the transformed texts, as every example in the paper is (issue 13).
LOWER = True
FAMILY = "salad"
KIND = "salad"

#: Paper, citation and licence notes: declared once in bench/families.py.
SALAD = FAMILIES[FAMILY]

# MNLI and QQP are registered in bench/tasks.py (CALM uses them too).


# ----------------------------------------------------------------------------- sources


Record = Example  # one source example (``row``: 0-based data row in ``path``)


def _tsv(text: str, pair: str | None, quoting: int = csv.QUOTE_MINIMAL) -> Reader:
    """GLUE-style TSV with a ``label`` column; rows without a gold label are not examples."""
    return readers.tsv(text, pair, "label", quoting, skip_unlabelled=True)


@dataclass(frozen=True)
class TaskSource:
    """Where a task's evaluation examples and n-gram training texts come from.

    Attributes:
        path: Mirror-layout path of the transformed split.
        read: Reader of ``path`` into records.
        train_path: Split the PBSMT systems are trained on; ``None``: a fixed held-out half
            of ``path`` by premise (:func:`held_out`; only the other half is evaluated).
        train_read: Reader of ``train_path``.
        sentences_only: Keep only the training rows that sit inside no other row (GLUE's
            SST-2 train holds every phrase; these are its sentences).

    """

    path: str
    read: Reader
    train_path: str | None = None
    train_read: Reader | None = None
    sentences_only: bool = False


QQP_DEV, QQP_TRAIN = "qqp/dev.tsv", "qqp/train.tsv"  # registered in bench/sources.py

TASK_SOURCES = {
    "mnli": TaskSource(
        "mnli/dev_matched.generative-nli.jsonl", readers.jsonl("premise", "hypothesis")
    ),
    "snli": TaskSource("becel/snli/validation.tsv", _tsv("premise", "hypothesis"),
                       "becel/snli/test.tsv", _tsv("premise", "hypothesis")),
    "mrpc": TaskSource("becel/mrpc/validation.tsv", _tsv("sentence1", "sentence2")),
    "sst2": TaskSource("sst2/glue_dev.tsv", _tsv("sentence", None, csv.QUOTE_NONE),
                       "sst2/glue_train.tsv", _tsv("sentence", None, csv.QUOTE_NONE),
                       sentences_only=True),
    "qqp": TaskSource(QQP_DEV, readers.qqp(), QQP_TRAIN, readers.qqp()),
}

LEXICAL = ("sort", "reverse", "shuffle", "copysort")
GRADIENT = ("drop", "repeat", "replace", "copyone")
STATISTICAL = ("pbsmt",)
PAIR_ONLY = frozenset({"copysort", "copyone"})
#: The paper builds no PBSMT set for MRPC (too little training data); neither do we.
NO_STATISTICAL = frozenset({"mrpc"})
#: Rough CPU seconds of building each ``<task>_salad_pbsmt`` (a split suite's parts cost a
#: share each): the pool starts these first. Every other word-salad suite takes about a
#: second or less.
PBSMT_BUILD_COST = {"mnli": 12.0, "snli": 14.0, "qqp": 15.0, "sst2": 5.0}
#: ``<task>_salad_pbsmt`` suites built by a pool as one task per part (``pbsmt_parts``): each
#: part trains its own system, so the parts of one suite run at the same time. SST-2 is not
#: split: it is short, and each part would read and filter its training split again.
SPLIT = frozenset({"mnli", "snli", "qqp"})


def _resolve(resolver: SourceResolver, path: str) -> object:
    if path not in SOURCES:
        raise SourceError(
            f"source file {path!r} is not registered: QQP is not in the local mirror; the "
            "QQP suites build only where a QQP source is registered and downloaded"
        )
    return resolver.path(path)


def read_records(task: str, resolver: SourceResolver) -> list[Record]:
    """The evaluation examples of ``task``."""
    source = TASK_SOURCES[task]
    return source.read(_resolve(resolver, source.path), source.path, get_task(task))


# ----------------------------------------------------------------------------- rows


def salad_extras(gradient: bool = False) -> dict[str, object]:
    """Extra columns of a word-salad suite (``model`` only on gradient suites)."""
    string = datasets.Value("string")
    extras: dict[str, object] = {
        "transform": string, "transform_family": string, "agreement_with": string,
    }
    if gradient:
        extras["model"] = string
    return extras


def _pair_rows(
    suite: str, task: str, transform: str, record: Record, path: str, new_text: str,
    **extra: object,
) -> tuple[Row, Row]:
    group = f"{suite}/r{record.row:05d}"
    base = {"suite": suite, "task": task, "group": group, "source_file": path,
            "source_row": record.row, **extra}
    original = {
        **base, "id": f"{group}/original", "variant": "original", "text": record.text,
        "text_pair": record.text_pair, "label": record.label, "transform": "",
        "transform_family": "", "agreement_with": "",
    }
    if record.text_pair is None:
        text, pair = new_text, None
    else:
        text, pair = record.text, new_text
    default = DEFAULT_LABEL.get(task, "") if transform in PAIR_ONLY else ""
    changed = {
        **base, "id": f"{group}/{transform}", "variant": transform, "text": text,
        "text_pair": pair, "label": None, "transform": transform,
        "transform_family": TRANSFORM_FAMILY[transform],
        "agreement_with": default or "original",
    }
    ordered = list(original)
    return original, {k: changed[k] for k in ordered}


def _row_key(task: str, transform: str, path: str, row: int) -> str:
    return f"{task}/{transform}/{path}/{row}"


def lexical_text(
    transform: str, record: Record, rng: random.Random, lower: bool = LOWER
) -> str | None:
    """The transformed text of ``record`` (the second text of a pair), or ``None``.

    ``lower`` (default: the paper's lower-cased outputs) lower-cases the transformed text.
    """
    target = record.text_pair if record.text_pair is not None else record.text
    if transform == "sort":
        return lexical.sort_text(target, lower)
    if transform == "reverse":
        return lexical.reverse_text(target, lower)
    if transform == "shuffle":
        return lexical.shuffle_text(target, rng, lower)
    if transform == "copysort":
        if record.text_pair is None:
            raise ValueError("CopySort applies to pair tasks only")
        return lexical.copysort_text(record.text, target, lower)
    raise ValueError(f"unknown lexical transformation {transform!r}")


def lexical_rows(
    task: str, transform: str, lower: bool = LOWER
) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_salad_<transform>`` for a lexical transformation.

    Args:
        task: Task name (``TASK_SOURCES``).
        transform: One of ``LEXICAL``.
        lower: Lower-case the transformed text (the paper's examples; the registered suites).
            ``False`` keeps the source's case, for studying cased models.

    """
    suite, path = f"{task}_salad_{transform}", TASK_SOURCES[task].path

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for record in read_records(task, resolver):
            rng = lexical.rng_for(SEED, _row_key(task, transform, path, record.row))
            new = lexical_text(transform, record, rng, lower)
            if new is not None:
                yield from _pair_rows(suite, task, transform, record, path, new)

    return build


# ----------------------------------------------------------------------------- statistical

#: Training pairs per label and model (the first ones in file order): NLTK's IBM models and
#: decoder are pure Python, so the stand-in trains on fewer pairs than Moses would.
MAX_TRAIN_PAIRS = 2000
#: Why a record has no PBSMT row, or where its output came from (``pbsmt_outcome``).
KEPT, NBEST, PERMUTATION, COPY, EMPTY, NO_SYSTEM = (
    "best", "n-best", "permutation", "copy", "empty", "no system")


def pbsmt_pair(record: Record, lower: bool = LOWER) -> tuple[list[str], list[str]]:
    """``(source, target)`` tokens of a record (lower-cased by default).

    Premise -> hypothesis, first question -> second question; SST-2: first half of the
    sentence -> second half (paper section 5).
    """
    if record.text_pair is not None:
        return lexical.tokenize(record.text, lower), lexical.tokenize(record.text_pair, lower)
    tokens = lexical.tokenize(record.text, lower)
    half = max(1, len(tokens) // 2)
    return tokens[:half], tokens[half:]


def train_pbsmt(records: Sequence[Record]) -> dict[int, pbsmt.PhraseModel]:
    """One phrase-based system per gold label, on at most ``MAX_TRAIN_PAIRS`` pairs each."""
    labels = dict.fromkeys(record.label for record in records)
    models = {label: train_label(records, label) for label in sorted(labels)}
    return {label: model for label, model in models.items() if model is not None}


def train_label(records: Sequence[Record], label: int) -> pbsmt.PhraseModel | None:
    """The system of one label; ``None`` when the label has no pair.

    Trained on the first ``MAX_TRAIN_PAIRS`` pairs of that label with tokens on both sides,
    in record order (as :func:`train_pbsmt` trains each label).
    """
    pairs: list[tuple[list[str], list[str]]] = []
    for record in records:
        if record.label == label and len(pairs) < MAX_TRAIN_PAIRS:
            source, target = pbsmt_pair(record)
            if source and target:
                pairs.append((source, target))
    return pbsmt.train(pairs) if pairs else None


def is_permutation(output: Sequence[str], source: Sequence[str]) -> bool:
    """Whether ``output`` holds exactly the tokens of ``source`` (as multisets): a Shuffle."""
    return len(output) == len(source) and sorted(output) == sorted(source)


def choose_output(nbest: Sequence[Sequence[str]], source: Sequence[str],
                  target: Sequence[str]) -> tuple[int | None, str]:
    """The first usable hypothesis of the decoder's n-best list, and why.

    A hypothesis is not usable when it is empty, equals the source or the target (a copy:
    nothing destroyed), or is a permutation of the source (that is Shuffle, not PBSMT), also
    once its text is tokenized again (as ``builders.card_figures`` measures it).
    Returns ``(0, KEPT)`` for the best, ``(rank, "n-best:<reason>")`` for a later one
    (``reason``: why the best was not usable), and ``(None, reason)`` when none is usable
    (``reason``: that of the best hypothesis).
    """
    if not nbest:
        return None, EMPTY
    first = None
    for rank, output in enumerate(nbest):
        if not output:
            reason = EMPTY
        elif list(output) in (list(source), list(target)):
            reason = COPY
        elif is_permutation(output, source) or is_permutation(
                lexical.tokenize(lexical.detokenize(output), LOWER), source):
            reason = PERMUTATION
        else:
            return rank, (KEPT if rank == 0 else f"{NBEST}:{first}")
        first = first or reason
    return None, first


def pbsmt_outcome(models: dict[int, pbsmt.PhraseModel], record: Record,
                  memo: dict[tuple[str, ...], list[list[str]]] | None = None,
                  ) -> tuple[str | None, str]:
    """The record's source side translated by the system of its label, and the outcome.

    The text is the first usable hypothesis of the decoder's n-best list
    (:func:`choose_output`): not a copy of the text it replaces or of the source it was
    translated from (a hypothesis that copies its premise makes an entailed pair, not a word
    salad), and not a permutation of that source. ``None`` (with the reason) when no system
    was trained for the label or no hypothesis is usable: the row is dropped.
    ``memo``: n-best lists already made by the same system, by source tokens (decoding is
    deterministic; a premise recurs in 4-6% of the MNLI and SNLI records of one label).
    """
    model = models.get(record.label)
    if model is None:
        return None, NO_SYSTEM
    source, target = pbsmt_pair(record)
    if memo is None:
        nbest = pbsmt.translate_nbest(model, source)
    else:
        nbest = memo.get(tuple(source))
        if nbest is None:
            nbest = memo[tuple(source)] = pbsmt.translate_nbest(model, source)
    rank, reason = choose_output(nbest, source, target)
    if rank is None:
        return None, reason
    return lexical.detokenize(nbest[rank]), reason


def pbsmt_text(models: dict[int, pbsmt.PhraseModel], record: Record,
               memo: dict[tuple[str, ...], list[list[str]]] | None = None) -> str | None:
    """The text of :func:`pbsmt_outcome`: ``None`` when the record has no row."""
    return pbsmt_outcome(models, record, memo)[0]


#: A share of a ``<task>_salad_pbsmt`` suite: ``(fold, label)``, the rows of one gold label
#: with the one system that translates them. ``fold`` is always ``None`` (2.0.0 has no
#: cross-fitting; the shape is kept for the build pool).
PbsmtPart = tuple[int | None, int]


def pbsmt_parts(task: str) -> tuple[PbsmtPart, ...]:
    """Every part of ``<task>_salad_pbsmt``: one per label."""
    return tuple((None, label) for label in range(len(get_task(task).label_names)))


def held_out(records: Sequence[Record]) -> tuple[list[Record], list[Record]]:
    """A fixed held-out half by premise: ``(evaluated records, training records)``.

    The premises (first texts) are numbered in order of first appearance; the records of an
    even-numbered premise are evaluated, those of an odd-numbered one train the systems. A
    premise recurs with one hypothesis per label (MNLI: 3,334 premises in 9,815 rows), so a
    split by row would put most evaluated premises into the training half too.
    """
    number: dict[str, int] = {}
    for record in records:
        number.setdefault(record.text, len(number))
    return ([r for r in records if number[r.text] % 2 == 0],
            [r for r in records if number[r.text] % 2 == 1])


def _texts(record: Record) -> set[str]:
    """The record's texts as the systems see them (lower-cased tokens, joined)."""
    texts = {" ".join(lexical.tokenize(record.text, LOWER))}
    if record.text_pair is not None:
        texts.add(" ".join(lexical.tokenize(record.text_pair, LOWER)))
    return texts


def disjoint(train: Sequence[Record], records: Sequence[Record]) -> list[Record]:
    """``train`` without the records that share a text with an evaluated record.

    A training pair whose premise, hypothesis or sentence (lower-cased tokens) is also a text
    of an evaluated row is left out, so no system has seen an evaluated text.
    """
    seen = set().union(*map(_texts, records)) if records else set()
    return [r for r in train if not _texts(r) & seen]


def part_rows(task: str, records: Sequence[Record], train: Sequence[Record],
              part: PbsmtPart, counts: Counter | None = None) -> KeyedRows:
    """Rows of one part, keyed by record position: its system trained, its records translated.

    ``records``: the evaluated records; ``train``: the training records (disjoint from them).
    ``counts``: when given, receives one :func:`pbsmt_outcome` reason per record of the part.
    """
    _, label = part
    suite, path = f"{task}_salad_pbsmt", TASK_SOURCES[task].path
    model = train_label(train, label)
    models = {label: model} if model is not None else {}
    out: KeyedRows = []
    memo: dict[tuple[str, ...], list[list[str]]] = {}  # one system: same source, same output
    for position, record in enumerate(records):
        if record.label == label:
            new, reason = pbsmt_outcome(models, record, memo)
            if counts is not None:
                counts[reason] += 1
            if new is not None:
                out.append((position, list(_pair_rows(suite, task, "pbsmt", record, path, new))))
    return out


def pbsmt_inputs(task: str, resolver: SourceResolver) -> tuple[list[Record], list[Record]]:
    """The records to translate and the training records, disjoint (:func:`disjoint`).

    A task without a training split (MNLI) is split in a fixed held-out half
    (:func:`held_out`); SST-2 trains on the sentences of GLUE's train file.
    """
    source = TASK_SOURCES[task]
    records = read_records(task, resolver)
    if source.train_path is None:
        records, train = held_out(records)
    else:
        train = source.train_read(
            _resolve(resolver, source.train_path), source.train_path, get_task(task)
        )
        if source.sentences_only:
            train = [train[k] for k in maximal_phrases([r.text for r in train])]
    return records, disjoint(train, records)


def pbsmt_counts(task: str, resolver: SourceResolver) -> Counter:
    """How each evaluated record of ``<task>_salad_pbsmt`` fared (:func:`pbsmt_outcome`)."""
    records, train = pbsmt_inputs(task, resolver)
    counts: Counter = Counter()
    for part in pbsmt_parts(task):
        part_rows(task, records, train, part, counts)
    return counts


def statistical_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_salad_pbsmt``: the transformed text comes from the per-label system.

    Pair tasks replace the second text; SST-2 replaces the sentence by the translation of its
    first half. Systems train on data disjoint from the evaluated rows
    (:func:`pbsmt_inputs`). The rows are those of every part (:func:`pbsmt_parts`), merged in
    record order.
    """

    def build(resolver: SourceResolver) -> Iterator[Row]:
        records, train = pbsmt_inputs(task, resolver)
        yield from merge_parts(part_rows(task, records, train, part)
                               for part in pbsmt_parts(task))

    return build


def statistical_part(task: str) -> Callable[[SourceResolver, PbsmtPart], KeyedRows]:
    """Rows of one part of ``<task>_salad_pbsmt`` (a pool task), keyed by record position."""

    def build_part(resolver: SourceResolver, part: PbsmtPart) -> KeyedRows:
        records, train = pbsmt_inputs(task, resolver)
        return part_rows(task, records, train, part)

    return build_part


# ----------------------------------------------------------------------------- gradient


def gradient_text(
    transform: str,
    importance,
    rng: random.Random,
    vocabulary: Sequence[str],
    to_text: Callable[[Sequence[str]], str],
    ratio: float,
) -> str | None:
    """The transformed text for one example from its token importance, or ``None``."""
    from builders.salad import gradient

    tokens, scores = importance.tokens, importance.scores
    if transform == "drop":
        out = gradient.drop(tokens, scores, ratio)
    elif transform == "repeat":
        out = gradient.repeat(tokens, scores, rng, ratio)
    elif transform == "replace":
        out = gradient.replace(tokens, scores, rng, vocabulary, ratio)
    elif transform == "copyone":
        out = gradient.copy_one(importance.other_tokens, importance.other_scores)
    else:
        raise ValueError(f"unknown gradient transformation {transform!r}")
    if out is None:
        return None
    text = to_text(out)
    return text if text and text != to_text(tokens) else None


def gradient_specs(
    task: str,
    transforms: Sequence[str],
    records: Sequence[Record],
    importances: Sequence,
    vocabulary: Sequence[str],
    to_text: Callable[[Sequence[str]], str],
    model_tag: str,
    model_name: str,
    ratio: float = 0.5,
    seed: int = SEED,
) -> list[SuiteSpec]:
    """Specs of ``<task>_salad_<transform>_<model_tag>`` from precomputed token importance."""
    if len(records) != len(importances):
        raise ValueError("one importance per record is needed")
    path, specs = TASK_SOURCES[task].path, []
    for transform in transforms:
        if transform not in GRADIENT:
            raise ValueError(f"{transform!r} is not a gradient transformation: {GRADIENT}")
        if transform in PAIR_ONLY and not get_task(task).is_pair:
            raise ValueError(f"{transform} applies to pair tasks only, not {task}")
        suite = f"{task}_salad_{transform}_{model_tag}"
        rows: list[Row] = []
        for record, importance in zip(records, importances, strict=True):
            rng = lexical.rng_for(seed, _row_key(task, transform, path, record.row))
            new = gradient_text(transform, importance, rng, vocabulary, to_text, ratio)
            if new is not None:
                rows.extend(_pair_rows(suite, task, transform, record, path, new,
                                       model=model_name))
        specs.append(SuiteSpec(
            name=suite, task=task, family=FAMILY, kind=KIND, version=VERSION, sources=(path,),
            build=lambda resolver, rows=tuple(rows): iter(rows),
            description=DESCRIPTIONS[transform] + f" Token importance from model {model_name}.",
            main_metric="agreement", higher_is_better=False, extras=salad_extras(True),
            citation=SALAD.citation, license=SALAD.licenses[task],
        ))
    return specs


# ----------------------------------------------------------------------------- registry

DESCRIPTIONS = {
    "sort": "Tokens of one text sorted alphabetically (final punctuation kept last).",
    "reverse": "Tokens of one text in reverse order (final punctuation kept last).",
    "shuffle": "Tokens of one text shuffled until no bigram of the original survives.",
    "copysort": "The first text, sorted, replaces the second; compared with the default label.",
    "pbsmt": "One text replaced by the output of a phrase-based SMT system trained on the "
    "pairs of the row's label (premise -> hypothesis; SST-2: first half -> second half), "
    "pairs disjoint from the evaluated rows. Stand-in for the paper's per-label Moses PBSMT, "
    "built from NLTK's IBM Model 1 alignments, phrase extraction and stack decoder with a "
    "per-label trigram language model; copied words are penalised and unknown words dropped, "
    "and no output is a permutation of its source. Not numerically comparable to the paper's "
    "PBSMT row.",
    "drop": "The 50% least important tokens (embedding x gradient) dropped.",
    "repeat": "The 50% least important tokens replaced by important ones.",
    "replace": "The 50% least important tokens replaced by random vocabulary tokens.",
    "copyone": "The most important token of the first text is the whole second text; "
    "compared with the default label.",
}
SUFFIX = (" Destructive transformation: the row has no correct label. Main metric: agreement "
          "with the original prediction, best near chance (1/N).")


def _split(task: str) -> dict[str, object]:
    """``parts`` and ``build_part`` of ``<task>_salad_pbsmt`` where it is worth splitting."""
    if task not in SPLIT:
        return {}
    return {"parts": pbsmt_parts(task), "build_part": statistical_part(task)}


def _static_suites() -> Iterator[SuiteSpec]:
    for task in ("mnli", "snli", "qqp", "mrpc", "sst2"):
        source = TASK_SOURCES[task]
        for transform in LEXICAL:
            if transform in PAIR_ONLY and not get_task(task).is_pair:
                continue
            yield SuiteSpec(
                name=f"{task}_salad_{transform}", task=task, family=FAMILY, kind=KIND,
                version=VERSION, sources=(source.path,), build=lexical_rows(task, transform),
                description=DESCRIPTIONS[transform] + SUFFIX, main_metric="agreement",
                higher_is_better=False, extras=salad_extras(), citation=SALAD.citation,
                license=SALAD.licenses[task],
            )
        if task not in NO_STATISTICAL:
            train = (source.train_path,) if source.train_path else ()
            yield SuiteSpec(
                name=f"{task}_salad_pbsmt", task=task, family=FAMILY, kind=KIND,
                version=PBSMT_VERSION, sources=(source.path, *train),
                build=statistical_rows(task),
                description=DESCRIPTIONS["pbsmt"] + SUFFIX, main_metric="agreement",
                higher_is_better=False, extras=salad_extras(), citation=SALAD.citation,
                license=SALAD.licenses[task], build_cost=PBSMT_BUILD_COST.get(task, 1.0),
                **_split(task),
            )


for _spec in _static_suites():
    register_suite(_spec)
