"""CALM (Jang, Kwon and Lukasiewicz, 2021): REVERSE and SIGNAL perturbations of the input format.

Every pair input is written in the paper's indicator format: a sentence-type indicator and a
separator before each sentence (``Premise: ... Hypothesis: ...``). CALM perturbs that format,
never the words:

- ``reverse``: the two indicator-sentence blocks swapped;
- ``signal:<sym>``: the colon after each indicator replaced by one of the ten symbols of the
  paper's Table 7 (``[Premise]``, ``{Premise}``, ``Premise;`` ...).

The classification configs (``<task>_calm``) give a pair encoder the paper's two inputs
(Tables 2, 9 and 10): the first indicator-sentence block in ``text`` and the second in
``text_pair``, each keeping its own indicator, so REVERSE swaps the two texts and SIGNAL changes
the separator inside each. The text-to-text configs (``<task>_calm_t2t``) keep the whole input,
task prefix included, as one string in ``text`` (``text_pair`` null), T5's input. The raw
sentences are kept in the ``raw_text`` and ``raw_text_pair`` extras. Capitalised indicators in
the classification form (the format the classification models were fine-tuned on); task
prefix and lower-case indicators in T5's order in the text-to-text form (the format T5 was
trained on). docs/suites/calm.md documents the construction and every deviation.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import datasets

from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders import readers
from consistency_bench.builders.readers import Example, Reader
from consistency_bench.builders.suite.spec import Row, SuiteSpec, register_suite

#: Text-to-text configs: one string, unchanged since 1.0.0.
VERSION = "1.0.0"
#: Classification configs: the two indicator-prefixed texts in ``text`` / ``text_pair``
#: (2.0.0, issue 21; 1.0.0 held the whole input in ``text`` with ``text_pair`` null).
PAIR_VERSION = "2.0.0"

#: Paper, citation and licence notes: declared once in bench/registries/families.py.
CALM = FAMILIES["calm"]

# The tasks (KorNLI, KLUE-NLI, KLUE-STS; MNLI, QNLI and QQP) are registered in
# bench/registries/tasks.py.

# ----------------------------------------------------------------------------- the format

#: Table 7: the ten SIGNAL templates; ``{}`` is the indicator. Keys are the variant suffixes.
SIGNALS: dict[str, str] = {
    "[]": "[{}]",
    "{}": "{{{}}}",
    "()": "({})",
    "<>": "<{}>",
    ";": "{};",
    "#": "{}#",
    "!": "{}!",
    "@": "{}@",
    "~": "{}~",
    "-": "{}-",
}
ORIGINAL_TEMPLATE = "{}:"


@dataclass(frozen=True)
class CalmInput:
    """One model input in the indicator format, before rendering.

    Attributes:
        blocks: ``(indicator, sentence)`` pairs in input order.
        template: How an indicator is written: ``"{}:"`` originally, a Table 7 template for
            SIGNAL.
        prefix: Task prefix of the text-to-text form (``"mnli"``), or ``""``.

    """

    blocks: tuple[tuple[str, str], ...]
    template: str = ORIGINAL_TEMPLATE
    prefix: str = ""


def reverse(item: CalmInput) -> CalmInput:
    """REVERSE: the indicator-sentence blocks in the opposite order (an involution)."""
    return replace(item, blocks=tuple(reversed(item.blocks)))


def signal(item: CalmInput, symbol: str) -> CalmInput:
    """SIGNAL: the separator after each indicator replaced by Table 7's ``symbol``.

    Raises:
        KeyError: ``symbol`` is not one of the ten of Table 7.

    """
    return replace(item, template=SIGNALS[symbol])


def render(item: CalmInput) -> str:
    """The input as one string: ``[prefix ]<ind1><sep> <s1> <ind2><sep> <s2>``."""
    return _render(item.blocks, item.template, item.prefix)


def render_pair(item: CalmInput) -> tuple[str, str]:
    """The input as the paper's two inputs: ``("<ind1><sep> <s1>", "<ind2><sep> <s2>")``.

    Each indicator stays inside its own text, so REVERSE and SIGNAL reach a pair encoder
    (CALM Tables 2, 9 and 10). Joined by one space, the two texts are :func:`render`'s string.

    Raises:
        ValueError: ``item`` has a task prefix (the text-to-text form is one string).

    """
    if item.prefix:
        raise ValueError("the text-to-text form (task prefix) is one string, not a pair")
    first, second = _blocks(item.blocks, item.template)
    return first, second


def _blocks(blocks: tuple[tuple[str, str], ...], template: str) -> list[str]:
    return [f"{template.format(indicator)} {sentence}" for indicator, sentence in blocks]


def _render(blocks: tuple[tuple[str, str], ...], template: str, prefix: str) -> str:
    return " ".join([prefix, *_blocks(blocks, template)] if prefix else _blocks(blocks, template))


def variants(item: CalmInput, *, pair: bool = False) -> list[tuple[str, str, str | None]]:
    """All CALM variants of one example as ``(variant, text, text_pair)``, in a fixed order.

    Equal to rendering :func:`reverse` and :func:`signal` of ``item`` with :func:`render`
    (``pair`` false: ``text_pair`` None) or :func:`render_pair` (``pair`` true); the fields are
    passed directly instead of through ``dataclasses.replace``, which dominated the CALM build
    time (12 variants per example, issue 12).

    Raises:
        ValueError: ``pair`` with a task prefix (see :func:`render_pair`).

    """
    blocks, prefix = item.blocks, item.prefix
    if pair and prefix:
        raise ValueError("the text-to-text form (task prefix) is one string, not a pair")
    forms = [
        ("original", blocks, item.template),
        ("reverse", blocks[::-1], item.template),
        *((f"signal:{symbol}", blocks, template) for symbol, template in SIGNALS.items()),
    ]
    if pair:
        return [(name, *_blocks(b, t)) for name, b, t in forms]
    return [(name, _render(b, t, prefix), None) for name, b, t in forms]


# ----------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class CalmSource:
    """Where one task's evaluation split lives and how to read it.

    Attributes:
        path: Mirror-layout path.
        split: What the file is (for the dataset card).
        read: Parses the file into examples.

    """

    path: str
    split: str
    read: Reader


QUOTE_NONE = csv.QUOTE_NONE
SOURCES: dict[str, CalmSource] = {
    "mnli": CalmSource(
        "mnli/dev_matched.generative-nli.jsonl", "MNLI dev matched",
        readers.jsonl("premise", "hypothesis", "label"),
    ),
    "qnli": CalmSource(
        "qnli/glue_dev.tsv", "QNLI dev (GLUE)",
        readers.tsv("question", "sentence", "label", QUOTE_NONE),
    ),
    "rte": CalmSource(
        "becel/rte/validation.tsv", "RTE dev (GLUE, BECEL copy)",
        readers.tsv("sentence1", "sentence2", "label"),
    ),
    "qqp": CalmSource(
        "qqp/dev.tsv", "QQP dev (GLUE)",
        readers.qqp(),
    ),
    "mrpc": CalmSource(
        "becel/mrpc/validation.tsv", "MRPC dev (GLUE validation, BECEL copy)",
        readers.tsv("sentence1", "sentence2", "label"),
    ),
    "kornli": CalmSource(
        "kornli/xnli.dev.ko.tsv", "KorNLI dev (XNLI-ko)",
        readers.tsv("sentence1", "sentence2", "gold_label", QUOTE_NONE),
    ),
    "kornli_test": CalmSource(
        "kornli/xnli.test.ko.tsv", "KorNLI test (XNLI-ko)",
        readers.tsv("sentence1", "sentence2", "gold_label", QUOTE_NONE),
    ),
    "klue_nli": CalmSource(
        "klue/klue-nli-v1.1_dev.json", "KLUE-NLI dev (v1.1)",
        readers.json_list("premise", "hypothesis", ("gold_label",)),
    ),
    "klue_sts": CalmSource(
        "klue/klue-sts-v1.1_dev.json", "KLUE-STS dev (v1.1), binary label",
        readers.json_list("sentence1", "sentence2", ("labels", "binary-label")),
    ),
}


@dataclass(frozen=True)
class Format:
    """How one task is written: indicators in task order, T5 prefix and T5 block order.

    Attributes:
        indicators: Indicator of the first and the second sentence (classification form).
        t5_prefix: T5's task prefix, or ``None`` where T5 was not trained on the task.
        t5_swap: Whether T5's input order is second sentence first (MNLI: T5's GLUE
            preprocessor orders features by name, ``hypothesis`` before ``premise``).

    """

    indicators: tuple[str, str]
    t5_prefix: str | None = None
    t5_swap: bool = False


FORMATS: dict[str, Format] = {
    "mnli": Format(("Premise", "Hypothesis"), "mnli", t5_swap=True),
    "qnli": Format(("Question", "Sentence"), "qnli"),
    "rte": Format(("Sentence1", "Sentence2"), "rte"),
    "qqp": Format(("Question1", "Question2"), "qqp"),
    "mrpc": Format(("Sentence1", "Sentence2"), "mrpc"),
    # Korean: 전제 = premise, 가설 = hypothesis, 문장 = sentence (docs/suites/calm.md).
    "kornli": Format(("전제", "가설")),
    "klue_nli": Format(("전제", "가설")),
    "klue_sts": Format(("문장1", "문장2")),
}


def calm_input(task: str, example: Example, *, t2t: bool = False) -> CalmInput:
    """The original-format input of ``example`` for ``task``'s classification or T5 form."""
    fmt = FORMATS[task]
    first, second = fmt.indicators
    blocks = ((first, example.text.strip()), (second, example.text_pair.strip()))
    if not t2t:
        return CalmInput(blocks)
    if fmt.t5_prefix is None:
        raise ValueError(f"task {task!r} has no text-to-text form (T5 was not trained on it)")
    blocks = tuple((ind.lower(), sentence) for ind, sentence in blocks)
    if fmt.t5_swap:
        blocks = blocks[::-1]
    return CalmInput(blocks, prefix=fmt.t5_prefix)


