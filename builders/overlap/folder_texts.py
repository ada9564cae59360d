"""The test texts of a built folder, as one :class:`~consistency_bench.builders.overlap.near_duplicates.TextIndex`.

Every row of every suite in the folder's manifest contributes:

* its texts: ``text`` and ``text_pair``; for CALM rows (they carry ``raw_text``) the sentences
  ``raw_text`` and ``raw_text_pair`` instead of the formatted inputs, which add only the
  indicator words and signal marks to them (``tests/test_fewshot.py`` checks that);
* the pair of its two texts, when it has two (a row as a whole);
* for an additive ``merged`` row, the pair of the two texts it joins instead of its own text
  (``merge_texts``: the two texts and one space, so its words are theirs).

Suites are read in name order, their text columns dictionary-encoded (a CALM sentence is
stored once per Parquet chunk, not once per format); the index depends on the folder's suites
only.
"""  # noqa: E501

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from consistency_bench.builders.overlap.near_duplicates import TextIndex


@dataclass(frozen=True)
class SuiteTexts:
    """One suite's two text columns (dictionary-encoded) and where its pairs' texts are.

    Attributes:
        columns: The first and second text column (a merged row's own text nulled).
        first_rows: Row position of each pair's first text.
        first_side: Its column (0: first, 1: second).
        second_rows: Row position of each pair's second text.
        second_side: Its column.

    """

    columns: tuple[pa.ChunkedArray, pa.ChunkedArray]
    first_rows: np.ndarray
    first_side: np.ndarray
    second_rows: np.ndarray
    second_side: np.ndarray


def _columns(path: Path) -> tuple[str, str]:
    names = pq.read_schema(path).names
    return ("raw_text", "raw_text_pair") if "raw_text" in names else ("text", "text_pair")


def read_suite(path: Path, kind: str) -> SuiteTexts:
    """The texts of one suite's Parquet file and where its pairs are (see the module docstring)."""
    first, second = _columns(path)
    extra = ["id", "antecedent_ids"] if kind == "additive" else []
    table = pq.read_table(path, columns=[first, second, "variant", *extra],
                          read_dictionary=[first, second, "variant"])
    rows = np.arange(table.num_rows)
    merged = np.zeros(table.num_rows, dtype=bool)
    lefts, left_sides, rights, right_sides = [], [], [], []
    if kind == "additive":
        merged = np.asarray(pc.equal(pc.cast(table["variant"], pa.string()), "merged")
                            .combine_chunks().fill_null(False))
        ids = pc.list_flatten(table["antecedent_ids"].combine_chunks().filter(merged))
        positions = np.asarray(pc.index_in(ids, value_set=table["id"].combine_chunks()),
                               dtype=np.int64)
        lefts.append(positions[0::2])
        rights.append(positions[1::2])
        left_sides.append(np.zeros(len(positions) // 2, dtype=np.int64))
        right_sides.append(np.zeros(len(positions) // 2, dtype=np.int64))
    both = (np.asarray(pc.is_valid(table[first]).combine_chunks())
            & np.asarray(pc.is_valid(table[second]).combine_chunks()) & ~merged)
    lefts.append(rows[both])
    rights.append(rows[both])
    left_sides.append(np.zeros(int(both.sum()), dtype=np.int64))
    right_sides.append(np.ones(int(both.sum()), dtype=np.int64))
    keep = pa.array(~merged)
    columns = (table[first], table[second])
    if merged.any():  # a merged row's own text is not a text: its two parts are
        columns = (pc.if_else(keep, table[first].cast(pa.string()), None), table[second])
    return SuiteTexts(columns, np.concatenate(lefts), np.concatenate(left_sides),
                      np.concatenate(rights), np.concatenate(right_sides))


def _chunks(column: pa.ChunkedArray) -> list[tuple[pa.Array, pa.Array | None]]:
    """``(distinct-ish texts, row indices into them or None)`` of each chunk of a text column."""
    return [(c.dictionary.cast(pa.string()), c.indices) if isinstance(c, pa.DictionaryArray)
            else (c.cast(pa.string()), None) for c in column.chunks]


def folder_index(root: Path, manifest: Mapping[str, dict]) -> TextIndex:
    """The index of every test text of the suites ``manifest`` lists under ``root``."""
    suites = [read_suite(root / manifest[n]["path"], manifest[n].get("kind", ""))
              for n in sorted(manifest)]
    chunks = [_chunks(c) for s in suites for c in s.columns]
    texts = [t for column in chunks for t, _ in column]
    # one dictionary encoding of every chunk's texts: the distinct texts (atoms) and, for each
    # chunk text, its atom, in one hash pass (index_in per chunk rehashed the atoms each time)
    encoded = pc.dictionary_encode(pa.concat_arrays(texts) if texts else pa.array([], pa.string()))
    atoms, positions = encoded.dictionary, encoded.indices.fill_null(-1)
    offsets = np.cumsum([0] + [len(t) for t in texts])
    column_ids, k = [], 0
    for column in chunks:
        ids = []
        for _, indices in column:
            mapped = positions.slice(offsets[k], offsets[k + 1] - offsets[k])
            ids.append(np.asarray(mapped if indices is None
                                  else pc.take(mapped, indices).fill_null(-1), dtype=np.int64))
            k += 1
        column_ids.append(np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64))
    pairs = []
    for n, suite in enumerate(suites):
        ids = np.stack(column_ids[2 * n:2 * n + 2])
        pairs.append(np.stack([ids[suite.first_side, suite.first_rows],
                               ids[suite.second_side, suite.second_rows]], axis=1))
    found = np.concatenate(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)
    return TextIndex.build(atoms, found[(found >= 0).all(axis=1)])


def suites_digest(manifest: Mapping[str, dict]) -> str:
    """sha256 over the folder's suites (name and Parquet sha256): what a pool was checked against.

    A pool whose recorded digest differs was deduplicated against other suites: rebuild it.
    """
    text = "\n".join(f"{name}\t{manifest[name]['sha256']}" for name in sorted(manifest))
    return hashlib.sha256(text.encode()).hexdigest()
