"""Score a prediction file against a built suite folder.

The layers: :mod:`consistency_bench.bench.predictions` validates the file; this module aligns each
suite's
predictions with its rows and calls the scorer registered for the suite's metric kind
(``SCORERS``, filled by the family modules in :mod:`consistency_bench.bench.scorers`; the contract
they
share, :mod:`consistency_bench.bench.scorers.contract`, is re-exported here); scorers call the pure
metric functions of :mod:`consistency_bench.bench.metrics`. The result follows the results contract
in
docs/contracts.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from consistency_bench.bench import __version__
from consistency_bench.bench.errors import DataError, UnknownNameError
from consistency_bench.bench.io.arrays import int64
from consistency_bench.bench.io.arrow_cache import ArrowCache
from consistency_bench.bench.io.manifest import REQUIRED_FIELDS, read_manifest
from consistency_bench.bench.io.user_cache import user_cache_folder
from consistency_bench.bench.metrics.consistent.originals import (
    original_stats,
    pooled_original_stats,
)
from consistency_bench.bench.metrics.consistent.score import Consistent
from consistency_bench.bench.predictions.fast import sampled_suites
from consistency_bench.bench.predictions.read import read_predictions
from consistency_bench.bench.predictions.types import Predictions, SuitePredictions
from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.scorers.contract import (
    CODED_COLUMNS,
    DERIVED_CACHE_ENV,
    SCORERS,
    Aligned,
    ScoreOptions,
    Scorer,
    SuiteData,
    Units,
)

SCHEMA_VERSION = 1
#: Suites scored at once, on threads: numpy and pyarrow release the GIL in the large
#: operations, and a suite's scorer touches only its own columns and its own seeded random
#: generator, so the results are those of scoring one suite after the other (tested).
SCORE_THREADS = 2


def get_scorer(kind: str) -> Scorer:
    """The scorer of a metric kind, with a did-you-mean error."""
    load_scorers()
    return SCORERS[kind]


def load_scorers() -> None:
    """Import the scorer module every family declares (:mod:`consistency_bench.bench.registries.families`), once.

    Each module registers its kinds on import; scoring loads them on first use, so importing
    this module stays cheap, and adding a family adds no import line here.
    """  # noqa: E501
    for family in FAMILIES.values():
        if family.scorer is not None:
            importlib.import_module(family.scorer)


#: Modules scoring imports on first use beyond :func:`load_scorers`: numpy loads ``random``
#: (the bootstrap's generator) and ``ma`` (``np.quantile``) lazily, ~0.03 s together.
LAZY_IMPORTS = ("numpy.random", "numpy.ma")


def scoring_imports() -> None:
    """Import what scoring imports on first use: the scorer modules and :data:`LAZY_IMPORTS`.

    ``score_file`` calls it while a large prediction file is parsed on other threads, so
    these imports do not wait for the parse to end (docs/benchmarks.md).
    """
    load_scorers()
    for name in LAZY_IMPORTS:
        importlib.import_module(name)


def score_cache() -> ArrowCache | None:
    """The cache of suites' derived columns ``score`` reads and fills, or ``None`` when off.

    ``$CONSISTENCY_BENCH_SCORE_CACHE`` (``off`` turns it off), else
    ``$XDG_CACHE_HOME/consistency-bench/score`` (:mod:`consistency_bench.bench.io.user_cache`).
    """
    folder = user_cache_folder(DERIVED_CACHE_ENV, "score")
    return None if folder is None else ArrowCache(folder)


class SuiteFolder:
    """A built suite folder: its manifest and lazily loaded, hash-checked suites.

    Args:
        root: The folder.
        derived: Where each suite's core columns and derived arrays are kept between processes
            (:func:`score_cache`; :class:`~consistency_bench.bench.scorers.contract.SuiteData`);
            ``None`` (the default): computed in this process only. Only the ``score`` command
            and :func:`consistency_bench.api.score` pass it (:func:`score_file`); nothing the
            leaderboard stores, verifies or ranks depends on a file outside the built folder.

    """

    def __init__(self, root: str | Path, derived: ArrowCache | None = None):
        self.root = Path(root)
        self.derived = derived
        self.manifest = read_manifest(self.root, required=tuple(REQUIRED_FIELDS))
        self._load = cache(self._load_uncached)
        self._last_read: tuple[tuple, Predictions] | None = None

    def predictions(self, path: str | Path) -> Predictions:
        """A prediction file read and validated against this folder's suites.

        The last file read is kept while it is unchanged on disk (same path, device, inode,
        size and modification time), so verifying an entry and then making its explorer file
        (``leaderboard --data``) read it once, not twice.
        """
        st = os.stat(path)
        key = (os.fspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if self._last_read is not None and self._last_read[0] == key:
            return self._last_read[1]
        self._last_read = None  # free the last file before reading the next
        read = read_predictions(path, self.manifest, self.ids)
        self._last_read = (key, read)
        return read

    def preload(self, stop: Callable[[], bool], names: Iterable[str] | None = None) -> None:
        """Load suites ahead of need, in order, until ``stop()`` or all are loaded.

        Called while a large prediction file is parsed on other threads, so the loads cost no
        wall time as long as a core is free: ``names`` (default: every suite, in manifest
        order) should be the suites the file covers (``score_file`` passes those seen in a
        sample of it), since a suite loaded for nothing takes its time from the parse. A suite
        that fails to load is left alone: :meth:`load` raises its error when (and if) the
        suite is asked for, as it would have.
        """
        for name in self.manifest if names is None else names:
            if stop():
                return
            with contextlib.suppress(Exception):  # the scorer raises it again, in place
                self.load(name)

    def path(self, name: str) -> Path:
        """The Parquet file of a suite."""
        return self.root / self.manifest[name]["path"]

    def ids(self, name: str) -> pa.Array:
        """Row ids of a suite (reads only the id column)."""
        return self.load(name).ids()

    def load(self, name: str) -> SuiteData:
        """The suite's columns; checks the file against its manifest hash."""
        return self._load(name)

    def _load_uncached(self, name: str) -> SuiteData:
        if name not in self.manifest:
            raise UnknownNameError("suite", name, self.manifest)
        path = self.path(name)
        if not path.is_file():
            raise DataError(f"{path}: missing; rebuild the folder with `consistency-bench build`")
        payload = path.read_bytes()
        digest = hashlib.sha256(payload).hexdigest()
        if digest != self.manifest[name]["sha256"]:
            raise DataError(
                f"{path}: sha256 {digest[:16]}... does not match suites.json "
                f"({self.manifest[name]['sha256'][:16]}...): the file changed after the build"
            )
        # ParquetFile, not pq.read_table: the latter imports pandas (0.3 s) and reads through
        # the dataset layer; the hash-checked bytes are kept for columns read later.
        buffer = pa.BufferReader(payload)
        coded = pq.ParquetFile(pa.BufferReader(payload),
                               read_dictionary=[*CODED_COLUMNS, "source_file"])
        return SuiteData(name, self.manifest[name], pq.ParquetFile(buffer), coded, self.derived)

    def content_hash(self, name: str) -> str:
        """sha256 of the suite's Parquet file (as recorded and verified)."""
        return self.manifest[name]["sha256"]


