"""Where each word-salad task's evaluation examples and PBSMT training texts come from."""

from __future__ import annotations

import csv
from dataclasses import dataclass

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.registries.source_files import SOURCES, SourceResolver
from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.builders import readers
from consistency_bench.builders.readers import Example, Reader

# MNLI and QQP are registered in bench/registries/tasks.py (CALM uses them too).


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


# registered in bench/registries/source_files.py
QQP_DEV, QQP_TRAIN = "qqp/dev.tsv", "qqp/train.tsv"

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
