"""Score a prediction file against a built suite folder.

The layers: :mod:`bench.predictions` validates the file; this module aligns each suite's
predictions with its rows and calls the scorer registered for the suite's metric kind
(``SCORERS``, filled by the family modules in :mod:`bench.scorers`); scorers call the pure
metric functions of :mod:`bench.metrics`. The result follows the results contract in
docs/contracts.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import __version__
from bench.arrays import indices, int64
from bench.errors import DataError, DuplicateNameError, UnknownNameError
from bench.manifest import REQUIRED_FIELDS, read_manifest
from bench.metrics.consistent import Consistent
from bench.predictions import Predictions, SuitePredictions, read_predictions, sampled_suites

SCHEMA_VERSION = 1
#: Suites scored at once, on threads: numpy and pyarrow release the GIL in the large
#: operations, and a suite's scorer touches only its own columns and its own seeded random
#: generator, so the results are those of scoring one suite after the other (tested).
SCORE_THREADS = 2


#: Columns every scorer needs; the others (texts, constraints, ...) are read on first use.
CORE_COLUMNS = ("id", "group", "variant", "label")
#: Of those, the columns only needed as codes: read dictionary-encoded (the strings of every
#: row are never built) and not kept as Arrow.
CODED_COLUMNS = ("group", "variant")


class SuiteData:
    """One built suite, as columns.

    Only :data:`CORE_COLUMNS` are decoded when a suite is loaded (:data:`CODED_COLUMNS` as
    dictionary codes, never as a string per row); any other column is read from the (already
    hash-checked) file on first use, so scoring never decodes the texts.

    Args:
        name: Suite name.
        info: The suite's ``suites.json`` entry.
        parquet: The suite's Parquet file.
        coded: The same file opened with ``read_dictionary`` for :data:`CODED_COLUMNS` (and
            ``source_file``); ``parquet`` when not given.

    Attributes:
        name: Suite name.
        info: The suite's ``suites.json`` entry.
        group: Dense int64 group codes, one per row.
        variant: Variant string per row (object array built on access; the scorers compare
            ``variant_codes``).
        variant_codes: Dense int64 code per row into ``variant_names``.
        variant_names: The distinct variants, in order of first appearance.
        gold: Gold label index per row, -1 where the label is null.

    """

    def __init__(self, name: str, info: dict, parquet: pq.ParquetFile,
                 coded: pq.ParquetFile | None = None):
        self.name, self.info = name, info
        self._parquet = parquet
        self._coded = coded if coded is not None else parquet
        core = self._coded.read(columns=CORE_COLUMNS, use_threads=False)  # small: no threads
        self._arrow = {c: core.column(c) for c in CORE_COLUMNS if c not in CODED_COLUMNS}
        self._table: pa.Table | None = None
        self.group, self._group_dictionary = _codes(core.column("group"), as_list=False)
        self.variant_codes, self.variant_names = _codes(core.column("variant"))
        self._lookup = self.variant_names + [None]  # code -1 (null) -> None
        self.gold = int64(self._arrow["label"].combine_chunks())

    def __repr__(self) -> str:
        return f"SuiteData(name={self.name!r}, rows={len(self.group)})"

    @property
    def variant(self) -> np.ndarray:
        """Variant string per row (object array built on each access; scorers use codes)."""
        return np.asarray(self._lookup, dtype=object)[self.variant_codes]

    @property
    def label_names(self) -> list[str]:
        """The task's label names."""
        return list(self.info["label_names"])

    @property
    def table(self) -> pa.Table:
        """Every column of the suite's Parquet file, in file order (read on first use)."""
        if self._table is None:
            self._table = self._parquet.read()
        return self._table

    def arrow(self, name: str) -> pa.ChunkedArray:
        """One column as Arrow, read from the file on first use."""
        if name not in self._arrow:
            self._arrow[name] = self._parquet.read(columns=[name], use_threads=False).column(0)
        return self._arrow[name]

    def column(self, name: str) -> np.ndarray:
        """Any column as a numpy array (strings and lists become object arrays)."""
        column = self.arrow(name).combine_chunks()
        if pa.types.is_integer(column.type) and not column.null_count:
            return int64(column)
        return _objects(column.to_pylist())

    def codes(self, name: str) -> tuple[np.ndarray, list]:
        """A string column as dense int64 codes (null -> -1) and its distinct values.

        The distinct values are in order of first appearance; the scorers compare codes rather
        than strings, and parse each distinct value once.
        """
        return _codes(self.arrow(name))

    def source_files(self) -> list[str]:
        """The distinct ``source_file`` values, sorted."""
        if "source_file" in self._arrow:
            return sorted(set(pc.unique(self._arrow["source_file"]).to_pylist()))
        column = self._coded.read(columns=["source_file"], use_threads=False).column(0)
        column = column.combine_chunks()
        if pa.types.is_dictionary(column.type):  # read dictionary-encoded: no string per row
            column = column.dictionary.take(pc.unique(column.indices))
        return sorted(set(pc.unique(column).to_pylist()))

    def variant_mask(self, variants) -> np.ndarray:
        """Boolean mask of the rows whose variant is one of ``variants``."""
        mask = np.zeros(len(self.variant_codes), dtype=bool)
        for variant in variants:
            mask |= self.is_variant(variant)
        return mask

    def variants_of(self, rows: np.ndarray) -> set:
        """The distinct variants (``None`` for a null) of ``rows``."""
        return {self._lookup[code] for code in np.unique(self.variant_codes[rows]).tolist()}

    def ids(self) -> pa.Array:
        """The row ids."""
        return self._arrow["id"].combine_chunks()

    def is_variant(self, variant: str) -> np.ndarray:
        """Boolean mask of the rows of ``variant`` (integer comparison, no string compares)."""
        if variant not in self.variant_names:
            return np.zeros(len(self.variant_codes), dtype=bool)
        return self.variant_codes == self.variant_names.index(variant)

    def units(self, rows: np.ndarray, outcomes: np.ndarray) -> Mapping[str, float]:
        """Per-unit outcomes keyed by the ``group`` of each row in ``rows`` (one per group).

        A read-only mapping built on first access: ``score`` never reads it (the leaderboard's
        paired tests do), and building it costs a Python string per unit.
        """
        return Units(self._group_dictionary, self.group[np.asarray(rows, dtype=np.int64)],
                     np.asarray(outcomes, dtype=float))


