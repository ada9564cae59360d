"""The base form of an inflected verb, for do-support ("hated" -> "did not hate").

spaCy's small model lemmatises by rule and gets regular forms wrong ("hated" -> "hat",
"texted" -> "texte": issue 32, seen on ART stories). Here a base form must *inflect back* to
the word: regularly (``hate`` + ``d``; a one-syllable ``hat`` doubles: "hatted") or as one of
WordNet's irregular forms (``saw`` -> ``see``), or be the word itself where spaCy says so
(``put``, ``let``). Among WordNet's verb bases that do (NLTK
``_morphy``), the most frequent in SemCor wins ("lay" -> "lie", "found" -> "find"); a verb
WordNet does not know keeps spaCy's lemma if it inflects back, else a stripped form WordNet
knows as a verb or a noun ("texted" -> "text"), else nothing (the sentence is refused).
Without WordNet data only spaCy's lemma is checked.
"""

from __future__ import annotations

import re
from functools import cache

_VOWELS = re.compile(r"[aeiouy]+")
_CVC = re.compile(r"[^aeiou][aeiou][^aeiouwxy]$")


@cache
def _wordnet():
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.builders.generate.wordnet import load_wordnet

    try:
        return load_wordnet()
    except ConfigError:
        return None


def regular_forms(base: str, tag: str) -> set[str]:
    """The regular inflections of ``base`` for Penn tag ``tag`` (VBZ, VBD, VBN; else itself)."""
    if tag == "VBZ":
        if re.search(r"(s|x|z|ch|sh|o)$", base):
            return {base + "es"}
        if re.search(r"[^aeiou]y$", base):
            return {base[:-1] + "ies"}
        return {base + "s"}
    if tag not in ("VBD", "VBN"):
        return {base}
    if base.endswith("e"):
        return {base + "d"}
    if re.search(r"[^aeiou]y$", base):
        return {base[:-1] + "ied"}
    doubled = base + base[-1] + "ed"
    if _CVC.search(base):  # one syllable doubles ("hatted"); longer ones may not ("visited")
        return {doubled} if len(_VOWELS.findall(base)) == 1 else {doubled, base + "ed"}
    return {base + "ed"}


def _irregular(word: str, base: str) -> bool:
    wordnet = _wordnet()
    return wordnet is not None and base in wordnet._exception_map["v"].get(word, ())


def _inflects_to(base: str, word: str, tag: str) -> bool:
    return word in regular_forms(base, tag) or _irregular(word, base)


def _semcor(base: str) -> int:
    wordnet = _wordnet()
    return sum(lemma.count() for synset in wordnet.synsets(base, "v")
               for lemma in synset.lemmas() if lemma.name().lower() == base)


def _verb_or_noun(wordnet, base: str) -> bool:
    """A verb, or a noun a verb can be made of ("text" -> "texted"); not an adjective only."""
    return bool(wordnet.synsets(base, "v") or wordnet.synsets(base, "n"))


def _stripped(word: str) -> list[str]:
    return [word[:-k] for k in (1, 2, 3) if len(word) > k + 1] + (
        [word[:-3] + "y"] if word.endswith("ies") or word.endswith("ied") else [])


def base_form(word: str, tag: str, lemma: str) -> str | None:
    """The base form of verb ``word`` (Penn ``tag``), spaCy's ``lemma`` as a hint; or None.

    Lower-case in, lower-case out. VBP and VB forms are their own base.
    """
    word, lemma = word.lower(), lemma.lower()
    if tag not in ("VBZ", "VBD", "VBN"):
        return word
    wordnet = _wordnet()
    if wordnet is not None:
        known = [b for b in dict.fromkeys(wordnet._morphy(word, "v"))
                 if _inflects_to(b, word, tag) or b == word == lemma]  # put, let, hit
        if known:
            return max(known, key=lambda b: (_semcor(b), b == lemma, b))
    if (_inflects_to(lemma, word, tag) and lemma != word
            and (wordnet is None or _verb_or_noun(wordnet, lemma))):
        return lemma
    if wordnet is not None:
        words = [b for b in _stripped(word)
                 if _inflects_to(b, word, tag) and _verb_or_noun(wordnet, b)]
        if words:
            return max(words, key=len)
    return None
