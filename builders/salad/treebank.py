"""The Penn-Treebank word tokenizer of NLTK, run with Python's ``re``, without importing NLTK.

The word-salad suites tokenize every text with NLTK's ``TreebankWordTokenizer().tokenize``
(``convert_parentheses=False``). NLTK 3.10 runs each of its 26 substitutions through
``nltk.redos`` (the ``regex`` engine under a timeout), and ``import nltk`` takes ~1.5 s of
CPU in every build worker. :func:`tokenize` applies the same substitutions, in the same order,
with the same patterns (copied from NLTK 3.10's ``nltk/tokenize/treebank.py`` and
``nltk/tokenize/destructive.py``, Apache License 2.0) compiled by ``re``, and skips a
substitution whose pattern cannot match because the text lacks a character every match needs.
``tests/test_salad_generators.py`` compares it with NLTK's tokenizer on every text of the
word-salad sources and on random strings of the characters the patterns use.
"""

from __future__ import annotations

import re

_S = re.compile

#: ``(pattern, replacement, needed)``: the substitution runs only when one of the strings of
#: ``needed`` occurs in the text (every match of the pattern contains one of them).
Rule = tuple[re.Pattern[str], str, tuple[str, ...]]

_STARTING_QUOTES: tuple[Rule, ...] = (
    (_S(r"^\""), r"``", ('"',)),
    (_S(r"(``)"), r" \1 ", ("``",)),
    (_S(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` ", ('"', "''")),
)
_PUNCTUATION: tuple[Rule, ...] = (
    (_S(r"([:,])([^\d])"), r" \1 \2", (":", ",")),
    (_S(r"([:,])$"), r" \1 ", (":", ",")),
    (_S(r"\.\.\."), r" ... ", ("...",)),
    (_S(r"[;@#$%&]"), r" \g<0> ", (";", "@", "#", "$", "%", "&")),
    # ``\s`` as the ``regex`` engine NLTK 3.10 uses reads it: without U+001C-U+001F
    (_S(r'([^\.])(\.)([\]\)}>"\']*)[^\S\x1c-\x1f]*$'), r"\1 \2\3 ", (".",)),
    (_S(r"[?!]"), r" \g<0> ", ("?", "!")),
    (_S(r"([^'])' "), r"\1 ' ", ("' ",)),
)
_PARENS_BRACKETS: Rule = (_S(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ", tuple("][(){}<>"))
_DOUBLE_DASHES: Rule = (_S(r"--"), r" -- ", ("--",))
_ENDING_QUOTES: tuple[Rule, ...] = (
    (_S(r"''"), " '' ", ("''",)),
    (_S(r'"'), " '' ", ('"',)),
    (_S(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 ", ("' ", "'s", "'S", "'m", "'M", "'d",
                                                      "'D")),
    (_S(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 ",
     ("'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T")),
)
#: MacIntyre's contractions (NLTK's ``CONTRACTIONS2`` and ``CONTRACTIONS3``; ``CONTRACTIONS4``
#: is not used by NLTK either). Case-insensitive: ``needed`` is matched on the lower-cased text.
_CONTRACTIONS: tuple[Rule, ...] = (
    (_S(r"(?i)\b(can)(?#X)(not)\b"), r" \1 \2 ", ("cannot",)),
    (_S(r"(?i)\b(d)(?#X)('ye)\b"), r" \1 \2 ", ("d'ye",)),
    (_S(r"(?i)\b(gim)(?#X)(me)\b"), r" \1 \2 ", ("gimme",)),
    (_S(r"(?i)\b(gon)(?#X)(na)\b"), r" \1 \2 ", ("gonna",)),
    (_S(r"(?i)\b(got)(?#X)(ta)\b"), r" \1 \2 ", ("gotta",)),
    (_S(r"(?i)\b(lem)(?#X)(me)\b"), r" \1 \2 ", ("lemme",)),
    (_S(r"(?i)\b(more)(?#X)('n)\b"), r" \1 \2 ", ("more'n",)),
    (_S(r"(?i)\b(wan)(?#X)(na)(?=\s)"), r" \1 \2 ", ("wanna",)),
    (_S(r"(?i) ('t)(?#X)(is)\b"), r" \1 \2 ", (" 'tis",)),
    (_S(r"(?i) ('t)(?#X)(was)\b"), r" \1 \2 ", (" 'twas",)),
)

#: Any string a contraction rule needs (one search instead of ten).
_ANY_CONTRACTION = _S("|".join(re.escape(n) for _, _, needed in _CONTRACTIONS for n in needed))


def _apply(rules: tuple[Rule, ...], text: str, probe: str | None = None) -> str:
    """``text`` after each rule one of whose needed strings occurs in ``probe`` (or ``text``)."""
    for pattern, replacement, needed in rules:
        seen = text if probe is None else probe
        for part in needed:  # a loop, not any(): this runs ~50 times per text
            if part in seen:
                text = pattern.sub(replacement, text)
                break
    return text


def _folded(text: str) -> str:
    """``text`` folded so that what a case-insensitive ASCII pattern matches reads as ASCII.

    ``casefold`` maps ``ſ`` to ``s`` and the Kelvin sign to ``k``; ``re`` also matches ``ı``
    and ``İ`` to ``i``, which ``casefold`` leaves (``İ`` becomes ``i`` and a combining dot,
    dropped here).
    """
    return text.casefold().replace("\u0131", "i").replace("\u0307", "")


def tokenize(text: str) -> list[str]:
    """``nltk.tokenize.TreebankWordTokenizer().tokenize(text)``: the same tokens."""
    text = _apply(_STARTING_QUOTES, text)
    text = _apply(_PUNCTUATION, text)
    text = _apply((_PARENS_BRACKETS, _DOUBLE_DASHES), text)
    text = _apply(_ENDING_QUOTES, " " + text + " ")
    if _ANY_CONTRACTION.search(_folded(text)):
        for rule in _CONTRACTIONS:  # a substitution changes the text the next one sees
            text = _apply((rule,), text, _folded(text))
    return text.split()
