"""Antonym replacement: one adjective at a time (BECEL section 3.2).

BECEL took antonyms from ConceptNet. Here an ``AntonymSource`` is anything with
``antonyms(word, pos) -> tuple[str, ...]``; ``ConceptNetAntonyms`` reads a local
``conceptnet-lite`` database (``build_conceptnet_db`` makes one from a ConceptNet 5 assertions
file, offline), ``WordNetAntonyms`` reads WordNet through NLTK, and ``ChainedAntonyms`` asks
them in order (ConceptNet first, WordNet as the fallback). Every source returns antonyms in a
fixed order, so generation is deterministic.

Only adjectives (spaCy ``ADJ``, Penn tag ``JJ``) are replaced, and only where the antonym holds
in the sense the word most likely has (issue 21: "the alive man", "late aged", "heavy" for
"light" the colour). WordNet gives an antonym only when

* the word's first (most frequent) adjective sense is a head synset whose lemma for the word
  has a *direct* antonym (satellite senses have none);
* every adjective sense of the word that has a direct antonym gives the same one (otherwise
  the antonym depends on a sense the sentence decides: light -> heavy / dark, old -> young /
  new, good -> bad / evil);
* that sense is not a colour or time sense (its gloss names no colour, hue, time, period,
  age, ...);
* the word is mostly an adjective (SemCor counts: not a noun mis-tagged, "a blue uniform");
* the antonym can stand where the word stands: a predicative-only antonym (``alive(p)``)
  never replaces an attributive adjective ("the dead man"), an attributive-only one never a
  predicative one.

Colour and time adjectives (:data:`COLOUR_OR_TIME`) and determiner-like ones
(:data:`DETERMINER_LIKE`: "each other", "a few") are never replaced, whatever the source.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from consistency_bench.bench.errors import ConfigError
from consistency_bench.builders.generate.context import context_problem
from consistency_bench.builders.generate.negation import NEGATORS, Edit, Negated, Rejected
from consistency_bench.builders.generate.wordnet import load_wordnet, wordnet_reader

#: spaCy coarse tag -> (ConceptNet sense letters, WordNet pos letters).
POS = {"ADJ": (("a", "s"), ("a", "s")), "ADV": (("r",), ("r",))}
#: Adjectives whose antonym depends on a colour or time sense: never replaced.
COLOUR_OR_TIME = frozenset(
    "black white dark light pale bright fair deep red green blue yellow brown grey gray "
    "late early old new young aged elderly first last past present future recent modern "
    "ancient current former latter next previous final initial long short daily nightly "
    "young old".split()
)
#: Determiner-like adjectives (quantity, identity): "each other" -> "each same", "a few" ->
#: "a many", "multiple people" -> "single people". Never replaced.
DETERMINER_LIKE = frozenset(
    "other same different several multiple single many few much more most less least various "
    "certain own such whole entire only sole particular numerous".split()
)
#: A WordNet gloss of a colour or time sense.
_COLOUR_OR_TIME_GLOSS = re.compile(
    r"\b(colou?r\w*|hue|light(ness)?|dark(ness)?|time|times|period|age|ages|era|year|years|"
    r"hour|day|days|season|life|lived|recent\w*|past|future|early|late)\b", re.IGNORECASE)


class AntonymSource(Protocol):
    """Anything that lists antonyms of a word used as ``pos`` (``ADJ`` or ``ADV``)."""

    name: str

    def antonyms(self, word: str, pos: str, attributive: bool | None = None) -> tuple[str, ...]:
        """Single-word antonyms of ``word``, best first, in a fixed order.

        ``attributive``: whether the word stands before a noun (``True``), after a copula
        (``False``) or unknown (``None``); a source may use it to drop antonyms that cannot
        stand there.
        """
        ...


class WordNetAntonyms:
    """Antonyms from WordNet 3.0 through NLTK (lemma antonym links, synset order)."""

    name = "wordnet"

    def __init__(self) -> None:
        self._wn = load_wordnet()

    def antonyms(self, word: str, pos: str, attributive: bool | None = None) -> tuple[str, ...]:
        """The direct antonym of ``word``'s dominant adjective sense, if it is safe to use.

        See the module docstring for the rules; ``()`` when any fails. Adverbs get none.
        """
        if pos != "ADJ":
            return ()
        if _count(self._wn, word, "n") > _count(self._wn, word, "a") + _count(self._wn, word, "s"):
            return ()  # mostly a noun ("a blue uniform"): a tagging error, not an adjective
        senses = [s for s in self._wn.synsets(word) if s.pos() in POS[pos][1]]
        if not senses or senses[0].pos() != "a":
            return ()
        first = _antonym_lemmas(senses[0], word)
        if not first or _COLOUR_OR_TIME_GLOSS.search(senses[0].definition()):
            return ()
        names = {a.name().lower() for s in senses for a in _antonym_lemmas(s, word)}
        if len(names) != 1:
            return ()
        antonym = first[0]
        marker = antonym.syntactic_marker() or ""
        if not antonym.name().isalpha():
            return ()
        if attributive is True and marker == "(p)":
            return ()
        if attributive is False and marker in ("(a)", "(ip)"):
            return ()
        return (antonym.name(),)


def _count(wordnet, word: str, pos: str) -> int:
    """SemCor frequency of ``word`` as ``pos`` (sum of its lemma counts)."""
    return sum(lemma.count() for synset in wordnet.synsets(word, pos) for lemma in synset.lemmas()
               if lemma.name().lower() == word.lower())


def _antonym_lemmas(synset, word: str) -> list:
    """The direct antonyms of ``word``'s lemma in ``synset`` (none for satellite synsets)."""
    return [a for lemma in synset.lemmas() if lemma.name().lower() == word.lower()
            for a in lemma.antonyms()]


