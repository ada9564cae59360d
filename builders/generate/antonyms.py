"""Antonym replacement: one adjective or adverb at a time (BECEL section 3.2).

BECEL took antonyms from ConceptNet. Here an ``AntonymSource`` is anything with
``antonyms(word, pos) -> tuple[str, ...]``; ``ConceptNetAntonyms`` reads a local
``conceptnet-lite`` database (``build_conceptnet_db`` makes one from a ConceptNet 5 assertions
file, offline), ``WordNetAntonyms`` reads WordNet through NLTK, and ``ChainedAntonyms`` asks
them in order (ConceptNet first, WordNet as the fallback). Every source returns antonyms in a
fixed order, so generation is deterministic.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bench.errors import ConfigError
from builders.generate.negation import NEGATORS, Edit, Negated, Rejected

#: spaCy coarse tag -> (ConceptNet sense letters, WordNet pos letters).
POS = {"ADJ": (("a", "s"), ("a", "s")), "ADV": (("r",), ("r",))}
REPO_NLTK_DATA = Path(__file__).resolve().parents[2] / ".venv" / "nltk_data"


class AntonymSource(Protocol):
    """Anything that lists antonyms of a word used as ``pos`` (``ADJ`` or ``ADV``)."""

    name: str

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        """Single-word antonyms of ``word``, best first, in a fixed order."""
        ...


def nltk_data_paths() -> list[str]:
    """Where WordNet is looked for: NLTK_DATA, the repo's .venv/nltk_data, the venv's."""
    paths = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    paths += [str(REPO_NLTK_DATA), str(Path(sys.prefix) / "nltk_data")]
    return paths


class WordNetAntonyms:
    """Antonyms from WordNet 3.0 through NLTK (lemma antonym links, synset order)."""

    name = "wordnet"

    def __init__(self) -> None:
        try:
            import nltk
            from nltk.corpus import wordnet
        except ImportError as exc:
            raise ConfigError(f"WordNet antonyms need nltk (the nlp extra): {exc}") from None
        for path in reversed(nltk_data_paths()):
            if path not in nltk.data.path:
                nltk.data.path.insert(0, path)
        try:
            wordnet.ensure_loaded()
        except LookupError:
            raise ConfigError(
                "WordNet data not found in " + ", ".join(nltk_data_paths()) + ": run "
                "scripts/system-deps.sh and scripts/data-deps.sh (Debian wordnet-base copied into "
                ".venv/nltk_data) or set NLTK_DATA"
            ) from None
        self._wn = wordnet

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        """Antonyms of ``word`` as ``pos``, in WordNet's synset and lemma order."""
        found: list[str] = []
        for synset in self._wn.synsets(word):
            if synset.pos() not in POS[pos][1]:
                continue
            for lemma in synset.lemmas():
                if lemma.name().lower() != word.lower():
                    continue
                for antonym in lemma.antonyms():
                    name = antonym.name()
                    if name.isalpha() and name not in found:
                        found.append(name)
        return tuple(found)


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
                "with builders.generate.antonyms.build_conceptnet_db, or leave --conceptnet out "
                "to use WordNet only (no download is attempted)"
            )
        from conceptnet_lite.db import _open_db

        _open_db(path)
        self.language = language

    def antonyms(self, word: str, pos: str) -> tuple[str, ...]:
        """Antonyms of ``word`` as ``pos``."""
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

    def lookup(self, word: str, pos: str) -> tuple[str, str] | None:
        """The first antonym and the name of the source that gave it, or ``None``."""
        for source in self.sources:
            found = source.antonyms(word, pos)
            if found:
                return found[0], source.name
        return None


def antonym_candidates(doc, sources: ChainedAntonyms) -> tuple[list[Negated], list[Rejected]]:
    """One candidate per adjective or adverb that has an antonym, in sentence order.

    Args:
        doc: A parsed sentence.
        sources: Antonym sources in order of preference.

    Returns:
        The replacements (tag ``antonym``, rule ``antonym:<source>``) and, per adjective /
        adverb without an antonym, why.

    """
    made: list[Negated] = []
    rejected: list[Rejected] = []
    words = [t for t in doc if t.pos_ in POS and t.is_alpha and t.lower_ not in NEGATORS]
    if not words:
        return [], [Rejected("no adjective or adverb")]
    for tok in words:
        found = sources.lookup(tok.lower_, tok.pos_)
        if found is None and tok.tag_ in ("JJ", "RB") and tok.lemma_.lower() != tok.lower_:
            found = sources.lookup(tok.lemma_.lower(), tok.pos_)
        if found is None:
            rejected.append(Rejected(f"no antonym for {tok.lower_!r} ({tok.pos_})"))
            continue
        antonym, source = found
        before = doc[tok.i - 1].lower_ if tok.i > doc[0].i else ""
        if before in ("a", "an") and (before == "an") != (antonym[:1].lower() in "aeiou"):
            rejected.append(Rejected(f"antonym {antonym!r} of {tok.lower_!r} would need "
                                     f"'{before}' changed (one word at a time)"))
            continue
        if tok.text[:1].isupper():
            antonym = antonym[:1].upper() + antonym[1:]
        edit = Edit(tok.idx, tok.idx + len(tok.text), antonym)
        made.append(Negated(edit.apply(doc.text), "antonym", f"antonym:{source}", edit))
    return made, rejected