class Units(Mapping):
    """Per-unit outcomes (group name -> outcome), built into a dict on first access."""

    def __init__(self, names: pa.Array, codes: np.ndarray, outcomes: np.ndarray):
        if len(codes) != len(outcomes):
            raise ValueError(f"{len(codes)} units but {len(outcomes)} outcomes")
        self._parts: tuple | None = (names, codes, outcomes)
        self._dict: dict[str, float] | None = None

    def _built(self) -> dict[str, float]:
        if self._dict is None:
            names, codes, outcomes = self._parts
            groups = names.take(indices(codes)).to_pylist()
            self._dict = dict(zip(groups, outcomes.tolist(), strict=True))
            self._parts = None
        return self._dict

    def __getitem__(self, key: str) -> float:
        return self._built()[key]

    def __iter__(self):
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def __repr__(self) -> str:
        return f"Units({self._built()!r})"


# Loading uses no ``pa.array`` / ``pa.scalar`` and no compute call with a Python scalar: each
# of those makes pyarrow import pandas (0.3 s CPU, 40 MiB), which scoring does not need.


def _objects(values: list) -> np.ndarray:
    """A 1-d object array of ``values`` (lists stay list elements)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


def _codes(column: pa.ChunkedArray, as_list: bool = True) -> tuple[np.ndarray, list | pa.Array]:
    """Dense int64 codes of a string column (null -> -1) and its distinct values.

    The values are in order of first appearance, as a list (or, with ``as_list=False``, as the
    Arrow array, for a caller that rarely needs them as Python strings). A column read
    dictionary-encoded from Parquet is used as it is when its dictionary has that order and no
    unused value (checked, O(n)); otherwise it is decoded and encoded again.
    """
    column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        codes = int64(column.indices)
        if _first_appearance(codes, len(column.dictionary)):
            values = column.dictionary
            return codes, values.to_pylist() if as_list else values
        column = column.dictionary.take(column.indices)
    encoded = pc.dictionary_encode(column)
    values = encoded.dictionary
    return int64(encoded.indices), values.to_pylist() if as_list else values


def _first_appearance(codes: np.ndarray, n_values: int) -> bool:
    """Whether ``codes`` use each of ``0..n_values-1``, numbered in order of first appearance.

    True when each code is at most one more than the largest code before it (nulls, -1, make
    it False: the re-encoding handles them).
    """
    if not len(codes):
        return n_values == 0
    if codes.min() < 0:
        return False
    highest = np.maximum.accumulate(codes)
    return bool(codes[0] == 0 and (codes[1:] <= highest[:-1] + 1).all()
                and highest[-1] == n_values - 1)


@dataclass(frozen=True)
class Aligned:
    """Predictions aligned with a suite's rows.

    Attributes:
        pred: Predicted label index per row; -1 for an invalid answer.
        probs: ``(n_rows, n_labels)`` probabilities when every row has them, else ``None``.

    """

    pred: np.ndarray
    probs: np.ndarray | None


@dataclass(frozen=True)
class ScoreOptions:
    """Scoring parameters shared by every scorer.

    Attributes:
        seed: Seed of the bootstrap.
        n_boot: Bootstrap resamples.
        params: Family parameters, e.g. ``{"calm_theta": 1.0}``.

    """

    seed: int = 0
    n_boot: int = 10_000
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteScore:
    """What a scorer returns for one suite.

    Attributes:
        main_score: The suite's main metric, a fraction in [0, 1].
        n: Units the main score averages over.
        ci95: 95% bootstrap interval of the main score.
        metrics: Every named score, count and breakdown.
        best_near: When set, the best score is the one closest to this value (e.g. chance).
        units: Per-unit outcome (unit id -> 1.0 / 0.0) of the consistent accuracy (the
            ranked score), for paired tests and rank bootstraps between submissions; not
            written into the results JSON.
        consistent: Consistent accuracy and its chance level (bench.metrics.consistent).

    """

    main_score: float
    n: int
    ci95: tuple[float, float] | None
    metrics: dict[str, object]
    best_near: float | None = None
    units: Mapping[str, float] | None = field(default=None, repr=False)
    consistent: Consistent | None = field(default=None, repr=False)


Scorer = Callable[[SuiteData, Aligned, ScoreOptions], SuiteScore]
SCORERS: dict[str, Scorer] = {}


def register_scorer(kind: str, scorer: Scorer) -> Scorer:
    """Register the scorer of a metric kind; a kind is registered once."""
    if kind in SCORERS:
        raise DuplicateNameError(f"scorer for kind {kind!r} is already registered")
    SCORERS[kind] = scorer
    return scorer


def get_scorer(kind: str) -> Scorer:
    """The scorer of a metric kind, with a did-you-mean error."""
    import bench.scorers  # noqa: F401  (registers the family scorers)

    try:
        return SCORERS[kind]
    except KeyError:
        raise UnknownNameError("metric kind", kind, SCORERS) from None


class SuiteFolder:
    """A built suite folder: its manifest and lazily loaded, hash-checked suites."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.manifest = read_manifest(self.root, required=tuple(REQUIRED_FIELDS))
        self._load = cache(self._load_uncached)

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
            try:
                self.load(name)
            except Exception:  # noqa: BLE001, S110 (raised again by load() when asked for)
                pass

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
        return SuiteData(name, self.manifest[name], pq.ParquetFile(buffer), coded)

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
    info = data.info
    result = get_scorer(info["kind"])(data, aligned, options)
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
    return entry, result.units


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
    options = options or ScoreOptions()
    names = suites or sorted(folder.manifest)
    for name in names:
        if name not in folder.manifest:
            raise UnknownNameError("suite", name, folder.manifest)

    def score_one(name: str) -> dict | str:  # a results entry, or why the suite is skipped
        data = folder.load(name)
        aligned = align(data, predictions.suites[name])
        return aligned if isinstance(aligned, str) else score_suite(data, aligned, options)

    covered = [name for name in names if name in predictions.suites]
    with ThreadPoolExecutor(max_workers=SCORE_THREADS) as pool:  # results in suite order
        outcomes = dict(zip(covered, pool.map(score_one, covered), strict=True))
    scored, skipped = {}, {}
    for name in names:
        outcome = outcomes.get(name, "no predictions for this suite")
        if isinstance(outcome, str):
            skipped[name] = outcome
        else:
            scored[name] = outcome
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
    }


