"""Turn a corpus into candidate suites: records -> rows in the row contract (docs/contracts.md).

``generate`` runs the requested consistency kinds over a ``Corpus`` and returns one
``GeneratedSuite`` per kind: its rows (every derived row records the rule that made it), the
rejected inputs with the reason, and whether people still have to verify it (semantic and
negational sets, and NLI transitive sets, were human-verified in BECEL).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.registries.tasks import TaskSpec
from consistency_bench.builders.generate import logical
from consistency_bench.builders.generate.inputs import Corpus, Record
from consistency_bench.builders.generate.tasktypes import (
    TaskType,
    check_applicable,
    negation_flip,
    symmetric_labels,
)
from consistency_bench.builders.schema import DERIVED_EXTRAS, NEGATION_EXTRAS, WIC_EXTRAS

Row = dict[str, object]
NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
RULE_EXTRA = {"rule": DERIVED_EXTRAS["rule"]}


@dataclass(frozen=True)
class GenerateConfig:
    """What to generate.

    Attributes:
        name: Task name used in rows and as the suite prefix (``<name>_<kind>``).
        task_type: Label semantics and applicability.
        labels: Label names in index order.
        columns: Data columns mapped to the task type's inputs, in order.
        kinds: Consistency kinds to generate.
        negation_style: ``full`` ("does not") or ``release`` ("doesn't").
        conceptnet: Local conceptnet-lite database, or ``None`` (WordNet only).
        wordnet: Whether WordNet is the antonym fallback.
        seed: Seed of the additive merge orders and of ``additive_size`` draws.
        additive_size: Combinations to keep (all within the cutoff when ``None``).
        reference_texts: Texts whose length quantile bounds additive merges (default: the data).

    """

    name: str
    task_type: TaskType
    labels: tuple[str, ...]
    columns: tuple[str, ...]
    kinds: tuple[str, ...]
    negation_style: str = "full"
    conceptnet: str | None = None
    wordnet: bool = True
    seed: int = 0
    additive_size: int | None = None
    reference_texts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ConfigError(f"--name {self.name!r}: use lower-case letters, digits and '_'")
        needed = len(self.task_type.columns)
        allowed = needed + len(self.task_type.optional_columns)
        if len(self.columns) not in (needed, allowed):
            want = ", ".join(self.task_type.columns)
            raise ConfigError(
                f"--columns for --task-type {self.task_type.name} maps {want}"
                + (f" (optionally + {', '.join(self.task_type.optional_columns)})"
                   if self.task_type.optional_columns else "")
                + f"; got {len(self.columns)}: {list(self.columns)}"
            )
        for kind in self.kinds:
            check_applicable(self.task_type, kind, self.labels)

    @property
    def task(self) -> TaskSpec:
        """A task spec for the rows' label feature."""
        cols = self.task_type.columns
        return TaskSpec(self.name, self.labels, text=cols[0],
                        text_pair=cols[1] if self.task_type.is_pair else None)


@dataclass(frozen=True)
class Rejection:
    """An input a rule did not use, and why."""

    row: int
    rule: str
    reason: str
    text: str


@dataclass
class GeneratedSuite:
    """Candidate rows of one suite, with what was rejected."""

    name: str
    kind: str
    extras: dict[str, object]
    rows: list[Row] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    needs_verification: bool = False
    notes: list[str] = field(default_factory=list)


class _Maker:
    def __init__(self, config: GenerateConfig, source: str, kind: str, extras: dict) -> None:
        self.config, self.source, self.suite = config, source, f"{config.name}_{kind}"
        self.out = GeneratedSuite(self.suite, kind, extras)

    def row(self, key: str, variant: str, text: str, pair: str | None, label: int | None,
            source_row: int, **extras: object) -> Row:
        group = f"{self.suite}/{key}"
        row = {
            "id": f"{group}/{variant}", "suite": self.suite, "task": self.config.name,
            "group": group, "variant": variant, "text": text, "text_pair": pair, "label": label,
            "source_file": self.source, "source_row": source_row, **extras,
        }
        self.out.rows.append(row)
        return row

    def reject(self, record_row: int, rule: str, reason: str, text: str) -> None:
        self.out.rejections.append(Rejection(record_row, rule, reason, text))


