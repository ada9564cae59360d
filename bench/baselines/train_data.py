"""Labelled training examples per task, from the source mirror.

Train splits in the mirror: RTE, MRPC, WiC (``becel/<task>/train.tsv``), SST-2 (GLUE
``sst2/glue_train.tsv``). SNLI has no train split here: MultiNLI dev-matched
(``mnli/dev_matched.generative-nli.jsonl``, 9,815 rows, same three labels, other genres) stands
in for it. BoolQ and AG News have none: their only labelled files (validation / test) are the
rows the BECEL suites are built from, so training on them would leak; baselines that need
training data do not cover these two tasks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bench.errors import SourceError
from bench.inputs import classifier_input
from bench.sources import SourceResolver
from bench.tasks import get_task
from builders.tsv import read_tsv

#: Task -> mirror path of its training data.
TRAIN_FILES: dict[str, str] = {
    "rte": "becel/rte/train.tsv",
    "mrpc": "becel/mrpc/train.tsv",
    "wic": "becel/wic/train.tsv",
    "sst2": "sst2/glue_train.tsv",
    "snli": "mnli/dev_matched.generative-nli.jsonl",
}

#: Label prior for the majority baseline where no training data exists: the gold labels of
#: the task's validation file (only the class counts are used).
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
        """The example as a suite-like row (for ``bench.inputs``)."""
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


def has_train(task: str) -> bool:
    """Whether the mirror holds training data for ``task``."""
    return task in TRAIN_FILES


def load_train(task: str, resolver: SourceResolver) -> list[Example]:
    """Training examples of ``task``, in file order.

    Raises:
        SourceError: No training data exists for ``task`` or a file is malformed.

    """
    if task not in TRAIN_FILES:
        raise SourceError(
            f"no training split for task {task!r} in the mirror (available: "
            f"{', '.join(sorted(TRAIN_FILES))})"
        )
    rel = TRAIN_FILES[task]
    path = resolver.path(rel)
    if rel.endswith(".jsonl"):
        out = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            record = json.loads(line)
            label = _label_index(task, record["label"], f"{rel}:{number}")
            out.append(Example(record["premise"], record["hypothesis"], label))
        return out
    rows = read_tsv(path)
    if task == "sst2":
        return [Example(r["sentence"], None, _label_index(task, r["label"], rel)) for r in rows]
    if task == "wic":
        return [
            Example(r["sentence1"], r["sentence2"], _label_index(task, r["label"], rel), r["word"])
            for r in rows
        ]
    return [
        Example(r["sentence1"], r["sentence2"], _label_index(task, r["label"], rel)) for r in rows
    ]


def label_counts(task: str, resolver: SourceResolver) -> tuple[list[int], str]:
    """Gold label counts used as the task's prior, and the file they come from."""
    n = len(get_task(task).label_names)
    counts = [0] * n
    if task in TRAIN_FILES:
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
