"""The row contract shared by every suite (see docs/row-contract.md).

Every row of every suite has the base columns below; a suite may add task extras (WiC spans)
and kind extras (antecedents and constraints of transitive / additive rows). The label is a
``ClassLabel`` with the task's label names; ``None`` where a row has no gold label.
"""

from __future__ import annotations

from collections.abc import Mapping

import datasets

from consistency_bench.bench.registries.tasks import TaskSpec

BASE_COLUMNS: tuple[str, ...] = (
    "id",
    "suite",
    "task",
    "group",
    "variant",
    "text",
    "text_pair",
    "label",
    "source_file",
    "source_row",
)

#: WiC rows also carry the target word and its character span in each sentence.
WIC_EXTRAS: dict[str, datasets.Value] = {
    "word": datasets.Value("string"),
    "start1": datasets.Value("int32"),
    "end1": datasets.Value("int32"),
    "start2": datasets.Value("int32"),
    "end2": datasets.Value("int32"),
}

#: Rows derived from two other rows (transitive, additive) name them and the rule they test.
DERIVED_EXTRAS: dict[str, object] = {
    "antecedent_ids": datasets.List(datasets.Value("string")),
    "constraint": datasets.Value("string"),
    "rule": datasets.Value("string"),
}

#: Negational rows record which rule (negation / antonym) made the negated text.
NEGATION_EXTRAS: dict[str, datasets.Value] = {"tag": datasets.Value("string")}


def features_for(task: TaskSpec, extras: Mapping[str, object] = ()) -> datasets.Features:
    """The ``datasets.Features`` of a suite of ``task`` with the given extra columns.

    Args:
        task: The task whose label names become the ``label`` ClassLabel.
        extras: Extra column name to feature type, appended after the base columns.

    Returns:
        The features, base columns first, in a fixed order.

    """
    string = datasets.Value("string")
    columns: dict[str, object] = {
        "id": string,
        "suite": string,
        "task": string,
        "group": string,
        "variant": string,
        "text": string,
        "text_pair": string,
        "label": datasets.ClassLabel(names=list(task.label_names)),
        "source_file": string,
        "source_row": datasets.Value("int64"),
    }
    for name, feature in dict(extras).items():
        if name in columns:
            raise ValueError(f"extra column {name!r} shadows a base column")
        columns[name] = feature
    return datasets.Features(columns)
