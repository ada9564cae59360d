"""Word sets of texts as the near-duplicate rule reads them: lower-cased letter and digit runs.

One tokenizer for both sides (pyarrow's RE2, also for the few demonstration texts), so that a
demonstration and a test row are split the same way. ``[^\\p{L}\\p{N}]+`` separates words:
punctuation, spaces and underscores are never part of a word, Hangul and Latin letters are.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Any run of characters that are neither letters nor digits (Unicode classes, RE2 syntax).
SEPARATOR = r"[^\p{L}\p{N}]+"


def split_words(texts: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """``(text position of each word, the words)`` of ``texts``, in order; nulls have none.

    Words are lower-cased (``utf8_lower``) and never empty.
    """
    lists = pc.split_pattern_regex(pc.utf8_lower(texts), pattern=SEPARATOR)
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    flat, parents = pc.list_flatten(lists), pc.list_parent_indices(lists)
    keep = pc.greater(pc.binary_length(flat), 0)
    return np.asarray(pc.filter(parents, keep), dtype=np.int64), pc.filter(flat, keep)


def word_sets(texts: Sequence[str | None]) -> list[frozenset[str]]:
    """The word set of each text (empty for ``None`` or a text without letters or digits)."""
    parents, words = split_words(pa.array(list(texts), type=pa.string()))
    out: list[set[str]] = [set() for _ in texts]
    for parent, word in zip(parents.tolist(), words.to_pylist(), strict=True):
        out[parent].add(word)
    return [frozenset(s) for s in out]


def near(first: frozenset, second: frozenset) -> bool:
    """Whether two word sets are near duplicates: Jaccard ``|A & B| / |A | B|`` at least 0.8.

    Computed in integers (``5 |A & B| >= 4 |A | B|``); two empty sets are not near duplicates.
    """
    shared = len(first & second)
    union = len(first) + len(second) - shared
    return union > 0 and 5 * shared >= 4 * union


def jaccard(first: frozenset, second: frozenset) -> float:
    """Word-set Jaccard similarity (0 for two empty sets)."""
    union = len(first | second)
    return len(first & second) / union if union else 0.0
