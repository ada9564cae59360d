"""Prompts and verbalisers for causal LMs: one table per task and per family.

A causal LM answers a suite row by the log-likelihood of each verbalised label given a
prompt (``bench.causal``). The prompt is a Jinja template over the row's columns (``text``,
``text_pair``, ``word``, ...) rendered exactly as lm-evaluation-harness renders ``doc_to_text``
(same Jinja settings), so ``predict`` and the tasks written by ``export-lm-eval`` build the
same strings. The verbalisers are the continuations, in the task's label order; each is
scored after the target delimiter (a space, as in lm-eval).

Lookup order for a suite: ``(family, task)``, then ``(None, task)``; a task with no entry (a
suite made by ``generate``) gets :func:`generic_prompt`, whose verbalisers are its label
names. ``--label-map 'task:label=word,...'`` replaces verbalisers for a causal LM.

Few-shot pools: an entry may declare demonstrations (rows with a gold label). They are hand
written here, never taken from a built suite, and :func:`fewshot_pool` drops any that
renders to the same prompt as a scored row.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bench.errors import ConfigError

#: Separator between demonstrations, and between a prompt and its answer (lm-eval defaults).
FEWSHOT_DELIMITER = "\n\n"
TARGET_DELIMITER = " "


@dataclass(frozen=True)
class PromptSpec:
    """How a causal LM is asked one task.

    Attributes:
        template: Jinja template over the row's columns; ends just before the answer.
        choices: Verbaliser of each task label, in label order.
        demos: Few-shot pool: rows (``text``, ``text_pair``, ``word``, ``label``).

    """

    template: str
    choices: tuple[str, ...]
    demos: tuple[Mapping[str, object], ...] = ()


def _demo(text: str, pair: str | None, label: int, **extra) -> dict:
    return {"text": text, "text_pair": pair, "label": label, **extra}


_NLI3_DEMOS = (
    _demo("A man is playing a guitar on stage.", "A man is performing music.", 0),
    _demo("Two dogs run across a snowy field.", "The dogs are sleeping indoors.", 2),
    _demo("A woman is reading a book in a park.", "The woman is a teacher.", 1),
    _demo("Children are building a sandcastle at the beach.", "Kids are outside.", 0),
    _demo("A chef is chopping onions.", "The chef is asleep.", 2),
    _demo("An old man sits on a bench.", "The man is waiting for his wife.", 1),
)
_NLI2_DEMOS = tuple(
    _demo(d["text"], d["text_pair"], 0 if d["label"] == 0 else 1) for d in _NLI3_DEMOS
)

_NLI3 = "{{text}}\nQuestion: {{text_pair}} True, False or Neither?\nAnswer:"
_NLI2 = "{{text}}\nQuestion: {{text_pair}} True or False?\nAnswer:"
_PARA = "Sentence 1: {{text}}\nSentence 2: {{text_pair}}\nQuestion: Do both sentences mean the " \
        "same thing?\nAnswer:"

#: (family or None, task) -> prompt. Family entries win over the task's default.
PROMPTS: dict[tuple[str | None, str], PromptSpec] = {
    (None, "snli"): PromptSpec(_NLI3, ("True", "Neither", "False"), _NLI3_DEMOS),
    (None, "mnli"): PromptSpec(_NLI3, ("True", "Neither", "False"), _NLI3_DEMOS),
    (None, "kornli"): PromptSpec(_NLI3, ("True", "Neither", "False")),
    (None, "klue_nli"): PromptSpec(_NLI3, ("True", "Neither", "False")),
    (None, "rte"): PromptSpec(_NLI2, ("True", "False"), _NLI2_DEMOS),
    (None, "qnli"): PromptSpec(
        "{{text}}\n{{text_pair}}\nQuestion: Does this response answer the question?\nAnswer:",
        ("yes", "no"),
        (
            _demo("Where is the Eiffel Tower?", "The Eiffel Tower is in Paris.", 0),
            _demo("Who wrote Hamlet?", "Hamlet is often performed in London.", 1),
            _demo("When did the war end?", "The war ended in 1945.", 0),
            _demo("What is the capital of Peru?", "Peru has a long coastline.", 1),
        ),
    ),
    (None, "mrpc"): PromptSpec(
        _PARA, ("no", "yes"),
        (
            _demo("The company reported higher profits.", "Profits at the firm rose.", 1),
            _demo("He left the meeting early.", "The meeting was held on Monday.", 0),
            _demo("Shares fell 5 percent on Friday.", "On Friday, the stock dropped 5%.", 1),
            _demo("She bought a new car.", "She sold her house last year.", 0),
        ),
    ),
    (None, "klue_sts"): PromptSpec(_PARA, ("no", "yes")),
    (None, "qqp"): PromptSpec(
        "Question 1: {{text}}\nQuestion 2: {{text_pair}}\nQuestion: Do both questions ask the "
        "same thing?\nAnswer:",
        ("no", "yes"),
        (
            _demo("How do I learn Python?", "What is the best way to learn Python?", 1),
            _demo("How tall is Mount Everest?", "Who first climbed Mount Everest?", 0),
            _demo("How can I lose weight fast?", "What is the quickest way to lose weight?", 1),
            _demo("Why is the sky blue?", "Why is grass green?", 0),
        ),
    ),
    (None, "boolq"): PromptSpec(
        "{{text_pair}}\nQuestion: {{text}}?\nAnswer:", ("no", "yes"),
        (
            _demo("is the sun a star", "The Sun is the star at the centre of the Solar System.",
                  1),
            _demo("is a whale a fish", "Whales are marine mammals that breathe air.", 0),
            _demo("can penguins fly", "Penguins are flightless birds of the southern seas.", 0),
            _demo("is paris in france", "Paris is the capital and largest city of France.", 1),
        ),
    ),
    (None, "wic"): PromptSpec(
        "Sentence 1: {{text}}\nSentence 2: {{text_pair}}\nQuestion: Is the word '{{word}}' used "
        "in the same way in the two sentences above?\nAnswer:",
        ("no", "yes"),
        (
            _demo("He sat on the bank of the river.", "She deposited money at the bank.", 0,
                  word="bank"),
            _demo("The play lasted two hours.", "We saw a play at the theatre.", 1, word="play"),
            _demo("Turn on the light.", "The box is light enough to carry.", 0, word="light"),
            _demo("She runs every morning.", "He runs five miles a day.", 1, word="runs"),
        ),
    ),
    (None, "sst2"): PromptSpec(
        "{{text}}\nQuestion: Is this sentence positive or negative?\nAnswer:",
        ("negative", "positive"),
        (
            _demo("A warm, funny and moving film.", None, 1),
            _demo("The plot is dull and the acting is worse.", None, 0),
            _demo("One of the best movies of the year.", None, 1),
            _demo("A tedious mess from start to finish.", None, 0),
        ),
    ),
    (None, "ag_news"): PromptSpec(
        "{{text}}\nQuestion: Is this article about World, Sports, Business or Science?\nAnswer:",
        ("World", "Sports", "Business", "Science"),
        (
            _demo("Leaders meet in Geneva to discuss the ceasefire.", None, 0),
            _demo("The home team won the final in extra time.", None, 1),
            _demo("Oil prices climb as stocks slip on Wall Street.", None, 2),
            _demo("Researchers unveil a faster computer chip.", None, 3),
        ),
    ),
    (None, "conv_ent"): PromptSpec(
        _NLI2, ("False", "True"),
        (
            _demo("SpeakerA: I walk my dog every morning. SpeakerB: That sounds nice.",
                  "SpeakerA has a dog", 1),
            _demo("SpeakerA: I moved to Texas last year. SpeakerB: Do you like it?",
                  "SpeakerB lives in Texas", 0),
        ),
    ),
    (None, "art"): PromptSpec(
        "Story A: {{text}}\nStory B: {{text_pair}}\nQuestion: Which story is more plausible, "
        "A or B?\nAnswer:",
        ("A", "B"),
    ),
    # CALM rows hold the whole formatted input (indicators included) in `text`.
    ("calm", "mnli"): PromptSpec(
        "{{text}}\nQuestion: Is the hypothesis true given the premise? True, False or "
        "Neither?\nAnswer:", ("True", "Neither", "False"),
    ),
    ("calm", "kornli"): PromptSpec(
        "{{text}}\nQuestion: Is the hypothesis true given the premise? True, False or "
        "Neither?\nAnswer:", ("True", "Neither", "False"),
    ),
    ("calm", "klue_nli"): PromptSpec(
        "{{text}}\nQuestion: Is the hypothesis true given the premise? True, False or "
        "Neither?\nAnswer:", ("True", "Neither", "False"),
    ),
    ("calm", "rte"): PromptSpec(
        "{{text}}\nQuestion: Is the hypothesis true given the premise? True or False?\n"
        "Answer:", ("True", "False"),
    ),
    ("calm", "mrpc"): PromptSpec(
        "{{text}}\nQuestion: Do both sentences mean the same thing?\nAnswer:", ("no", "yes"),
    ),
    ("calm", "qnli"): PromptSpec(
        "{{text}}\nQuestion: Does the sentence answer the question?\nAnswer:", ("yes", "no"),
    ),
    ("calm", "qqp"): PromptSpec(
        "{{text}}\nQuestion: Do both questions ask the same thing?\nAnswer:", ("no", "yes"),
    ),
    ("calm", "klue_sts"): PromptSpec(
        "{{text}}\nQuestion: Do both sentences mean the same thing?\nAnswer:", ("no", "yes"),
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
    from bench.modeling import normalise_label

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
    return PromptSpec(spec.template, tuple(choices), spec.demos)


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


def fewshot_pool(spec: PromptSpec, scored_prompts: set[str]) -> list[tuple[str, str]]:
    """``(prompt, answer)`` of every demonstration whose prompt is not a scored row's."""
    pool = []
    for demo in spec.demos:
        prompt = render(spec.template, demo)
        if prompt not in scored_prompts:
            pool.append((prompt, spec.choices[int(demo["label"])]))
    return pool


def draw_demos(pool: Sequence[tuple[str, str]], k: int, prompt: str, seed: int,
               where: str) -> list[tuple[str, str]]:
    """``k`` demonstrations for ``prompt``, seeded by (seed, prompt): order-independent.

    Identical prompts draw identical demonstrations, so deduplication still applies.

    Raises:
        ConfigError: The pool holds fewer than ``k`` usable demonstrations.

    """
    if k <= 0:
        return []
    if len(pool) < k:
        raise ConfigError(
            f"--num-fewshot {k}: {where} has {len(pool)} usable demonstrations in its "
            "declared pool (bench/prompts.py)"
        )
    digest = hashlib.sha256(f"{seed}\0{prompt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).sample(list(pool), k)


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
