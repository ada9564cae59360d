"""Rows of the statistical word-salad suites (``<task>_salad_pbsmt``), whole or per part.

Per-label phrase-based systems trained on data disjoint from the evaluated rows, their
n-best outputs filtered (no copy, no permutation of the source, nothing degenerate).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.builders.becel.additive import maximal_phrases
from consistency_bench.builders.salad.constants import LOWER
from consistency_bench.builders.salad.degenerate import degenerate
from consistency_bench.builders.salad.lexical import transform as lexical
from consistency_bench.builders.salad.pbsmt import decode as pbsmt_decode
from consistency_bench.builders.salad.pbsmt import phrase_table as pbsmt_train
from consistency_bench.builders.salad.rows import _pair_rows
from consistency_bench.builders.salad.sources import TASK_SOURCES, Record, _resolve, read_records
from consistency_bench.builders.suite.spec import KeyedRows

#: Training pairs per label and model (the first ones in file order): NLTK's IBM models and
#: decoder are pure Python, so the stand-in trains on fewer pairs than Moses would.
MAX_TRAIN_PAIRS = 2000
#: Why a record has no PBSMT row, or where its output came from (``pbsmt_outcome``).
KEPT, NBEST, PERMUTATION, COPY, EMPTY, NO_SYSTEM = (
    "best", "n-best", "permutation", "copy", "empty", "no system")


def pbsmt_pair(record: Record, lower: bool = LOWER) -> tuple[list[str], list[str]]:
    """``(source, target)`` tokens of a record (lower-cased by default).

    Premise -> hypothesis, first question -> second question; SST-2: first half of the
    sentence -> second half (paper section 5).
    """
    if record.text_pair is not None:
        return lexical.tokenize(record.text, lower), lexical.tokenize(record.text_pair, lower)
    tokens = lexical.tokenize(record.text, lower)
    half = max(1, len(tokens) // 2)
    return tokens[:half], tokens[half:]


def train_pbsmt(records: Sequence[Record]) -> dict[int, pbsmt_train.PhraseModel]:
    """One phrase-based system per gold label, on at most ``MAX_TRAIN_PAIRS`` pairs each."""
    labels = dict.fromkeys(record.label for record in records)
    models = {label: train_label(records, label) for label in sorted(labels)}
    return {label: model for label, model in models.items() if model is not None}


def train_label(records: Sequence[Record], label: int) -> pbsmt_train.PhraseModel | None:
    """The system of one label; ``None`` when the label has no pair.

    Trained on the first ``MAX_TRAIN_PAIRS`` pairs of that label with tokens on both sides,
    in record order (as :func:`train_pbsmt` trains each label).
    """
    pairs: list[tuple[list[str], list[str]]] = []
    for record in records:
        if record.label == label and len(pairs) < MAX_TRAIN_PAIRS:
            source, target = pbsmt_pair(record)
            if source and target:
                pairs.append((source, target))
    return pbsmt_train.train(pairs) if pairs else None


def is_permutation(output: Sequence[str], source: Sequence[str]) -> bool:
    """Whether ``output`` holds exactly the tokens of ``source`` (as multisets): a Shuffle."""
    return len(output) == len(source) and sorted(output) == sorted(source)


def choose_output(nbest: Sequence[Sequence[str]], source: Sequence[str],
                  target: Sequence[str],
                  replaced: Sequence[str] | None = None) -> tuple[int | None, str]:
    """The first usable hypothesis of the decoder's n-best list, and why.

    A hypothesis is not usable when it is empty, equals the source or the target (a copy:
    nothing destroyed), is a permutation of the source (that is Shuffle, not PBSMT), also
    once its text is tokenized again (as ``consistency_bench.builders.card.figures`` measures it),
    or is
    degenerate (:func:`consistency_bench.builders.salad.degenerate.degenerate`: 2 or fewer word
    tokens, only
    function words and punctuation, or a contiguous run of the source or of ``replaced``,
    the text the output replaces; default ``target``; SST-2: the whole sentence).
    Returns ``(0, KEPT)`` for the best, ``(rank, "n-best:<reason>")`` for a later one
    (``reason``: why the best was not usable), and ``(None, reason)`` when none is usable
    (``reason``: that of the best hypothesis).
    """
    if not nbest:
        return None, EMPTY
    replaced = target if replaced is None else replaced
    first = None
    for rank, output in enumerate(nbest):
        again = lexical.tokenize(lexical.detokenize(output), LOWER) if output else []
        if not output:
            reason = EMPTY
        elif list(output) in (list(source), list(target)):
            reason = COPY
        elif is_permutation(output, source) or is_permutation(again, source):
            reason = PERMUTATION
        else:
            reason = degenerate(again, source, replaced)
            if reason is None:
                return rank, (KEPT if rank == 0 else f"{NBEST}:{first}")
        first = first or reason
    return None, first


#: The decoder's n-best lists of one part, by source tokens (``None``: no system was trained
#: for the part's label, so none of its records has a row).
NbestLists = dict[tuple[str, ...], list[list[str]]]


def outcome_of(record: Record, nbest: Sequence[Sequence[str]]) -> tuple[str | None, str]:
    """The record's text chosen from the n-best list of its source, and the outcome.

    The text is the first usable hypothesis (:func:`choose_output`): not a copy of the text
    it replaces or of the source it was translated from (a hypothesis that copies its premise
    makes an entailed pair, not a word salad), not a permutation of that source, and not
    degenerate. ``None`` (with the reason) when no hypothesis is usable: the row is dropped.
    """
    source, target = pbsmt_pair(record)
    replaced = target if record.text_pair is not None else lexical.tokenize(record.text, LOWER)
    rank, reason = choose_output(nbest, source, target, replaced)
    if rank is None:
        return None, reason
    return lexical.detokenize(nbest[rank]), reason


def pbsmt_outcome(models: dict[int, pbsmt_train.PhraseModel], record: Record,
                  memo: dict[tuple[str, ...], list[list[str]]] | None = None,
                  ) -> tuple[str | None, str]:
    """The record's source side translated by the system of its label, and the outcome.

    :func:`outcome_of` the decoder's n-best list; ``(None, NO_SYSTEM)`` when no system was
    trained for the label. ``memo``: n-best lists already made by the same system, by source
    tokens (decoding is deterministic; a premise recurs in 4-6% of the MNLI and SNLI records
    of one label).
    """
    model = models.get(record.label)
    if model is None:
        return None, NO_SYSTEM
    source = tuple(pbsmt_pair(record)[0])
    nbest = None if memo is None else memo.get(source)
    if nbest is None:
        nbest = pbsmt_decode.translate_nbest(model, source)
        if memo is not None:
            memo[source] = nbest
    return outcome_of(record, nbest)


def pbsmt_text(models: dict[int, pbsmt_train.PhraseModel], record: Record,
               memo: dict[tuple[str, ...], list[list[str]]] | None = None) -> str | None:
    """The text of :func:`pbsmt_outcome`: ``None`` when the record has no row."""
    return pbsmt_outcome(models, record, memo)[0]


#: A share of a ``<task>_salad_pbsmt`` suite: ``(fold, label)``, the rows of one gold label
#: with the one system that translates them. ``fold`` is always ``None`` (2.0.0 has no
#: cross-fitting; the shape is kept for the build pool).
PbsmtPart = tuple[int | None, int]


def pbsmt_parts(task: str) -> tuple[PbsmtPart, ...]:
    """Every part of ``<task>_salad_pbsmt``: one per label."""
    return tuple((None, label) for label in range(len(get_task(task).label_names)))


def held_out(records: Sequence[Record]) -> tuple[list[Record], list[Record]]:
    """A fixed held-out half by premise: ``(evaluated records, training records)``.

    The premises (first texts) are numbered in order of first appearance; the records of an
    even-numbered premise are evaluated, those of an odd-numbered one train the systems. A
    premise recurs with one hypothesis per label (MNLI: 3,334 premises in 9,815 rows), so a
    split by row would put most evaluated premises into the training half too.
    """
    number: dict[str, int] = {}
    for record in records:
        number.setdefault(record.text, len(number))
    return ([r for r in records if number[r.text] % 2 == 0],
            [r for r in records if number[r.text] % 2 == 1])


def _texts(record: Record) -> set[str]:
    """The record's texts as the systems see them (lower-cased tokens, joined)."""
    texts = {" ".join(lexical.tokenize(record.text, LOWER))}
    if record.text_pair is not None:
        texts.add(" ".join(lexical.tokenize(record.text_pair, LOWER)))
    return texts


