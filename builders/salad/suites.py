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
:mod:`~consistency_bench.builders.salad.lexical.rows`,
:mod:`~consistency_bench.builders.salad.pbsmt.suite_rows`,
:mod:`~consistency_bench.builders.salad.statistical` (the PBSMT rows with the build cache),
:mod:`~consistency_bench.builders.salad.gradient.suites` and
:mod:`~consistency_bench.builders.salad.descriptions`. Import their
names from them; this module re-exports nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.builders.salad.constants import (
    FAMILY,
    KIND,
    LEXICAL,
    NO_STATISTICAL,
    PAIR_ONLY,
    PBSMT_BUILD_COST,
    PBSMT_VERSION,
    SALAD,
    SHUFFLE_VERSION,
    SPLIT,
    VERSION,
)
from consistency_bench.builders.salad.descriptions import DESCRIPTIONS, SUFFIX
from consistency_bench.builders.salad.lexical.rows import lexical_rows
from consistency_bench.builders.salad.pbsmt.suite_rows import (
    pbsmt_parts,
)
from consistency_bench.builders.salad.rows import (
    salad_extras,
)
from consistency_bench.builders.salad.sources import (
    TASK_SOURCES,
)
from consistency_bench.builders.salad.statistical import statistical_part, statistical_rows
from consistency_bench.builders.suite.spec import SuiteSpec, register_suite


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
