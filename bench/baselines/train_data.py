"""Labelled training and held-out examples per task, from the source mirror.

A *data spec* is a mirror-layout path, optionally with a ``#half=N`` suffix that keeps one
fixed half of the file's data rows (``consistency_bench.bench.scoring.contamination.half_of``: the
low bit
of
``sha256(f"{path}#{row}")``, ``row`` 0-based, header excluded). Specs are what baselines
declare as ``training_data`` in their ``meta.yaml`` (syntax:
``bench/scoring/contamination.py``), which the leaderboard matches against the source files
of each suite.

Train splits in the mirror: RTE, MRPC, WiC (``becel/<task>/train.tsv``), SST-2 (GLUE
``sst2/glue_train.tsv``), KorSTS train (``korsts/sts-train.tsv``, scores binarised at 3.0 as
KLUE-STS does, for the ``klue_sts`` task). NLI has no train split here: MultiNLI dev-matched
(``mnli/dev_matched.generative-nli.jsonl``, 9,815 rows) is the only NLI training data and also
the source of the ``mnli_calm`` and ``mnli_salad_*`` suites, so it is halved by
``half_of``: half 0 (4,878 rows) trains the SNLI / MNLI models, half 1 (4,937 rows) is held out
and reports accuracy. The MNLI suites are built from the whole file, so about half of their
items are training rows: the declaration ``...jsonl#half=0`` makes the leaderboard flag them.
BoolQ, AG News and QNLI have no training split here either: their only labelled file is the
evaluated split the suites are built from, so one fixed half of it trains and the other half
reports accuracy (``becel/boolq/validation.tsv``, ``becel/ag_news/validation.tsv``,
``qnli/glue_dev.tsv``, each ``#half=0`` / ``#half=1``). The QNLI CALM suites draw from that
file, so the ``#half=0`` declaration flags them; no AG News suite item is a validation row
(the additive suite reads ``validation.tsv`` only for its length threshold). The BoolQ suites
are built from derived files (``semantic.tsv``, ``negational.tsv``: validation rows plus a
paraphrased or negated question), which a declaration of ``validation.tsv`` cannot flag, so
training drops every validation row whose passage occurs in one of them (``TRAIN_EXCLUDE``):
no BoolQ suite item is a training row. The Korean NLI tasks have no training data.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.io.tsv import read_tsv
from consistency_bench.bench.prompting.row_inputs import classifier_input
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.bench.scoring.contamination import half_of, parse_item

#: The only NLI training data (also the source of the MNLI CALM and word-salad suites).
MNLI_DEV = "mnli/dev_matched.generative-nli.jsonl"
#: The evaluated splits that are the only labelled data of BoolQ, AG News and QNLI here.
BOOLQ_DEV = "becel/boolq/validation.tsv"
AG_NEWS_DEV = "becel/ag_news/validation.tsv"
QNLI_DEV = "qnli/glue_dev.tsv"
#: KorSTS similarity at or above which a pair is a paraphrase (KLUE-STS ``binary-label``).
STS_THRESHOLD = 3.0

#: Task -> data spec of its training data.
TRAIN_FILES: dict[str, str] = {
    "rte": "becel/rte/train.tsv",
    "mrpc": "becel/mrpc/train.tsv",
    "wic": "becel/wic/train.tsv",
    "sst2": "sst2/glue_train.tsv",
    "snli": f"{MNLI_DEV}#half=0",
    "mnli": f"{MNLI_DEV}#half=0",
    "klue_sts": "korsts/sts-train.tsv",
    "boolq": f"{BOOLQ_DEV}#half=0",
    "ag_news": f"{AG_NEWS_DEV}#half=0",
    "qnli": f"{QNLI_DEV}#half=0",
}

#: Task -> (suite source files, column): training rows whose value in ``column`` occurs in
#: one of these files are dropped. For derived suite files that a ``training_data``
#: declaration of the training file cannot flag (module docstring).
TRAIN_EXCLUDE: dict[str, tuple[tuple[str, ...], str]] = {
    "boolq": (("becel/boolq/semantic.tsv", "becel/boolq/negational.tsv"), "passage"),
}

#: Task -> held-out labelled data specs on which trained models report accuracy (never
#: trained on). The first one is the task's headline dev accuracy.
DEV_FILES: dict[str, tuple[str, ...]] = {
    "rte": ("becel/rte/validation.tsv",),
    "mrpc": ("becel/mrpc/validation.tsv",),
    "wic": ("becel/wic/validation.tsv",),
    "sst2": ("becel/sst2/validation.tsv",),
    "snli": (f"{MNLI_DEV}#half=1",),
    "mnli": (f"{MNLI_DEV}#half=1",),
    "klue_sts": ("korsts/sts-dev.tsv",),
    "boolq": (f"{BOOLQ_DEV}#half=1",),
    "ag_news": (f"{AG_NEWS_DEV}#half=1",),
    "qnli": (f"{QNLI_DEV}#half=1",),
}

#: Label prior of the majority baseline for BoolQ and AG News: the gold label counts of the
#: whole validation file (only the counts are used). Kept before ``TRAIN_FILES`` (their
#: training halves came later), so the ``majority`` entry is unchanged.
PRIOR_FILES: dict[str, str] = {
    "boolq": "becel/boolq/validation.tsv",
    "ag_news": "becel/ag_news/validation.tsv",
}


@dataclass(frozen=True)
class Example:
    """One training example in the row contract's shape."""

    text: str
    text_pair: str | None
    label: int
    word: str | None = None

    def as_row(self) -> dict:
        """The example as a suite-like row (for ``consistency_bench.bench.prompting.row_inputs``)."""  # noqa: E501
        return {"text": self.text, "text_pair": self.text_pair, "word": self.word}


