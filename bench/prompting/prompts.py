"""Prompts and verbalisers for causal LMs: one table per task and per family.

A causal LM answers a suite row by the log-likelihood of each verbalised label given a
prompt (``consistency_bench.bench.runner.causal``). The prompt is a Jinja template over the row's
columns
(``text``,
``text_pair``, ``word``, ...) rendered exactly as lm-evaluation-harness renders ``doc_to_text``
(same Jinja settings), so ``predict`` and the tasks written by ``export-lm-eval`` build the
same strings. The verbalisers are the continuations, in the task's label order; each is
scored after the target delimiter (a space, as in lm-eval).

Lookup order for a suite: ``(family, task)``, then ``(None, task)``; a task with no entry (a
suite made by ``generate``) gets :func:`generic_prompt`, whose verbalisers are its label
names. ``--label-map 'task:label=word,...'`` replaces verbalisers for a causal LM.

Few-shot demonstrations are rows of the built folder's pools
(``consistency_bench.bench.prompting.demonstrations``),
rendered
with the same template and answered with the same verbalisers.

No template appends punctuation to a field that may already end in it: a BoolQ question is
written ``{{text.rstrip().rstrip('?.!').rstrip()}}?``: one question mark, whether the source
question has one (2,143 of 2,152 ``boolq_semantic`` rows) or ends in a full stop (7 paraphrases are
statements); ``tests/test_fewshot.py`` checks every prompt of every built suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from consistency_bench.bench.errors import ConfigError

#: Separator between demonstrations, and between a prompt and its answer (lm-eval defaults).
FEWSHOT_DELIMITER = "\n\n"
TARGET_DELIMITER = " "


@dataclass(frozen=True)
class PromptSpec:
    """How a causal LM is asked one task.

    Attributes:
        template: Jinja template over the row's columns; ends just before the answer.
        choices: Verbaliser of each task label, in label order.

    """

    template: str
    choices: tuple[str, ...]


_NLI3 = "{{text}}\nQuestion: {{text_pair}} True, False or Neither?\nAnswer:"
_NLI2 = "{{text}}\nQuestion: {{text_pair}} True or False?\nAnswer:"
_PARA = "Sentence 1: {{text}}\nSentence 2: {{text_pair}}\nQuestion: Do both sentences mean the " \
        "same thing?\nAnswer:"

#: A CALM input as the one string the paper prints (``Premise: <p> Hypothesis: <h>``): the
#: classification configs' two texts joined by a space, or the single `text` of the
#: ``_t2t`` configs and the few-shot pools (whose `text_pair` is null).
CALM_INPUT = "{{text}}{% if text_pair is not none %} {{text_pair}}{% endif %}"

#: (family or None, task) -> prompt. Family entries win over the task's default.
PROMPTS: dict[tuple[str | None, str], PromptSpec] = {
    (None, "snli"): PromptSpec(_NLI3, ("True", "Neither", "False")),
    (None, "mnli"): PromptSpec(_NLI3, ("True", "Neither", "False")),
    (None, "kornli"): PromptSpec(_NLI3, ("True", "Neither", "False")),
    (None, "klue_nli"): PromptSpec(_NLI3, ("True", "Neither", "False")),
    (None, "rte"): PromptSpec(_NLI2, ("True", "False")),
    (None, "qnli"): PromptSpec(
        "{{text}}\n{{text_pair}}\nQuestion: Does this response answer the question?\nAnswer:",
        ("yes", "no"),
    ),
    (None, "mrpc"): PromptSpec(_PARA, ("no", "yes")),
    (None, "klue_sts"): PromptSpec(_PARA, ("no", "yes")),
    (None, "qqp"): PromptSpec(
        "Question 1: {{text}}\nQuestion 2: {{text_pair}}\nQuestion: Do both questions ask the "
        "same thing?\nAnswer:",
        ("no", "yes"),
    ),
    (None, "boolq"): PromptSpec(
        "{{text_pair}}\nQuestion: {{text.rstrip().rstrip('?.!').rstrip()}}?\nAnswer:",
        ("no", "yes"),
    ),
    (None, "wic"): PromptSpec(
        "Sentence 1: {{text}}\nSentence 2: {{text_pair}}\nQuestion: Is the word '{{word}}' used "
        "in the same way in the two sentences above?\nAnswer:",
        ("no", "yes"),
    ),
    (None, "sst2"): PromptSpec(
        "{{text}}\nQuestion: Is this sentence positive or negative?\nAnswer:",
        ("negative", "positive"),
    ),
    (None, "ag_news"): PromptSpec(
        "{{text}}\nQuestion: Is this article about World, Sports, Business or Science?\nAnswer:",
        ("World", "Sports", "Business", "Science"),
    ),
    (None, "conv_ent"): PromptSpec(_NLI2, ("False", "True")),
    (None, "art"): PromptSpec(
        "Story A: {{text}}\nStory B: {{text_pair}}\nQuestion: Which story is more plausible, "
        "A or B?\nAnswer:",
        ("A", "B"),
    ),
    # CALM: the classification configs hold the two indicator-prefixed inputs in `text` and
    # `text_pair`, the `_t2t` configs (and the few-shot pools) the whole input in `text`;
    # CALM_INPUT renders both as the one string `Premise: <p> Hypothesis: <h>`.
    ("calm", "mnli"): PromptSpec(
        CALM_INPUT + "\nQuestion: Is the hypothesis true given the premise? True, False or "
        "Neither?\nAnswer:", ("True", "Neither", "False"),
    ),
    ("calm", "kornli"): PromptSpec(
        CALM_INPUT + "\nQuestion: Is the hypothesis true given the premise? True, False or "
        "Neither?\nAnswer:", ("True", "Neither", "False"),
    ),
    ("calm", "klue_nli"): PromptSpec(
        CALM_INPUT + "\nQuestion: Is the hypothesis true given the premise? True, False or "
        "Neither?\nAnswer:", ("True", "Neither", "False"),
    ),
    ("calm", "rte"): PromptSpec(
        CALM_INPUT + "\nQuestion: Is the hypothesis true given the premise? True or False?\n"
        "Answer:", ("True", "False"),
    ),
    ("calm", "mrpc"): PromptSpec(
        CALM_INPUT + "\nQuestion: Do both sentences mean the same thing?\nAnswer:",
        ("no", "yes"),
    ),
    ("calm", "qnli"): PromptSpec(
        CALM_INPUT + "\nQuestion: Does the sentence answer the question?\nAnswer:",
        ("yes", "no"),
    ),
    ("calm", "qqp"): PromptSpec(
        CALM_INPUT + "\nQuestion: Do both questions ask the same thing?\nAnswer:",
        ("no", "yes"),
    ),
    ("calm", "klue_sts"): PromptSpec(
        CALM_INPUT + "\nQuestion: Do both sentences mean the same thing?\nAnswer:",
        ("no", "yes"),
    ),
}


def generic_prompt(label_names: Sequence[str], is_pair: bool) -> PromptSpec:
    """The prompt of a task with no table entry: its label names are the verbalisers."""
    choices = tuple(str(n).replace("_", " ") for n in label_names)
    listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    body = "{{text}}\n{{text_pair}}" if is_pair else "{{text}}"
    return PromptSpec(f"{body}\nQuestion: {listed}?\nAnswer:", choices)


def lookup(family: str | None, task: str, label_names: Sequence[str],
           is_pair: bool = True) -> PromptSpec:
    """The prompt of a suite: ``(family, task)``, else ``(None, task)``, else generic."""
    spec = PROMPTS.get((family, task)) or PROMPTS.get((None, task))
    if spec is None:
        return generic_prompt(label_names, is_pair)
    if not is_pair and spec.template.startswith(CALM_INPUT):  # a `_t2t` config: `text` only
        spec = PromptSpec("{{text}}" + spec.template[len(CALM_INPUT):], spec.choices)
    if len(spec.choices) != len(label_names):
        raise ConfigError(
            f"prompt table entry {(family, task)} has {len(spec.choices)} verbalisers for "
            f"{len(label_names)} labels ({', '.join(label_names)})"
        )
    return spec


def with_verbalisers(spec: PromptSpec, task: str, label_names: Sequence[str],
                     overrides: Mapping[str, Sequence[str]] | None) -> PromptSpec:
    """``spec`` with verbalisers replaced from ``--label-map`` (one word per label)."""
    if not overrides:
        return spec
    from consistency_bench.bench.modeling.label_map import normalise_label

    by_norm = {normalise_label(n): i for i, n in enumerate(label_names)}
    choices = list(spec.choices)
    for label, targets in overrides.items():
        if normalise_label(label) not in by_norm:
            raise ConfigError(
                f"--label-map {task}: {label!r} is not a label of task {task} "
                f"(labels: {', '.join(label_names)})"
            )
        if len(targets) != 1:
            raise ConfigError(
                f"--label-map {task}:{label}: a causal LM takes one verbaliser per label, "
                f"got {'+'.join(targets)}"
            )
        choices[by_norm[normalise_label(label)]] = targets[0]
    if len(set(choices)) != len(choices):
        raise ConfigError(f"--label-map {task}: two labels share a verbaliser: {choices}")
    return PromptSpec(spec.template, tuple(choices))


#: The line before the answer that every template ends with.
ANSWER_CUE = "\nAnswer:"


def generative_template(spec: PromptSpec) -> str:
    """The prompt of a generated answer (``--mode generate``, ``export-lm-eval --generative``).

    The task's template with one more line before the answer cue naming the label words,
    e.g. ``...True, False or Neither?\nAnswer with one of: True, Neither, False.\nAnswer:``.
    The words are written literally (Jinja's ``raw`` block where a verbaliser holds a
    brace or a per cent sign).
    """
    body = spec.template[: -len(ANSWER_CUE)] if spec.template.endswith(ANSWER_CUE) \
        else spec.template
    words = ", ".join(spec.choices)
    if any(ch in words for ch in "{}%#"):
        words = "{% raw %}" + words + "{% endraw %}"
    return f"{body}\nAnswer with one of: {words}.{ANSWER_CUE}"


@lru_cache(maxsize=256)
def _compiled(template: str):
    from jinja2 import BaseLoader, Environment, StrictUndefined

    env = Environment(loader=BaseLoader, undefined=StrictUndefined, keep_trailing_newline=True)
    return env.from_string(template)


def render(template: str, row: Mapping[str, object]) -> str:
    """The prompt of ``row`` (lm-eval's ``apply_template``: StrictUndefined Jinja).

    Raises:
        ConfigError: The template names a column the row does not have.

    """
    from jinja2 import UndefinedError

    try:
        return _compiled(template).render(**row)
    except UndefinedError as exc:
        raise ConfigError(f"prompt template {template!r}: {exc} (row {row.get('id')})") from exc


def build_context(prompt: str, demos: Sequence[tuple[str, str]], *, chat_template=None) -> str:
    """The scored context: demonstrations then the prompt, or a chat transcript.

    Args:
        prompt: The row's rendered prompt.
        demos: ``(prompt, answer)`` demonstrations.
        chat_template: A tokenizer whose chat template renders user / assistant turns
            (``--chat``), or None for plain text (``"\\n\\n"`` between demonstrations,
            the answer after a space).

    """
    if chat_template is None:
        shots = [f"{p}{TARGET_DELIMITER}{a}" for p, a in demos]
        return FEWSHOT_DELIMITER.join([*shots, prompt])
    messages = []
    for p, a in demos:
        messages += [{"role": "user", "content": p}, {"role": "assistant", "content": a}]
    messages.append({"role": "user", "content": prompt})
    return chat_template.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
