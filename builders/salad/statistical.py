"""Statistical transformation: a label-conditioned n-gram generator standing in for PBSMT.

The paper trains one Moses phrase-based system per label (PBSMT-E, -N, -C ...) on the training
pairs of that label, and "translates" the premise (NLI), first question (QQP) or first half of
the sentence (SST-2) into a new hypothesis / question / second half. Moses cannot be installed
here. The stand-in keeps the two properties the paper relies on (label-specific co-occurrence
statistics learnt from little data, output that is ungrammatical and out of context):

* one n-gram language model per label, trained on the target-side texts of that label
  (hypotheses, second questions, SST-2 sentences), order ``n`` (default 3), interpolated
  absolute discounting (discount ``D``, default 0.75) down to the unigram distribution:
  ``P(w | h) = max(c(h, w) - D, 0) / c(h) + D * N1+(h ·) / c(h) * P(w | h')``;
* sampling continues from a prefix: the first half (``floor(len / 2)``, at least one token) of
  the source-side tokens (premise, first question, the SST-2 sentence itself); the last
  ``n - 1`` prefix tokens are the initial history, and only the sampled tokens are emitted;
* the length is capped at the token count of the text being replaced (at least
  ``MIN_TOKENS``), ``</s>`` is not allowed before ``MIN_TOKENS`` tokens.

Sampling draws from the exact interpolated distribution: at a history with counts, back off
with probability ``D * N1+(h ·) / c(h)``, else draw ``w`` with weight ``c(h, w) - D``.
Everything is pure and seeded per row (the RNG comes from (seed, row key)).
"""

from __future__ import annotations

import bisect
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

BOS, EOS = "<s>", "</s>"
ORDER = 3
DISCOUNT = 0.75
MIN_TOKENS = 3


@dataclass(frozen=True)
class _Dist:
    """Continuations of one history: words, cumulative discounted weights, backoff mass."""

    words: tuple[str, ...]
    cumulative: tuple[float, ...]
    backoff: float  # probability of backing off to the shorter history
    # The same table without ``</s>`` (drawn while ``</s>`` is forbidden), built once.
    words_no_eos: tuple[str, ...] = ()
    cumulative_no_eos: tuple[float, ...] = ()


def _dist(words: tuple[str, ...], cumulative: tuple[float, ...], backoff: float) -> _Dist:
    """A ``_Dist`` with its ``</s>``-free table (weights re-summed in the same order)."""
    if EOS not in words:
        return _Dist(words, cumulative, backoff, words, cumulative)
    keep = [(w, c) for w, c in _weights(words, cumulative) if w != EOS]
    running, acc = 0.0, []
    for _, weight in keep:
        running += weight
        acc.append(running)
    return _Dist(words, cumulative, backoff, tuple(w for w, _ in keep), tuple(acc))


@dataclass(frozen=True)
class NGramModel:
    """An n-gram model with interpolated absolute discounting.

    Attributes:
        order: n.
        discount: Absolute discount D in (0, 1).
        tables: History tuple (length 0 .. n-1) -> continuation distribution.
        sentences: Number of training texts.

    """

    order: int
    discount: float
    tables: dict[tuple[str, ...], _Dist] = field(repr=False)
    sentences: int


def train(
    texts: Iterable[Sequence[str]], order: int = ORDER, discount: float = DISCOUNT
) -> NGramModel:
    """Train an n-gram model on tokenised texts (each padded with ``<s>`` and ``</s>``).

    Raises:
        ValueError: No training text, an order below 1 or a discount outside (0, 1).

    """
    if order < 1:
        raise ValueError(f"n-gram order must be >= 1, got {order}")
    if not 0 < discount < 1:
        raise ValueError(f"discount must lie in (0, 1), got {discount}")
    counts: dict[tuple[str, ...], Counter] = {}
    sentences = 0
    for tokens in texts:
        sentences += 1
        padded = [BOS] * (order - 1) + list(tokens) + [EOS]
        for i in range(order - 1, len(padded)):
            word = padded[i]
            for k in range(order):  # history lengths 0 .. n-1
                history = tuple(padded[i - k : i]) if k else ()
                counts.setdefault(history, Counter())[word] += 1
    if not sentences:
        raise ValueError("cannot train an n-gram model on no text")
    tables = {}
    for history, counter in counts.items():
        words = tuple(sorted(counter))  # fixed order: sampling is deterministic
        total = sum(counter.values())
        d = discount if history else 0.0  # the unigram level is not discounted
        running, cumulative = 0.0, []
        for word in words:
            running += counter[word] - d
            cumulative.append(running)
        tables[history] = _dist(words, tuple(cumulative), d * len(words) / total)
    return NGramModel(order, discount, tables, sentences)


def _draw(dist: _Dist, rng: random.Random, forbid_eos: bool) -> str:
    words, cumulative = dist.words, dist.cumulative
    if forbid_eos:
        words, cumulative = dist.words_no_eos, dist.cumulative_no_eos
        if not words:
            return ""
    point = rng.random() * cumulative[-1]
    return words[min(bisect.bisect_right(cumulative, point), len(words) - 1)]


def _weights(words: Sequence[str], cumulative: Sequence[float]) -> list[tuple[str, float]]:
    previous, out = 0.0, []
    for word, total in zip(words, cumulative, strict=True):
        out.append((word, total - previous))
        previous = total
    return out


def next_token(
    model: NGramModel, history: Sequence[str], rng: random.Random, forbid_eos: bool
) -> str:
    """Draw one token after ``history`` from the interpolated distribution."""
    context = tuple(history[len(history) - (model.order - 1) :]) if model.order > 1 else ()
    for start in range(len(context) + 1):
        dist = model.tables.get(context[start:])
        if dist is None:
            continue
        if start < len(context) and rng.random() < dist.backoff:
            continue
        token = _draw(dist, rng, forbid_eos)
        if token:
            return token
    return ""


def generate(
    model: NGramModel,
    prefix: Sequence[str],
    rng: random.Random,
    max_tokens: int,
    min_tokens: int = MIN_TOKENS,
) -> list[str]:
    """Sample up to ``max_tokens`` tokens continuing ``prefix`` (the prefix is not emitted)."""
    max_tokens = max(max_tokens, min_tokens)
    history = [BOS] * (model.order - 1) + list(prefix)
    out: list[str] = []
    while len(out) < max_tokens:
        token = next_token(model, history, rng, forbid_eos=len(out) < min_tokens)
        if token in ("", EOS):
            break
        out.append(token)
        history.append(token)
    return out


def first_half(tokens: Sequence[str]) -> list[str]:
    """The first ``floor(len / 2)`` tokens (at least one when there are any)."""
    return list(tokens[: max(1, len(tokens) // 2)]) if tokens else []