def _label_index(task: str, value: str, where: str) -> int:
    names = get_task(task).label_names
    text = value.strip()
    if text.isdigit() and int(text) < len(names):
        return int(text)
    lowered = [n.lower() for n in names]
    if text.lower() in lowered:
        return lowered.index(text.lower())
    raise SourceError(f"{where}: label {value!r} is not one of {names} or an index")


def _sts_label(value: str, where: str) -> int:
    try:
        score = float(value)
    except ValueError:
        raise SourceError(f"{where}: score {value!r} is not a number") from None
    return int(score >= STS_THRESHOLD)


def load_examples(task: str, spec: str, resolver: SourceResolver) -> list[Example]:
    """Labelled examples of data spec ``spec`` for ``task``, in file order.

    Rows without a gold label (SNLI ``-1``) are skipped.

    Raises:
        SourceError: A file is missing or malformed, or a label is not one of the task's.

    """
    source = parse_item(spec, "data spec")
    rel, half = source.path, source.half
    path = resolver.path(rel)

    def keep(row: int) -> bool:
        return half is None or half_of(rel, row) == half

    out: list[Example] = []
    if rel.endswith(".jsonl"):
        for row, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if keep(row):
                record = json.loads(line)
                label = _label_index(task, record["label"], f"{rel}:{row + 1}")
                out.append(Example(record["premise"], record["hypothesis"], label))
        return out
    # KorSTS and QNLI have bare quotes inside sentences (the CALM builder reads QNLI so too).
    quoting = csv.QUOTE_NONE if rel.startswith(("korsts/", "qnli/")) else csv.QUOTE_MINIMAL
    for row, r in enumerate(read_tsv(path, quoting=quoting)):
        if not keep(row):
            continue
        where = f"{rel}:{row + 2}"  # file line (line 1 is the header)
        if "score" in r:
            out.append(Example(r["sentence1"], r["sentence2"], _sts_label(r["score"], where)))
        elif r.get("label", "").strip() == "-1":
            continue
        elif "question" in r:  # BoolQ (question, passage), QNLI (question, sentence)
            second = r["passage"] if "passage" in r else r["sentence"]
            out.append(Example(r["question"], second, _label_index(task, r["label"], where)))
        elif "text" in r:  # AG News
            out.append(Example(r["text"], None, _label_index(task, r["label"], where)))
        elif "premise" in r:
            out.append(Example(r["premise"], r["hypothesis"],
                               _label_index(task, r["label"], where)))
        elif "sentence" in r:
            out.append(Example(r["sentence"], None, _label_index(task, r["label"], where)))
        else:
            out.append(Example(r["sentence1"], r["sentence2"],
                               _label_index(task, r["label"], where), r.get("word")))
    return out


def has_train(task: str) -> bool:
    """Whether the mirror holds training data for ``task``."""
    return task in TRAIN_FILES


def load_train(task: str, resolver: SourceResolver) -> list[Example]:
    """Training examples of ``task`` (``TRAIN_FILES`` minus ``TRAIN_EXCLUDE``), in file order.

    Raises:
        SourceError: No training data exists for ``task`` or a file is malformed.

    """
    if task not in TRAIN_FILES:
        raise SourceError(
            f"no training split for task {task!r} in the mirror (available: "
            f"{', '.join(sorted(TRAIN_FILES))})"
        )
    examples = load_examples(task, TRAIN_FILES[task], resolver)
    if task in TRAIN_EXCLUDE:
        seen = excluded_values(task, resolver)
        field = _example_field(task, TRAIN_EXCLUDE[task][1])
        examples = [e for e in examples if getattr(e, field).strip() not in seen]
    return examples


def _example_field(task: str, column: str) -> str:
    spec = get_task(task)
    if column == spec.text:
        return "text"
    if column == spec.text_pair:
        return "text_pair"
    raise SourceError(f"TRAIN_EXCLUDE[{task!r}]: column {column!r} is not an input of the task")


def excluded_values(task: str, resolver: SourceResolver) -> set[str]:
    """Values (stripped) of ``TRAIN_EXCLUDE[task]``'s column in its suite source files."""
    files, column = TRAIN_EXCLUDE.get(task, ((), ""))
    values: set[str] = set()
    for rel in files:
        for number, row in enumerate(read_tsv(resolver.path(rel))):
            if column not in row:
                raise SourceError(f"{rel}: data row {number}: no column {column!r}")
            values.add(row[column].strip())
    return values


def label_counts(task: str, resolver: SourceResolver) -> tuple[list[int], str]:
    """Gold label counts used as the task's prior, and the file they come from."""
    n = len(get_task(task).label_names)
    counts = [0] * n
    if task in TRAIN_FILES and task not in PRIOR_FILES:
        for example in load_train(task, resolver):
            counts[example.label] += 1
        return counts, TRAIN_FILES[task]
    if task not in PRIOR_FILES:
        raise SourceError(f"no labelled file for the prior of task {task!r}")
    rel = PRIOR_FILES[task]
    for row in read_tsv(resolver.path(rel)):
        counts[_label_index(task, row["label"], rel)] += 1
    return counts, rel


def model_texts(example: Example, task: str, wic_format: str = "word-prefix"):
    """The classifier input pair of a training example (same format as ``predict``)."""
    return classifier_input(example.as_row(), task, wic_format)
