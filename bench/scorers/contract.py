"""The scorer contract: what a family scorer receives and returns, and the registry.

A scorer (``bench/scorers/<family>.py``) imports only this module from the scoring layer;
``consistency_bench.bench.scoring.engine`` orchestrates (loads suites, aligns predictions, calls the
scorers) and
re-exports these names. This module imports neither ``consistency_bench.bench.scoring.engine`` nor a
scorer, so there
is no import circle (``tests/test_layers.py``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from consistency_bench.bench.io.arrays import indices, int64
from consistency_bench.bench.io.arrow_cache import ArrowCache
from consistency_bench.bench.io.digest import add_files
from consistency_bench.bench.metrics.consistent.score import Consistent
from consistency_bench.bench.registries.registry import Registry

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
        derived: Where the suite's core columns and :meth:`memo` values are kept between
            processes (:data:`DERIVED_CACHE_ENV`), keyed on the suite file's sha256 (``info``)
            and on the code that derives them; ``None``: computed in every process.

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
                 coded: pq.ParquetFile | None = None, derived: ArrowCache | None = None):
        self.name, self.info = name, info
        self._parquet = parquet
        self._coded = coded if coded is not None else parquet
        self._derived_cache = derived if info.get("sha256") else None
        core = self._core()
        self._arrow = {c: core.column(c) for c in CORE_COLUMNS if c not in CODED_COLUMNS}
        self._table: pa.Table | None = None
        self._ids: pa.Array | None = None  # ids(): combine_chunks copies even one chunk
        self.group, self._group_dictionary = _codes(core.column("group"), as_list=False)
        self.variant_codes, self.variant_names = _codes(core.column("variant"))
        self._lookup = [*self.variant_names, None]  # code -1 (null) -> None
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
    def column_names(self) -> list[str]:
        """The names of the suite's columns, from the file's schema (no column is read)."""
        return list(self._parquet.schema_arrow.names)

    @property
    def table(self) -> pa.Table:
        """Every column of the suite's Parquet file, in file order (read on first use)."""
        if self._table is None:
            self._table = self._parquet.read()
        return self._table

    def arrow(self, name: str) -> pa.ChunkedArray:
        """One column as Arrow, read from the file on first use."""
        if name not in self._arrow:
            self._arrow[name] = self._derived(
                f"column:{name}",
                lambda: self._parquet.read(columns=[name], use_threads=False),
                lambda t: t.column_names == [name] and t.num_rows == len(self.gold)).column(0)
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
        return sorted(set(self._derived("source_files", self._source_files).to_pylist()))

    def _source_files(self) -> pa.Array:
        column = self._coded.read(columns=["source_file"], use_threads=False).column(0)
        column = column.combine_chunks()
        if pa.types.is_dictionary(column.type):  # read dictionary-encoded: no string per row
            column = column.dictionary.take(pc.unique(column.indices))
        return pc.unique(column)

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
        """The row ids, as one array (the column's only chunk, or its chunks joined once)."""
        if self._ids is None:
            column = self._arrow["id"]
            self._ids = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        return self._ids

    def is_variant(self, variant: str) -> np.ndarray:
        """Boolean mask of the rows of ``variant`` (integer comparison, no string compares)."""
        if variant not in self.variant_names:
            return np.zeros(len(self.variant_codes), dtype=bool)
        return self.variant_codes == self.variant_names.index(variant)

    def original_keys(self, rows: np.ndarray) -> pa.Array:
        """The text identity of each row in ``rows``, the same in every suite of a task.

        ``text``, then ``text_pair`` (or, where a suite formats its inputs, as CALM does, the
        unformatted ``raw_text`` / ``raw_text_pair``), a null read as ``""``, joined by a unit
        separator: an Arrow string array, built by pyarrow (no Python string per row). Kept per
        suite file and rows (:meth:`memo`): every entry scored against the suite asks for the
        same rows, and reading the text columns is most of the cost.
        """
        return self.memo("original_keys", rows, self._original_keys)

    def memo(self, what: str, rows: np.ndarray, compute: Callable[[np.ndarray], object]):
        """``compute(rows)``, kept per suite file, ``what`` and rows (:data:`_KEYS`).

        For what depends on the suite's rows alone, not on the predictions (original keys, the
        cross-fitting halves): every entry scored against the suite asks for the same. With a
        ``derived`` cache, an Arrow array or an int64 numpy array is also kept there, for the next
        process.
        """
        rows = np.asarray(rows, dtype=np.int64)
        # a value read from the cache is kept apart from one computed here: a SuiteData
        # without the cache (verification) never gets a cached value through this memo
        slot = (self.info.get("sha256"), what, hashlib.blake2b(rows.tobytes()).hexdigest(),
                self._derived_cache is not None)
        with _KEYS_LOCK:  # suites are scored on threads
            found = _KEYS.get(slot) if slot[0] else None
            if found is not None:
                _KEYS.move_to_end(slot)
                return found
        value = self._derived(f"{what}:{slot[2]}", lambda: compute(rows))
        if slot[0]:
            with _KEYS_LOCK:
                _KEYS[slot] = value
                while len(_KEYS) > KEYS_CACHED:
                    _KEYS.popitem(last=False)
        return value

    def _core(self) -> pa.Table:
        """The :data:`CORE_COLUMNS` as read from the file (group and variant as dictionaries)."""
        return self._derived(
            "core",
            lambda: self._coded.read(columns=CORE_COLUMNS, use_threads=False).combine_chunks(),
            lambda t: (t.column_names == list(CORE_COLUMNS)
                       and t.num_rows == self._coded.metadata.num_rows))

    def _derived(self, what: str, compute: Callable[[], object],
                 fits: Callable[[pa.Table], bool] | None = None):
        """``compute()``, or what the ``derived`` cache kept of it for this suite file and code.

        The cache keeps a table, an Arrow array or an int64 numpy array; any other value is
        computed in every process. ``fits``: what a kept table must pass to be used (the
        columns and rows of the suite file), else it is computed and stored again.
        """
        code = derived_code_version() if self._derived_cache is not None else None
        if code is None:
            return compute()
        key = hashlib.sha256(f"{code}\0{self.info['sha256']}\0{what}".encode()).hexdigest()
        found = self._derived_cache.get(key)
        if found is not None and (fits is None or fits(found)):
            value = _from_table(found)
            if value is not None:
                return value
        value = compute()
        table = _to_table(value)
        if table is not None:
            self._derived_cache.put(key, table)
        return value

    def _original_keys(self, rows: np.ndarray) -> pa.Array:
        names = self._parquet.schema_arrow.names
        wanted = [raw if raw in names else plain for raw, plain in (
            ("raw_text", "text"), ("raw_text_pair", "text_pair")) if raw in names or plain in names]
        if not wanted:
            raise ValueError(f"suite {self.name}: no text column to identify its originals")
        # read for this only, not kept with the suite's columns: the keys are kept (_KEYS)
        table = self._parquet.read(columns=wanted, use_threads=False)
        take = indices(rows)
        parts = [table.column(c).combine_chunks().take(take) for c in wanted]
        return join_texts(parts, _UNIT_SEPARATOR)

    def group_names(self, rows: np.ndarray) -> list[str]:
        """The ``group`` string of each row in ``rows``."""
        return self._group_dictionary.take(indices(self.group[np.asarray(rows, dtype=np.int64)])
                                           ).to_pylist()

    def units(self, rows: np.ndarray, outcomes: np.ndarray) -> Mapping[str, float]:
        """Per-unit outcomes keyed by the ``group`` of each row in ``rows`` (one per group).

        A read-only mapping built on first access: ``score`` never reads it (the leaderboard's
        paired tests do), and building it costs a Python string per unit.
        """
        return Units(self._group_dictionary, self.group[np.asarray(rows, dtype=np.int64)],
                     np.asarray(outcomes, dtype=float))


