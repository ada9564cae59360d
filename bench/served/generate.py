"""``--mode generate``: chat requests answered with one label word, parsed strictly.

One request per distinct input: the chat turns of
``consistency_bench.bench.runner.unique_inputs.collect_causal_inputs(...,
messages=True)`` (the task's prompt with a line naming the label words, demonstrations as
user / assistant turns), ``temperature`` 0, a small ``max_tokens``, stop at a newline. The
answer is parsed by :func:`consistency_bench.bench.served.answers.parse_answer`; probabilities come
from the
first answer token's ``top_logprobs``
(:func:`consistency_bench.bench.served.answers.first_token_probs`) when
the endpoint returns them, else the row is label-only. ``--structured`` constrains the answer
where the server supports it: ``choice`` (vLLM >= 0.10.2 ``structured_outputs``),
``guided-choice`` (vLLM before 0.12, ``guided_choice``), ``json-schema`` (``response_format``
with a JSON schema whose ``answer`` is one of the verbalisers: OpenAI, vLLM, SGLang; label-only,
since the first token is the JSON's brace).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.served.answers import first_token_probs, parse_answer

#: ``--structured`` modes.
STRUCTURED = ("choice", "guided-choice", "json-schema")
#: Stop sequence of every request: the answer is one line.
STOP = ["\n"]


@dataclass(frozen=True)
class GenerateOptions:
    """How answers are asked for.

    Attributes:
        max_tokens: Tokens an answer may take.
        top_logprobs: Top tokens asked for at each position (0: label only).
        structured: One of :data:`STRUCTURED`, or None.

    """

    max_tokens: int = 8
    top_logprobs: int = 20
    structured: str | None = None

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ConfigError(f"--max-tokens {self.max_tokens}: use 1 or more")
        if self.top_logprobs < 0:
            raise ConfigError(f"--top-logprobs {self.top_logprobs}: use 0 or more")
        if self.structured is not None and self.structured not in STRUCTURED:
            raise ConfigError(f"--structured {self.structured!r}: use one of "
                              f"{', '.join(STRUCTURED)}")


def json_schema(choices: Sequence[str]) -> dict:
    """The ``response_format`` of ``--structured json-schema``."""
    return {"type": "json_schema", "json_schema": {
        "name": "answer", "strict": True,
        "schema": {"type": "object", "properties": {"answer": {"type": "string",
                                                                "enum": list(choices)}},
                   "required": ["answer"], "additionalProperties": False}}}


def body(model: str, messages: list[dict], choices: Sequence[str], options: GenerateOptions,
         logprobs: bool) -> dict:
    """The chat request of one input."""
    out: dict = {"model": model, "messages": messages, "max_tokens": options.max_tokens,
                 "temperature": 0}
    if options.structured != "json-schema":
        out["stop"] = STOP
    if logprobs and options.top_logprobs and options.structured != "json-schema":
        out.update(logprobs=True, top_logprobs=options.top_logprobs)
    if options.structured == "choice":
        out["structured_outputs"] = {"choice": list(choices)}
    elif options.structured == "guided-choice":
        out["guided_choice"] = list(choices)
    elif options.structured == "json-schema":
        out["response_format"] = json_schema(choices)
    return out


def bodies(model: str, unique: Sequence[tuple[str, str | None]], options: GenerateOptions,
           logprobs: bool) -> list[dict]:
    """The chat request of each distinct input (``(messages JSON, verbalisers)`` keys)."""
    from consistency_bench.bench.runner.causal import split_key

    out = []
    for key in unique:
        messages, choices = split_key(*key)
        out.append(body(model, json.loads(messages), choices, options, logprobs))
    return out


def content(data: dict) -> str | None:
    """The answer text of a chat response (None when there is none).

    Raises:
        KeyError, IndexError, TypeError: Not a chat response.

    """
    text = data["choices"][0]["message"].get("content")
    return text if isinstance(text, str) else None


def checker():
    """The response check of ``run_requests``: a chat response with a message."""

    def problem(i: int, data: dict) -> str | None:
        try:
            content(data)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            return f"no choices[0].message: {type(exc).__name__}"
        return None

    return problem


def answer(data: dict, choices: Sequence[str], options: GenerateOptions) -> dict:
    """``{"text", "label" (index or None), "probs" (or None)}`` of one response."""
    text = content(data)
    said = text
    if options.structured == "json-schema" and text is not None:
        try:
            found = json.loads(text)
            said = found.get("answer") if isinstance(found, dict) else None
        except ValueError:
            said = None
    label = parse_answer(said, choices)
    probs = None
    if options.structured != "json-schema":
        try:
            top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except (KeyError, IndexError, TypeError):
            top = None
        probs = first_token_probs(top if isinstance(top, list) else None, choices)
    return {"text": text, "label": label, "probs": probs}


def estimate(unique: Sequence[tuple[str, str | None]], options: GenerateOptions,
             tokenizer=None) -> dict[str, int | bool]:
    """Requests and tokens of a run (``--dry-run``).

    Prompt tokens are counted with ``tokenizer`` over the turns' text when one is given (chat
    template tokens not included), else estimated as characters / 4; completion tokens are
    at most ``max_tokens`` per request.
    """
    from consistency_bench.bench.runner.causal import split_key

    texts = ["".join(m["content"] for m in json.loads(split_key(*key)[0])) for key in unique]
    if tokenizer is not None:
        tokens = sum(len(ids) for ids in tokenizer(texts)["input_ids"]) if texts else 0
    else:
        tokens = sum((len(t) + 3) // 4 for t in texts)
    return {"requests": len(unique), "prompts": len(unique), "prompt_tokens": tokens,
            "completion_tokens": len(unique) * options.max_tokens, "exact": tokenizer is not None}