# ----------------------------------------------------------------------------- rows

EXTRAS = {"raw_text": datasets.Value("string"), "raw_text_pair": datasets.Value("string")}


def calm_rows(
    suite: str, task: str, source_key: str, *, t2t: bool
) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of one CALM suite: 12 rows per source example (original, reverse, 10 signals).

    The classification form (``t2t`` false) writes the two indicator-prefixed texts in
    ``text`` and ``text_pair``; the text-to-text form one string in ``text``.
    """
    source = SOURCES[source_key]

    def build(resolver: SourceResolver) -> Iterator[Row]:
        from consistency_bench.bench.registries.tasks import get_task

        examples = source.read(resolver.path(source.path), source.path, get_task(task))
        for example in examples:
            key = f"r{example.row:05d}"
            group = f"{suite}/{key}"
            for variant, text, pair in variants(calm_input(task, example, t2t=t2t),
                                                pair=not t2t):
                yield {
                    "id": f"{group}/{variant}",
                    "suite": suite,
                    "task": task,
                    "group": group,
                    "variant": variant,
                    "text": text,
                    "text_pair": pair,
                    "label": example.label,
                    "source_file": source.path,
                    "source_row": example.row,
                    "raw_text": example.text,
                    "raw_text_pair": example.text_pair,
                }

    return build


# ----------------------------------------------------------------------------- registry

#: Validation-set sizes of the paper's Table 6 (the Korean ones are halves of the dev set
#: the paper split into validation and test; we use the whole split, see docs).
TABLE6_VALIDATION = {"rte": 277, "mrpc": 408}

#: (suite name stem, task, source key). KorNLI has dev and test splits mirrored.
STEMS = (
    ("mnli", "mnli", "mnli"),
    ("qnli", "qnli", "qnli"),
    ("rte", "rte", "rte"),
    ("qqp", "qqp", "qqp"),
    ("mrpc", "mrpc", "mrpc"),
    ("kornli", "kornli", "kornli"),
    ("kornli_test", "kornli", "kornli_test"),
    ("klue_nli", "klue_nli", "klue_nli"),
    ("klue_sts", "klue_sts", "klue_sts"),
)

DESCRIPTION = (
    "CALM: the {split} in the indicator format ({fmt}). Per example: the original format, "
    "REVERSE (the two indicator-sentence blocks swapped) and SIGNAL with each of the ten "
    "symbols of Table 7 replacing the colon. {form} "
    "Metrics: C_R (agreement of "
    "original and reverse, main), C_S (share of examples whose pass rate over the ten "
    "signals is >= theta, default 1.0) and accuracy on the originals."
)
#: Where the input is, per form (classification pair, text-to-text string).
PAIR_FORM = (
    "The first indicator-sentence block is `text`, the second `text_pair` (the paper's two "
    "inputs, each with its indicator); the raw sentences are in raw_text / raw_text_pair."
)
STRING_FORM = (
    "The formatted input is `text` (text_pair is null); the raw sentences are in raw_text / "
    "raw_text_pair."
)


def _register() -> None:
    for stem, task, source_key in STEMS:
        source = SOURCES[source_key]
        fmt = FORMATS[task]
        forms = [(False, f"{stem}_calm")]
        if fmt.t5_prefix is not None:
            forms.append((True, f"{stem}_calm_t2t"))
        for t2t, name in forms:
            shown = calm_input(task, Example(0, "<s1>", "<s2>", 0), t2t=t2t)
            example = (f"`{render(shown)}`" if t2t
                       else "`{}` / `{}`".format(*render_pair(shown)))
            register_suite(
                SuiteSpec(
                    name=name,
                    task=task,
                    family="calm",
                    kind="calm",
                    version=VERSION if t2t else PAIR_VERSION,
                    sources=(source.path,),
                    build=calm_rows(name, task, source_key, t2t=t2t),
                    description=DESCRIPTION.format(
                        split=source.split, fmt=example,
                        form=STRING_FORM if t2t else PAIR_FORM)
                    + (" Text-to-text form: T5's task prefix and lower-case indicators."
                       if t2t else ""),
                    main_metric="c_r",
                    higher_is_better=True,
                    extras=EXTRAS,
                    expected_rows=TABLE6_VALIDATION.get(source_key),
                    citation=CALM.citation,
                    license=CALM.licenses[task],
                )
            )


_register()