def disjoint(train: Sequence[Record], records: Sequence[Record]) -> list[Record]:
    """``train`` without the records that share a text with an evaluated record.

    A training pair whose premise, hypothesis or sentence (lower-cased tokens) is also a text
    of an evaluated row is left out, so no system has seen an evaluated text.
    """
    seen = set().union(*map(_texts, records)) if records else set()
    return [r for r in train if not _texts(r) & seen]


def part_nbest(records: Sequence[Record], train: Sequence[Record],
               label: int) -> NbestLists | None:
    """The n-best list of every source of the records of ``label``, by that label's system.

    The system is trained on ``train`` (:func:`train_label`); each distinct source is decoded
    once (decoding is deterministic). ``None`` when no system could be trained.
    """
    model = train_label(train, label)
    if model is None:
        return None
    out: NbestLists = {}
    for record in records:
        if record.label == label:
            source = tuple(pbsmt_pair(record)[0])
            if source not in out:
                out[source] = pbsmt_decode.translate_nbest(model, source)
    return out


def nbest_rows(task: str, records: Sequence[Record], label: int, nbest: NbestLists | None,
               counts: Counter | None = None) -> KeyedRows:
    """Rows of the records of ``label``, keyed by record position, from their n-best lists.

    ``nbest``: :func:`part_nbest` of these records (``None``: no system, no row).
    ``counts``: when given, receives one :func:`outcome_of` reason per record of the label.
    """
    suite, path = f"{task}_salad_pbsmt", TASK_SOURCES[task].path
    out: KeyedRows = []
    for position, record in enumerate(records):
        if record.label != label:
            continue
        if nbest is None:
            new, reason = None, NO_SYSTEM
        else:
            new, reason = outcome_of(record, nbest[tuple(pbsmt_pair(record)[0])])
        if counts is not None:
            counts[reason] += 1
        if new is not None:
            out.append((position, list(_pair_rows(suite, task, "pbsmt", record, path, new))))
    return out


