"""Specs of the model-specific gradient word-salad suites (Drop, Repeat, Replace, CopyOne)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.builders.salad.constants import (
    FAMILY,
    GRADIENT,
    KIND,
    PAIR_ONLY,
    SALAD,
    SEED,
    VERSION,
)
from consistency_bench.builders.salad.descriptions import DESCRIPTIONS
from consistency_bench.builders.salad.lexical import transform as lexical
from consistency_bench.builders.salad.rows import _pair_rows, _row_key, salad_extras
from consistency_bench.builders.salad.sources import TASK_SOURCES, Record
from consistency_bench.builders.suite.spec import Row, SuiteSpec


def gradient_text(
    transform: str,
    importance,
    rng: random.Random,
    vocabulary: Sequence[str],
    to_text: Callable[[Sequence[str]], str],
    ratio: float,
) -> str | None:
    """The transformed text for one example from its token importance, or ``None``."""
    from consistency_bench.builders.salad.gradient import transform as gradient

    tokens, scores = importance.tokens, importance.scores
    if transform == "drop":
        out = gradient.drop(tokens, scores, ratio)
    elif transform == "repeat":
        out = gradient.repeat(tokens, scores, rng, ratio)
    elif transform == "replace":
        out = gradient.replace(tokens, scores, rng, vocabulary, ratio)
    elif transform == "copyone":
        out = gradient.copy_one(importance.other_tokens, importance.other_scores)
    else:
        raise ValueError(f"unknown gradient transformation {transform!r}")
    if out is None:
        return None
    text = to_text(out)
    return text if text and text != to_text(tokens) else None


def gradient_specs(
    task: str,
    transforms: Sequence[str],
    records: Sequence[Record],
    importances: Sequence,
    vocabulary: Sequence[str],
    to_text: Callable[[Sequence[str]], str],
    model_tag: str,
    model_name: str,
    ratio: float = 0.5,
    seed: int = SEED,
) -> list[SuiteSpec]:
    """Specs of ``<task>_salad_<transform>_<model_tag>`` from precomputed token importance."""
    if len(records) != len(importances):
        raise ValueError("one importance per record is needed")
    path, specs = TASK_SOURCES[task].path, []
    for transform in transforms:
        if transform not in GRADIENT:
            raise ValueError(f"{transform!r} is not a gradient transformation: {GRADIENT}")
        if transform in PAIR_ONLY and not get_task(task).is_pair:
            raise ValueError(f"{transform} applies to pair tasks only, not {task}")
        suite = f"{task}_salad_{transform}_{model_tag}"
        rows: list[Row] = []
        for record, importance in zip(records, importances, strict=True):
            rng = lexical.rng_for(seed, _row_key(task, transform, path, record.row))
            new = gradient_text(transform, importance, rng, vocabulary, to_text, ratio)
            if new is not None:
                rows.extend(_pair_rows(suite, task, transform, record, path, new,
                                       model=model_name))
        specs.append(SuiteSpec(
            name=suite, task=task, family=FAMILY, kind=KIND, version=VERSION, sources=(path,),
            build=lambda resolver, rows=tuple(rows): iter(rows),
            description=DESCRIPTIONS[transform] + f" Token importance from model {model_name}.",
            main_metric="agreement", higher_is_better=False, extras=salad_extras(True),
            citation=SALAD.citation, license=SALAD.licenses[task],
        ))
    return specs
