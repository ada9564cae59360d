"""What a model sees for one suite row: text pairs for classifiers, T5 prompts for generators.

Classifiers get ``(text, text_pair)`` as a tokenizer text pair (``text_pair`` is None for
single-text tasks). WiC rows also carry the target word; two formats exist:

- ``word-prefix`` (default): ``("<word>: <sentence1>", "<sentence2>")``. The target word is
  part of the input, as the task needs it; span markers are not used because the BECEL
  paraphrased / negated sentences do not always keep the original character spans.
- ``pair``: the plain ``(sentence1, sentence2)`` pair, for models trained that way.

Text-to-text models get the T5 GLUE / SuperGLUE prompt of the task (``<task> key: value ...``,
keys in T5's order) and must answer with a label name; SNLI uses T5's MNLI prompt. A row of a
``*_t2t`` suite (CALM's text-to-text configs) already is the T5 input, prefix included, and is
given as it is.

CALM's classification configs (``*_calm``) hold the paper's two inputs, each with its own
indicator (``("Premise: <p>", "Hypothesis: <h>")``), so a classifier gets them as a tokenizer
text pair like any other pair task, and REVERSE / SIGNAL reach it inside each text.
Pure functions; ``consistency-bench train`` uses the same formatting as ``predict``.
"""

from __future__ import annotations

from collections.abc import Mapping

from consistency_bench.bench.errors import ConfigError

WIC_FORMATS = ("word-prefix", "pair")
#: Suites whose ``text`` is the whole text-to-text input (``bench.commands.predict`` skips
#: them for causal LMs by the same suffix).
T2T_SUFFIX = "_t2t"

#: T5 prompt per task: prefix and the field names given to ``text`` and ``text_pair``.
T5_PROMPTS: dict[str, tuple[str, str, str | None]] = {
    "snli": ("mnli", "premise", "hypothesis"),
    "rte": ("rte", "sentence1", "sentence2"),
    "mrpc": ("mrpc", "sentence1", "sentence2"),
    "boolq": ("boolq", "question", "passage"),
    "wic": ("wic", "sentence1", "sentence2"),
    "sst2": ("sst2", "sentence", None),
    "ag_news": ("ag_news", "text", None),
}

#: T5's field order in the prompt (alphabetical, as its GLUE preprocessor writes them).
_T5_ORDER = {"snli": ("hypothesis", "premise"), "boolq": ("passage", "question")}


def classifier_input(
    row: Mapping[str, object], task: str, wic_format: str = "word-prefix"
) -> tuple[str, str | None]:
    """The ``(text, text_pair)`` a sequence classifier gets for ``row``."""
    text, pair = str(row["text"]), row.get("text_pair")
    pair = None if pair is None else str(pair)
    if task == "wic":
        if wic_format not in WIC_FORMATS:
            raise ConfigError(f"unknown WiC format {wic_format!r}; use {', '.join(WIC_FORMATS)}")
        if wic_format == "word-prefix" and row.get("word"):
            text = f"{row['word']}: {text}"
    return text, pair


def t5_prompt(row: Mapping[str, object], task: str) -> str:
    """The T5-style prompt for ``row`` (one string; text-to-text models get no pair).

    A row of a ``*_t2t`` suite is its ``text`` unchanged: it already is T5's input.
    """
    if str(row.get("suite", "")).endswith(T2T_SUFFIX):
        return str(row["text"])
    try:
        prefix, first, second = T5_PROMPTS[task]
    except KeyError:
        raise ConfigError(f"no text-to-text prompt for task {task!r}") from None
    fields = {first: str(row["text"])}
    if second is not None:
        fields[second] = "" if row.get("text_pair") is None else str(row["text_pair"])
    if task == "wic":
        fields["word"] = str(row.get("word") or "")
    order = _T5_ORDER.get(task, tuple(fields))
    order = tuple(order) + tuple(k for k in fields if k not in order)
    return prefix + " " + " ".join(f"{key}: {fields[key]}" for key in order)


def model_input(
    row: Mapping[str, object], task: str, *, seq2seq: bool, wic_format: str = "word-prefix"
) -> tuple[str, str | None]:
    """The model input of ``row``: a prompt for text-to-text models, else a text pair."""
    if seq2seq:
        return t5_prompt(row, task), None
    return classifier_input(row, task, wic_format)
