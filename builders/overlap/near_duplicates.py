"""An index of texts that finds every near duplicate of a word set (Jaccard at least 0.8).

The indexed items are *atoms*, distinct texts, and *pairs*, the union of two atoms (a test
row's two texts; an additive merged text, the union of the two texts it joins). A query word
set ``A`` finds every item ``B`` with ``|A & B| / |A | B| >= 0.8``, by prefix filtering:

* size: ``B`` has between ``ceil(0.8 |A|)`` and ``floor(1.25 |A|)`` words;
* prefix: ``B`` shares at least ``ceil(0.8 |A|)`` words with ``A``, so it holds at least one of
  *any* ``|A| - ceil(0.8 |A|) + 1`` words of ``A``. The index takes ``A``'s rarest ones (held
  by the fewest atoms; unknown words first) and checks exactly only the items that hold one.

Nothing is missed (the prefix argument holds whichever words are taken), so the search is
exact; ``tests/test_overlap.py`` checks it against comparing every pair. ``np.unique`` is
avoided on purpose: on numpy 2.4 it took 20 s for 3 million integers here, a sort 0.6 s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from consistency_bench.builders.overlap.words import split_words


def least_shared(size: int) -> int:
    """``ceil(0.8 * size)``: the fewest shared words a near duplicate of ``size`` words has."""
    return (4 * size + 4) // 5


def most_words(size: int) -> int:
    """``floor(1.25 * size)``: the most words a near duplicate of ``size`` words has."""
    return (5 * size) // 4


def _distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a comparison, not ``np.unique``)."""
    if not len(values):
        return values
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


@dataclass(frozen=True)
class Match:
    """A near duplicate found: the indexed text(s) and the Jaccard similarity."""

    texts: tuple[str, ...]
    jaccard: float

    def describe(self) -> str:
        """One line for logs and reports."""
        shown = " + ".join(repr(t if len(t) <= 60 else t[:57] + "...") for t in self.texts)
        return f"Jaccard {self.jaccard:.2f} with {shown}"


