"""Task types, their label semantics and the applicability conditions of BECEL Appendix A.2.

A task type says which inputs a record has, which input the semantic and negational sets
modify (BECEL Table 9), which label flips under negation (section 3.2: only "entailment",
"equivalent" and "true" are guaranteed to flip) and which consistency types apply at all.
Asking for an inapplicable combination raises a ``ConfigError`` that quotes the paper's reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError, UnknownNameError

KINDS: tuple[str, ...] = ("semantic", "negational", "symmetric", "transitive", "additive")


@dataclass(frozen=True)
class TaskType:
    """Label semantics of one kind of task.

    Attributes:
        name: ``nli``, ``paraphrase``, ``qa``, ``wic`` or ``single``.
        columns: Names of the input columns the user maps (``--columns``), in order.
        optional_columns: Extra columns that may follow (WiC character spans).
        modified: Which input the semantic / negational sets change (``text`` or
            ``text_pair``), as in BECEL Table 9.
        flip_from: The label that negation flips (section 3.2), or ``None``.
        not_applicable: Consistency kind to the reason it does not apply (Appendix A.2).

    """

    name: str
    columns: tuple[str, ...]
    optional_columns: tuple[str, ...]
    modified: str
    flip_from: str | None
    not_applicable: dict[str, str]

    @property
    def is_pair(self) -> bool:
        """Whether the model input is a text pair."""
        return len(self.columns) > 1


_NEG_WIC = (
    "negational consistency does not apply to WiC: the label is preserved because the meaning "
    "of the target word does not change in the perturbed sentence (BECEL Appendix A.2)"
)
_NEG_SINGLE = (
    "negational consistency is not generated for single-text tasks: for topic classification a "
    "negated text keeps its category (BECEL section 2.2, Appendix A.2); for sentiment analysis "
    "it holds in theory but BECEL excluded it because the rules do not suit spoken language, and "
    "no label is guaranteed to flip (section 3.2 uses only entailment / equivalent / true)"
)
_SYM_SINGLE = (
    "symmetric consistency needs an input of two sentences (BECEL Appendix A.2, condition 1); "
    "a single-text task has one"
)
_SYM_QA = (
    "symmetric consistency needs the two inputs to be on the same level (BECEL Appendix A.2, "
    "condition 2); in reading comprehension the question depends on the passage"
)
_TRN_NEEDS_SYM = (
    "transitive consistency is valid only where symmetric consistency holds (BECEL Appendix "
    "A.2), and it does not for this task type: "
)
_TRN_PARA = (
    "transitive consistency needs two data points with a common sentence (BECEL Appendix A.2); "
    "paraphrase corpora such as MRPC have none, and constructing them causes a distribution shift "
    "that exaggerates inconsistency, so BECEL did not build it; neither does this generator"
)
_ADD_PAIR = (
    "additive consistency is guaranteed only for tasks with a single text input; with two inputs "
    "merging examples can change the label (BECEL Appendix A.2, Table 7)"
)

TASK_TYPES: dict[str, TaskType] = {
    "nli": TaskType(
        "nli", ("premise", "hypothesis"), (), "text_pair", "entailment",
        {"additive": _ADD_PAIR},
    ),
    "paraphrase": TaskType(
        "paraphrase", ("sentence1", "sentence2"), (), "text_pair", "equivalent",
        {"transitive": _TRN_PARA, "additive": _ADD_PAIR},
    ),
    "qa": TaskType(
        "qa", ("question", "passage"), (), "text", "true",
        {"symmetric": _SYM_QA, "transitive": _TRN_NEEDS_SYM + _SYM_QA, "additive": _ADD_PAIR},
    ),
    "wic": TaskType(
        "wic", ("sentence1", "sentence2", "word"), ("start1", "end1", "start2", "end2"),
        "text_pair", None, {"negational": _NEG_WIC, "additive": _ADD_PAIR},
    ),
    "single": TaskType(
        "single", ("text",), (), "text", None,
        {
            "negational": _NEG_SINGLE, "symmetric": _SYM_SINGLE,
            "transitive": _TRN_NEEDS_SYM + _SYM_SINGLE,
        },
    ),
}


def get_task_type(name: str) -> TaskType:
    """Look a task type up, with a did-you-mean error."""
    try:
        return TASK_TYPES[name]
    except KeyError:
        raise UnknownNameError("task type", name, TASK_TYPES) from None


def _index(labels: Sequence[str], name: str) -> int | None:
    folded = [x.strip().lower() for x in labels]
    return folded.index(name) if name in folded else None


def negation_flip(task_type: TaskType, labels: Sequence[str]) -> tuple[int, int]:
    """The (from, to) label indices of negational rows.

    Args:
        task_type: The task type.
        labels: Label names in index order.

    Returns:
        The index of the label that flips (entailment / equivalent / true) and of the label a
        negated row gets (contradiction for 3-way NLI, else the other of two labels).

    Raises:
        ConfigError: The labels do not contain the flipping label, or the target is ambiguous.

    """
    check_applicable(task_type, "negational", labels)
    assert task_type.flip_from is not None  # guaranteed by check_applicable
    source = _index(labels, task_type.flip_from)
    if source is None:
        raise ConfigError(
            f"negational generation for task type {task_type.name!r} flips only the label "
            f"{task_type.flip_from!r} (BECEL section 3.2), which is not among --labels "
            f"{list(labels)}; name the labels in index order"
        )
    if task_type.name == "nli" and len(labels) == 3:
        target = _index(labels, "contradiction")
        if target is None:
            raise ConfigError(
                f"3-way NLI labels {list(labels)} need a 'contradiction' label: a negated "
                "entailed hypothesis is a contradiction"
            )
        return source, target
    if len(labels) != 2:
        raise ConfigError(
            f"negational generation for {task_type.name!r} needs two labels (or entailment / "
            f"neutral / contradiction for NLI), got {list(labels)}"
        )
    return source, 1 - source


def symmetric_labels(task_type: TaskType, labels: Sequence[str]) -> tuple[int, ...]:
    """Label indices whose rows keep their label when the inputs are swapped (section 3.2).

    NLI: contradiction for 3-way NLI (Li et al., 2019); for 2-way NLI not_entailment, which BECEL
    used for RTE after checking that premises are always more specific than hypotheses (a
    property of the data the user must check for theirs). Paraphrase and WiC: every label.
    """
    check_applicable(task_type, "symmetric", labels)
    if task_type.name != "nli":
        return tuple(range(len(labels)))
    name = "contradiction" if len(labels) == 3 else "not_entailment"
    index = _index(labels, name)
    if index is None:
        raise ConfigError(
            f"symmetric generation for NLI uses only {name!r} rows (BECEL section 3.2), which is "
            f"not among --labels {list(labels)}"
        )
    return (index,)


def check_applicable(task_type: TaskType, kind: str, labels: Sequence[str]) -> None:
    """Raise ``ConfigError`` with the paper's reason when ``kind`` does not apply.

    Args:
        task_type: The task type.
        kind: A consistency kind (see ``KINDS``).
        labels: Label names in index order.

    """
    if kind not in KINDS:
        raise UnknownNameError("consistency type", kind, KINDS)
    reason = task_type.not_applicable.get(kind)
    if reason:
        raise ConfigError(f"--types {kind} with --task-type {task_type.name}: {reason}")
    if kind == "transitive" and task_type.name == "nli":
        names = {x.strip().lower() for x in labels}
        if not {"entailment", "neutral", "contradiction"} <= names:
            raise ConfigError(
                "transitive generation for NLI uses BECEL's modified rules E(P,H) ∧ C(P,Z) → "
                "C(H,Z) and N(P,H) ∧ C(P,Z) → ¬E(H,Z) (section 3.2), which need the labels "
                f"entailment, neutral and contradiction; --labels is {list(labels)}"
            )
    if kind == "transitive" and task_type.name == "wic" and len(labels) != 2:
        raise ConfigError(f"WiC labels must be two (false, true), got {list(labels)}")
