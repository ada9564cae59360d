"""Map a model's labels to a task's label names (``--label-map``, name matching, probs)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.registries.tasks import TaskSpec

#: A task label -> the model output indices whose probabilities it collects.
LabelMapping = tuple[tuple[int, ...], ...]
#: Overrides from ``--label-map``: task -> task label -> model label names / indices.
LabelOverrides = dict[str, dict[str, tuple[str, ...]]]


def normalise_label(name: str) -> str:
    """Case-, underscore-, hyphen- and space-insensitive form of a label name."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def parse_label_map(spec: str | None) -> LabelOverrides:
    """Parse ``--label-map``: inline ``task:label=model[+model],...;task:...`` or a JSON file.

    Raises:
        ConfigError: The text is malformed; names the bad part.

    """
    if not spec:
        return {}
    path = Path(spec)
    if spec.endswith(".json") or path.is_file():
        from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

        try:
            data = load_json_file(path)
        except JsonFileError as exc:
            raise ConfigError(f"--label-map file {spec}: {exc.detail}") from None
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(
                f"--label-map file {spec}: expected {{task: {{label: model_label}}}}, got {data!r}"
            )
        out: LabelOverrides = {}
        for task, mapping in data.items():
            out[task] = {}
            for label, target in mapping.items():
                targets = target if isinstance(target, list) else str(target).split("+")
                out[task][str(label)] = tuple(str(t).strip() for t in targets)
        return out
    out = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        task, sep, pairs = part.partition(":")
        if not sep or not task.strip():
            raise ConfigError(
                f"--label-map part {part!r}: expected TASK:label=model_label,... "
                "(e.g. snli:entailment=ENTAILMENT,neutral=NEUTRAL)"
            )
        mapping = out.setdefault(task.strip(), {})
        for pair in filter(None, (p.strip() for p in pairs.split(","))):
            label, eq, target = pair.partition("=")
            if not eq or not label.strip() or not target.strip():
                raise ConfigError(f"--label-map part {part!r}: bad pair {pair!r}; use label=model")
            mapping[label.strip()] = tuple(t.strip() for t in target.split("+"))
    return out


def _model_index(target: str, id2label: Mapping[int, str]) -> int | None:
    by_name = {normalise_label(v): k for k, v in id2label.items()}
    if normalise_label(target) in by_name:
        return by_name[normalise_label(target)]
    if target.isdigit() and int(target) in id2label:
        return int(target)
    return None


def resolve_label_mapping(
    id2label: Mapping[int, str], task: TaskSpec, overrides: LabelOverrides | None = None
) -> LabelMapping:
    """For each task label (in index order), the model outputs that stand for it.

    Args:
        id2label: The model's output index -> label name.
        task: The task whose label names must be covered.
        overrides: Parsed ``--label-map``; entries for ``task`` win over name matching.

    Raises:
        ConfigError: A task label matches no model label (names every unmatched one), or an
            override names a label the task or the model does not have.

    """
    override = dict((overrides or {}).get(task.name, {}))
    task_norm = {normalise_label(n): n for n in task.label_names}
    for label in override:
        if normalise_label(label) not in task_norm:
            raise ConfigError(
                f"--label-map {task.name}: {label!r} is not a label of task {task.name} "
                f"(labels: {', '.join(task.label_names)})"
            )
    override = {task_norm[normalise_label(k)]: v for k, v in override.items()}
    model_labels = ", ".join(f"{k}={v}" for k, v in sorted(id2label.items()))
    mapping: list[tuple[int, ...]] = []
    unmatched: list[str] = []
    for name in task.label_names:
        if name in override:
            indices = []
            for target in override[name]:
                index = _model_index(target, id2label)
                if index is None:
                    raise ConfigError(
                        f"--label-map {task.name}:{name}={target!r}: the model has no such "
                        f"label or index (model labels: {model_labels})"
                    )
                indices.append(index)
            mapping.append(tuple(indices))
            continue
        index = _model_index_by_name(name, id2label)
        if index is None:
            unmatched.append(name)
        else:
            mapping.append((index,))
    if unmatched:
        raise ConfigError(
            f"cannot map the labels of task {task.name}: {', '.join(unmatched)} match no model "
            f"label (model labels: {model_labels}); pass --label-map "
            f"'{task.name}:{unmatched[0]}=MODEL_LABEL,...' or a JSON file"
        )
    used = [i for indices in mapping for i in indices]
    if len(set(used)) != len(used):
        raise ConfigError(
            f"label mapping of task {task.name} uses a model output twice: {mapping}"
        )
    return tuple(mapping)


def _model_index_by_name(name: str, id2label: Mapping[int, str]) -> int | None:
    by_name = {normalise_label(v): k for k, v in id2label.items()}
    return by_name.get(normalise_label(name))


def map_probs(model_probs: Sequence[float], mapping: LabelMapping) -> list[float]:
    """Task-label probabilities: sum the mapped model outputs, renormalise over the task.

    Model outputs no task label uses (e.g. a fourth class) are dropped before renormalising.
    """
    sums = [sum(model_probs[i] for i in indices) for indices in mapping]
    total = sum(sums)
    if total <= 0:
        return [1.0 / len(sums)] * len(sums)
    return [s / total for s in sums]


def match_generated(text: str, task: TaskSpec, overrides: LabelOverrides | None = None):
    """Task label index of a generated answer, or the answer itself when it is free text.

    The answer matches a label name (case/underscore-insensitive), or a model-side name given
    for that label in ``--label-map`` (``boolq:true=yes``).
    """
    norm = normalise_label(text)
    for index, name in enumerate(task.label_names):
        if norm == normalise_label(name):
            return index
    override = (overrides or {}).get(task.name, {})
    for label, targets in override.items():
        if norm in {normalise_label(t) for t in targets}:
            for index, name in enumerate(task.label_names):
                if normalise_label(name) == normalise_label(label):
                    return index
    return text
