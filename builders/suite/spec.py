"""Suite specifications and the explicit suite registry.

A suite is one small declarative spec: name, task, metric kind, version, the source files it
reads, how its rows are made, and its main metric with direction. Families (BECEL, CALM, ...)
register their suites in their own module; ``builders/catalog.py`` imports those modules as
their declarations in :mod:`consistency_bench.bench.registries.families` name them (no scanning, no
hand-kept
list).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import datasets

from consistency_bench.bench.errors import DataError
from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.registries.registry import Registry
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.registries.tasks import TaskSpec, get_task
from consistency_bench.builders.schema import features_for

Row = dict[str, object]
RowBuilder = Callable[[SourceResolver], Iterator[Row]]
#: Rows of one source record, keyed by the record's position (the order of the suite's rows).
KeyedRows = list[tuple[int, list[Row]]]
PartBuilder = Callable[[SourceResolver, Hashable], KeyedRows]


@dataclass(frozen=True)
class SuiteSpec:
    """One test suite, i.e. one ``datasets`` config.

    Attributes:
        name: Config name, ``<task>_<type>`` for BECEL (e.g. ``"snli_transitive"``).
        task: Task registry key; gives the label names.
        family: Paper family, a name declared in
        :data:`consistency_bench.bench.registries.families.FAMILIES`
            (``"becel"``, ``"calm"``, ``"salad"``, ``"coherence"``).
        kind: Metric kind; selects the scorer in
        ``consistency_bench.bench.scorers.contract.SCORERS``.
        version: Suite version; bump when rows change.
        sources: Mirror-layout paths of every source file the suite reads.
        build: Pure function of a resolver that yields the rows in a fixed order.
        description: One paragraph for the dataset card.
        main_metric: Name of the main score in the results.
        higher_is_better: Direction of the main metric.
        extras: Extra columns beyond the base row contract.
        expected_rows: Rows the paper reports for the new test set (Table 1), if any.
        citation: BibTeX of the paper the suite comes from (its family's ``citation``).
        license: License note of the sources (its family's ``licenses[task]``).
        build_cost: Rough CPU seconds of building the suite (1 for the quick ones). Only the
            order in which a pool of processes starts suites depends on it (costliest first,
            so that the longest suite does not start last); the output does not.
        parts: Independent shares of the work, for a suite too long for one process: with
            ``build_part``, ``build(resolver)`` must equal :func:`merge_parts` of
            ``build_part(resolver, part)`` over ``parts`` (in any order). A pool of processes
            builds the parts as separate tasks; one process calls ``build``.
        build_part: Rows of one part, keyed by source record position.

    """

    name: str
    task: str
    family: str
    kind: str
    version: str
    sources: tuple[str, ...]
    build: RowBuilder = field(repr=False)
    description: str
    main_metric: str
    higher_is_better: bool
    extras: Mapping[str, object] = field(default_factory=dict, repr=False)
    expected_rows: int | None = None
    citation: str = ""
    license: str = ""
    build_cost: float = 1.0
    parts: tuple[Hashable, ...] = ()
    build_part: PartBuilder | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if bool(self.parts) != (self.build_part is not None):
            raise ValueError(f"suite {self.name!r}: give both parts and build_part, or neither")

    @property
    def task_spec(self) -> TaskSpec:
        """The task this suite tests."""
        return get_task(self.task)

    @property
    def features(self) -> datasets.Features:
        """The suite's ``datasets.Features``."""
        return features_for(self.task_spec, self.extras)


def merge_parts(parts: Iterable[KeyedRows]) -> list[Row]:
    """The rows of every part, in order of their keys (each key belongs to one part).

    Raises:
        DataError: Two parts hold rows of the same record.

    """
    keyed = sorted((pair for part in parts for pair in part), key=lambda pair: pair[0])
    for (key, _), (next_key, _) in itertools.pairwise(keyed):
        if key == next_key:
            raise DataError(f"two parts of a suite built rows of source record {key}")
    return [row for _, rows in keyed for row in rows]


SUITES: Registry[SuiteSpec] = Registry("suite")


def register_suite(spec: SuiteSpec) -> SuiteSpec:
    """Add a suite to the registry; names are unique across the benchmark.

    Raises:
        DuplicateNameError: The name is already registered.
        UnknownNameError: Its task or family is not registered.
        DataError: Its family's declaration (:mod:`consistency_bench.bench.registries.families`)
        does not list
        it, its
            kind, or its task.

    """
    get_task(spec.task)
    FAMILIES[spec.family].check_suite(spec.name, spec.task, spec.kind)
    return SUITES.register(spec.name, spec)