def build_conceptnet_db(assertions: str | os.PathLike, db_path: str | os.PathLike) -> Path:
    """Build a conceptnet-lite database from a local ConceptNet 5 assertions file (offline).

    The file is the uncompressed ``conceptnet-assertions-5.x.csv``: tab-separated edge URI,
    relation (``/r/Antonym``), start concept, end concept, JSON info. conceptnet-lite's own
    loader (``conceptnet_lite.db.load_dump_to_db``) is used; it never touches the network.

    Args:
        assertions: The assertions file.
        db_path: The database to write (must not exist).

    Returns:
        The database path.

    """
    from conceptnet_lite.db import load_dump_to_db

    source, target = Path(assertions), Path(db_path)
    if not source.is_file():
        raise ConfigError(f"{source}: ConceptNet assertions file not found")
    if target.exists():
        raise ConfigError(f"{target}: already exists; remove it to rebuild")
    with source.open(encoding="utf-8") as handle:
        count = sum(1 for _ in handle)
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        if len(line.split("\t")) != 5:
            raise ConfigError(
                f"{source}:{number}: expected 5 tab-separated fields (uri, relation, start, end, "
                f"json), got {len(line.split(chr(9)))}"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    load_dump_to_db(dump_path=source, db_path=target, edge_count=count, delete_dump=False)
    return target


class ConceptNetAntonyms:
    """Antonyms from a local conceptnet-lite database (``/r/Antonym`` edges, both directions).

    Ordered by edge weight (highest first), then alphabetically. Only English single words
    whose sense (when the concept has one) matches the part of speech are returned.
    """

    name = "conceptnet"

    def __init__(self, db_path: str | os.PathLike, language: str = "en") -> None:
        path = Path(db_path)
        if not path.is_file():
            raise ConfigError(
                f"ConceptNet database {path} not found; build one from a local assertions file "
                "with consistency_bench.builders.generate.antonyms.build_conceptnet_db, or leave --conceptnet out "  # noqa: E501
                "to use WordNet only (no download is attempted)"
            )
        from conceptnet_lite.db import _open_db

        _open_db(path)
        self.language = language

    def antonyms(self, word: str, pos: str, attributive: bool | None = None) -> tuple[str, ...]:
        """Antonyms of ``word`` as ``pos``.

        ``attributive`` is not used: ConceptNet has no syntactic markers.
        """
        from conceptnet_lite.db import Concept, Edge, Label, Language, Relation
        from peewee import DoesNotExist

        try:
            relation = Relation.get(name="antonym")
            language = Language.get(name=self.language)
            label = Label.get(text=word.lower(), language=language)
        except DoesNotExist:  # every model's DoesNotExist subclasses peewee's
            return ()
        concepts = [c for c in Concept.select().where(Concept.label == label)
                    if _sense_ok(c.sense_label, pos)]
        if not concepts:
            return ()
        scored: dict[str, float] = {}
        ids = [c.id for c in concepts]
        query = Edge.select().where(
            (Edge.relation == relation) & (Edge.start.in_(ids) | Edge.end.in_(ids))
        )
        for edge in query:
            other = edge.end if edge.start_id in ids else edge.start
            text = other.label.text
            if other.label.language_id != language.id or not text.isalpha():
                continue
            if not _sense_ok(other.sense_label, pos) or text == word.lower():
                continue
            weight = float((edge.etc or {}).get("weight", 1.0))
            scored[text] = max(scored.get(text, weight), weight)
        return tuple(sorted(scored, key=lambda t: (-scored[t], t)))


def _sense_ok(sense_label: str, pos: str) -> bool:
    letter = sense_label.split("/")[0] if sense_label else ""
    return not letter or letter in POS[pos][0]


@dataclass
class ChainedAntonyms:
    """Ask sources in order; the first with an answer wins (ConceptNet, then WordNet)."""

    sources: Sequence[AntonymSource]

    @property
    def name(self) -> str:
        """Names of the sources, joined by '+'."""
        return "+".join(s.name for s in self.sources)

    def lookup(self, word: str, pos: str,
               attributive: bool | None = None) -> tuple[str, str] | None:
        """The first antonym and the name of the source that gave it, or ``None``."""
        for source in self.sources:
            found = source.antonyms(word, pos, attributive)
            if found:
                return found[0], source.name
        return None


#: Words that start with a vowel letter and a consonant sound ("a usual", "a one-off"), and
#: with a consonant letter and a vowel sound ("an hour", "an honest").
_A_BEFORE_VOWEL = re.compile(r"^(uni|use|usu|uti|uri|ura|ubiq|euro?|eu|ewe|one\b|once)")
_AN_BEFORE_H = re.compile(r"^(hour|honest|honou?r|heir|herb)")


def indefinite_article(word: str) -> str:
    """The indefinite article before ``word``, by its first sound (spelling and exceptions)."""
    lower = word.lower()
    if _AN_BEFORE_H.match(lower):
        return "an"
    if lower[:1] in "aeiou" and not _A_BEFORE_VOWEL.match(lower):
        return "an"
    return "a"


def antonym_candidates(doc, sources: ChainedAntonyms) -> tuple[list[Negated], list[Rejected]]:
    """One candidate per adjective that has a safe antonym, in sentence order.

    Args:
        doc: A parsed sentence.
        sources: Antonym sources in order of preference.

    Returns:
        The replacements (tag ``antonym``, rule ``antonym:<source>``) and, per adjective
        without an antonym, why.

    """
    made: list[Negated] = []
    rejected: list[Rejected] = []
    words = [t for t in doc if t.pos_ == "ADJ" and t.tag_ == "JJ" and t.is_alpha
             and t.lower_ not in NEGATORS]
    if not words:
        return [], [Rejected("no adjective")]
    for tok in words:
        if tok.lower_ in COLOUR_OR_TIME:
            rejected.append(Rejected(f"{tok.lower_!r} is a colour or time adjective"))
            continue
        if tok.lower_ in DETERMINER_LIKE:
            rejected.append(Rejected(f"{tok.lower_!r} is a determiner-like adjective"))
            continue
        attributive = {"amod": True, "acomp": False, "attr": False}.get(tok.dep_)
        found = sources.lookup(tok.lower_, tok.pos_, attributive)
        if found is None:
            rejected.append(Rejected(f"no safe antonym for {tok.lower_!r} ({tok.pos_})"))
            continue
        antonym, source = found
        problem = context_problem(tok, antonym, wordnet_reader())
        if problem is not None:
            rejected.append(Rejected(f"antonym {antonym!r} of {tok.lower_!r}: {problem}"))
            continue
        before = doc[tok.i - 1].lower_ if tok.i > doc[0].i else ""
        if before in ("a", "an") and before != indefinite_article(antonym):
            rejected.append(Rejected(f"antonym {antonym!r} of {tok.lower_!r} would need "
                                     f"'{before}' changed (one word at a time)"))
            continue
        if tok.text[:1].isupper():
            antonym = antonym[:1].upper() + antonym[1:]
        edit = Edit(tok.idx, tok.idx + len(tok.text), antonym)
        made.append(Negated(edit.apply(doc.text), "antonym", f"antonym:{source}", edit))
    return made, rejected
