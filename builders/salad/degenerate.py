"""Degenerate PBSMT outputs: too short, only function words, or a piece of the source.

Issue 32 (item 1) found many outputs of the PBSMT stand-in that destroy nothing a model could
be tested on: single tokens (".", "the", "as as"), strings of function words and punctuation
(", and the and", "with the and", "-- ."), and near-copies that are a contiguous run of the
source's words ("boy playing in the grass", the premise without "A young"). An output is
*degenerate* when (checked in this order, the first reason is the one reported):

1. ``short``: it has 2 or fewer word tokens (a word token holds a letter or a digit);
2. ``function words``: every word token is a function word (:data:`FUNCTION_WORDS`), so it
   holds only function words and punctuation;
3. ``source run``: its tokens are a contiguous run of the tokens of the source the system
   translated, or of the text the output replaces (a hypothesis; for SST-2 the whole
   sentence).

Tokens are lower-cased Penn-Treebank tokens (``lexical.tokenize(text, lower=True)``), the
ones the systems are trained on and the card's figures are measured on.
"""

from __future__ import annotations

from collections.abc import Sequence

SHORT, FUNCTION, SOURCE_RUN = "short", "function words", "source run"
#: Word tokens an output needs to have more than.
MOST_WORDS = 2

#: English closed-class words, lower-cased: articles and determiners, quantifiers, pronouns,
#: prepositions, conjunctions and subordinators, auxiliary and modal verbs (with the
#: Penn-Treebank clitics ``'s``, ``n't``, ``ca``, ``wo``), the particles ``to`` and ``not``,
#: and degree and focus adverbs. Written out here (no stop-word corpus is needed): open-class
#: words that some stop-word lists hold ("show", "serious", "thing") are not in it.
FUNCTION_WORDS = frozenset("""
a an the this that these those some any no every each all both either neither another such
what which whose whatever whichever
many much more most few fewer less least several other others own same enough
i me my mine myself you your yours yourself yourselves he him his himself she her hers
herself it its itself we us our ours ourselves they them their theirs themselves one ones
who whom whoever someone something somebody anyone anything anybody everyone everything
everybody nobody nothing none there here
about above across after against along among amid around as at before behind below beneath
beside besides between beyond by despite down during except for from in inside into like
near of off on onto out outside over past per since than through throughout till to toward
towards under underneath unlike until unto up upon via with within without
and but or nor so yet because although though if unless while whilst whereas whether when
whenever where wherever how why then once
be am is are was were been being 's 're 'm 've 'd 'll have has had having do does did doing
can could may might must shall should will would ca wo sha ought
not n't never
very too also just only even quite rather almost still again ever already really
""".split())


def is_word(token: str) -> bool:
    """Whether ``token`` is a word token: it holds a letter or a digit (not punctuation)."""
    return any(c.isalnum() for c in token)


def is_run(tokens: Sequence[str], text: Sequence[str]) -> bool:
    """Whether ``tokens`` (not empty) occur in ``text`` as a contiguous run."""
    n = len(tokens)
    tokens = list(tokens)
    return n > 0 and any(list(text[i : i + n]) == tokens for i in range(len(text) - n + 1))


def degenerate(output: Sequence[str], source: Sequence[str],
               replaced: Sequence[str]) -> str | None:
    """Why ``output`` is degenerate (``SHORT``, ``FUNCTION``, ``SOURCE_RUN``), or ``None``.

    Args:
        output: The output's tokens.
        source: The tokens the system translated (premise; SST-2: the sentence's first half).
        replaced: The tokens of the text the output replaces (hypothesis; SST-2: the whole
            sentence).

    """
    words = [t for t in output if is_word(t)]
    if len(words) <= MOST_WORDS:
        return SHORT
    if all(t in FUNCTION_WORDS for t in words):
        return FUNCTION
    if is_run(output, source) or is_run(output, replaced):
        return SOURCE_RUN
    return None
