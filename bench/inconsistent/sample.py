"""A seeded sample of each suite's inconsistent groups (the explorer of the leaderboard page).

Chosen when the page is rendered: per suite, up to ``n`` of the units the suite's own
definition counts as inconsistent (:mod:`consistency_bench.bench.inconsistent.verdicts`), drawn
without
replacement with a seed of the entry and suite (:func:`seed_of`), so a render gives the same
sample every time and another entry or suite another one. The sample is listed by the
confidence of the contradiction, as ``inspect`` lists.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from consistency_bench.bench.inconsistent.groups import (
    Group,
    build_groups,
    sample_units,
    select_units,
)
from consistency_bench.bench.inconsistent.verdicts import INCONSISTENT
from consistency_bench.bench.scorers.contract import ScoreOptions

if TYPE_CHECKING:
    from consistency_bench.bench.scoring.engine import SuiteFolder


@dataclass(frozen=True)
class SuiteSample:
    """The sampled inconsistent groups of one suite.

    Attributes:
        suite: Suite name.
        kind: Metric kind.
        task: Task.
        labels: The task's label names.
        units: Units of the suite.
        inconsistent: Inconsistent units (the scorer's count).
        seed: The seed of the sample.
        relation: What an inconsistent unit of this kind did.
        groups: The sample (at most ``n``), most confident contradiction first.

    """

    suite: str
    kind: str
    task: str
    labels: tuple[str, ...]
    units: int
    inconsistent: int
    seed: int
    relation: str
    groups: tuple[Group, ...]


def seed_of(entry: str, suite: str, base: int = 0) -> int:
    """The sample's seed: the first 8 bytes of ``sha256("<base>/<entry>/<suite>")``."""
    digest = hashlib.sha256(f"{base}/{entry}/{suite}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def entry_samples(entry: str, predictions: str | os.PathLike, data: str | os.PathLike,
                  n: int, suites: list[str] | None = None, base: int = 0, *,
                  folder: SuiteFolder | None = None) -> list[SuiteSample]:
    """The sample of every suite the prediction file covers completely, by suite name.

    ``folder``: the built suite folder at ``data``, already open; one folder shared by the
    entries of a render loads (and hash-checks) each suite once, not once per entry.

    Raises:
        PredictionFileError: The file is malformed.
        DataError: A suite file does not match its manifest.

    """
    from consistency_bench.bench.inconsistent.inspect import judge
    from consistency_bench.bench.scoring.engine import SuiteFolder, align

    if folder is None:
        folder = SuiteFolder(Path(data))
    read = folder.predictions(Path(predictions))
    names = sorted(set(read.suites) if suites is None else set(suites) & set(read.suites))
    out = []
    for name in names:
        suite = folder.load(name)
        aligned = align(suite, read.suites[name])
        if isinstance(aligned, str):
            continue
        _, verdicts = judge(suite, aligned, ScoreOptions(n_boot=1))
        if verdicts is None:  # ART without probabilities: nothing can be judged
            continue
        seed = seed_of(entry, name, base)
        every = np.flatnonzero(verdicts.status == INCONSISTENT)
        chosen = set(sample_units(every, n, seed).tolist())
        ordered = [u for u in select_units(verdicts).tolist() if u in chosen]
        info = suite.info
        out.append(SuiteSample(name, info["kind"], info["task"], tuple(suite.label_names),
                               len(verdicts.status), len(every), seed, verdicts.relation,
                               tuple(build_groups(suite, aligned, verdicts,
                                                  np.asarray(ordered, dtype=np.int64)))))
    return out
