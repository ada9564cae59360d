"""What takes scope over an inserted "not", so that the negated sentence would not contradict.

Inserting "not" contradicts a sentence only when the negation takes scope over the whole
clause. Some words take scope over it instead (issue 32, item 2, on ART stories):

* an indefinite time adjunct: "I came home from work one day" -> "I did not come home from
  work one day" (there is a day on which I did not: both can be true);
* a quantified subject: "Some people came" -> "Some people did not come" (both true);
  "Everyone left" -> "Everyone did not leave" (ambiguous);
* an existential quantifier after the verb: "They participated in several activities" ->
  "... did not participate in several activities" (several they skipped). These are
  *handled*: the quantifier becomes its negative-polarity form, "did not participate in any
  activities", which does contradict (:data:`NEGATIVE_POLARITY`);
* positive-polarity and focus adverbs: "She sometimes cries" -> "does not sometimes cry",
  "Arnold nearly fainted" -> "nearly did not faint", "Jake just moved" -> "did not just move"
  ("not just": more than that);
* a manner or time adverb between the subject and a do-supported verb: "He quickly ran home"
  -> "He quickly did not run home";
* a second, coordinated predicate: "She was angry and left" -> "She was not angry and left"
  (she still left).

:func:`scope_problem` names the first such word, or returns None; :func:`polarity_swaps` lists
the quantifiers to turn into their negative-polarity forms. Numerals and singular indefinites
("Two dogs run", "A man sleeps", "Someone is cooking", "A couple of men work") are kept: the
NLI convention (and the BECEL release) reads their negation as being about the same dogs and
man.
"""

from __future__ import annotations

#: Determiners and pronouns of a subject that take scope over the negation after it. Not
#: "someone" / "somebody" / "something": singular indefinites, read as "a man" is (below).
SUBJECT_QUANTIFIERS = frozenset(
    "some several many most all every each few both various numerous multiple certain "
    "everyone everybody everything".split()
)
#: Quantifiers that float off a subject ("We all sang", "They both left").
FLOATING = frozenset("all both each".split())
#: Nouns of quantity phrases ("a lot of", "a number of", "the majority of"). Not "couple": "A
#: couple is walking" is a pair of people, and "a couple of men" reads as a numeral (kept).
QUANTITY_NOUNS = frozenset("lot lots plenty number majority handful bunch".split())
#: Existential quantifiers after the negation, and their negative-polarity forms.
NEGATIVE_POLARITY = {
    "some": "any", "several": "any", "someone": "anyone", "somebody": "anybody",
    "something": "anything", "somewhere": "anywhere",
}
#: Adverbs that take scope over (or focus under) the negation wherever they stand.
SCOPE_ADVERBS = frozenset(
    "sometimes sometime someday somehow somewhat already once just only even merely simply "
    "nearly almost barely hardly scarcely rarely seldom".split()
)
#: Parts of speech of a predicate coordinated with the clause's verb.
PREDICATES = frozenset({"VERB", "AUX", "ADJ"})
#: Adverbs that may stand between the subject and "did not" ("I really did not like it").
BEFORE_NEGATION_OK = frozenset("really actually also still then now so truly definitely "
                               "certainly".split())