#: The environment variable that moves the cache of suites' derived columns (the ``score``
#: command's: core columns, original keys, cross-fitting halves) or turns it off.
DERIVED_CACHE_ENV = "CONSISTENCY_BENCH_SCORE_CACHE"
#: The files whose code derives what the cache keeps (this module: the core columns and the
#: original keys; the scorers: what they ask :meth:`SuiteData.memo` for; the halves), under
#: the ``bench`` package.
DERIVED_CODE = ("scorers", "scoring/engine.py", "metrics/calibration.py", "io/arrays.py",
                "io/arrow_cache.py")


@cache
def derived_code_version() -> str | None:
    """sha256 of the harness and pyarrow versions and of the :data:`DERIVED_CODE` files.

    ``None`` when a file cannot be read (an install without sources): the cache is not used.
    """
    from consistency_bench.bench import __version__

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{__version__}\0{pa.__version__}\0".encode())
    try:
        for part in DERIVED_CODE:
            path = root / part
            files = sorted(path.glob("*.py")) if path.is_dir() else [path]
            if not files:
                return None
            add_files(digest, ((f.relative_to(root).as_posix(), f) for f in files))
    except OSError:
        return None
    return digest.hexdigest()


#: Column names marking a table that holds one array :func:`_to_table` wrapped (a suite's
#: columns never start with a NUL).
_ARRAY, _INT64 = "\0array", "\0int64"