def score_file(
    predictions_path: str | Path,
    data_dir: str | Path,
    *,
    seed: int = 0,
    n_boot: int = 10_000,
    options: ScoreOptions | None = None,
    suites: list[str] | None = None,
) -> dict:
    """Validate and score a prediction file; the results JSON as a dict.

    Raises:
        PredictionFileError: The file is malformed (nothing is scored).
        DataError: The suite folder is missing or does not match its manifest.

    """
    folder = SuiteFolder(data_dir)
    options = options or ScoreOptions(seed=seed, n_boot=n_boot)

    def meanwhile(done: Callable[[], bool]) -> None:  # while a large JSONL file is parsed
        wanted = sampled_suites(predictions_path, folder.manifest)
        folder.preload(done, [n for n in wanted if not suites or n in suites])

    predictions = read_predictions(predictions_path, folder.manifest, folder.ids,
                                   meanwhile=meanwhile)
    return score_predictions(predictions, folder, options, suites)


@dataclass(frozen=True)
class Recomputed:
    """A stored prediction file scored again (:func:`recompute`).

    Attributes:
        sha256: Hash of the file's content (uncompressed for ``.gz``), as results record it.
        suites: Results entry of every fully covered suite (``ci95`` from few resamples).
        units: Per-unit outcomes of the ranked score, by suite, where the scorer gives them.
        manifest: The built folder's manifest entries, by suite.

    """

    sha256: str
    suites: dict[str, dict]
    units: dict[str, dict[str, float]]
    manifest: Mapping[str, Mapping]