@dataclass(frozen=True)
class TextIndex:
    """Atoms and pairs of atoms, searchable for near duplicates (see the module docstring).

    Attributes:
        atoms: The distinct texts.
        stripped: The atoms with surrounding whitespace removed (exact matches).
        vocabulary: Word -> word id.
        frequency: Atoms holding each word id (the order of rarity).
        words: Distinct word ids of each atom, atom after atom.
        starts: Atom ``i``'s words are ``words[starts[i]:starts[i + 1]]``.
        postings: Atoms holding each word, word after word.
        posting_starts: Word ``w`` is held by ``postings[posting_starts[w]:posting_starts[w+1]]``.
        pairs: ``(n, 2)`` atom ids of the pairs.
        pair_by_atom: Pair ids, ordered by the atom they hold (each pair listed twice).
        pair_starts: Pairs holding atom ``i``: ``pair_by_atom[pair_starts[i]:pair_starts[i+1]]``.

    """

    atoms: pa.Array
    stripped: frozenset[str]
    vocabulary: dict[str, int]
    frequency: np.ndarray
    words: np.ndarray
    starts: np.ndarray
    postings: np.ndarray
    posting_starts: np.ndarray
    pairs: np.ndarray
    pair_by_atom: np.ndarray
    pair_starts: np.ndarray

    @classmethod
    def build(cls, atoms: pa.Array, pairs: np.ndarray) -> TextIndex:
        """Index distinct texts ``atoms`` and the pairs ``pairs`` (``(n, 2)`` atom positions)."""
        parents, tokens = split_words(atoms)
        encoded = pc.dictionary_encode(tokens)
        vocabulary = {w: i for i, w in enumerate(encoded.dictionary.to_pylist())}
        size = len(vocabulary) + 1
        keys = _distinct_sorted(parents * size + np.asarray(encoded.indices, dtype=np.int64))
        owners, words = keys // size, keys % size  # sorted by atom, then word
        starts = np.searchsorted(owners, np.arange(len(atoms) + 1))
        order = np.argsort(words, kind="stable")
        postings = owners[order]
        posting_starts = np.searchsorted(words[order], np.arange(len(vocabulary) + 1))
        pairs = pairs.reshape(-1, 2).astype(np.int64)
        if len(pairs):
            pair_keys = _distinct_sorted(pairs[:, 0] * len(atoms) + pairs[:, 1])
            pairs = np.stack([pair_keys // len(atoms), pair_keys % len(atoms)], axis=1)
        held = np.concatenate([pairs[:, 0], pairs[:, 1]])
        pair_order = np.argsort(held, kind="stable")
        pair_by_atom = np.concatenate([np.arange(len(pairs))] * 2)[pair_order]
        pair_starts = np.searchsorted(held[pair_order], np.arange(len(atoms) + 1))
        stripped = frozenset(pc.utf8_trim_whitespace(atoms).to_pylist())
        return cls(atoms, stripped, vocabulary, np.bincount(words, minlength=len(vocabulary)),
                   words, starts, postings, posting_starts, pairs, pair_by_atom, pair_starts)

    def exact(self, text: str) -> bool:
        """Whether ``text`` (stripped) is an indexed text."""
        return text.strip() in self.stripped

    def _size(self, atoms: np.ndarray) -> np.ndarray:
        return self.starts[atoms + 1] - self.starts[atoms]

    def _shared(self, lookup: np.ndarray, atoms: np.ndarray) -> np.ndarray:
        """Words each atom of ``atoms`` shares with the query (``lookup[word]`` is True)."""
        lengths = self._size(atoms)
        ends = np.cumsum(lengths)
        flat = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(
            self.starts[atoms] - (ends - lengths), lengths)
        counts = np.concatenate(([0], np.cumsum(lookup[self.words[flat]])))
        return counts[ends] - counts[ends - lengths]

    def _query(self, words: Iterable[str]) -> tuple[int, np.ndarray, list[int]]:
        """``(number of words, lookup of their known ids, the prefix's known ids)``.

        The prefix is the rarest ``n - ceil(0.8 n) + 1`` words (unknown words, held by no
        atom, count as the rarest; they are in no item, so they are not looked up).
        """
        ranked = []
        for word in set(words):
            known = self.vocabulary.get(word)
            ranked.append((0, word, -1) if known is None
                          else (int(self.frequency[known]), word, known))
        ranked.sort()
        lookup = np.zeros(len(self.vocabulary) + 1, dtype=bool)
        lookup[[i for _, _, i in ranked if i >= 0]] = True
        keep = len(ranked) - least_shared(len(ranked)) + 1
        return len(ranked), lookup, [i for _, _, i in ranked[:keep] if i >= 0]

    def find(self, words: Iterable[str]) -> Match | None:
        """A near duplicate of the word set ``words`` among the atoms and pairs, or ``None``.

        The atom found first (by position) is returned, else the first pair.
        """
        size, lookup, prefix = self._query(words)
        if not size or not prefix:
            return None
        low, high = least_shared(size), most_words(size)
        hits = _distinct_sorted(np.concatenate(
            [self.postings[self.posting_starts[w]:self.posting_starts[w + 1]] for w in prefix]))
        hits = hits[self._size(hits) <= high]  # a larger part makes a larger pair too
        sizes, shared = self._size(hits), self._shared(lookup, hits)
        close = (sizes >= low) & (5 * shared >= 4 * (size + sizes - shared))
        if close.any():
            atom = int(hits[np.argmax(close)])
            return self._match(lookup, [atom], size)
        return self._find_pair(lookup, size, hits)

    def _find_pair(self, lookup: np.ndarray, size: int, hits: np.ndarray) -> Match | None:
        """The first pair holding an atom of ``hits`` that is a near duplicate of the query.

        Counted exactly: a pair's words are the union of its atoms' words, so its shared
        words are the sum of its atoms' less those both share (checked one by one only where
        the sum alone could reach the threshold).
        """
        if not len(self.pairs) or not len(hits):
            return None
        low, high = least_shared(size), most_words(size)
        pairs = _distinct_sorted(np.concatenate(
            [self.pair_by_atom[self.pair_starts[a]:self.pair_starts[a + 1]]
             for a in hits.tolist()]))
        first, second = self.pairs[pairs, 0], self.pairs[pairs, 1]
        a, b = self._size(first), self._size(second)
        fits = (a + b >= low) & (np.maximum(a, b) <= high)
        pairs, first, second, a, b = pairs[fits], first[fits], second[fits], a[fits], b[fits]
        most = self._shared(lookup, first) + self._shared(lookup, second)
        # shared <= most and union >= size + max(a, b) - shared: a bound that is never low
        hopeful = 5 * most >= 4 * (size + np.maximum(a, b) - most)
        for pair in pairs[hopeful].tolist():
            found = self._match(lookup, self.pairs[pair].tolist(), size)
            if found is not None:
                return found
        return None

    def _match(self, lookup: np.ndarray, atoms: list[int], size: int) -> Match | None:
        item = set().union(*(self.words[self.starts[a]:self.starts[a + 1]].tolist()
                             for a in atoms))
        shared = int(lookup[list(item)].sum()) if item else 0
        union = size + len(item) - shared
        if union and 5 * shared >= 4 * union:
            return Match(tuple(self.atoms[a].as_py() for a in atoms), shared / union)
        return None