def align(data: SuiteData, preds: SuitePredictions) -> Aligned | str:
    """Align predictions with rows; a reason string when rows are missing."""
    n = len(data.group)
    if preds.rows is not None:  # the reader matched every id against the suite already
        missing = n - len(preds.rows)
        if missing:
            return f"{missing} of {n} rows missing from the prediction file"
        order = np.empty(n, dtype=np.int64)
        order[preds.rows] = np.arange(n)
    elif len(preds.ids) == n and preds.ids.equals(ids := data.ids()):
        return Aligned(pred=preds.pred, probs=preds.probs)  # rows in suite order: no hashing
    else:
        ids = data.ids()
        positions = pc.index_in(ids, value_set=preds.ids)
        missing = positions.null_count
        if missing:
            return f"{missing} of {len(ids)} rows missing from the prediction file"
        order = int64(positions)
    probs = preds.probs[order] if preds.probs is not None else None
    return Aligned(pred=preds.pred[order], probs=probs)


def score_suite(data: SuiteData, aligned: Aligned, options: ScoreOptions) -> dict:
    """The results entry of one suite."""
    return scored_suite(data, aligned, options)[0]


def scored_suite(data: SuiteData, aligned: Aligned,
                 options: ScoreOptions) -> tuple[dict, Mapping[str, float] | None]:
    """The results entry of one suite, and the per-unit outcomes of its ranked score."""
    entry, units, _ = score_with_originals(data, aligned, options)
    return entry, units


