"""Whether an antonym fits where its adjective stands, so that the new sentence contradicts.

WordNet gives an adjective's antonym out of context; on new text (ART stories, WiC
sentences: issue 32, item 3) 12 of 30 swaps failed for reasons of context. Each check below
returns a reason to refuse the swap, or None:

* :func:`negated_context`: a negation anywhere in the sentence ("not unhappy", "never
  unable", "wasn't that good": a double negative, or a swap under the negation that does not
  contradict);
* :func:`fixed_phrase`: the adjective is part of a WordNet multiword expression with its
  neighbours ("to be sure", "fell asleep", "make sure", "cold turkey", "junior high", "hot
  chocolate"), of a hyphenated word ("post-vocalic"), or of a phrase in :data:`FIXED`;
* :func:`wrong_role`: the adjective is not used as one (spaCy tags "round" in "hem him
  round", "fat" in "stores fat", "Cut" in "Cut recording tape" as adjectives), or takes a
  measure ("a few molecules wide");
* :func:`sense_mismatch`: the antonym belongs to another sense than the one used: "bad" and
  "serious" of an illness, storm or accident mean *severe* ("a bad cold" -> "a good cold"),
  "big" of an abstract noun *important* ("big trouble" -> "little trouble"), "warm" of
  clothing *insulating* ("a warm sweater" -> "a cool sweater");
  the word is mostly relational in WordNet ("legal profession" -> "illegal profession");
  WordNet's pair is no contradiction ("hungry" -> "thirsty"), or names two directions
  ("northern" / "southern"); the word is in :data:`OTHER_SENSE` (common in another sense
  than WordNet's first: "outgoing" -> "incoming"); or the antonym is already in the sentence
  ("my bad points as well as my good points": a contrast the swap would erase);
* :func:`wrong_valency`: the adjective has a complement ("proud of", "busy writing", "afraid
  it would") and the antonym is not the same word with a negative prefix ("humble of");
  a predicative-only antonym in front of a noun ("a glad ending"); a short antonym after
  "more" / "most" ("more cheap");
* :func:`rare`: the antonym is a rare word (wordfreq Zipf below 3 and more than one below the
  adjective's own: "unready", "unsurprised", "nonslippery").
"""

from __future__ import annotations

import re
from functools import cache

from consistency_bench.bench.errors import ConfigError

#: Words that negate what follows them (beyond ``negation.NEGATORS``).
NEGATIVE = frozenset(
    "not n't never no nobody nothing none neither nor noone nowhere without hardly barely "
    "scarcely rarely seldom".split()
)
#: Adjective + noun (or adjective + word) phrases that are idioms, not in WordNet.
FIXED = frozenset({("separate", "ways"), ("wrong", "number"), ("small", "account"),
                   ("idle", "gossip"), ("little", "bit"), ("short", "while"),
                   ("long", "while"), ("good", "luck"), ("bad", "luck"), ("be", "sure"),
                   ("as", "possible")})
#: WordNet antonym pairs that are no contradiction (co-hyponyms).
NOT_CONTRADICTORY = frozenset({("hungry", "thirsty"), ("thirsty", "hungry")})
#: Adjectives whose WordNet antonym is for a sense other than their common one in stories.
OTHER_SENSE = frozenset({"outgoing", "odd", "junior", "senior", "major", "minor", "round",
                         "perfect", "serious", "internal", "external", "holy"})
#: Compass-point adjectives: "the northern face" and "the southern face" can both be true.
DIRECTIONAL = frozenset("northern southern eastern western north south east west northerly "
                        "southerly easterly westerly".split())
#: Adjectives that mean *severe* in front of these noun classes, where their antonym fails.
SEVERITY = frozenset({"bad", "serious"})
#: WordNet noun synsets whose hyponyms are ills, bad weather and mishaps.
ILLS = frozenset({
    "ill_health.n.01", "symptom.n.01", "pain.n.01", "injury.n.01", "atmospheric_phenomenon.n.01",
    "weather.n.01", "misfortune.n.01", "trouble.n.03", "difficulty.n.03", "crime.n.01",
    "nonaccomplishment.n.01", "damage.n.01", "psychological_state.n.01",
})
#: Size adjectives: of an abstract noun they mean important or serious ("big trouble", "a big
#: issue"), where the antonym ("little trouble") does not contradict.
SIZE = frozenset({"big", "small", "large", "little"})
#: Abstract nouns whose size is a real size: groups and amounts ("a small group", "a large sum").
COUNTABLE_ABSTRACT = frozenset({"group.n.01", "measure.n.02", "set.n.01"})
#: Temperature adjectives: of clothing they mean insulating ("a warm sweater"), not a temperature.
TEMPERATURE = frozenset({"warm", "cool"})
#: Antonyms that stand after a copula, rarely in front of a noun ("a glad ending").
PREDICATIVE = frozenset(
    "glad afraid unafraid asleep awake alive aware unaware able unable sure unsure ready "
    "unready content fond ashamed alone".split()
)
#: Prefixes that make the antonym the same word negated, or un-negated ("unhappy with").
NEGATIVE_PREFIXES = ("un", "dis", "in", "im")
#: Dependency labels of an adjective used as one (attributive, predicative, coordinated).
ADJECTIVE_ROLES = frozenset({"amod", "acomp", "attr", "oprd", "conj", "xcomp", "ccomp"})
#: wordfreq Zipf below which an antonym is rare (when also more than RARE_GAP below the word's).
RARE_ZIPF = 3.0
RARE_GAP = 1.0