def part_rows(task: str, records: Sequence[Record], train: Sequence[Record],
              part: PbsmtPart, counts: Counter | None = None) -> KeyedRows:
    """Rows of one part, keyed by record position: its system trained, its records translated.

    ``records``: the evaluated records; ``train``: the training records (disjoint from them).
    ``counts``: when given, receives one :func:`outcome_of` reason per record of the part.
    No cache is read or written (``consistency_bench.builders.salad.statistical`` builds the suites
    with one).
    """
    _, label = part
    return nbest_rows(task, records, label, part_nbest(records, train, label), counts)


def evaluated_records(task: str, resolver: SourceResolver) -> list[Record]:
    """The records ``<task>_salad_pbsmt`` translates: the first of :func:`pbsmt_inputs`."""
    records = read_records(task, resolver)
    return held_out(records)[0] if TASK_SOURCES[task].train_path is None else records


def pbsmt_inputs(task: str, resolver: SourceResolver) -> tuple[list[Record], list[Record]]:
    """The records to translate and the training records, disjoint (:func:`disjoint`).

    A task without a training split (MNLI) is split in a fixed held-out half
    (:func:`held_out`); SST-2 trains on the sentences of GLUE's train file.
    """
    source = TASK_SOURCES[task]
    records = read_records(task, resolver)
    if source.train_path is None:
        records, train = held_out(records)
    else:
        train = source.train_read(
            _resolve(resolver, source.train_path), source.train_path, get_task(task)
        )
        if source.sentences_only:
            train = [train[k] for k in maximal_phrases([r.text for r in train])]
    return records, disjoint(train, records)


def pbsmt_counts(task: str, resolver: SourceResolver) -> Counter:
    """How each evaluated record of ``<task>_salad_pbsmt`` fared (:func:`pbsmt_outcome`)."""
    records, train = pbsmt_inputs(task, resolver)
    counts: Counter = Counter()
    for part in pbsmt_parts(task):
        part_rows(task, records, train, part, counts)
    return counts
