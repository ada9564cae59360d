"""Coherence of text classifiers (Storks and Chai, 2021): every sub-span of an example is a row.

Two suites:

- ``conv_ent_coherence``: the annotated Conversational Entailment test examples. Every
  consecutive span of dialog turns ``[i, j]`` is a row with the hypothesis. A span of a
  positive example is positive exactly when it contains the annotated evidence range
  (``conflict_pair`` = first and last evidence turn); every span of a negative example is
  negative.
- ``art_coherence``: the 200 annotated ART dev examples (189 kept by the annotators). Each row
  is a choice between two stories restricted to a span of (observation 1, hypothesis,
  observation 2); the gold answer is the plausible hypothesis where the annotated conflict
  lies inside the span, and "no confident choice" (label null, ``span_label`` =
  ``no_confident_choice``) where neither restricted story is implausible.

The full span is the end-task input itself and has variant ``original``; the other spans have
variant ``span:<i>-<j>`` (0-based, inclusive). docs/suites/coherence.md gives the exact rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import datasets

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.suite.spec import Row, SuiteSpec, register_suite

VERSION = "1.0.0"
NO_CONFIDENT_CHOICE = "no_confident_choice"

#: Paper, citation and licence notes: declared once in bench/registries/families.py.
COHERENCE = FAMILIES["coherence"]

CONV_ENT_PATH = "coherence/conv_ent/ConvEnt_test_annotation_merged2.json"
ART_ANNOTATION_PATH = "coherence/art/ART_test_rand200_annotation_merged2.json"
ART_DEV_PATH = "art/dev.jsonl"

# The tasks (conv_ent, art) are registered in bench/registries/tasks.py.

SPAN_EXTRAS = {
    "span_start": datasets.Value("int32"),
    "span_end": datasets.Value("int32"),
    "n_units": datasets.Value("int32"),
    "span_label": datasets.Value("string"),
}


# ----------------------------------------------------------------------------- span rules


def spans(n: int) -> list[tuple[int, int]]:
    """Every consecutive span ``(i, j)``, ``0 <= i <= j < n``, longest first then by start.

    The first span is always the full one (the end-task input).
    """
    if n < 1:
        raise ValueError(f"an example needs at least one unit, got {n}")
    return sorted(((i, j) for i in range(n) for j in range(i, n)), key=lambda s: (s[0] - s[1], s))


def conv_ent_span_label(label: int, evidence: tuple[int, int] | None, span: tuple[int, int]) -> int:
    """Gold label of a ConvEnt span.

    1 (entailment) iff the example is positive and the span contains the annotated evidence
    range; 0 otherwise.

    Raises:
        ValueError: A positive example without an evidence range.

    """
    if label == 0:
        return 0
    if evidence is None:
        raise ValueError("a positive example needs its evidence range (conflict_pair)")
    first, last = evidence
    return int(span[0] <= first and span[1] >= last)


def art_span_label(
    label: int, conflict: tuple[int, int], plausible_23: bool | None, span: tuple[int, int]
) -> int | None:
    """Gold answer of an ART span: the plausible hypothesis (0 or 1) or ``None``.

    ``None`` is "no confident choice". The answer follows from the annotated conflicting
    sentence pair of the implausible story.

    Sentences are 0 = observation 1, 1 = hypothesis, 2 = observation 2. The choice is
    determined on a span exactly when the span contains the annotated conflict pair
    ``(a, b)``; in addition, for a conflict between observation 1 and the hypothesis, the span
    (1, 2) is also determined when the annotators marked hypothesis + observation 2 as
    implausible too (``23_plausible`` false). A span without the hypothesis holds two
    identical stories and is never determined.

    Args:
        label: Index of the plausible hypothesis (0 or 1).
        conflict: The annotated pair ``(a, b)``, ``a <= b``; ``(1, 1)`` marks a malformed
            hypothesis.
        plausible_23: The ``23_plausible`` annotation (used for conflict ``(0, 1)`` only).
        span: ``(i, j)``.

    """
    a, b = conflict
    i, j = span
    if not i <= 1 <= j:  # no hypothesis: both stories are the same text
        return None
    if i <= a and j >= b:
        return label
    if (a, b) == (0, 1) and span == (1, 2) and plausible_23 is False:
        return label
    return None


# ----------------------------------------------------------------------------- ConvEnt


def _row(suite: str, task: str, key: str, variant: str, **fields: object) -> Row:
    group = f"{suite}/{key}"
    return {"id": f"{group}/{variant}", "suite": suite, "task": task, "group": group,
            "variant": variant, **fields}


def _variant(span: tuple[int, int], n: int) -> str:
    return "original" if span == (0, n - 1) else f"span:{span[0]}-{span[1]}"


def conv_ent_records(records: Sequence[dict], path: str) -> Iterator[Row]:
    """ConvEnt span rows from the parsed annotation file (pure; validates every record)."""
    suite, task = "conv_ent_coherence", "conv_ent"
    names = ("not_entailment", "entailment")
    for number, record in enumerate(records):
        where = f"{path}: record {number} (id {record.get('id')!r})"
        turns, label = record.get("turns"), record.get("label")
        if label not in (0, 1):
            raise SourceError(f"{where}: field 'label' value {label!r} is not 0 or 1")
        if not isinstance(turns, list) or not turns:
            raise SourceError(f"{where}: field 'turns' must be a non-empty list")
        pair = record.get("conflict_pair") or None
        evidence = None
        if label == 1:
            if not (isinstance(pair, list) and len(pair) == 2
                    and 0 <= pair[0] <= pair[1] < len(turns)):
                raise SourceError(
                    f"{where}: field 'conflict_pair' value {pair!r} is not an evidence range "
                    f"[first, last] within {len(turns)} turns"
                )
            evidence = (pair[0], pair[1])
        n = len(turns)
        for span in spans(n):
            gold = conv_ent_span_label(label, evidence, span)
            dialog = " ".join(
                f"Speaker{turn['speaker']}: {turn['text']}" for turn in turns[span[0]: span[1] + 1]
            )
            yield _row(
                suite, task, f"{record['id']}", _variant(span, n),
                text=dialog, text_pair=record["hypothesis"], label=gold, source_file=path,
                source_row=number, span_start=span[0], span_end=span[1], n_units=n,
                span_label=names[gold],
            )


def conv_ent_rows(resolver: SourceResolver) -> Iterator[Row]:
    """Rows of ``conv_ent_coherence``."""
    records = json.loads(resolver.path(CONV_ENT_PATH).read_text(encoding="utf-8"))
    yield from conv_ent_records(records, CONV_ENT_PATH)


# ----------------------------------------------------------------------------- ART


def _story(obs1: str, hyp: str, obs2: str, span: tuple[int, int]) -> str:
    parts = (obs1, hyp, obs2)
    return " ".join(p.strip() for p in parts[span[0]: span[1] + 1] if p.strip())


def art_records(
    annotations: Sequence[dict], dev_lines: Sequence[str], labels: Sequence[str], path: str
) -> Iterator[Row]:
    """ART span rows from the annotation records and ``art/dev.jsonl`` (pure).

    Every annotated record is checked against its dev line (``val_i`` = line ``i``): same four
    sentences and same label, so the rows point at the public dev file.
    """
    suite, task = "art_coherence", "art"
    names = ("hypothesis_1", "hypothesis_2")
    for number, record in enumerate(annotations):
        where = f"{path}: record {number} (id {record.get('id')!r})"
        ident = str(record.get("id", ""))
        if not ident.startswith("val_") or not ident[4:].isdigit():
            raise SourceError(f"{where}: field 'id' value {ident!r} is not val_<line>")
        line = int(ident[4:])
        if line >= len(dev_lines):
            raise SourceError(f"{where}: {ART_DEV_PATH} has no line {line}")
        dev = json.loads(dev_lines[line])
        fields = {"observation_1": "obs1", "hypothesis_1": "hyp1", "hypothesis_2": "hyp2",
                  "observation_2": "obs2"}
        for ours, theirs in fields.items():
            if record.get(ours, "").strip() != dev.get(theirs, "").strip():
                raise SourceError(
                    f"{where}: field {ours!r} differs from {ART_DEV_PATH} line {line} "
                    f"({theirs}): {record.get(ours)!r} != {dev.get(theirs)!r}"
                )
        label = record.get("label")
        if label not in (1, 2) or str(label) != labels[line].strip():
            raise SourceError(
                f"{where}: field 'label' value {label!r} is not 1 or 2 or differs from "
                f"art/dev-labels.lst line {line + 1} ({labels[line].strip()!r})"
            )
        pair = record.get("conflict_pair")
        if not (isinstance(pair, list) and len(pair) == 2 and 0 <= pair[0] <= pair[1] <= 2):
            raise SourceError(f"{where}: field 'conflict_pair' value {pair!r} is not [a, b]")
        plausible_23 = record.get("23_plausible")
        if plausible_23 not in (None, True, False):
            raise SourceError(f"{where}: field '23_plausible' value {plausible_23!r}")
        for span in spans(3):
            gold = art_span_label(label - 1, (pair[0], pair[1]), plausible_23, span)
            yield _row(
                suite, task, ident, _variant(span, 3),
                text=_story(record["observation_1"], record["hypothesis_1"],
                            record["observation_2"], span),
                text_pair=_story(record["observation_1"], record["hypothesis_2"],
                                 record["observation_2"], span),
                label=gold, source_file=ART_DEV_PATH, source_row=line,
                span_start=span[0], span_end=span[1], n_units=3,
                span_label=NO_CONFIDENT_CHOICE if gold is None else names[gold],
            )


def art_rows(resolver: SourceResolver) -> Iterator[Row]:
    """Rows of ``art_coherence``."""
    annotations = json.loads(resolver.path(ART_ANNOTATION_PATH).read_text(encoding="utf-8"))
    dev_lines = resolver.path(ART_DEV_PATH).read_text(encoding="utf-8").splitlines()
    labels = resolver.path("art/dev-labels.lst").read_text(encoding="utf-8").splitlines()
    yield from art_records(annotations, dev_lines, labels, ART_ANNOTATION_PATH)


# ----------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class _Suite:
    name: str
    task: str
    kind: str
    sources: tuple[str, ...]
    build: Callable[[SourceResolver], Iterator[Row]]
    description: str
    main_metric: str


_SUITES = (
    _Suite(
        "conv_ent_coherence", "conv_ent", "coherence", (CONV_ENT_PATH,), conv_ent_rows,
        "Conversational Entailment test examples with annotated evidence turns: every "
        "consecutive span of dialog turns is a row (the full dialog is variant 'original'). "
        "A span of a positive example is entailment iff it contains the evidence range; all "
        "spans of negative examples are not_entailment. Metrics: accuracy (end task), strict "
        "coherence (main: end prediction and every span prediction correct), lenient "
        "coherence (mean span accuracy, counted where the end prediction is correct).",
        "strict_coherence",
    ),
    _Suite(
        "art_coherence", "art", "coherence_theta",
        (ART_ANNOTATION_PATH, ART_DEV_PATH, "art/dev-labels.lst"),
        art_rows,
        "ART (alphaNLI) dev examples with annotated conflicting sentences: each row chooses "
        "between the two stories restricted to a span of (observation 1, hypothesis, "
        "observation 2). The gold answer is the plausible hypothesis where the span contains "
        "the conflict, else no confident choice (label null, span_label "
        "no_confident_choice). Needs probabilities: a span prediction is confident when the "
        "probability margin is >= theta, swept on a grid; best theta reported.",
        "strict_coherence",
    ),
)

#: Test examples the paper evaluates (section 4.1): CE "testing (178 examples)"; ART "200
#: random examples ... 11 examples were discarded". The card shows the count against them.
PAPER_SIZES = {"conv_ent_coherence": 178, "art_coherence": 189}

for _s in _SUITES:
    register_suite(
        SuiteSpec(
            name=_s.name, task=_s.task, family="coherence", kind=_s.kind,
            version=VERSION, sources=_s.sources, build=_s.build, description=_s.description,
            main_metric=_s.main_metric, higher_is_better=True, extras=SPAN_EXTRAS,
            citation=COHERENCE.citation, license=COHERENCE.licenses[_s.task],
            expected_rows=PAPER_SIZES[_s.name],
        )
    )
