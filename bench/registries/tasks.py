"""Task registry: label names and input layout of every source task.

A task is what a model is trained for (SNLI, WiC, ...); a suite is a test set built for one task.
Label indices follow the Hugging Face datasets (GLUE / SuperGLUE / SNLI / AG News) conventions,
which are also the conventions of the BECEL release.
"""

from __future__ import annotations

from dataclasses import dataclass

from consistency_bench.bench.registries.registry import Registry


@dataclass(frozen=True)
class TaskSpec:
    """One downstream task.

    Attributes:
        name: Registry key, e.g. ``"snli"``.
        label_names: Class names in index order.
        text: What the ``text`` column holds.
        text_pair: What the ``text_pair`` column holds, or ``None`` for single-text tasks.
        language: ISO 639-1 code of the texts.

    """

    name: str
    label_names: tuple[str, ...]
    text: str
    text_pair: str | None
    language: str = "en"

    @property
    def num_labels(self) -> int:
        """Number of classes."""
        return len(self.label_names)

    @property
    def is_pair(self) -> bool:
        """Whether the model input is a text pair."""
        return self.text_pair is not None


TASKS: Registry[TaskSpec] = Registry("task", describe=repr)


def register_task(task: TaskSpec) -> TaskSpec:
    """Add a task to the registry; a name can be registered once.

    Every task of the built-in families is registered here, below, so that the registry is
    complete without importing ``builders`` (bench is the floor of the layers); a suite
    generated from a user's corpus (``generate``) describes its own task without registering
    it.
    """
    return TASKS.register(task.name, task)


def get_task(name: str) -> TaskSpec:
    """Look a task up by name, with a did-you-mean error."""
    return TASKS[name]


NLI3 = ("entailment", "neutral", "contradiction")

for _task in (
    TaskSpec("snli", NLI3, text="premise", text_pair="hypothesis"),
    TaskSpec("rte", ("entailment", "not_entailment"), text="premise", text_pair="hypothesis"),
    TaskSpec("mrpc", ("not_equivalent", "equivalent"), text="sentence1", text_pair="sentence2"),
    TaskSpec("boolq", ("false", "true"), text="question", text_pair="passage"),
    TaskSpec("wic", ("false", "true"), text="sentence1", text_pair="sentence2"),
    TaskSpec("sst2", ("negative", "positive"), text="sentence", text_pair=None),
    TaskSpec("ag_news", ("World", "Sports", "Business", "Sci/Tech"), text="text", text_pair=None),
    # Shared by CALM and word salad (GLUE label conventions).
    TaskSpec("mnli", NLI3, text="premise", text_pair="hypothesis"),
    TaskSpec("qnli", ("entailment", "not_entailment"), text="question", text_pair="sentence"),
    TaskSpec("qqp", ("not_duplicate", "duplicate"), text="question1", text_pair="question2"),
    # CALM's Korean tasks.
    TaskSpec("kornli", NLI3, text="premise", text_pair="hypothesis", language="ko"),
    TaskSpec("klue_nli", NLI3, text="premise", text_pair="hypothesis", language="ko"),
    TaskSpec(
        "klue_sts", ("not_paraphrase", "paraphrase"), text="sentence1", text_pair="sentence2",
        language="ko",
    ),
    # Coherence (Storks and Chai, 2021): ConvEnt and ART.
    TaskSpec("conv_ent", ("not_entailment", "entailment"), text="dialog", text_pair="hypothesis"),
    TaskSpec(
        "art", ("hypothesis_1", "hypothesis_2"),
        text="story with hypothesis 1", text_pair="story with hypothesis 2",
    ),
):
    register_task(_task)
