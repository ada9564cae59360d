"""One ``generate`` run: check the names, read the corpus, generate, write, report.

What ``consistency-bench generate`` does (docs/generate.md): :func:`generate_suites` writes the
candidate suites into a folder (new, empty, or a suite folder they are merged into), a rating
sheet for each suite people must verify, and a quality report; the command prints what it
returns. Every check that reads nothing large (names, sizes, seed) runs before the corpus is
read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError


@dataclass(frozen=True)
class GenerateRequest:
    """The options of one run (the ``generate`` flags of the same names).

    Attributes:
        data: Local .csv/.tsv/.jsonl file or Hub dataset id.
        task_type: nli, paraphrase, qa, wic or single.
        columns: Input columns, comma-separated, in task-type order.
        labels: Label names in index order, comma-separated.
        out: Output folder.
        types: Consistency kinds, comma-separated.
        name: Suite prefix and task name (None: the file's stem).
        split: Split of a Hub dataset.
        label_column: Column with the gold label.
        overwrite: Replace suites of the same name in ``out``.
        negation_style: ``full`` or ``release``.
        conceptnet: Local conceptnet-lite database.
        conceptnet_assertions: Local assertions file to build ``conceptnet`` from first.
        wordnet: Use WordNet as the antonym fallback.
        paraphraser: Local seq2seq model folder (semantic sets).
        paraphrase_prefix: Text before each paraphraser input.
        additive_size: Pairs to keep (None: all).
        reference: File whose texts set the additive length threshold.
        seed: Seed of sampling.

    """

    data: str
    task_type: str
    columns: str
    labels: str
    out: str
    types: str = "negational"
    name: str | None = None
    split: str = "test"
    label_column: str = "label"
    overwrite: bool = False
    negation_style: str = "full"
    conceptnet: str | None = None
    conceptnet_assertions: str | None = None
    wordnet: bool = True
    paraphraser: str | None = None
    paraphrase_prefix: str = ""
    additive_size: int | None = None
    reference: str | None = None
    seed: int = 0


@dataclass(frozen=True)
class WrittenSuite:
    """One suite written: its name, rows, and the rating sheet people must fill (or None)."""

    name: str
    rows: int
    sheet: Path | None = None
    to_rate: int = 0


@dataclass(frozen=True)
class GenerateOutcome:
    """What a run wrote: the suites, in the order generated, and the Markdown report."""

    suites: list[WrittenSuite]
    report: Path


def check_names(name: str, kinds: list[str] | tuple[str, ...], out: Path, overwrite: bool,
                inputs: tuple[str | None, ...] = ()) -> None:
    """Refuse suite names that are registered, or that exist in ``out`` without --overwrite.

    Raises:
        ConfigError: ``name`` is a registered task, a suite ``<name>_<kind>`` is a registered
            suite (whatever ``--overwrite`` says), ``out`` is a file or a non-empty folder that
            is not a suite folder, or a suite to write is already in ``out``.

    """
    from consistency_bench.bench.io.manifest import MANIFEST, read_manifest
    from consistency_bench.bench.io.output_checks import check_output_dir
    from consistency_bench.bench.registries.tasks import TASKS
    from consistency_bench.builders.catalog import SUITES

    if not name or not re.fullmatch(r"[a-z0-9][a-z0-9_]*", name):
        raise ConfigError(f"--name {name!r}: use lower-case letters, digits and '_'")
    suites = [f"{name}_{kind}" for kind in kinds]
    registered = [s for s in suites if s in SUITES]
    if name in TASKS or registered:
        clash = ", ".join(registered) or f"task {name!r}"
        raise ConfigError(
            f"--name {name!r}: collides with the registered {clash}; the official suites are "
            "never overwritten. Choose another --name"
        )
    check_output_dir(out, overwrite=overwrite, replaceable=MANIFEST, inputs=inputs)
    if (out / MANIFEST).is_file() and not overwrite:
        taken = sorted(set(suites) & set(read_manifest(out)))
        if taken:
            raise ConfigError(
                f"--out {out}: already holds {', '.join(taken)}; pass --overwrite to replace "
                "them, or choose another --name"
            )


# One piece (over 60 lines): the command's checks, then generate and write, in order.
def generate_suites(request: GenerateRequest) -> GenerateOutcome:
    """Generate the suites of ``request`` and write them, their sheets and the report.

    Raises:
        ConfigError: A bad name, size, seed or ConceptNet option (before the corpus is read),
            or a corpus that does not fit the task type.

    """
    from consistency_bench.bench.io.write import write_text
    from consistency_bench.builders.generate.inputs import load_corpus
    from consistency_bench.builders.generate.pipeline import GenerateConfig, generate, parse_list
    from consistency_bench.builders.generate.report import render, summarise, to_json
    from consistency_bench.builders.generate.tasktypes import get_task_type
    from consistency_bench.builders.generate.verify import export_sheet
    from consistency_bench.builders.generate.writer import write_folder

    task_type = get_task_type(request.task_type)
    labels, columns, kinds = (parse_list(x)
                              for x in (request.labels, request.columns, request.types))
    name = request.name or re.sub(r"[^a-z0-9_]+", "_",
                                  Path(request.data).stem.lower()).strip("_")
    out = Path(request.out)
    check_names(name, kinds, out, request.overwrite, inputs=(request.data,))
    if request.additive_size is not None and request.additive_size < 1:
        raise ConfigError(f"--additive-size {request.additive_size}: must be at least 1 "
                          "(leave it out to keep every pair)")
    if request.seed < 0:
        raise ConfigError(f"--seed {request.seed}: must be >= 0")
    reference = None
    if request.reference:
        ref = load_corpus(request.reference, columns[:1], labels,
                          label_column=request.label_column)
        reference = tuple(r.fields[columns[0]] for r in ref.records)
    conceptnet = request.conceptnet
    if request.conceptnet_assertions:
        if not conceptnet:
            raise ConfigError("--conceptnet-assertions needs --conceptnet DB (where to build it)")
        if not Path(conceptnet).exists():
            from consistency_bench.builders.generate.antonyms import build_conceptnet_db

            build_conceptnet_db(request.conceptnet_assertions, conceptnet)
    config = GenerateConfig(
        name=name, task_type=task_type, labels=labels, columns=columns, kinds=kinds,
        negation_style=request.negation_style, conceptnet=conceptnet,
        wordnet=request.wordnet, seed=request.seed, additive_size=request.additive_size,
        reference_texts=reference,
    )
    corpus = load_corpus(request.data, columns, labels, label_column=request.label_column,
                         split=request.split)
    paraphraser = None
    if "semantic" in kinds:
        from consistency_bench.builders.generate.paraphrase import load_paraphraser

        paraphraser = load_paraphraser(request.paraphraser, request.paraphrase_prefix)
    suites = generate(config, corpus, paraphraser=paraphraser)
    antonyms = "+".join(x for x in ("conceptnet" if conceptnet else "",
                                    "wordnet" if request.wordnet else "") if x)
    write_folder(out, config, suites, corpus.source, corpus.sha256, {"antonyms": antonyms})
    summaries = [summarise(s) for s in suites]
    report = out / "reports" / f"{name}.md"
    write_text(report, render(summaries))
    write_text(out / "reports" / f"{name}.json", to_json(summaries))
    written = []
    for suite in suites:
        if suite.needs_verification:
            sheet = out / "verification" / f"{suite.name}.csv"
            count = export_sheet(out, suite.name, sheet)
            written.append(WrittenSuite(suite.name, len(suite.rows), sheet, count))
        else:
            written.append(WrittenSuite(suite.name, len(suite.rows)))
    return GenerateOutcome(written, report)
