"""Word-salad suites: static lexical and statistical configs, model-specific gradient specs.

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
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import datasets

from bench.errors import SourceError
from bench.metrics.salad import DEFAULT_LABEL, TRANSFORM_FAMILY
from bench.sources import SOURCES, SourceResolver
from bench.tasks import TASKS, TaskSpec, get_task, register_task
from builders.salad import lexical, statistical
from builders.suite import Row, SuiteSpec, register_suite
from builders.tsv import read_tsv

VERSION = "1.0.0"
SEED = 20210202
FAMILY = "salad"
KIND = "salad"

CITATION = """@inproceedings{gupta-etal-2021-bert,
    title = "{BERT} {\\&} Family Eat Word Salad: Experiments with Text Understanding",
    author = "Gupta, Ashim and Kvernadze, Giorgi and Srikumar, Vivek",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "35",
    number = "14",
    pages = "12946--12954",
    year = "2021",
}"""

LICENSES = {
    "mnli": "MultiNLI: OANC / CC BY-SA 3.0 / CC BY 3.0 parts (see the MultiNLI paper).",
    "snli": "SNLI: CC BY-SA 4.0.",
    "mrpc": "MRPC: Microsoft Research Paraphrase Corpus terms.",
    "sst2": "SST-2: see the Stanford Sentiment Treebank terms.",
    "qqp": "QQP: Quora terms of service (non-commercial research use).",
}

#: Tasks the word-salad suites need beyond bench/tasks.py (the CALM helper may add them too).
EXTRA_TASKS = (
    TaskSpec("mnli", ("entailment", "neutral", "contradiction"), text="premise",
             text_pair="hypothesis"),
    TaskSpec("qqp", ("not_duplicate", "duplicate"), text="question1", text_pair="question2"),
)


def _ensure_task(task: TaskSpec) -> None:
    """Register ``task`` unless an identical one is registered; a different one is an error."""
    known = TASKS.get(task.name)
    if known is None:
        register_task(task)
    elif known.label_names != task.label_names or known.is_pair != task.is_pair:
        raise ValueError(f"task {task.name!r} is registered with other labels: {known}")


for _task in EXTRA_TASKS:
    _ensure_task(_task)


# ----------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Record:
    """One source example (``row``: 0-based data row in ``path``)."""

    row: int
    text: str
    text_pair: str | None
    label: int


def _jsonl_nli(path) -> list[Record]:
    names = get_task("mnli").label_names
    out = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            record = json.loads(line)
            out.append(Record(number, record["premise"], record["hypothesis"],
                              names.index(record["label"])))
    return out


def _tsv(text: str, pair: str | None, quoting: int = csv.QUOTE_MINIMAL):
    def read(path) -> list[Record]:
        out = []
        for number, record in enumerate(read_tsv(path, quoting=quoting)):
            if record["label"] in ("", "-1"):  # no gold label: not an example
                continue
            out.append(Record(number, record[text], record[pair] if pair else None,
                              int(record["label"])))
        return out

    return read


def _qqp(path) -> list[Record]:
    """GLUE QQP TSV; rows with a missing question are skipped (as the paper does)."""
    out = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        where = {name: i for i, name in enumerate(header)}
        for number, fields in enumerate(reader):
            if len(fields) != len(header):
                continue
            q1, q2 = fields[where["question1"]].strip(), fields[where["question2"]].strip()
            if q1 and q2:
                out.append(Record(number, q1, q2, int(fields[where["is_duplicate"]])))
    return out


@dataclass(frozen=True)
class TaskSource:
    """Where a task's evaluation examples and n-gram training texts come from.

    Attributes:
        path: Mirror-layout path of the transformed split.
        read: Reader of ``path`` into records.
        train_path: Split the n-gram models are trained on; ``None``: two-fold cross-fitting
            on ``path`` itself (rows of one parity are generated by models trained on the other).
        train_read: Reader of ``train_path``.

    """

    path: str
    read: Callable[[object], list[Record]]
    train_path: str | None = None
    train_read: Callable[[object], list[Record]] | None = None


QQP_DEV, QQP_TRAIN = "qqp/dev.tsv", "qqp/train.tsv"  # registered in bench/sources.py

TASK_SOURCES = {
    "mnli": TaskSource("mnli/dev_matched.generative-nli.jsonl", _jsonl_nli),
    "snli": TaskSource("becel/snli/validation.tsv", _tsv("premise", "hypothesis"),
                       "becel/snli/test.tsv", _tsv("premise", "hypothesis")),
    "mrpc": TaskSource("becel/mrpc/validation.tsv", _tsv("sentence1", "sentence2")),
    "sst2": TaskSource("sst2/glue_dev.tsv", _tsv("sentence", None, csv.QUOTE_NONE),
                       "sst2/glue_train.tsv", _tsv("sentence", None, csv.QUOTE_NONE)),
    "qqp": TaskSource(QQP_DEV, _qqp, QQP_TRAIN, _qqp),
}

LEXICAL = ("sort", "reverse", "shuffle", "copysort")
GRADIENT = ("drop", "repeat", "replace", "copyone")
STATISTICAL = ("ngram",)
PAIR_ONLY = frozenset({"copysort", "copyone"})
#: The paper builds no PBSMT set for MRPC (too little training data); neither do we.
NO_STATISTICAL = frozenset({"mrpc"})


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
    return source.read(_resolve(resolver, source.path))


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


def lexical_text(transform: str, record: Record, rng: random.Random) -> str | None:
    """The transformed text of ``record`` (the second text of a pair), or ``None``."""
    target = record.text_pair if record.text_pair is not None else record.text
    if transform == "sort":
        return lexical.sort_text(target)
    if transform == "reverse":
        return lexical.reverse_text(target)
    if transform == "shuffle":
        return lexical.shuffle_text(target, rng)
    if transform == "copysort":
        if record.text_pair is None:
            raise ValueError("CopySort applies to pair tasks only")
        return lexical.copysort_text(record.text, target)
    raise ValueError(f"unknown lexical transformation {transform!r}")


def lexical_rows(task: str, transform: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_salad_<transform>`` for a lexical transformation."""
    suite, path = f"{task}_salad_{transform}", TASK_SOURCES[task].path

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for record in read_records(task, resolver):
            rng = lexical.rng_for(SEED, _row_key(task, transform, path, record.row))
            new = lexical_text(transform, record, rng)
            if new is not None:
                yield from _pair_rows(suite, task, transform, record, path, new)

    return build


