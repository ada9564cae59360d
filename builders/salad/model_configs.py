"""The model-specific word-salad configs: what ``consistency-bench salad`` does.

Drop, Repeat, Replace and CopyOne depend on the model under test (token importance =
embedding × gradient of its loss). :func:`build_gradient_suites` loads the model, computes the
importance of every token of each requested task's evaluation split and writes
``<task>_salad_<transform>_<tag>`` configs into an existing (or new) suite folder, updating
``suites.json`` and the card.

The model is loaded with ``AutoModelForSequenceClassification`` / ``AutoTokenizer``
``.from_pretrained(PATH)`` (local paths only when ``HF_HUB_OFFLINE=1``). The model must have
been fine-tuned on the task, with the task's label order.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.registries.tasks import get_task


def model_tag(name: str) -> str:
    """A config-name-safe tag: lower-case letters, digits and ``_``."""
    tag = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not tag:
        raise ConfigError(f"--name {name!r} has no letters or digits to make a config name")
    return tag


def parse_suites(names: list[str]) -> dict[str, list[str]]:
    """``{task: [transforms]}`` from ``--suite`` names (errors name the bad value)."""
    from consistency_bench.builders.salad.constants import GRADIENT, PAIR_ONLY
    from consistency_bench.builders.salad.sources import TASK_SOURCES

    plan: dict[str, list[str]] = {}
    for name in names:
        task, sep, transform = name.partition("_salad_")
        if not sep or task not in TASK_SOURCES or transform not in (*GRADIENT, "gradient"):
            raise ConfigError(
                f"--suite {name!r}: expected <task>_salad_<transform> with task in "
                f"{sorted(TASK_SOURCES)} and transform in {[*GRADIENT, 'gradient']}"
            )
        wanted = list(GRADIENT) if transform == "gradient" else [transform]
        pair = get_task(task).is_pair
        for item in wanted:
            if item in PAIR_ONLY and not pair:
                if transform != "gradient":
                    raise ConfigError(f"--suite {name!r}: {item} applies to pair tasks only")
                continue
            if item not in plan.setdefault(task, []):
                plan[task].append(item)
    return plan


def load_model(path: Path, device: str):
    """Load a sequence classifier and its tokenizer (the shared loader, ``consistency_bench.bench.modeling``)."""  # noqa: E501
    from consistency_bench.bench.modeling.loading import load_classifier

    loaded = load_classifier(path, device=device)
    if loaded.is_seq2seq:
        raise ConfigError(f"{path}: word-salad gradients need a sequence classifier, "
                          "not a text-to-text model")
    return loaded.model, loaded.tokenizer


# One piece (over 60 lines): checks before the model loads, then one loop.
def build_gradient_suites(model: str | os.PathLike, suites: list[str],
                          data: str | os.PathLike, *, name: str | None = None,
                          sources: str | os.PathLike | None = None, download: bool = True,
                          ratio: float = 0.5, batch_size: int = 16, limit: int | None = None,
                          device: str = "cpu") -> int:
    """Compute importance, build the gradient configs, write them into ``data``.

    Args:
        model: Fine-tuned model folder.
        suites: ``<task>_salad_<drop|repeat|replace|copyone>`` or ``<task>_salad_gradient``.
        data: Suite folder to write into (new, or a built folder that is updated).
        name: Model tag in the config names (default: the folder's name).
        sources: Local mirror of the source corpora.
        download: Whether a missing source may be downloaded.
        ratio: Share of the least important tokens transformed, strictly between 0 and 1.
        batch_size: Examples per gradient pass, at least 1.
        limit: Only the first N examples of each task (quick runs), at least 1.
        device: torch device.

    Returns:
        The number of configs written.

    Raises:
        ConfigError: A bad option, suite name or model folder (checked before the model
            loads), or a model whose label count is not the task's.

    """
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.export import build_all
    from consistency_bench.builders.salad.gradient.suites import gradient_specs
    from consistency_bench.builders.salad.gradient.transform import (
        replacement_vocabulary,
        token_importance,
        tokens_to_text,
    )
    from consistency_bench.builders.salad.sources import read_records

    if not 0 < ratio < 1:
        raise ConfigError(f"--ratio {ratio}: must lie strictly between 0 and 1")
    for flag, value in (("--batch-size", batch_size), ("--limit", limit)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} {value}: must be at least 1")
    plan = parse_suites(suites)
    model_path = Path(model)
    if not model_path.is_dir():
        raise ConfigError(f"--model {model!r}: not a model folder")
    tag = model_tag(name or model_path.resolve().name)
    loaded, tokenizer = load_model(model_path, device)
    resolver = SourceResolver(sources, download=download)
    vocabulary = replacement_vocabulary(tokenizer)
    specs = []
    for task, transforms in plan.items():
        records = read_records(task, resolver)
        if limit is not None:
            records = records[:limit]
        labels = get_task(task).num_labels
        if loaded.config.num_labels != labels:
            raise ConfigError(
                f"--model {model}: {loaded.config.num_labels} labels, task {task} has {labels}"
            )
        importances = token_importance(
            loaded, tokenizer, [r.text for r in records], [r.text_pair for r in records],
            [r.label for r in records], transform_pair=records[0].text_pair is not None
            if records else False, batch_size=batch_size,
        )
        specs += gradient_specs(
            task, transforms, records, importances, vocabulary,
            lambda tokens: tokens_to_text(tokenizer, tokens), tag, name or str(model_path),
            ratio=ratio,
        )
    build_all(specs, resolver, data)
    return len(specs)
