"""Reference baselines that need no downloaded weights (docs/baselines.md).

``BASELINES`` is the explicit registry: name -> :class:`Baseline`. A baseline's ``prepare``
returns, for one task, a function from a list of suite rows to ``(label, probs or None)`` per
row; :func:`run_baseline` writes the prediction file for every built suite it covers.
The fine-tuned MiniLM baseline is not here: it is ``consistency-bench train`` followed by
``consistency-bench predict``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from consistency_bench.bench.errors import ConfigError, UnknownNameError
from consistency_bench.bench.io.write import atomic_path
from consistency_bench.bench.registries.tasks import TaskSpec, get_task

if TYPE_CHECKING:  # `import consistency_bench.bench.baselines` runs at every CLI start-up (the help lists names)  # noqa: E501
    from consistency_bench.bench.registries.source_files import SourceResolver

Prediction = tuple[int, list[float] | None]
SuitePredictor = Callable[[list[dict]], list[Prediction]]


@dataclass(frozen=True)
class Context:
    """What a baseline may use: the source mirror (training data) and the seed."""

    resolver: SourceResolver
    seed: int = 0


@dataclass(frozen=True)
class Baseline:
    """One baseline.

    Attributes:
        name: Registry key and submission name stem.
        description: One line for the metadata and docs.
        tasks: Tasks it covers.
        prepare: ``(task, context) -> predictor over rows``; fits whatever it needs once.
        reads_pairs: Whether it compares the two inputs of a pair task; such a baseline skips
            suites that give a pair task's inputs as one formatted string (CALM), where it
            would see no pair and degenerate to a constant.

    """

    name: str
    description: str
    tasks: tuple[str, ...]
    prepare: Callable[[TaskSpec, Context], SuitePredictor]
    reads_pairs: bool = True


ALL_TASKS = ("snli", "rte", "mrpc", "boolq", "wic", "sst2", "ag_news")


def _majority(task: TaskSpec, ctx: Context) -> SuitePredictor:
    from consistency_bench.bench.baselines.simple import majority_label
    from consistency_bench.bench.baselines.train_data import label_counts

    counts, _ = label_counts(task.name, ctx.resolver)
    label = majority_label(counts)
    total = sum(counts)
    probs = [c / total for c in counts]
    return lambda rows: [(label, probs) for _ in rows]


def _random(task: TaskSpec, ctx: Context) -> SuitePredictor:
    from consistency_bench.bench.baselines.simple import random_label

    return lambda rows: [(random_label(task, r["id"], ctx.seed), None) for r in rows]


def _overlap(task: TaskSpec, ctx: Context) -> SuitePredictor:
    from consistency_bench.bench.baselines.overlap import fit_threshold, predict_overlap
    from consistency_bench.bench.baselines.train_data import load_train

    train = load_train(task.name, ctx.resolver)
    threshold = fit_threshold(
        task.name, [(e.text, e.text_pair) for e in train], [e.label for e in train]
    )
    return lambda rows: [
        (predict_overlap(task.name, r["text"], r["text_pair"], threshold), None) for r in rows
    ]


def _vader(task: TaskSpec, ctx: Context) -> SuitePredictor:
    from consistency_bench.bench.baselines.simple import vader_label, vader_scorer

    score = vader_scorer()
    return lambda rows: [(vader_label(score(r["text"])["compound"]), None) for r in rows]


def _tfidf(task: TaskSpec, ctx: Context) -> SuitePredictor:
    from consistency_bench.bench.baselines.tfidf import fit_tfidf
    from consistency_bench.bench.baselines.train_data import load_train, model_texts
    from consistency_bench.bench.prompting.row_inputs import classifier_input

    train = load_train(task.name, ctx.resolver)
    model = fit_tfidf(
        [model_texts(e, task.name) for e in train], [e.label for e in train], task.num_labels
    )

    def predict(rows: list[dict]) -> list[Prediction]:
        probs = model.predict_proba([classifier_input(r, task.name) for r in rows])
        return [(max(range(len(p)), key=p.__getitem__), p) for p in probs]

    return predict


BASELINES: dict[str, Baseline] = {
    b.name: b
    for b in (
        Baseline("majority", "most frequent gold label of the task's training data "
                 "(validation counts for BoolQ and AG News)", ALL_TASKS, _majority,
                 reads_pairs=False),
        Baseline("random", "uniform random label, seeded per row id", ALL_TASKS, _random,
                 reads_pairs=False),
        Baseline("lexical-overlap", "word-overlap threshold fitted on training data "
                 "(+ negation cue for NLI contradiction)",
                 ("snli", "mnli", "rte", "qnli", "mrpc", "wic"), _overlap),
        Baseline("vader", "VADER compound score >= 0 -> positive", ("sst2",), _vader),
        Baseline("tfidf-lr", "TF-IDF uni+bigrams + logistic regression on training data",
                 ("snli", "mnli", "rte", "qnli", "mrpc", "wic", "sst2", "boolq", "ag_news"),
                 _tfidf),
    )
}


def get_baseline(name: str) -> Baseline:
    """Registry lookup with a did-you-mean error."""
    try:
        return BASELINES[name]
    except KeyError:
        raise UnknownNameError("baseline", name, BASELINES) from None


# One piece (over 60 lines): one pass over the suites inside one atomic write.
def run_baseline(
    name: str,
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    ctx: Context,
    suites: Sequence[str] | None = None,
    *,
    only: Mapping[str, frozenset[str]] | None = None,
    record: bool = True,
) -> dict[str, int]:
    """Predict every built suite the baseline covers; write JSONL atomically.

    Args:
        name: The baseline.
        data_dir: Built suite folder.
        out: Prediction file to write.
        ctx: The source mirror and the seed.
        suites: Suites to predict (default: every built suite it covers).
        only: Only these row ids per suite (``reproduce``'s sample); None: every row. A
            baseline fits on its training data, never on the rows, and whether a suite is
            skipped is decided on all its rows, so a sampled row gets its full-run prediction.
        record: Write the run record ``<out>.run.json`` (:mod:`consistency_bench.bench.runrecord`).

    Returns:
        Rows written per suite.

    """
    import time

    from consistency_bench.bench.io.manifest import read_manifest

    baseline = get_baseline(name)
    root = Path(data_dir)
    manifest = read_manifest(root)
    chosen = list(suites) if suites else sorted(manifest)
    predictors: dict[str, SuitePredictor] = {}
    written: dict[str, int] = {}
    start = time.perf_counter()
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for suite in chosen:
            if suite not in manifest:
                raise UnknownNameError("built suite", suite, manifest)
            lines = _suite_lines(baseline, root, suite, manifest[suite]["task"], predictors,
                                 ctx, only)
            if lines is not None:
                handle.writelines(lines)
                written[suite] = len(lines)
        if not written:  # raised inside the block: the temporary file is removed
            raise ConfigError(
                f"baseline {name!r} covers none of the chosen suites "
                f"({', '.join(chosen[:5])}{', ...' if len(chosen) > 5 else ''}); it covers the "
                f"tasks {', '.join(baseline.tasks)} (pair baselines skip single-string suites)"
            )
    if record:
        from consistency_bench.bench.runrecord.baseline_record import baseline_record
        from consistency_bench.bench.runrecord.schema import record_path, write_record

        write_record(record_path(out), baseline_record(
            name, seed=ctx.seed, written=written, data_dir=root, out=out,
            sources=ctx.resolver.used(), seconds=time.perf_counter() - start))
    return written


def _suite_lines(baseline: Baseline, root: Path, suite: str, task: str,
                 predictors: dict[str, SuitePredictor], ctx: Context,
                 only: Mapping[str, frozenset[str]] | None) -> list[str] | None:
    """The JSONL lines of one suite, or None when the baseline does not cover it."""
    import pyarrow.parquet as pq

    from consistency_bench.bench.io.manifest import parquet_path

    if task not in baseline.tasks:
        return None
    if task not in predictors:
        predictors[task] = baseline.prepare(get_task(task), ctx)
    rows = pq.read_table(parquet_path(root, suite)).to_pylist()
    single_string = all(r["text_pair"] is None for r in rows)
    if baseline.reads_pairs and get_task(task).is_pair and single_string:
        return None  # e.g. CALM: the pair is one formatted string
    if only is not None:
        rows = [r for r in rows if r["id"] in only.get(suite, frozenset())]
    lines = []
    for row, (label, probs) in zip(rows, predictors[task](rows), strict=True):
        item: dict = {"id": row["id"], "label": label}
        if probs is not None:
            item["probs"] = [round(p, 6) for p in probs]
        lines.append(json.dumps(item) + "\n")
    return lines