def _inputs(config: GenerateConfig, record: Record) -> tuple[str, str | None]:
    fields = record.fields
    text = fields[config.columns[0]]
    pair = fields[config.columns[1]] if config.task_type.is_pair else None
    return text, pair


def _wic(config: GenerateConfig, record: Record, text: str, pair: str) -> dict:
    cols = config.columns
    word = record.fields[cols[2]]
    if len(cols) == 7:
        starts = [int(record.fields[c]) for c in cols[3:]]
        return {"word": word, "start1": starts[0], "end1": starts[1], "start2": starts[2],
                "end2": starts[3]}
    return {"word": word, **_span(word, text, "1"), **_span(word, pair, "2")}


def _span(word: str, sentence: str, n: str) -> dict:
    """Character span of ``word`` in ``sentence`` (first case-insensitive match, -1 if absent)."""
    found = re.search(rf"\b{re.escape(word)}", sentence, flags=re.IGNORECASE)
    start = found.start() if found else -1
    end = found.start() + len(word) if found else -1
    return {f"start{n}": start, f"end{n}": end}


# ----------------------------------------------------------------------------- negational


def negational(config: GenerateConfig, corpus: Corpus, nlp, antonym_sources) -> GeneratedSuite:
    """Negation and antonym candidates of rows with the flipping label (section 3.2)."""
    from consistency_bench.builders.generate.antonyms import antonym_candidates
    from consistency_bench.builders.generate.negation import Negated, negate_doc

    source_label, target_label = negation_flip(config.task_type, config.labels)
    make = _Maker(config, corpus.source, "negational", {**NEGATION_EXTRAS, **RULE_EXTRA})
    make.out.needs_verification = True
    eligible = []
    for record in corpus.records:
        if record.label != source_label:
            make.reject(record.row, "label", f"label {config.labels[record.label]!r} is not "
                        f"guaranteed to flip (only {config.labels[source_label]!r})", "")
        else:
            eligible.append(record)
    modified = config.task_type.modified
    sentences = [_inputs(config, r)[0 if modified == "text" else 1] or "" for r in eligible]
    for record, doc in zip(eligible, nlp.pipe(sentences, batch_size=64), strict=True):
        text, pair = _inputs(config, record)
        candidates = []
        if len(list(doc.sents)) > 1:
            make.reject(record.row, "negation", "more than one sentence", doc.text)
        else:
            result = negate_doc(doc, config.negation_style)
            if isinstance(result, Negated):
                candidates.append(("neg", result))
            else:
                make.reject(record.row, "negation", result.reason, doc.text)
        if antonym_sources is not None:
            made, rejected = antonym_candidates(doc, antonym_sources)
            candidates += [(f"ant{c.edit.start}", c) for c in made]
            for r in rejected:
                make.reject(record.row, "antonym", r.reason, doc.text)
        for suffix, cand in candidates:
            key = f"r{record.row:05d}-{suffix}"
            new_text, new_pair = (cand.text, pair) if modified == "text" else (text, cand.text)
            make.row(key, "original", text, pair, record.label, record.row, tag="", rule="")
            make.row(key, "negated", new_text, new_pair, target_label, record.row,
                     tag=cand.tag, rule=cand.rule)
    return make.out


# ----------------------------------------------------------------------------- semantic


def semantic(config: GenerateConfig, corpus: Corpus, paraphraser: Callable) -> GeneratedSuite:
    """Paraphrase the modified input of every row (BECEL Table 9); label unchanged."""
    is_wic = config.task_type.name == "wic"
    make = _Maker(config, corpus.source, "semantic", {**(WIC_EXTRAS if is_wic else {})})
    make.out.needs_verification = True
    modified = 0 if config.task_type.modified == "text" else 1
    originals = [_inputs(config, r)[modified] or "" for r in corpus.records]
    paraphrases = paraphraser(originals)
    if len(paraphrases) != len(originals):
        raise ConfigError(
            f"the paraphraser returned {len(paraphrases)} texts for {len(originals)} inputs"
        )
    for record, old, new in zip(corpus.records, originals, paraphrases, strict=True):
        text, pair = _inputs(config, record)
        if " ".join(new.lower().split()) == " ".join(old.lower().split()):
            make.reject(record.row, "paraphrase", "paraphrase identical to the original", old)
            continue
        extra: dict = {}
        new_text, new_pair = (new, pair) if modified == 0 else (text, new)
        if is_wic:
            extra = _wic(config, record, text, pair or "")
            word = extra["word"]
            if not re.search(rf"\b{re.escape(word)}", new, flags=re.IGNORECASE):
                make.reject(record.row, "paraphrase", f"target word {word!r} not in paraphrase",
                            new)
                continue
        key = f"r{record.row:05d}"
        make.row(key, "original", text, pair, record.label, record.row, **extra)
        if is_wic:
            extra = {**extra, **_span(extra["word"], new_pair or "", "2")}
        make.row(key, "paraphrase", new_text, new_pair, record.label, record.row, **extra)
    return make.out