#: Nouns of time that an indefinite turns into a time adjunct ("one day", "at one point").
TIME_NOUNS = frozenset(
    "day days night nights morning mornings afternoon evening week weekend month year summer "
    "winter spring fall autumn time times moment point occasion hour minute season holiday "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
#: Determiners that make a time noun indefinite.
INDEFINITE = frozenset("one a an some another certain".split())


def _quantified_subject(subject) -> str | None:
    for tok in [subject, *subject.children]:
        word = tok.lower_
        role = tok.i == subject.i or tok.dep_ in ("det", "amod", "predet", "nummod", "quantmod")
        if (role and word in SUBJECT_QUANTIFIERS) or word in FLOATING:  # "We all sang"
            return word
        if tok.i == subject.i and word in QUANTITY_NOUNS:
            return word
    return None


def _time_adjunct(tok) -> bool:
    """An indefinite time noun used as an adjunct ("one day", "at one point", "on a Sunday")."""
    if tok.lower_ not in TIME_NOUNS or tok.dep_ not in ("npadvmod", "tmod", "pobj", "obl"):
        return False
    if tok.dep_ == "pobj" and tok.head.lower_ not in ("at", "on", "in", "during", "for", "over",
                                                       "one"):
        return False
    attached = tok.head.head if tok.dep_ == "pobj" else tok.head
    if attached.pos_ not in ("VERB", "AUX"):  # "many hours a week", "an hour away": no adjunct
        return False
    return any(c.dep_ in ("det", "nummod") and c.lower_ in INDEFINITE for c in tok.children)


def scope_problem(doc, head, subject, insert_at: int, do_support: bool) -> str | None:
    """The word that would take scope over the negation inserted at token ``insert_at``.

    Args:
        doc: The parsed sentence.
        head: The clause's verb (or copula).
        subject: Its subject token, or None.
        insert_at: Index of the first token after the inserted negation.
        do_support: Whether "do not" replaces the verb (adverbs before it then precede it).

    Returns:
        A reason naming the word, or None when the negation takes the whole clause.

    """
    if subject is not None:
        found = _quantified_subject(subject)
        if found is not None and subject.i < insert_at:
            return f"quantified subject {found!r} would take scope over the negation"
    for tok in doc:
        word = tok.lower_
        if word in SCOPE_ADVERBS and tok.pos_ in ("ADV", "PART", "DET", "SCONJ"):
            return f"{word!r} would take scope over the negation (or focus under it)"
        if word == "too" and tok.head.i == head.i:
            return "'too' (as 'also') needs 'either' under a negation"
        if word == "also" and tok.i >= insert_at:
            return "'also' after the negation would read 'not also'"
        if _time_adjunct(tok):
            first = tok.head if tok.dep_ == "pobj" else tok.left_edge
            phrase = doc[first.i - doc[0].i:tok.i - doc[0].i + 1].text
            return f"the time adjunct {phrase!r} would take scope over the negation"
        if word == "some" and tok.i >= insert_at and tok.dep_ in ("advmod", "quantmod"):
            return "'some' before a number (an approximation) has no negative form"
        if word in ("few", "couple") and tok.i >= insert_at:
            return f"'a {word}' after the negation would take scope over it"
    coordinated = [c for c in head.children if c.dep_ == "conj" and c.pos_ in PREDICATES]
    if coordinated:  # "was not angry and left": the second predicate is not negated
        return f"a coordinated predicate {coordinated[0].text!r} would stay outside the negation"
    if do_support and subject is not None:
        for tok in head.children:
            if (tok.dep_ == "advmod" and subject.i < tok.i < head.i
                    and tok.lower_ not in BEFORE_NEGATION_OK):
                return f"adverb {tok.text!r} before the verb would take scope over 'did not'"
    return None


def polarity_swaps(doc, insert_at: int) -> list[tuple[object, str]]:
    """``(token, replacement)`` for each existential quantifier after the negation.

    "some" / "several" as determiners or pronouns (not "some 20 people") and someone,
    something, ... become any, anyone, anything, ...
    """
    swaps = []
    for tok in doc:
        word = tok.lower_
        if tok.i < insert_at or word not in NEGATIVE_POLARITY:
            continue
        if word in ("some", "several") and tok.dep_ not in ("det", "amod", "dobj", "pobj",
                                                            "nsubj", "attr"):
            continue  # "some 20 people": an approximation, not a quantifier
        replacement = NEGATIVE_POLARITY[word]
        if tok.text[:1].isupper():
            replacement = replacement[:1].upper() + replacement[1:]
        swaps.append((tok, replacement))
    return swaps
