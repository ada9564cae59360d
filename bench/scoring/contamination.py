"""Declared training data and the contamination flags it raises (issue 9, item 5).

A submission's ``meta.yaml`` may list the files it was trained on under ``training_data``.
Each item names a source file by its mirror-layout path, exactly as the suites' ``source_file``
column spells it (docs/contracts.md), optionally restricted to one fixed half of the file::

    training_data:
      - becel/mrpc/train.tsv                              # the whole file
      - mnli/dev_matched.generative-nli.jsonl#half=0      # the rows with half_of(...) == 0

The halves are fixed and seeded by the path, so a trainer and the leaderboard agree on them
without sharing state: data row ``r`` (0-based, as ``source_row``) of file ``F`` is in half
``half_of(F, r)`` (the low bit of the first byte of ``sha256(f"{F}#{r}")``).

The leaderboard flags a cell when an entry declared training on any file the suite draws from
(the results entry's ``source_files``). A ``#half=`` declaration is flagged too: the suite draws
rows from both halves, so its score is partly in-sample.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError, shorten

_ITEM = re.compile(r"^(?P<path>[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*)(?:#half=(?P<half>[01]))?$")


@dataclass(frozen=True)
class TrainingSource:
    """One declared training file, optionally one of its halves."""

    path: str
    half: int | None = None

    def __str__(self) -> str:
        return self.path if self.half is None else f"{self.path}#half={self.half}"


def half_of(source_file: str, source_row: int) -> int:
    """The fixed half (0 or 1) of data row ``source_row`` of ``source_file``."""
    return hashlib.sha256(f"{source_file}#{int(source_row)}".encode()).digest()[0] & 1


def parse_item(item: object, where: str = "meta.yaml") -> TrainingSource:
    """Parse one ``training_data`` item.

    Raises:
        ConfigError: Not a string of the form ``path`` or ``path#half=0|1`` (a relative path
            of letters, digits, ``_ . -`` separated by ``/``, no ``..``).

    """
    match = _ITEM.match(item) if isinstance(item, str) else None
    if match is None or ".." in match["path"].split("/"):
        raise ConfigError(
            f"{where}: field 'training_data' value {shorten(item)}: expected a mirror-layout "
            "source path such as 'becel/mrpc/train.tsv', optionally followed by '#half=0' or "
            "'#half=1'"
        )
    half = match["half"]
    return TrainingSource(match["path"], None if half is None else int(half))


def parse_training_data(value: object, where: str = "meta.yaml") -> list[TrainingSource]:
    """Parse and validate a ``training_data`` list (an absent field is an empty list)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(
            f"{where}: field 'training_data' value {shorten(value)}: expected a list of source "
            "paths"
        )
    return [parse_item(item, where) for item in value]


def contamination(declared: Iterable[TrainingSource], source_files: Sequence[str]) -> str | None:
    """Why a suite drawn from ``source_files`` is contaminated for this entry, or ``None``."""
    files = set(source_files)
    hits = sorted({str(d) for d in declared if d.path in files})
    if not hits:
        return None
    return "trained on " + ", ".join(hits) + ", which this suite draws from"
