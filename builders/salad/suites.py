"""Word-salad suites: static lexical and statistical (PBSMT) configs, model-specific gradient specs.

One config per task and transformation, ``<task>_salad_<transform>``. A group is one source
example: its ``original`` row (gold label) and its transformed row (variant = transformation
name, no label: a destroyed input has no correct label). Pair tasks transform one text, as the
paper does: the hypothesis (MNLI, SNLI), the second question (QQP), the second sentence (MRPC);
CopySort and CopyOne put (material from) the first text into the second. Extra columns:
``transform``, ``transform_family`` and ``agreement_with`` (``original``, or the default label
CopySort / CopyOne rows are compared with). Gradient configs depend on the model under test:
``consistency-bench salad`` makes them with :func:`gradient_specs`.

Splits (the paper transforms each task's validation set): MNLI dev matched, SNLI dev
(``becel/snli/validation.tsv``), MRPC GLUE dev (``becel/mrpc/validation.tsv``), SST-2 GLUE dev,
QQP GLUE dev (not mirrored: built from ``qqp/dev.tsv`` where a QQP source is registered
and present, else the build raises ``SourceError``). docs/suites/word-salad.md has the details.

The suite specs are registered here; the parts live in modules of one job each:
:mod:`~consistency_bench.builders.salad.constants` (versions, seed, transformations),
:mod:`~consistency_bench.builders.salad.sources` (the examples),
:mod:`~consistency_bench.builders.salad.rows` (a group's rows),
:mod:`~consistency_bench.builders.salad.lexical_rows`,
:mod:`~consistency_bench.builders.salad.pbsmt.suite_rows`,
:mod:`~consistency_bench.builders.salad.statistical` (the PBSMT rows with the build cache),
:mod:`~consistency_bench.builders.salad.gradient_rows` and
:mod:`~consistency_bench.builders.salad.descriptions`. Their names
are importable from here too.
"""

from __future__ import annotations

from collections.abc import Iterator

from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.builders.salad.constants import (
    FAMILY,
    GRADIENT,
    KIND,
    LEXICAL,
    LOWER,
    NO_STATISTICAL,
    PAIR_ONLY,
    PBSMT_BUILD_COST,
    PBSMT_VERSION,
    SALAD,
    SEED,
    SHUFFLE_VERSION,
    SPLIT,
    STATISTICAL,
    VERSION,
)
from consistency_bench.builders.salad.descriptions import DESCRIPTIONS, SUFFIX
from consistency_bench.builders.salad.gradient_rows import gradient_specs, gradient_text
from consistency_bench.builders.salad.lexical_rows import lexical_rows, lexical_text
from consistency_bench.builders.salad.pbsmt.suite_rows import (
    COPY,
    EMPTY,
    KEPT,
    MAX_TRAIN_PAIRS,
    NBEST,
    NO_SYSTEM,
    PERMUTATION,
    PbsmtPart,
    choose_output,
    disjoint,
    held_out,
    is_permutation,
    part_rows,
    pbsmt_counts,
    pbsmt_inputs,
    pbsmt_outcome,
    pbsmt_pair,
    pbsmt_parts,
    pbsmt_text,
    train_label,
    train_pbsmt,
)
from consistency_bench.builders.salad.pbsmt.suite_rows import (
    _texts as _texts,  # tests read it from here
)
from consistency_bench.builders.salad.rows import (
    _pair_rows as _pair_rows,  # tests read it from here
)
from consistency_bench.builders.salad.rows import salad_extras
from consistency_bench.builders.salad.sources import (
    QQP_DEV,
    QQP_TRAIN,
    TASK_SOURCES,
    Record,
    TaskSource,
    read_records,
)
from consistency_bench.builders.salad.statistical import statistical_part, statistical_rows
from consistency_bench.builders.suite import SuiteSpec, register_suite

__all__ = [
    "COPY", "DESCRIPTIONS", "EMPTY", "FAMILY", "GRADIENT", "KEPT", "KIND", "LEXICAL", "LOWER",
    "MAX_TRAIN_PAIRS", "NBEST", "NO_STATISTICAL", "NO_SYSTEM", "PAIR_ONLY", "PBSMT_BUILD_COST",
    "PBSMT_VERSION", "PERMUTATION", "QQP_DEV", "QQP_TRAIN", "SALAD", "SEED", "SHUFFLE_VERSION",
    "SPLIT",
    "STATISTICAL", "SUFFIX", "TASK_SOURCES", "VERSION", "PbsmtPart", "Record", "TaskSource",
    "choose_output", "disjoint", "gradient_specs", "gradient_text", "held_out",
    "is_permutation", "lexical_rows", "lexical_text", "part_rows", "pbsmt_counts",
    "pbsmt_inputs", "pbsmt_outcome", "pbsmt_pair", "pbsmt_parts", "pbsmt_text", "read_records",
    "salad_extras", "statistical_part", "statistical_rows", "train_label", "train_pbsmt",
]


def _split(task: str) -> dict[str, object]:
    """``parts`` and ``build_part`` of ``<task>_salad_pbsmt`` where it is worth splitting."""
    if task not in SPLIT:
        return {}
    return {"parts": pbsmt_parts(task), "build_part": statistical_part(task)}


def _static_suites() -> Iterator[SuiteSpec]:
    for task in ("mnli", "snli", "qqp", "mrpc", "sst2"):
        source = TASK_SOURCES[task]
        for transform in LEXICAL:
            if transform in PAIR_ONLY and not get_task(task).is_pair:
                continue
            yield SuiteSpec(
                name=f"{task}_salad_{transform}", task=task, family=FAMILY, kind=KIND,
                version=SHUFFLE_VERSION if transform == "shuffle" else VERSION,
                sources=(source.path,), build=lexical_rows(task, transform),
                description=DESCRIPTIONS[transform] + SUFFIX, main_metric="agreement",
                higher_is_better=False, extras=salad_extras(), citation=SALAD.citation,
                license=SALAD.licenses[task],
            )
        if task not in NO_STATISTICAL:
            train = (source.train_path,) if source.train_path else ()
            yield SuiteSpec(
                name=f"{task}_salad_pbsmt", task=task, family=FAMILY, kind=KIND,
                version=PBSMT_VERSION, sources=(source.path, *train),
                build=statistical_rows(task),
                description=DESCRIPTIONS["pbsmt"] + SUFFIX, main_metric="agreement",
                higher_is_better=False, extras=salad_extras(), citation=SALAD.citation,
                license=SALAD.licenses[task], build_cost=PBSMT_BUILD_COST.get(task, 1.0),
                **_split(task),
            )


for _spec in _static_suites():
    register_suite(_spec)
