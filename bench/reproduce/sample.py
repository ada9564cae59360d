"""The seeded sample of groups per suite that ``reproduce`` runs again.

A group (``<suite>/<key>``, docs/contracts.md) holds the rows compared with each other: an
original and its perturbations. The sample takes whole groups, so every variant of a sampled
group is checked. Groups are ordered by ``sha256(f"{seed}\\0{group}")`` and the first ``n``
taken: the sample depends on the seed and the group ids only, never on row order, and a
larger ``n`` extends a smaller one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Groups per suite when none is asked for.
DEFAULT_GROUPS = 32


def group_key(seed: int, group: str) -> str:
    """The sort key of a group in the sample of ``seed``."""
    return hashlib.sha256(f"{seed}\0{group}".encode()).hexdigest()


def choose_groups(groups: Iterable[str], n: int, seed: int) -> list[str]:
    """The ``n`` groups of ``seed`` (all of them when there are fewer), in sample order."""
    return sorted(set(groups), key=lambda g: group_key(seed, g))[:n]


@dataclass(frozen=True)
class Sample:
    """The rows ``reproduce`` checks.

    Attributes:
        rows: Suite -> the row ids of its sampled groups.
        groups: Suite -> the sampled groups, in sample order.
        total_groups: Suite -> groups in the suite.

    """

    rows: dict[str, frozenset[str]]
    groups: dict[str, list[str]]
    total_groups: dict[str, int]

    @property
    def row_count(self) -> int:
        """Rows in the sample."""
        return sum(len(ids) for ids in self.rows.values())

    @property
    def group_count(self) -> int:
        """Groups in the sample."""
        return sum(len(g) for g in self.groups.values())


def sample_rows(data_dir: str | os.PathLike, suites: Sequence[str], n: int, seed: int
                ) -> Sample:
    """The sample of ``n`` groups per suite of the built folder ``data_dir``.

    Raises:
        ConfigError: ``n`` below 1.
        DataError: A suite's Parquet file is missing.

    """
    import pyarrow.parquet as pq

    from consistency_bench.bench.errors import ConfigError, DataError
    from consistency_bench.bench.io.manifest import parquet_path

    if n < 1:
        raise ConfigError(f"--groups-per-suite {n}: use 1 or more")
    rows: dict[str, frozenset[str]] = {}
    groups: dict[str, list[str]] = {}
    totals: dict[str, int] = {}
    for suite in suites:
        path = parquet_path(Path(data_dir), suite)
        if not path.is_file():
            raise DataError(f"{path} is missing; rebuild the folder")
        table = pq.read_table(path, columns=["id", "group"]).to_pydict()
        chosen = choose_groups(table["group"], n, seed)
        keep = set(chosen)
        rows[suite] = frozenset(i for i, g in zip(table["id"], table["group"], strict=True)
                                if g in keep)
        groups[suite] = chosen
        totals[suite] = len(set(table["group"]))
    return Sample(rows, groups, totals)