@dataclass(frozen=True)
class SuiteOriginals:
    """A suite's original rows, for the per-task degenerate statistics (:func:`task_stats`).

    Attributes:
        task: The suite's task.
        keys: Text identity of each original (:meth:`SuiteData.original_keys`: an Arrow
            string array; any sequence of strings will do).
        gold: Their gold labels (-1 unlabelled).
        pred: Their predictions.

    """

    task: str
    keys: Sequence[str] | pa.Array
    gold: np.ndarray
    pred: np.ndarray


def score_with_originals(data: SuiteData, aligned: Aligned, options: ScoreOptions
            ) -> tuple[dict, Mapping[str, float] | None, SuiteOriginals | None]:
    """The results entry, the per-unit outcomes and the originals of one suite."""
    info = data.info
    result = get_scorer(info["kind"])(data, aligned, options)
    originals = None
    if result.originals is not None:
        rows = np.asarray(result.originals, dtype=np.int64)
        originals = SuiteOriginals(info["task"], data.original_keys(rows), data.gold[rows],
                                   aligned.pred[rows])
    if result.consistent is not None:  # a single-label suite cannot be ranked on accuracy
        labels = np.unique(data.gold[data.gold >= 0])
        result = replace(result, consistent=replace(result.consistent,
                                                    single_label=len(labels) < 2))
    entry = {
        "family": info["family"],
        "task": info["task"],
        "kind": info["kind"],
        "version": info["version"],
        "content_hash": info["sha256"],
        "main_metric": info["main_metric"],
        "main_score": _finite(result.main_score),
        "higher_is_better": info["higher_is_better"],
        "n": result.n,
        "ci95": list(result.ci95) if result.ci95 is not None else None,
        "metrics": result.metrics if result.consistent is None else {
            **result.metrics, "consistent_accuracy_n": len(result.consistent.per_unit),
            "consistent_accuracy_unbalanced": result.consistent.unbalanced},
        **consistent_keys(result.consistent),
        "source_files": data.source_files(),
    }
    if result.best_near is not None:
        entry["best_near"] = result.best_near
    return entry, result.units, originals


def task_stats(originals: Mapping[str, SuiteOriginals]) -> dict[str, dict]:
    """Per task, the degenerate statistics over its *distinct* originals (results ``tasks``).

    The originals of the task's scored suites where the tests can tell (labelled, not >= 95%
    one gold class: :attr:`OriginalStats.testable`; BECEL's negational and one-class symmetric
    sets cannot) are pooled, suites by name and rows in order, and each distinct text counts
    once (:func:`consistency_bench.bench.metrics.consistent.originals.pooled_original_stats`). The
    leaderboard judges an
    entry degenerate once per task on these (docs/leaderboard.md). A task none of whose suites
    is testable has ``n_original`` 0 and lists its suites under ``untestable_suites``.
    """
    by_task: dict[str, tuple[list[str], list[str]]] = {}
    for name in sorted(originals):
        part = originals[name]
        pooled, left_out = by_task.setdefault(part.task, ([], []))
        (pooled if original_stats(part.pred, part.gold).testable else left_out).append(name)
    out = {}
    for task, (names, left_out) in sorted(by_task.items()):
        parts = [originals[n] for n in names]
        if parts:
            codes = _key_codes([p.keys for p in parts])
            gold = np.concatenate([p.gold for p in parts])
            stats = pooled_original_stats(codes, gold, np.concatenate([p.pred for p in parts]))
        else:
            gold, stats = np.zeros(0, np.int64), original_stats(np.zeros(0), np.zeros(0))
        out[task] = {**stats.as_metrics(), "n_original_rows": int((gold >= 0).sum()),
                     "suites": names, "untestable_suites": left_out}
    return out


def _key_codes(keys: Sequence[Sequence[str] | pa.Array]) -> np.ndarray:
    """One integer per key of the concatenated ``keys``, numbered in order of first appearance.

    Arrow string arrays (what :meth:`SuiteData.original_keys` gives) are encoded by pyarrow;
    Python strings by a dictionary. Both number the same keys the same way.
    """
    if all(isinstance(k, pa.Array) for k in keys):
        arrays = [k for k in keys if len(k)]
        if not arrays:
            return np.zeros(0, dtype=np.int64)
        if len({a.type for a in arrays}) > 1:
            arrays = [a.cast(pa.large_string()) for a in arrays]
        return int64(pc.dictionary_encode(pa.concat_arrays(arrays)).indices)
    numbering: dict[str, int] = {}
    return np.fromiter((numbering.setdefault(k, len(numbering))
                        for part in keys
                        for k in (part.to_pylist() if isinstance(part, pa.Array) else part)),
                       dtype=np.int64)