# ----------------------------------------------------------------------------- statistical


def _train_models(
    records: Sequence[Record], task_is_pair: bool
) -> dict[int, statistical.NGramModel]:
    by_label: dict[int, list[list[str]]] = {}
    for record in records:
        target = record.text_pair if task_is_pair else record.text
        by_label.setdefault(record.label, []).append(lexical.tokenize(target))
    return {label: statistical.train(texts) for label, texts in sorted(by_label.items())}


def ngram_text(
    models: dict[int, statistical.NGramModel], record: Record, rng: random.Random
) -> str | None:
    """PBSMT stand-in: sample from the model of the record's label after the source prefix."""
    model = models.get(record.label)
    if model is None:
        return None
    source = lexical.tokenize(record.text)
    target = lexical.tokenize(record.text_pair) if record.text_pair is not None else source
    tokens = statistical.generate(model, statistical.first_half(source), rng, len(target))
    text = lexical.detokenize(tokens)
    return text if text and text != lexical.detokenize(target) else None


def statistical_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_salad_ngram``."""
    suite, source = f"{task}_salad_ngram", TASK_SOURCES[task]
    pair = get_task(task).is_pair

    def build(resolver: SourceResolver) -> Iterator[Row]:
        records = read_records(task, resolver)
        if source.train_path is not None:
            train = source.train_read(_resolve(resolver, source.train_path))
            models = {0: _train_models(train, pair)}
            fold_of = lambda record: 0  # noqa: E731
        else:  # two-fold cross-fitting on the evaluation split itself
            models = {
                fold: _train_models([r for r in records if r.row % 2 != fold], pair)
                for fold in (0, 1)
            }
            fold_of = lambda record: record.row % 2  # noqa: E731
        for record in records:
            rng = lexical.rng_for(SEED, _row_key(task, "ngram", source.path, record.row))
            new = ngram_text(models[fold_of(record)], record, rng)
            if new is not None:
                yield from _pair_rows(suite, task, "ngram", record, source.path, new)

    return build


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
            citation=CITATION, license=LICENSES[task],
        ))
    return specs


# ----------------------------------------------------------------------------- registry

DESCRIPTIONS = {
    "sort": "Tokens of one text sorted alphabetically (final punctuation kept last).",
    "reverse": "Tokens of one text in reverse order (final punctuation kept last).",
    "shuffle": "Tokens of one text shuffled until no bigram of the original survives.",
    "copysort": "The first text, sorted, replaces the second; compared with the default label.",
    "ngram": "One text replaced by a sample of a label-conditioned trigram model (stand-in for "
    "the paper's per-label Moses PBSMT) continuing the first half of the source text.",
    "drop": "The 50% least important tokens (embedding x gradient) dropped.",
    "repeat": "The 50% least important tokens replaced by important ones.",
    "replace": "The 50% least important tokens replaced by random vocabulary tokens.",
    "copyone": "The most important token of the first text is the whole second text; "
    "compared with the default label.",
}
SUFFIX = (" Destructive transformation: the row has no correct label. Main metric: agreement "
          "with the original prediction, best near chance (1/N).")


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
                higher_is_better=False, extras=salad_extras(), citation=CITATION,
                license=LICENSES[task],
            )
        if task not in NO_STATISTICAL:
            train = (source.train_path,) if source.train_path else ()
            yield SuiteSpec(
                name=f"{task}_salad_ngram", task=task, family=FAMILY, kind=KIND,
                version=VERSION, sources=(source.path, *train), build=statistical_rows(task),
                description=DESCRIPTIONS["ngram"] + SUFFIX, main_metric="agreement",
                higher_is_better=False, extras=salad_extras(), citation=CITATION,
                license=LICENSES[task],
            )


for _spec in _static_suites():
    register_suite(_spec)