def recompute(
    predictions_path: str | Path,
    data_dir: str | Path,
    suites: list[str] | None = None,
    n_boot: int = 100,
) -> Recomputed:
    """Score a stored prediction file again, for verifying and for paired tests.

    Every point estimate is what ``score`` computes; only ``ci95`` differs (``n_boot``
    resamples instead of 10,000), so callers compare everything but ``ci95``.
    """
    folder = SuiteFolder(data_dir)
    predictions = read_predictions(predictions_path, folder.manifest, folder.ids)
    options = ScoreOptions(n_boot=n_boot)
    entries: dict[str, dict] = {}
    out: dict[str, dict[str, float]] = {}
    for name, preds in predictions.suites.items():
        if (suites and name not in suites) or name not in folder.manifest:
            continue
        data = folder.load(name)
        aligned = align(data, preds)
        if isinstance(aligned, str):
            continue
        entries[name], units = scored_suite(data, aligned, options)
        if units is not None:
            out[name] = dict(units)
    return Recomputed(predictions.sha256, entries, out, folder.manifest)


def unit_outcomes(
    predictions_path: str | Path,
    data_dir: str | Path,
    suites: list[str] | None = None,
) -> dict[str, dict[str, float]]:
    """Per-unit outcomes of every fully covered suite whose scorer provides them.

    Used by the leaderboard for paired tests (McNemar / paired bootstrap) between neighbouring
    entries on the units both were scored on.
    """
    return recompute(predictions_path, data_dir, suites).units