def consistent_keys(consistent: Consistent | None) -> dict[str, float | None]:
    """The ranked score's three results keys (docs/contracts.md); ``None`` when undefined."""
    if consistent is None:
        return dict.fromkeys(
            ("consistent_accuracy", "consistent_accuracy_chance", "consistent_accuracy_cc")
        )
    return {
        "consistent_accuracy": consistent.value,
        "consistent_accuracy_chance": consistent.chance,
        "consistent_accuracy_cc": consistent.chance_corrected,
    }


def _finite(value: float) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def score_predictions(
    predictions: Predictions,
    folder: SuiteFolder,
    options: ScoreOptions | None = None,
    suites: list[str] | None = None,
) -> dict:
    """Score validated predictions against a suite folder; the results JSON as a dict."""
    return _score_with_units(predictions, folder, options, suites)[0]


def _score_with_units(
    predictions: Predictions,
    folder: SuiteFolder,
    options: ScoreOptions | None,
    suites: list[str] | None,
) -> tuple[dict, dict[str, Units]]:
    """:func:`score_predictions`'s results, and each suite's per-unit outcomes (if any)."""
    options = options or ScoreOptions()
    names = suites or sorted(folder.manifest)
    for name in names:
        if name not in folder.manifest:
            raise UnknownNameError("suite", name, folder.manifest)

    # a suite's entry, its per-unit outcomes and originals, or why it is skipped
    def score_one(name: str) -> tuple[dict, object, SuiteOriginals | None] | str:
        data = folder.load(name)
        aligned = align(data, predictions.suites[name])
        if isinstance(aligned, str):
            return aligned
        return score_with_originals(data, aligned, options)

    covered = [name for name in names if name in predictions.suites]
    with ThreadPoolExecutor(max_workers=SCORE_THREADS) as pool:  # results in suite order
        outcomes = dict(zip(covered, pool.map(score_one, covered), strict=True))
    scored, skipped, originals, units = {}, {}, {}, {}
    for name in names:
        outcome = outcomes.get(name, "no predictions for this suite")
        if isinstance(outcome, str):
            skipped[name] = outcome
        else:
            scored[name] = outcome[0]
            if isinstance(outcome[1], Units):
                units[name] = outcome[1]
            if outcome[2] is not None:
                originals[name] = outcome[2]
    return {
        "schema_version": SCHEMA_VERSION,
        "harness_version": __version__,
        "predictions": {
            "path": predictions.path,
            "sha256": predictions.sha256,
            "rows": predictions.rows,
            "invalid_answers": predictions.invalid_answers(),
        },
        "data": {"path": str(folder.root)},
        "seed": options.seed,
        "n_boot": options.n_boot,
        "params": dict(options.params),
        "suites": scored,
        "skipped": skipped,
        "tasks": task_stats(originals),
    }, units


def score_file(
    predictions_path: str | Path,
    data_dir: str | Path,
    *,
    seed: int = 0,
    n_boot: int = 10_000,
    options: ScoreOptions | None = None,
    suites: list[str] | None = None,
    derived: ArrowCache | None = None,
) -> dict:
    """Validate and score a prediction file; the results JSON as a dict.

    ``derived``: the cache of the suites' derived columns (:func:`score_cache`), which the
    ``score`` command and :func:`consistency_bench.api.score` pass; ``None`` (every other
    caller: ``submit``, ``rescore``, ``review``, ``verify``) computes them from the built folder.

    Raises:
        PredictionFileError: The file is malformed (nothing is scored).
        DataError: The suite folder is missing or does not match its manifest.

    """
    folder = SuiteFolder(data_dir, derived=derived)
    options = options or ScoreOptions(seed=seed, n_boot=n_boot)
    predictions = _read_preloading(predictions_path, folder, suites)
    return score_predictions(predictions, folder, options, suites)


