"""Generated answers: strict parsing into a verbaliser, and first-token probabilities.

The rule (docs/runner.md, "Served models"): case, spaces and punctuation are ignored (every
character that is not a letter or a digit), and what is left must equal exactly one
verbaliser, left the same way. Anything else is the invalid answer :data:`INVALID_ANSWER`,
which a prediction file carries as its label: ``score`` counts it as an invalid answer (never
right, never consistent; a declined salad in the word-salad score).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

#: The label of a row whose answer is not exactly one verbaliser (lm-eval's regex filter
#: writes the same fallback, so both routes read alike).
INVALID_ANSWER = "[invalid]"

_NOT_ALNUM = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """``text`` without anything but letters and digits, case-folded."""
    return _NOT_ALNUM.sub("", text).casefold()


def parse_answer(text: object, choices: Sequence[str]) -> int | None:
    """The index of the one verbaliser ``text`` is, or None (an invalid answer).

    Args:
        text: The generated answer (None or a non-string: invalid).
        choices: The verbalisers, in label order.

    """
    if not isinstance(text, str):
        return None
    said = normalise(text)
    if not said:
        return None
    found = [k for k, c in enumerate(choices) if normalise(c) == said]
    return found[0] if len(found) == 1 else None


def answer_regex(choices: Sequence[str]) -> str:
    """A regular expression that matches an answer :func:`parse_answer` accepts.

    For lm-eval's ``regex`` filter: the whole response, anything but letters and digits
    allowed around and between the characters of one verbaliser, case ignored; group 1 is the
    answer. ``re.findall`` of it is non-empty exactly when the answer is valid (for choices
    that differ after :func:`normalise`).
    """
    alternatives = []
    for choice in choices:
        chars = [re.escape(ch) for ch in choice if not _NOT_ALNUM.fullmatch(ch)]
        alternatives.append(r"[\W_]*".join(chars))
    return r"(?is)^[\W_]*(" + "|".join(alternatives) + r")[\W_]*$"


def first_token_probs(top: Sequence[Mapping[str, object]] | None,
                      choices: Sequence[str]) -> list[float] | None:
    """Probabilities of the choices from the first answer token's ``top_logprobs``.

    A top token counts for a verbaliser when, left as :func:`normalise` leaves it, it is a
    non-empty prefix of that verbaliser and of no other (a lone space, quote or a prefix two
    verbalisers share counts for none). Each verbaliser's probability is the sum over its
    tokens, renormalised over the verbalisers. None when no top token counts for any (the row
    is then label-only).
    """
    if not top:
        return None
    norms = [normalise(c) for c in choices]
    mass = [0.0] * len(choices)
    for entry in top:
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, (int, float)):
            continue
        said = normalise(token)
        if not said or not math.isfinite(float(logprob)):
            continue
        owners = [k for k, c in enumerate(norms) if c.startswith(said)]
        if len(owners) == 1:
            mass[owners[0]] += math.exp(float(logprob))
    total = sum(mass)
    if total <= 0:
        return None
    return [m / total for m in mass]