def negated_context(doc) -> str | None:
    """A negation in the sentence (then a swap may be a double negative or not contradict)."""
    for tok in doc:
        if tok.lower_ in NEGATIVE or tok.dep_ == "neg":
            return f"negated context ({tok.text!r})"
    return None


def _lemma(tok) -> str:
    return (tok.lemma_ if tok.pos_ in ("VERB", "AUX") else tok.text).lower()


def fixed_phrase(tok, wordnet) -> str | None:
    """The multiword expression, hyphenated word or idiom the adjective belongs to, if any."""
    doc = tok.doc
    text = doc.text
    start, end = tok.idx, tok.idx + len(tok.text)
    if text[start - 1:start] == "-" or text[end:end + 1] == "-":
        return f"{tok.text!r} is part of a hyphenated word"
    i = tok.i
    windows = [(a, b) for a in range(i - 2, i + 1) for b in range(i + 1, i + 4)
               if a >= 0 and b <= len(doc) and 2 <= b - a <= 3]
    for a, b in windows:
        words = [_lemma(t) for t in doc[a:b]]
        if wordnet.synsets("_".join(words)) or (b - a == 2 and tuple(words) in FIXED):
            return f"{tok.text!r} is part of the fixed phrase {doc[a:b].text!r}"
    return None


def wrong_role(tok, wordnet) -> str | None:
    """Not used as an adjective, with a measure, or an imperative verb."""
    if tok.dep_ not in ADJECTIVE_ROLES:
        return f"{tok.text!r} is used as {tok.dep_}, not as an adjective"
    if tok.i == tok.sent.start and _semcor(wordnet, tok.lower_, "v") > _semcor(
            wordnet, tok.lower_, "a") + _semcor(wordnet, tok.lower_, "s"):
        return f"{tok.text!r} opens the sentence and is mostly a verb (an imperative)"
    if any(c.dep_ == "npadvmod" for c in tok.children):
        return f"{tok.text!r} takes a measure"
    return None


def _semcor(wordnet, word: str, pos: str) -> int:
    return sum(lemma.count() for synset in wordnet.synsets(word, pos)
               for lemma in synset.lemmas() if lemma.name().lower() == word)


def described_noun(tok):
    """The noun the adjective describes: its head (attributive) or the clause's subject."""
    head = tok
    while head.dep_ == "conj":
        head = head.head
    if head.dep_ == "amod":
        return head.head
    subjects = [c for c in head.head.children if c.dep_ in ("nsubj", "nsubjpass")]
    return subjects[0] if subjects else None


def _classes(noun, wordnet, senses: int = 2) -> set[str]:
    """The WordNet synsets above the noun's first ``senses`` senses (and those senses)."""
    found = (wordnet.synsets(noun.lemma_.lower(), "n")
             or wordnet.synsets(noun.text.lower(), "n"))[:senses]  # spaCy: clothes -> clothe
    return {h.name() for s in found for h in [s, *s.closure(lambda x: x.hypernyms())]}


def _noun_sense_problem(word: str, antonym: str, noun, wordnet) -> str | None:
    """The adjective's sense with this noun is not the one its antonym opposes."""
    if word in SEVERITY and _classes(noun, wordnet) & ILLS:
        return f"{word!r} of {noun.text!r} means severe ({antonym!r} does not contradict)"
    first = _classes(noun, wordnet, 1)
    if (word in SIZE and "abstraction.n.06" in first and not first & COUNTABLE_ABSTRACT
            and "physical_entity.n.01" not in first):
        return f"{word!r} of the abstract {noun.text!r} means important, not a size"
    if word in TEMPERATURE and "clothing.n.01" in first:
        return f"{word!r} clothing is insulating, not a temperature"
    return None


