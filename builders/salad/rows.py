"""The rows of one word-salad group: the original and its transformed row; extra columns."""

from __future__ import annotations

import datasets

from consistency_bench.bench.metrics.salad import DEFAULT_LABEL, TRANSFORM_FAMILY
from consistency_bench.builders.salad.constants import PAIR_ONLY
from consistency_bench.builders.salad.sources import Record
from consistency_bench.builders.suite.spec import Row


def salad_extras(gradient: bool = False) -> dict[str, object]:
    """Extra columns of a word-salad suite (``model`` only on gradient suites)."""
    string = datasets.Value("string")
    extras: dict[str, object] = {
        "transform": string, "transform_family": string, "agreement_with": string,
    }
    if gradient:
        extras["model"] = string
    return extras


def _pair_rows(
    suite: str, task: str, transform: str, record: Record, path: str, new_text: str,
    **extra: object,
) -> tuple[Row, Row]:
    group = f"{suite}/r{record.row:05d}"
    base = {"suite": suite, "task": task, "group": group, "source_file": path,
            "source_row": record.row, **extra}
    original = {
        **base, "id": f"{group}/original", "variant": "original", "text": record.text,
        "text_pair": record.text_pair, "label": record.label, "transform": "",
        "transform_family": "", "agreement_with": "",
    }
    if record.text_pair is None:
        text, pair = new_text, None
    else:
        text, pair = record.text, new_text
    default = DEFAULT_LABEL.get(task, "") if transform in PAIR_ONLY else ""
    changed = {
        **base, "id": f"{group}/{transform}", "variant": transform, "text": text,
        "text_pair": pair, "label": None, "transform": transform,
        "transform_family": TRANSFORM_FAMILY[transform],
        "agreement_with": default or "original",
    }
    ordered = list(original)
    return original, {k: changed[k] for k in ordered}


def _row_key(task: str, transform: str, path: str, row: int) -> str:
    return f"{task}/{transform}/{path}/{row}"