def _to_table(value: object) -> pa.Table | None:
    """``value`` as a table the cache can keep, or ``None`` for a type it does not keep."""
    if isinstance(value, pa.Table):
        return value
    if isinstance(value, pa.Array):
        return pa.Table.from_arrays([value], names=[_ARRAY])
    if isinstance(value, np.ndarray) and value.dtype == np.int64 and value.ndim == 1:
        return pa.Table.from_arrays([indices(value)], names=[_INT64])
    return None


def _from_table(table: pa.Table) -> object:
    """What :func:`_to_table` was given (``None``: not something it makes)."""
    names = table.column_names
    if names == [_ARRAY]:
        column = table.column(0)
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if names == [_INT64]:
        return int64(table.column(0)) if table.column(0).type == pa.int64() else None
    return table


#: What :meth:`SuiteData.memo` keeps for the suites scored last, by (suite sha256, what, rows
#: digest); at most :data:`KEYS_CACHED` items (about two per suite of one built folder: the
#: keys of its originals take tens of MB).
KEYS_CACHED = 128
_KEYS: OrderedDict[tuple[str, str, str], object] = OrderedDict()
_KEYS_LOCK = threading.Lock()


class Units(Mapping):
    """Per-unit outcomes (group name -> outcome), built into a dict on first access.

    Attributes:
        codes: Each unit's group code (its index in the suite's group dictionary), in order.
        outcomes: Each unit's outcome, in the same order; the leaderboard's resamples read
            these two arrays and never build the dict.

    """

    def __init__(self, names: pa.Array, codes: np.ndarray, outcomes: np.ndarray):
        if len(codes) != len(outcomes):
            raise ValueError(f"{len(codes)} units but {len(outcomes)} outcomes")
        self._names = names
        self.codes, self.outcomes = codes, outcomes
        self._dict: dict[str, float] | None = None

    def _built(self) -> dict[str, float]:
        if self._dict is None:
            groups = self._names.take(indices(self.codes)).to_pylist()
            self._dict = dict(zip(groups, self.outcomes.tolist(), strict=True))
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


def _separator(text: str) -> pa.Scalar:
    """``text`` as an Arrow string scalar, made from buffers (``pa.scalar`` imports pandas)."""
    data = text.encode("utf-8")
    offsets = np.asarray([0, len(data)], dtype=np.int32)
    array = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(offsets),
                                                   pa.py_buffer(data)])
    return array[0]


#: What joins a row's texts into its identity (:meth:`SuiteData.original_keys`).
_UNIT_SEPARATOR = "\x1f"


def join_texts(columns: list[pa.Array], separator: str) -> pa.Array:
    """Row by row, the strings of ``columns`` joined by ``separator``, a null read as ``""``.

    What ``separator.join("" if v is None else v for v in row)`` gives for each row, computed
    by pyarrow (``binary_join_element_wise``; one column is joined with nothing, which turns
    its nulls into ``""``).
    """
    return pc.binary_join_element_wise(*columns, _separator(separator),
                                       null_handling="replace", null_replacement="")


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
        consistent: Consistent accuracy and its chance level
        (consistency_bench.bench.metrics.consistent).
        originals: Row positions of the originals the degenerate statistics are taken over
            (``metrics.n_original`` ...); pooled per task by the scoring layer.

    """

    main_score: float
    n: int
    ci95: tuple[float, float] | None
    metrics: dict[str, object]
    best_near: float | None = None
    units: Mapping[str, float] | None = field(default=None, repr=False)
    consistent: Consistent | None = field(default=None, repr=False)
    originals: np.ndarray | None = field(default=None, repr=False)


Scorer = Callable[[SuiteData, Aligned, ScoreOptions], SuiteScore]
SCORERS: Registry[Scorer] = Registry("metric kind")


def register_scorer(kind: str, scorer: Scorer) -> Scorer:
    """Register the scorer of a metric kind; a kind is registered once."""
    return SCORERS.register(kind, scorer)