def _read_preloading(predictions_path: str | Path, folder: SuiteFolder,
                     suites: list[str] | None) -> Predictions:
    """Read and validate the file, loading its suites meanwhile."""

    def meanwhile(done: Callable[[], bool]) -> None:  # while a large JSONL file is parsed
        scoring_imports()
        wanted = sampled_suites(predictions_path, folder.manifest)
        folder.preload(done, [n for n in wanted if not suites or n in suites])

    return read_predictions(predictions_path, folder.manifest, folder.ids,
                            meanwhile=meanwhile)


def score_file_recomputed(predictions_path: str | Path, data_dir: str | Path
                          ) -> tuple[dict, Recomputed]:
    """:func:`score_file`'s results, and from the same pass what :func:`recompute` gives.

    The :class:`Recomputed` is the one :func:`recompute` gives for the file, its ``ci95``
    intervals aside (they come from 10,000 resamples here).

    ``review`` scores a pull request's entry once with it: the results are stored, and the
    :class:`Recomputed` becomes the entry's verified-cells record (``leaderboard/cache``),
    whose comparison leaves the intervals out.

    Raises:
        PredictionFileError: The file is malformed (nothing is scored).
        DataError: The suite folder is missing or does not match its manifest.

    """
    folder = SuiteFolder(data_dir)
    predictions = _read_preloading(predictions_path, folder, None)
    results, units = _score_with_units(predictions, folder, ScoreOptions(seed=0, n_boot=10_000),
                                       None)
    return results, Recomputed(predictions.sha256, results["suites"], units, folder.manifest,
                               tuple(sorted(predictions.suites)), results["tasks"])


@dataclass(frozen=True)
class Recomputed:
    """A stored prediction file scored again (:func:`recompute`).

    Attributes:
        sha256: Hash of the file's content (uncompressed for ``.gz``), as results record it.
        suites: Results entry of every fully covered suite (``ci95`` from few resamples).
        units: Per-unit outcomes of the ranked score, by suite, where the scorer gives them
            (:class:`~consistency_bench.bench.scorers.contract.Units`: a mapping, and its arrays).
        manifest: The built folder's manifest entries, by suite.
        touched: Every suite the file has a row of (covered or not): its ids were checked
            against these suites, so the file's validity depends on them.
        tasks: The per-task statistics over distinct originals (:func:`task_stats`) of the
            suites in ``suites``.

    """

    sha256: str
    suites: dict[str, dict]
    units: dict[str, Units]
    manifest: Mapping[str, Mapping]
    touched: tuple[str, ...] = ()
    tasks: dict[str, dict] = field(default_factory=dict)


def recompute(
    predictions_path: str | Path,
    data_dir: str | Path | SuiteFolder,
    suites: list[str] | None = None,
    n_boot: int = 100,
) -> Recomputed:
    """Score a stored prediction file again, for verifying and for paired tests.

    Every point estimate is what ``score`` computes; only ``ci95`` differs (``n_boot``
    resamples instead of 10,000), so callers compare everything but ``ci95``. Pass one
    :class:`SuiteFolder` for many files: each suite is then loaded (and hash-checked) once.
    """
    folder = data_dir if isinstance(data_dir, SuiteFolder) else SuiteFolder(data_dir)
    predictions = folder.predictions(predictions_path)
    options = ScoreOptions(n_boot=n_boot)
    entries: dict[str, dict] = {}
    out: dict[str, Units] = {}
    originals: dict[str, SuiteOriginals] = {}
    for name, preds in predictions.suites.items():
        if (suites and name not in suites) or name not in folder.manifest:
            continue
        data = folder.load(name)
        aligned = align(data, preds)
        if isinstance(aligned, str):
            continue
        entries[name], units, found = score_with_originals(data, aligned, options)
        if isinstance(units, Units):
            out[name] = units
        if found is not None:
            originals[name] = found
    return Recomputed(predictions.sha256, entries, out, folder.manifest,
                      tuple(sorted(predictions.suites)), task_stats(originals))


def unit_outcomes(
    predictions_path: str | Path,
    data_dir: str | Path,
    suites: list[str] | None = None,
) -> dict[str, dict[str, float]]:
    """Per-unit outcomes of every fully covered suite whose scorer provides them.

    Used by the leaderboard for paired tests (McNemar / paired bootstrap) between neighbouring
    entries on the units both were scored on.
    """
    return {name: dict(units) for name, units in
            recompute(predictions_path, data_dir, suites).units.items()}
