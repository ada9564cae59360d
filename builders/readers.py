"""Readers of labelled source splits (GLUE-style TSV, JSONL, JSON lists, QQP) into examples.

Shared by the families that read whole evaluation splits (CALM, word salad). A reader is made
by a factory that names the columns, and is called as ``read(path, name, task)``; ``name`` is
the mirror-layout path used in error messages, ``task`` gives the label names.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.io.tsv import read_tsv
from consistency_bench.bench.registries.tasks import TaskSpec


@dataclass(frozen=True)
class Example:
    """One labelled source example.

    Attributes:
        row: 0-based data row in the source file.
        text: First input.
        text_pair: Second input, or ``None`` for single-text tasks.
        label: Label index.

    """

    row: int
    text: str
    text_pair: str | None
    label: int


Reader = Callable[[Path, str, TaskSpec], list[Example]]


def label_index(task: TaskSpec, value: object, name: str, row: int, field: str) -> int:
    """A label value (index, index string or label name) as an index of ``task``.

    Raises:
        SourceError: The value is not a label of the task; names file, row, field and value.

    """
    names = task.label_names
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return value
    if isinstance(value, str):
        if value in names:
            return names.index(value)
        if value.strip().isdigit() and int(value) < len(names):
            return int(value)
    raise SourceError(
        f"{name}: data row {row}: field {field!r} value {value!r} is not a {task.name} label "
        f"(expected one of {list(names)} or its index)"
    )


def tsv(
    text: str,
    pair: str | None,
    label: str = "label",
    quoting: int = csv.QUOTE_MINIMAL,
    *,
    skip_unlabelled: bool = False,
) -> Reader:
    """Reader of a TSV file with a header; ``skip_unlabelled`` drops rows labelled ``""``/``-1``."""

    def read(path: Path, name: str, task: TaskSpec) -> list[Example]:
        out = []
        for number, record in enumerate(read_tsv(path, quoting=quoting)):
            missing = [c for c in (text, pair, label) if c is not None and c not in record]
            if missing:
                raise SourceError(f"{name}: missing column {missing[0]!r}")
            if skip_unlabelled and record[label] in ("", "-1"):
                continue
            index = label_index(task, record[label], name, number, label)
            out.append(Example(number, record[text], record[pair] if pair else None, index))
        return out

    return read


def jsonl(text: str, pair: str | None, label: str = "label") -> Reader:
    """Reader of a JSON-lines file, one record per line."""

    def read(path: Path, name: str, task: TaskSpec) -> list[Example]:
        out = []
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SourceError(f"{name}: line {number + 1}: not JSON: {exc}") from None
                index = label_index(task, record.get(label), name, number, label)
                out.append(Example(number, record[text], record[pair] if pair else None, index))
        return out

    return read


def json_list(text: str, pair: str | None, label: Sequence[str]) -> Reader:
    """Reader of a JSON array of records; ``label`` is a key path (KLUE-STS nests its label)."""

    def read(path: Path, name: str, task: TaskSpec) -> list[Example]:
        out = []
        for number, record in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            value: object = record
            for key in label:
                value = value.get(key) if isinstance(value, dict) else None
            index = label_index(task, value, name, number, ".".join(label))
            out.append(Example(number, record[text], record[pair] if pair else None, index))
        return out

    return read


def qqp() -> Reader:
    """Reader of GLUE's QQP TSV.

    Rows with a missing question or a broken field count are left out (GLUE's file has a
    few), as the papers' preprocessing does.
    """

    def read(path: Path, name: str, task: TaskSpec) -> list[Example]:
        out = []
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader)
            where = {column: i for i, column in enumerate(header)}
            for number, fields in enumerate(reader):
                if len(fields) != len(header):
                    continue
                q1, q2 = fields[where["question1"]].strip(), fields[where["question2"]].strip()
                if q1 and q2:
                    value = fields[where["is_duplicate"]]
                    index = label_index(task, value, name, number, "is_duplicate")
                    out.append(Example(number, q1, q2, index))
        return out

    return read
