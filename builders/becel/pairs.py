"""Pair builders: each released row gives an original and one compared row.

Semantic (a paraphrase), negational (an opposite-meaning version) and symmetric (the two inputs
swapped) sets, read from the BECEL release.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.io.tsv import read_tsv
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.becel.layouts import (
    NEGATION_COLUMN,
    PARAPHRASE_COLUMN,
    _file,
    _inputs,
    _perturbed,
    _row,
    _wic_spans,
)
from consistency_bench.builders.suite.spec import Row

# ----------------------------------------------------------------------------- semantic


def semantic_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_semantic``: each released row gives an original and a paraphrase."""
    suite, path = f"{task}_semantic", _file(task, "semantic")

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for number, record in enumerate(read_tsv(resolver.path(path))):
            key, label = f"r{number:05d}", int(record["label"])
            extra = _wic_spans(record) if task == "wic" else {}
            text, pair = _inputs(task, record)
            yield _row(suite, task, key, "original", text, pair, label, path, number, **extra)
            text, pair = _perturbed(task, record, PARAPHRASE_COLUMN[task])
            if task == "wic":
                extra = _wic_spans(record, "start_para", "end_para")
            yield _row(suite, task, key, "paraphrase", text, pair, label, path, number, **extra)

    return build


# ----------------------------------------------------------------------------- negational


def negational_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_negational``: an original and its opposite-meaning version."""
    suite, path = f"{task}_negational", _file(task, "negational")

    def build(resolver: SourceResolver) -> Iterator[Row]:
        for number, record in enumerate(read_tsv(resolver.path(path))):
            key, tag = f"r{number:05d}", record["tag"]
            text, pair = _inputs(task, record)
            label, negated_label = int(record["label"]), int(record["neg_label"])
            yield _row(suite, task, key, "original", text, pair, label, path, number, tag="")
            text, pair = _perturbed(task, record, NEGATION_COLUMN[task])
            yield _row(
                suite, task, key, "negated", text, pair, negated_label, path, number, tag=tag
            )

    return build


# ----------------------------------------------------------------------------- symmetric


def _swapped_extra(task: str, record: dict[str, str]) -> dict:
    return _wic_spans(record) if task == "wic" else {}


def _normalised(*texts: str | None) -> tuple[str, ...]:
    """Texts lower-cased with everything but letters and digits removed, for matching."""
    return tuple("".join(ch for ch in (t or "").lower() if ch.isalnum()) for t in texts)


def symmetric_rows(task: str, original_split: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_symmetric``: an original row and the released swapped row.

    SNLI's released swapped rows carry no index: their original is found in the test file by
    text. The other tasks' swapped rows carry in ``index`` the 0-based position of their
    training row (for MRPC this differs from the training file's own ``index`` column).
    """
    suite = f"{task}_symmetric"
    path, original_path = _file(task, "symmetric"), _file(task, original_split)

    def build(resolver: SourceResolver) -> Iterator[Row]:
        originals = read_tsv(resolver.path(original_path))
        if task == "snli":
            where = {}
            for number, record in enumerate(originals):
                where.setdefault((record["premise"], record["hypothesis"]), number)
                where.setdefault(_normalised(record["premise"], record["hypothesis"]), number)
        else:  # ``index`` is the position of the original in the training file
            where = {str(number): number for number in range(len(originals))}
        for number, record in enumerate(read_tsv(resolver.path(path))):
            text, pair = _inputs(task, record)
            lookup = (pair, text) if task == "snli" else record["index"]
            if task == "snli" and lookup not in where:
                lookup = _normalised(pair, text)  # one released row differs by a typo
            if lookup not in where:
                raise SourceError(f"{path}: data row {number} has no original in {original_path}")
            origin = originals[where[lookup]]
            o_text, o_pair = _inputs(task, origin)
            if _normalised(o_text, o_pair) != _normalised(pair, text):
                raise SourceError(
                    f"{path}: data row {number} is not the swap of {original_path} row "
                    f"{where[lookup]}"
                )
            key, label = f"r{number:05d}", int(record["label"])
            if int(origin["label"]) != label:
                raise SourceError(f"{path}: data row {number}: label differs from its original")
            o_extra, s_extra = _swapped_extra(task, origin), _swapped_extra(task, record)
            yield _row(
                suite,
                task,
                key,
                "original",
                o_text,
                o_pair,
                label,
                original_path,
                where[lookup],
                **o_extra,
            )
            yield _row(suite, task, key, "swapped", text, pair, label, path, number, **s_extra)

    return build
