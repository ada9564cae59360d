"""Where each task's inputs live in the BECEL release files, and the row they make."""

from __future__ import annotations

from dataclasses import dataclass

from consistency_bench.builders.suite.spec import Row


@dataclass(frozen=True)
class Layout:
    """Where a task's inputs live in the BECEL files.

    Attributes:
        text: Column for the ``text`` input.
        text_pair: Column for ``text_pair``, or ``None``.
        modified: Which of the two inputs the semantic / negational sets change.

    """

    text: str
    text_pair: str | None
    modified: str  # "text" or "text_pair"


LAYOUTS = {
    "snli": Layout("premise", "hypothesis", "text_pair"),
    "rte": Layout("sentence1", "sentence2", "text_pair"),
    "mrpc": Layout("sentence1", "sentence2", "text_pair"),
    "boolq": Layout("question", "passage", "text"),
    "wic": Layout("sentence1", "sentence2", "text_pair"),
    "sst2": Layout("sentence", None, "text"),
    "ag_news": Layout("text", None, "text"),
}

# Column of the perturbed input in each released file (header spellings vary).
PARAPHRASE_COLUMN = {
    "snli": "hypothesis_paraphrase",
    "rte": "sentence2_paraphrase",
    "mrpc": "sentence2_paraphrase",
    "boolq": "question_paraphrase",
    "wic": "sentence2_paraphrase",
    "sst2": "sentence_paraphrase",
    "ag_news": "text_paraphrase",
}
NEGATION_COLUMN = {
    "snli": "hypothesis_neg",
    "rte": "sentence2_neg",
    "mrpc": "sentence2_neg",
    "boolq": "question_neg",
}



def _file(task: str, name: str) -> str:
    return f"becel/{task}/{name}.tsv"


def _row(
    suite: str,
    task: str,
    key: str,
    variant: str,
    text: str,
    text_pair: str | None,
    label: int | None,
    source_file: str,
    source_row: int,
    **extras: object,
) -> Row:
    group = f"{suite}/{key}"
    return {
        "id": f"{group}/{variant}",
        "suite": suite,
        "task": task,
        "group": group,
        "variant": variant,
        "text": text,
        "text_pair": text_pair,
        "label": label,
        "source_file": source_file,
        "source_row": source_row,
        **extras,
    }


def _inputs(task: str, record: dict[str, str]) -> tuple[str, str | None]:
    layout = LAYOUTS[task]
    pair = record[layout.text_pair] if layout.text_pair else None
    return record[layout.text], pair


def _wic_spans(record: dict[str, str], start2: str = "start2", end2: str = "end2") -> dict:
    return {
        "word": record["word"],
        "start1": int(record["start1"]),
        "end1": int(record["end1"]),
        "start2": int(record[start2]),
        "end2": int(record[end2]),
    }


def _perturbed(task: str, record: dict[str, str], column: str) -> tuple[str, str | None]:
    text, pair = _inputs(task, record)
    if LAYOUTS[task].modified == "text":
        return record[column], pair
    return text, record[column]
