"""Rows of the lexical word-salad suites (Sort, Reverse, Shuffle, CopySort)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.salad.constants import LOWER, SEED
from consistency_bench.builders.salad.lexical import transform as lexical
from consistency_bench.builders.salad.rows import _pair_rows, _row_key
from consistency_bench.builders.salad.sources import TASK_SOURCES, Record, read_records
from consistency_bench.builders.suite.spec import Row

#: The generator handed to the transformations that draw nothing (Sort, Reverse, CopySort).
_NO_DRAWS = random.Random(0)


def lexical_text(
    transform: str, record: Record, rng: random.Random, lower: bool = LOWER
) -> str | None:
    """The transformed text of ``record`` (the second text of a pair), or ``None``.

    ``lower`` (default: the paper's lower-cased outputs) lower-cases the transformed text.
    """
    target = record.text_pair if record.text_pair is not None else record.text
    if transform == "sort":
        return lexical.sort_text(target, lower)
    if transform == "reverse":
        return lexical.reverse_text(target, lower)
    if transform == "shuffle":
        return lexical.shuffle_text(target, rng, lower)
    if transform == "copysort":
        if record.text_pair is None:
            raise ValueError("CopySort applies to pair tasks only")
        return lexical.copysort_text(record.text, target, lower)
    raise ValueError(f"unknown lexical transformation {transform!r}")


def lexical_rows(
    task: str, transform: str, lower: bool = LOWER
) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_salad_<transform>`` for a lexical transformation.

    Args:
        task: Task name (``TASK_SOURCES``).
        transform: One of ``LEXICAL``.
        lower: Lower-case the transformed text (the paper's examples; the registered suites).
            ``False`` keeps the source's case, for studying cased models.

    """
    suite, path = f"{task}_salad_{transform}", TASK_SOURCES[task].path

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for record in read_records(task, resolver):
            # only Shuffle draws: seeding a generator per row costs ~15 us (issue 32 item 12)
            rng = (lexical.rng_for(SEED, _row_key(task, transform, path, record.row))
                   if transform == "shuffle" else _NO_DRAWS)
            new = lexical_text(transform, record, rng, lower)
            if new is not None:
                yield from _pair_rows(suite, task, transform, record, path, new)

    return build
