"""Synthetic leaderboard entries over every suite, with noise levels spread so the order is known.

Entry ``i`` of ``n`` (named ``noise-XXXX``, the noise in hundredths of a percent) answers every
row of every suite with the row's ideal answer (``tests/synthetic_entries.ideal``: the gold
label, what a constraint asks for, an unsure answer on word salad), except a seeded share of
rows, ``noise_i`` of them, replaced by a uniform random label with a confident probability.
``noise_i`` runs from :data:`LOW` to :data:`HIGH` in equal steps, so the right order of the
entries is by noise, lowest first, on every suite and in every view (the benchmark reports how
closely the ranks follow it). Randomness is seeded per entry and suite: the same files on every
run. Used by ``benchmarks/bench_leaderboard.py``.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from consistency_bench.bench.scoring.engine import Aligned, SuiteData, SuiteFolder
from tests.synthetic_entries import ideal

#: The noise of the best and of the worst entry (share of rows answered at random).
LOW, HIGH = 0.02, 0.60


def noise_levels(n: int) -> list[float]:
    """The noise of each of ``n`` entries, best first."""
    return [LOW] if n == 1 else [LOW + (HIGH - LOW) * i / (n - 1) for i in range(n)]


def entry_name(noise: float) -> str:
    """``noise-0200`` for 2% noise: names sort in the expected rank order."""
    return f"noise-{round(noise * 10_000):04d}"


def _rng(entry: str, suite: str) -> np.random.Generator:
    digest = hashlib.sha256(f"bench-board:{entry}:{suite}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class Board:
    """What every entry's file needs of each suite, read once: ids, ideal answers, labels."""

    def __init__(self, folder: SuiteFolder):
        self.suites = {}
        for suite in sorted(folder.manifest):
            data = folder.load(suite)
            label, unsure = ideal(data)
            ids = data.ids().to_pylist()
            if any('"' in i or "\\" in i for i in ids):
                raise ValueError(f"{suite}: an id needs JSON escaping")
            self.suites[suite] = (ids, label, unsure, len(data.label_names))

    def lines(self, entry: str, noise: float) -> Iterator[str]:
        """The entry's JSONL text, one block per suite (every row of every suite)."""
        for suite, (ids, label, unsure, n_labels) in self.suites.items():
            pred, sure = _noisy(entry, suite, label, unsure, n_labels, noise)
            tails = {(k, u): f', "label": {k}, "probs": {_probs_text(n_labels, k, u)}}}\n'
                     for k in range(n_labels) for u in (False, True)}
            yield "".join(f'{{"id": "{i}"{tails[k, u]}'
                          for i, k, u in zip(ids, pred.tolist(), sure.tolist(), strict=True))

    def write(self, entry: str, noise: float, path: Path) -> Path:
        """Write the entry's predictions as ``.jsonl.gz`` (fast compression; atomic)."""
        tmp = path.with_name(path.name + ".tmp")
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as fh:
            for block in self.lines(entry, noise):
                fh.write(block)
        tmp.replace(path)
        return path


def _noisy(entry: str, suite: str, label: np.ndarray, unsure: np.ndarray, n_labels: int,
           noise: float) -> tuple[np.ndarray, np.ndarray]:
    rng = _rng(entry, suite)
    swap = rng.random(len(label)) < noise
    pred = np.where(swap, rng.integers(0, n_labels, size=len(label)), label)
    return pred.astype(np.int64), unsure & ~swap


_LAST: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def answers(data: SuiteData, entry: str, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Labels, and whether each answer is unsure (uniform probabilities), of one suite."""
    if id(data) not in _LAST:  # ideal() walks the constraint rows: once per loaded suite
        _LAST.clear()
        _LAST[id(data)] = ideal(data)
    label, unsure = _LAST[id(data)]
    return _noisy(entry, data.name, label, unsure, len(data.label_names), noise)


def aligned(data: SuiteData, entry: str, noise: float) -> Aligned:
    """The entry's answers on one suite, as the scorer takes them (in-process benchmarks)."""
    pred, unsure = answers(data, entry, noise)
    n_labels = len(data.label_names)
    probs = np.full((len(pred), n_labels), 0.1 / (n_labels - 1))
    probs[np.arange(len(pred)), pred] = 0.9
    probs[unsure] = 1.0 / n_labels
    return Aligned(pred=pred, probs=probs)


def _probs_text(n_labels: int, label: int, unsure: bool) -> str:
    if unsure:
        values = [round(1.0 / n_labels, 6)] * n_labels
        values[-1] = round(1.0 - sum(values[:-1]), 6)
    else:
        values = [round(0.1 / (n_labels - 1), 6)] * n_labels
        values[label] = round(1.0 - sum(v for i, v in enumerate(values) if i != label), 6)
    return "[" + ", ".join(repr(v) for v in values) + "]"
