"""The 19 BECEL test cases (Jang et al., COLING 2022) as suites.

Semantic and negational sets, and the symmetric and transitive sets, come from the BECEL
release; additive sets are generated here (see ``builders/becel/additive.py``). Every group holds an
original row and the row(s) it is compared with; derived rows (transitive, additive) name their
two antecedent rows. docs/suites/becel.md documents each construction and every deviation.

The package: :mod:`~consistency_bench.builders.becel.metadata` (versions, citation, licences, Table
1),
:mod:`~consistency_bench.builders.becel.layouts` (columns of the release files),
:mod:`~consistency_bench.builders.becel.pairs`
(semantic, negational, symmetric), :mod:`~consistency_bench.builders.becel.derived` (transitive,
additive);
importing it registers the 19 suites (below).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.becel.derived import (
    ADDITIVE_SOURCES,
    SNLI_TRANSITIVE,
    WIC_TRANSITIVE,
    AdditiveSource,
    additive_rows,
    transitive_rows,
)
from consistency_bench.builders.becel.layouts import (
    LAYOUTS,
    NEGATION_COLUMN,
    PARAPHRASE_COLUMN,
    Layout,
    _file,
)
from consistency_bench.builders.becel.metadata import (
    ADDITIVE_SEED,
    ADDITIVE_VERSION,
    BECEL,
    DESCRIPTIONS,
    MAIN_METRIC,
    TABLE1,
    VERSION,
)
from consistency_bench.builders.becel.pairs import negational_rows, semantic_rows, symmetric_rows
from consistency_bench.builders.schema import DERIVED_EXTRAS, NEGATION_EXTRAS, WIC_EXTRAS
from consistency_bench.builders.suite.spec import Row, SuiteSpec, register_suite

__all__ = [
    "ADDITIVE_SEED",
    "ADDITIVE_SOURCES",
    "ADDITIVE_VERSION",
    "BECEL",
    "DESCRIPTIONS",
    "LAYOUTS",
    "MAIN_METRIC",
    "NEGATION_COLUMN",
    "PARAPHRASE_COLUMN",
    "SNLI_TRANSITIVE",
    "TABLE1",
    "VERSION",
    "WIC_TRANSITIVE",
    "AdditiveSource",
    "Layout",
    "additive_rows",
    "negational_rows",
    "semantic_rows",
    "symmetric_rows",
    "transitive_rows",
]


def _sources(task: str, kind: str) -> tuple[str, ...]:
    if kind == "symmetric":
        split = "test" if task == "snli" else "train"
        return (_file(task, "symmetric"), _file(task, split))
    if kind == "transitive":
        split = "test" if task == "snli" else "train"
        return (_file(task, "transitive"), _file(task, split))
    if kind == "additive":
        source = ADDITIVE_SOURCES[task]
        return (source.eval_path, source.train_path)
    return (_file(task, kind),)


def _builder(task: str, kind: str) -> Callable[[SourceResolver], Iterator[Row]]:
    if kind == "semantic":
        return semantic_rows(task)
    if kind == "negational":
        return negational_rows(task)
    if kind == "symmetric":
        return symmetric_rows(task, "test" if task == "snli" else "train")
    if kind == "transitive":
        return transitive_rows(task, "test" if task == "snli" else "train")
    return additive_rows(task)


def _extras(task: str, kind: str) -> dict[str, object]:
    extras: dict[str, object] = dict(WIC_EXTRAS) if task == "wic" else {}
    if kind == "negational":
        extras.update(NEGATION_EXTRAS)
    if kind in ("transitive", "additive"):
        extras.update(DERIVED_EXTRAS)
    return extras


for (_task, _kind), _size in TABLE1.items():
    register_suite(
        SuiteSpec(
            name=f"{_task}_{_kind}",
            task=_task,
            family="becel",
            kind=_kind,
            version=ADDITIVE_VERSION if _kind == "additive" else VERSION,
            sources=_sources(_task, _kind),
            build=_builder(_task, _kind),
            description=DESCRIPTIONS[_kind],
            main_metric=MAIN_METRIC[_kind],
            higher_is_better=False,
            extras=_extras(_task, _kind),
            expected_rows=_size,
            citation=BECEL.citation,
            license=BECEL.licenses[_task],
        )
    )
