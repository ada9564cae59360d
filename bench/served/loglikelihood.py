"""``--mode loglikelihood``: completions requests with ``echo``, scored as the local path.

One request per distinct input (``consistency_bench.bench.runner.unique_inputs``): its prompts are
the
token ids of
each choice's (cut) context followed by the choice's tokens, exactly the sequences the local
causal path scores (``consistency_bench.bench.runner.causal.encode``, lm-eval's truncation per
choice). The
payload is
lm-eval's ``local-completions`` one: ``max_tokens`` 1, ``temperature`` 0, ``logprobs`` 1,
``echo``; a choice's log-likelihood is the sum of ``token_logprobs`` over its own tokens (the
one generated token after them is not counted). The prompt of a choice is at most ``L + 1``
tokens and one token is generated, so the server's window must be ``L + 2`` tokens or more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from consistency_bench.bench.runner.causal import Encoded


def bodies(model: str, encoded: Sequence[Encoded]) -> list[dict]:
    """The completions request of each distinct input."""
    return [{"model": model,
             "prompt": [e.context(k) + cont for k, cont in enumerate(e.conts)],
             "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True}
            for e in encoded]


def checker(encoded: Sequence[Encoded]):
    """The response check of ``consistency_bench.bench.served.client.run_requests`` (request index, data).

    A response must hold one choice per prompt, with the echoed log-probability of every
    continuation token, finite; otherwise it is malformed (retried, never cached).
    """  # noqa: E501

    def problem(i: int, data: dict) -> str | None:
        try:
            scored = scores(data, encoded[i])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            return f"no echoed log-probabilities: {type(exc).__name__}"
        if not all(math.isfinite(s) for s in scored):
            return "a log-probability is not a finite number"
        return None

    return problem


def scores(data: dict, encoded: Encoded) -> list[float]:
    """The log-likelihood of each choice from a completions response with ``echo``.

    Raises:
        KeyError, IndexError, TypeError, ValueError: Not the response expected.

    """
    choices = sorted(data["choices"], key=lambda c: c["index"])
    if len(choices) != len(encoded.conts):
        raise ValueError(f"{len(choices)} choices for {len(encoded.conts)} prompts")
    out = []
    for k, (choice, cont) in enumerate(zip(choices, encoded.conts, strict=True)):
        start = len(encoded.context(k))
        logprobs = choice["logprobs"]["token_logprobs"]
        picked = logprobs[start:start + len(cont)]
        if len(picked) != len(cont):
            raise ValueError("fewer echoed tokens than the prompt has")
        out.append(float(sum(float(x) for x in picked)))
    return out


def result(data: dict, encoded: Encoded) -> list:
    """The local runner's result of one input: ``[log-likelihoods, token counts]``."""
    return [[round(s, 6) for s in scores(data, encoded)], [len(c) for c in encoded.conts]]


def estimate(encoded: Sequence[Encoded]) -> dict[str, int]:
    """Requests, prompts and tokens of a run (``--dry-run``): exact, from the token ids."""
    prompts = sum(len(e.conts) for e in encoded)
    tokens = sum(len(e.context(k)) + len(c) for e in encoded for k, c in enumerate(e.conts))
    return {"requests": len(encoded), "prompts": prompts, "prompt_tokens": tokens,
            "completion_tokens": prompts}


def estimate_text(items: Sequence[tuple[str, list[str]]]) -> dict[str, int | bool]:
    """``--dry-run`` without the tokenizer: requests and prompts exact, tokens as chars / 4."""
    prompts = sum(len(conts) for _, conts in items)
    tokens = sum((len(ctx) + len(c) + 3) // 4 for ctx, conts in items for c in conts)
    return {"requests": len(items), "prompts": prompts, "prompt_tokens": tokens,
            "completion_tokens": prompts, "exact": False}
