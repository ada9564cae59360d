"""Lexical-overlap transformations: Sort, Reverse, Shuffle and CopySort (paper Table 2).

They keep the bag of tokens and destroy word order. Texts are split into tokens with the
Penn-Treebank tokenizer (``don't`` -> ``do n't``, punctuation split off, as in the paper's
examples; NLTK's, run by :mod:`consistency_bench.builders.salad.treebank`) and joined back with
single spaces. A
sentence-final punctuation token (``.``, ``!``, ``?``, ``...``) stays at the end (paper
appendix, technical detail 1). The transformed text is lower-cased by default (``lower=True``),
as in every example of the paper (Figure 1, Tables 2 and 12: "macbook", "i i no probably");
``lower=False`` keeps the source's case. Only the transformed text changes: the untouched text
of a pair keeps its case. Every function is pure; Shuffle takes a ``random.Random`` made by
:func:`rng_for` from (seed, row key), never global state. Tokenization is cached per text (the
same text is tokenized by several transformations).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from consistency_bench.builders.salad import treebank

FINAL_PUNCTUATION = frozenset({".", "!", "?", "..."})
SHUFFLE_ATTEMPTS = 1000
#: Steps of the exhaustive search for a bigram-free order (:func:`bigram_free_order`).
SEARCH_STEPS = 1_000_000


def rng_for(seed: int, key: str) -> random.Random:
    """A ``random.Random`` seeded from ``(seed, key)`` (sha256, so stable across runs)."""
    digest = hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def tokenize(text: str, lower: bool = False) -> list[str]:
    """Penn-Treebank tokens of ``text``, lower-cased when ``lower`` (a new list each call)."""
    return list(_tokens(text, lower))


@lru_cache(maxsize=1 << 18)
def _tokens(text: str, lower: bool) -> tuple[str, ...]:
    if lower:
        return tuple(t.lower() for t in _tokens(text, False))
    return tuple(treebank.tokenize(text))


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens joined by single spaces (the transformed texts are not natural language)."""
    return " ".join(tokens)


def split_final(tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(body, tail)``: the tail is the last token when it is sentence-final punctuation.

    One token only, so that Reverse is an involution whenever the text does not start with
    final punctuation (with a longer tail, ``. a .`` would not come back).
    """
    if len(tokens) >= 2 and tokens[-1] in FINAL_PUNCTUATION:
        return list(tokens[:-1]), [tokens[-1]]
    return list(tokens), []


def _sort_key(token: str) -> tuple[str, str]:
    return (token.lower(), token)


def sort_tokens(tokens: Sequence[str]) -> list[str]:
    """Tokens sorted alphabetically (case-insensitively, ties by the exact string)."""
    body, tail = split_final(tokens)
    return sorted(body, key=_sort_key) + tail


def reverse_tokens(tokens: Sequence[str]) -> list[str]:
    """Tokens in reverse order; the final punctuation stays at the end."""
    body, tail = split_final(tokens)
    return body[::-1] + tail


def bigrams(tokens: Sequence[str]) -> set[tuple[str, str]]:
    """The set of adjacent token pairs."""
    return set(itertools.pairwise(tokens))


def surviving_bigrams(original: Sequence[str], transformed: Sequence[str]) -> int:
    """How many bigram occurrences of ``transformed`` also occur in ``original``."""
    seen = bigrams(original)
    return sum(pair in seen for pair in itertools.pairwise(transformed))


def shuffle_tokens(tokens: Sequence[str], rng: random.Random) -> list[str] | None:
    """Shuffle until no bigram of the original survives (final punctuation kept at the end).

    Up to ``SHUFFLE_ATTEMPTS`` random shuffles are tried (the paper's "repeatedly shuffling
    till no bigram from original input is retained"); when none is free of original bigrams
    (short texts, repeated tokens), :func:`bigram_free_order` searches every order. ``None``
    when no order of the tokens (final punctuation last) is free of original bigrams, e.g.
    ``it gets it .`` or ``no , no``: the rule cannot hold, and the row is left out.
    """
    body, tail = split_final(tokens)
    seen = bigrams(tokens)
    for _ in range(SHUFFLE_ATTEMPTS):
        candidate = list(body)
        rng.shuffle(candidate)
        candidate += tail
        if not any(pair in seen for pair in itertools.pairwise(candidate)):
            return candidate
    return bigram_free_order(body, tail, seen)


def bigram_free_order(body: Sequence[str], tail: Sequence[str],
                      seen: set[tuple[str, str]]) -> list[str] | None:
    """The first order of ``body`` (then ``tail``) with no bigram in ``seen``, or ``None``.

    A depth-first search over the distinct tokens left, in sorted order (deterministic, no
    randomness): it finds an order whenever one exists, within ``SEARCH_STEPS`` steps. It runs
    only where ``SHUFFLE_ATTEMPTS`` random shuffles found none (short or repetitive texts: 2
    of the 20,937 texts the mirror's shuffle configs transform, neither with such an order).
    ``None`` also when the search gives up after ``SEARCH_STEPS`` steps.
    """
    left = Counter(body)
    choices = sorted(left)
    last = tail[0] if tail else None
    order: list[str] = []
    tried = [0]  # per depth: the index in ``choices`` to try next
    for _ in range(SEARCH_STEPS):
        depth = len(order)
        if depth == len(body) and (
                last is None or not order or (order[-1], last) not in seen):
            return [*order, *tail]
        previous = order[-1] if order else None
        at = tried[depth] if depth < len(body) else len(choices)
        while at < len(choices) and not (
                left[choices[at]] and (previous is None or (previous, choices[at]) not in seen)):
            at += 1
        if at < len(choices):  # go one token deeper
            tried[depth] = at + 1
            left[choices[at]] += -1
            order.append(choices[at])
            tried.append(0)
            continue
        if not order:  # every first token tried
            return None
        tried.pop()  # back up one token
        left[order.pop()] += 1
    return None


def sort_text(text: str, lower: bool = True) -> str | None:
    """Sort; ``None`` when the result equals the input (nothing was destroyed)."""
    return _changed(text, sort_tokens(tokenize(text, lower)), lower)


def reverse_text(text: str, lower: bool = True) -> str | None:
    """Reverse; ``None`` when the result equals the input."""
    return _changed(text, reverse_tokens(tokenize(text, lower)), lower)


def shuffle_text(text: str, rng: random.Random, lower: bool = True) -> str | None:
    """Shuffle; ``None`` when the result equals the input or no bigram-free order exists."""
    tokens = shuffle_tokens(tokenize(text, lower), rng)
    return None if tokens is None else _changed(text, tokens, lower)


def copysort_text(source: str, target: str, lower: bool = True) -> str | None:
    """CopySort: the sorted ``source`` (premise / first text) replaces ``target``."""
    out = detokenize(sort_tokens(tokenize(source, lower)))
    return out if out and out != detokenize(tokenize(target, lower)) else None


def _changed(text: str, tokens: list[str], lower: bool) -> str | None:
    """The transformed text; ``None`` when it equals the input (compared at the same case)."""
    out = detokenize(tokens)
    return None if not out or out == detokenize(tokenize(text, lower)) else out