def sense_mismatch(tok, antonym: str, wordnet) -> str | None:
    """The antonym would be for another sense than the adjective's here."""
    word = tok.lower_
    if (word, antonym.lower()) in NOT_CONTRADICTORY:
        return f"{word!r} and {antonym!r} are no contradiction"
    if word in OTHER_SENSE:
        return f"{word!r} is common in a sense WordNet's antonym is not for"
    if word in DIRECTIONAL:
        return f"{word!r} and {antonym!r} name two directions: both can be true"
    if any(t.lower_ == antonym.lower() for t in tok.doc):  # "bad points as well as good points"
        return f"{antonym!r} is already in the sentence (a contrast, not a contradiction)"
    noun = described_noun(tok)
    if noun is not None and noun.pos_ in ("NOUN", "PROPN"):
        found = _noun_sense_problem(word, antonym, noun, wordnet)
        if found is not None:
            return found
    senses = [s for s in wordnet.synsets(word) if s.pos() in ("a", "s")]

    def count(synset, links) -> int:
        return sum(lemma.count() for lemma in synset.lemmas()
                   if lemma.name().lower() == word and links(lemma))

    related = sum(count(s, lambda lemma: lemma.pertainyms()) for s in senses)
    opposed = sum(count(s, lambda lemma: lemma.antonyms()) for s in senses)
    if related and 3 * related >= opposed:
        return f"{word!r} is mostly relational ('of or relating to ...') in WordNet"
    return None


def _complements(tok) -> list:
    """The complements the adjective selects.

    A preposition (not the adjunct "for": "short for her age", "too hot for Tom"), a clause,
    or a gerund ("busy writing"); an infinitive ("easy to use", "happy to help") suits the
    antonym as well.
    """
    prep = [c for c in tok.children if c.dep_ in ("prep", "pcomp") and c.lower_ != "for"]
    clause = [c for c in tok.children
              if c.dep_ == "ccomp" or (c.dep_ in ("xcomp", "advcl") and c.tag_ == "VBG")]
    return sorted(prep + clause, key=lambda c: c.i)


def _short(word: str) -> bool:
    """One syllable, or two ending like "easy", "simple", "narrow" (compared with -er)."""
    syllables = len(re.findall(r"[aeiouy]+", word.lower().rstrip("e")))
    return syllables <= 1 or (syllables == 2 and re.search(r"(y|le|er|ow)$", word.lower()))


def wrong_valency(tok, antonym: str) -> str | None:
    """Why the antonym cannot stand in the adjective's construction, or None.

    A complement it cannot take, a predicative antonym before a noun, or a short antonym
    after "more" / "most" ("more expensive" -> "more cheap").
    """
    before = tok.doc[tok.i - 1].lower_ if tok.i > 0 else ""
    if before in ("more", "most") and _short(antonym):
        return f"'{before} {antonym}': {antonym!r} compares with -er / -est"
    complements = _complements(tok)
    prefixed = any(antonym.lower() == p + tok.lower_ or tok.lower_ == p + antonym.lower()
                   for p in NEGATIVE_PREFIXES)  # "unhappy with" <-> "happy with"
    if complements and not prefixed:  # "proud of" -> "humble of"; "unhappy with" is fine
        return f"{antonym!r} cannot take {tok.text!r}'s complement {complements[0].text!r}"
    if tok.dep_ == "amod" and antonym.lower() in PREDICATIVE:
        return f"{antonym!r} does not stand before a noun"
    return None


@cache
def _zipf():
    try:
        from wordfreq import zipf_frequency
    except ImportError:
        raise ConfigError("antonym candidates need wordfreq (the nlp extra: pip install "
                          "'consistency-bench[nlp]') to refuse rare antonyms") from None
    return zipf_frequency


def rare(word: str, antonym: str) -> str | None:
    """The antonym is rare: Zipf below RARE_ZIPF and more than RARE_GAP below the word's."""
    zipf = _zipf()
    ours, theirs = zipf(word.lower(), "en"), zipf(antonym.lower(), "en")
    if theirs < RARE_ZIPF and theirs < ours - RARE_GAP:
        return f"{antonym!r} is rare (Zipf {theirs:.1f}, {word!r} {ours:.1f})"
    return None


def context_problem(tok, antonym: str, wordnet) -> str | None:
    """The first reason the swap of ``tok`` for ``antonym`` would not contradict, or None."""
    checks = (lambda: negated_context(tok.doc), lambda: wrong_role(tok, wordnet),
              lambda: fixed_phrase(tok, wordnet), lambda: sense_mismatch(tok, antonym, wordnet),
              lambda: wrong_valency(tok, antonym), lambda: rare(tok.text, antonym))
    for check in checks:
        found = check()
        if found is not None:
            return found
    return None