# ----------------------------------------------------------------------------- logical


def _pairs(config: GenerateConfig, corpus: Corpus) -> list[logical.Pair]:
    out = []
    for r in corpus.records:
        text, pair = _inputs(config, r)
        word = r.fields[config.columns[2]] if config.task_type.name == "wic" else ""
        out.append(logical.Pair(r.row, text, pair, r.label, word))
    return out


def symmetric(config: GenerateConfig, corpus: Corpus) -> GeneratedSuite:
    """Original and swapped row for every row whose label is symmetric."""
    keep = symmetric_labels(config.task_type, config.labels)
    is_wic = config.task_type.name == "wic"
    make = _Maker(config, corpus.source, "symmetric", {**(WIC_EXTRAS if is_wic else {})})
    by_row = {r.row: r for r in corpus.records}
    kept = {p.row for p in logical.symmetric(_pairs(config, corpus), keep)}
    for record in corpus.records:
        text, pair = _inputs(config, record)
        if record.row not in kept:
            make.reject(record.row, "symmetric", f"label {config.labels[record.label]!r} is not "
                        "symmetric (BECEL section 3.2)", "")
            continue
        extra = _wic(config, by_row[record.row], text, pair or "") if is_wic else {}
        swapped = {**extra}
        if is_wic:
            swapped.update(start1=extra["start2"], end1=extra["end2"], start2=extra["start1"],
                           end2=extra["end1"])
        key = f"r{record.row:05d}"
        make.row(key, "original", text, pair, record.label, record.row, **extra)
        make.row(key, "swapped", pair or "", text, record.label, record.row, **swapped)
    if config.task_type.name == "nli" and len(config.labels) == 2:
        make.out.notes.append(
            "2-way NLI: not_entailment rows are swapped, as BECEL did for RTE after checking that "
            "premises are always more specific than hypotheses; check this holds for your data"
        )
    return make.out


def transitive(config: GenerateConfig, corpus: Corpus) -> GeneratedSuite:
    """Antecedent rows (variant ``source``) and the rows the transitivity rules derive."""
    is_wic = config.task_type.name == "wic"
    extras = {**(WIC_EXTRAS if is_wic else {}), **DERIVED_EXTRAS}
    make = _Maker(config, corpus.source, "transitive", extras)
    pairs = _pairs(config, corpus)
    if is_wic:
        derived = logical.wic_transitive(pairs, config.labels)
    else:
        derived = logical.nli_transitive(pairs, config.labels)
        make.out.needs_verification = True
        make.out.notes.append(
            "NLI transitive rows hold only where the hypothesis is as specific as the premise; "
            "BECEL kept a row when at least two of three annotators said it complies"
        )
    used = sorted({d.first for d in derived} | {d.second for d in derived})
    by_row = {r.row: r for r in corpus.records}
    plain = {"antecedent_ids": [], "constraint": "", "rule": ""}
    ids = {}
    for number in used:
        record = by_row[number]
        text, pair = _inputs(config, record)
        extra = _wic(config, record, text, pair or "") if is_wic else {}
        row = make.row(f"s{number:05d}", "source", text, pair, record.label, number, **extra,
                       **plain)
        ids[number] = row["id"]
    if not derived:
        make.reject(-1, "transitive", "no two rows share a sentence (and the word, for WiC) "
                    "with labels a rule chains", "")
    for d in derived:
        extra = {"word": d.word, **_span(d.word, d.text, "1"), **_span(d.word, d.text_pair, "2")}
        make.row(
            f"t{d.first:05d}-{d.second:05d}-{len(make.out.rows):06d}", "transitive", d.text,
            d.text_pair, d.label, d.first, **(extra if is_wic else {}),
            antecedent_ids=[ids[d.first], ids[d.second]], constraint=d.constraint, rule=d.rule,
        )
    return make.out


def additive(config: GenerateConfig, corpus: Corpus) -> GeneratedSuite:
    """First, second and merged rows of same-label pairs within the length threshold."""
    make = _Maker(config, corpus.source, "additive", dict(DERIVED_EXTRAS))
    texts = [_inputs(config, r)[0] for r in corpus.records]
    labels = [r.label for r in corpus.records]
    reference = config.reference_texts or tuple(texts)
    result = logical.additive(texts, labels, reference, config.additive_size, config.seed)
    make.out.notes.append(
        f"{result.candidates} same-label pairs, {result.within_length} within the 75% token "
        f"length quantile ({result.threshold:g} tokens) of "
        + ("the reference texts" if config.reference_texts else "the input data itself")
        + f"; {len(result.pairs)} kept"
    )
    if result.candidates > result.within_length:
        make.reject(-1, "additive", f"{result.candidates - result.within_length} pairs longer "
                    f"than {result.threshold:g} tokens when merged", "")
    plain = {"antecedent_ids": [], "constraint": "", "rule": ""}
    rule = "f(x) = f(y) = c → f(x + y) = c"
    for i, j in result.pairs:
        a, b = corpus.records[i], corpus.records[j]
        key = f"p{a.row:05d}-{b.row:05d}"
        first = make.row(key, "first", texts[i], None, a.label, a.row, **plain)
        second = make.row(key, "second", texts[j], None, b.label, b.row, **plain)
        make.row(key, "merged", logical.merge_texts(texts[i], texts[j]), None, a.label, a.row,
                 antecedent_ids=[first["id"], second["id"]],
                 constraint=f"is:{config.labels[a.label]}", rule=rule)
    return make.out


def generate(
    config: GenerateConfig,
    corpus: Corpus,
    *,
    nlp=None,
    antonym_sources=None,
    paraphraser: Callable | None = None,
) -> list[GeneratedSuite]:
    """Generate every requested kind, in ``config.kinds`` order.

    Args:
        config: What to generate.
        corpus: The input records.
        nlp: spaCy pipeline (negational sets); loaded on demand when ``None``.
        antonym_sources: A ``ChainedAntonyms``; built from ``config`` when ``None``.
        paraphraser: Callable for semantic sets; required for them.

    """
    out = []
    for kind in config.kinds:
        if kind == "negational":
            nlp = nlp or _parser()
            sources = antonym_sources if antonym_sources is not None else antonym_chain(config)
            out.append(negational(config, corpus, nlp, sources))
        elif kind == "semantic":
            if paraphraser is None:
                from consistency_bench.builders.generate.paraphrase import NO_MODEL

                raise ConfigError(NO_MODEL)
            out.append(semantic(config, corpus, paraphraser))
        elif kind == "symmetric":
            out.append(symmetric(config, corpus))
        elif kind == "transitive":
            out.append(transitive(config, corpus))
        elif kind == "additive":
            out.append(additive(config, corpus))
    return out


def _parser():
    from consistency_bench.builders.generate.negation import load_parser

    return load_parser()


def antonym_chain(config: GenerateConfig):
    """ConceptNet (when a database is given) then WordNet, as ``config`` asks."""
    from consistency_bench.builders.generate.antonyms import (
        ChainedAntonyms,
        ConceptNetAntonyms,
        WordNetAntonyms,
    )

    sources: list = []
    if config.conceptnet:
        sources.append(ConceptNetAntonyms(config.conceptnet))
    if config.wordnet:
        sources.append(WordNetAntonyms())
    if not sources:
        return None
    return ChainedAntonyms(sources)


def parse_list(value: str | Sequence[str]) -> tuple[str, ...]:
    """Split a comma-separated CLI value."""
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(x.strip() for x in items if x.strip())
