"""The two served flows after the inputs are built: ``loglikelihood`` and ``generate``.

Each: ``--dry-run`` returns the estimate and sends nothing; otherwise preflight
(``consistency_bench.bench.served.preflight``), the requests
(``consistency_bench.bench.served.client``), the prediction file and
the run record (``consistency_bench.bench.served.record``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.served import generate as gen
from consistency_bench.bench.served import loglikelihood as ll
from consistency_bench.bench.served.cache import RequestCache
from consistency_bench.bench.served.client import ServedError, Usage, import_http, run_requests
from consistency_bench.bench.served.endpoint import Endpoint
from consistency_bench.bench.served.options import ServedOutcome, ServedRequest, default_cache
from consistency_bench.bench.served.preflight import (
    ServerInfo,
    cannot_serve,
    has_top_logprobs,
    list_models,
    loglikelihood_problem,
    probe,
)
from consistency_bench.bench.served.record import api_block, run_record, suites_of, write_run_record


def resolve_max_length(given: int | None, window: int | None) -> int:
    """The truncation length ``L``: ``--max-length``, else the server's window minus 2.

    A choice's prompt is at most ``L + 1`` tokens (lm-eval's rule) and one token is
    generated, so the server needs a window of ``L + 2``.

    Raises:
        ConfigError: No window reported and no ``--max-length``; or ``L + 2`` over it.

    """
    if given is None:
        if window is None:
            raise ConfigError("the server reports no max_model_len: pass --max-length L (its "
                              "context window minus 2)")
        return window - 2
    if window is not None and given + 2 > window:
        raise ConfigError(f"--max-length {given}: prompts of up to {given + 1} tokens plus one "
                          f"generated token exceed the server's window of {window}; use "
                          f"--max-length {window - 2} or less")
    return given


def _bar(total: int, enabled: bool):
    if not enabled:
        return None, None
    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    bar = tqdm(total=total, unit="request", desc="predict", dynamic_ncols=True)
    return bar, bar.update


def _add_probe(usage: Usage, probed: Usage) -> None:
    """Count the probe (the run's first request, sent alone) in the run's usage."""
    usage.sent += probed.sent
    usage.cached -= probed.sent  # the probe cached its response: the run found it there
    usage.retried += probed.retried
    usage.prompt_tokens += probed.prompt_tokens
    usage.completion_tokens += probed.completion_tokens


def _usage_of(responses: list[dict]) -> dict:
    total = Usage()
    for resp in responses:
        total.add(resp)
    return total.as_dict()


def _finish(request: ServedRequest, endpoint: Endpoint, server: ServerInfo, responses,
            usage: Usage, settings: dict, collected) -> dict:
    """Write the run record; return the usage of every response of the file."""
    for resp in responses:
        fingerprint = resp.get("system_fingerprint")
        if isinstance(fingerprint, str) and fingerprint:
            server.fingerprints.add(fingerprint)
    usage_all = _usage_of(responses)
    requests = {"distinct": len(responses), "sent": usage.sent, "cached": usage.cached,
                "retried": usage.retried}
    api = api_block(endpoint, server, usage, usage_all, requests)
    write_run_record(request.out, run_record(request.mode, request.model, settings, api),
                     suites_of(collected, request.data))
    return usage_all


def _settings(request: ServedRequest, max_length: int | None) -> dict:
    return {"max_length": max_length, "length_norm": request.length_norm, "chat": request.chat,
            "num_fewshot": request.num_fewshot, "fewshot_seed": request.fewshot_seed,
            "label_map": request.label_map, "tokenizer": request.tokenizer or request.model,
            "max_tokens": request.generate.max_tokens if request.mode == "generate" else None,
            "top_logprobs": (request.generate.top_logprobs if request.mode == "generate"
                             else None),
            "structured": request.generate.structured, "temperature": 0}


def run_loglikelihood(request: ServedRequest, endpoint: Endpoint, collected, tokenizer,
                      options, log: Callable[[str], None]) -> ServedOutcome:
    """``--mode loglikelihood`` over the collected inputs (see the module docstring)."""
    from consistency_bench.bench.runner.causal import encode, split_key
    from consistency_bench.bench.runner.output import write_predictions
    from consistency_bench.bench.runner.unique_inputs import input_key

    items = [split_key(*u) for u in collected.unique]
    outcome = ServedOutcome(collected.rows, len(collected.suites), len(items))
    if request.dry_run:  # no server to ask for its window: uncut unless --max-length says
        if tokenizer is None:
            outcome.estimate = ll.estimate_text(items)
            return outcome
        encoded = encode(tokenizer, items, request.max_length or 10 ** 9)
        outcome.estimate = {**ll.estimate(encoded), "exact": True}
        return outcome
    server = list_models(endpoint)
    max_length = resolve_max_length(request.max_length, server.max_model_len)
    encoded = encode(tokenizer, items, max_length)
    cut = {i for i, e in enumerate(encoded) if e.truncated}
    outcome.truncated_rows = sum(1 for s in collected.suites for i in s.inputs if i in cut)
    if cut:
        log(f"warning: --max-length {max_length}: {outcome.truncated_rows} of "
            f"{collected.rows} rows ({len(cut)} of {len(items)} distinct inputs) are longer "
            "and were cut (contexts cut from the left, per choice as lm-eval)")
    cache = RequestCache(request.cache or default_cache())
    bodies = ll.bodies(endpoint.model, encoded)
    import_http()
    started = time.perf_counter()
    first_tokens = len(bodies[0]["prompt"][0])
    _, probed = probe(endpoint, "/completions", bodies[0], request.client, cache,
                      loglikelihood_problem(first_tokens),
                      cannot_serve(endpoint, "loglikelihood"))
    bar, tick = _bar(len(bodies), request.progress)
    try:
        responses, usage = run_requests(endpoint, "/completions", bodies, request.client,
                                        cache, ll.checker(encoded), tick)
    finally:
        if bar is not None:
            bar.close()
    outcome.request_seconds = time.perf_counter() - started
    _add_probe(usage, probed)
    keys = [input_key(t, p) for t, p in collected.unique]
    done: dict[str, object] = {keys[i]: ll.result(r, encoded[i])
                               for i, r in enumerate(responses)}
    write_predictions(Path(request.out), collected, keys, done, {}, False, options,
                      causal=True)
    cache.close()
    outcome.usage = usage
    outcome.usage_all = _finish(request, endpoint, server, responses, usage,
                                _settings(request, max_length), collected)
    return outcome


def run_generate(request: ServedRequest, endpoint: Endpoint, collected, tokenizer, options,
                 log: Callable[[str], None]) -> ServedOutcome:
    """``--mode generate`` over the collected inputs (see the module docstring)."""
    from consistency_bench.bench.runner.causal import split_key

    gopts = request.generate
    outcome = ServedOutcome(collected.rows, len(collected.suites), len(collected.unique))
    if request.dry_run:
        outcome.estimate = gen.estimate(collected.unique, gopts, tokenizer)
        return outcome
    server = list_models(endpoint)
    cache = RequestCache(request.cache or default_cache())
    logprobs = gopts.top_logprobs > 0 and gopts.structured != "json-schema"
    bodies = gen.bodies(endpoint.model, collected.unique, gopts, logprobs)
    cannot = cannot_serve(endpoint, "generate")
    import_http()
    started = time.perf_counter()
    try:
        first, probed = probe(endpoint, "/chat/completions", bodies[0], request.client, cache,
                              lambda r: gen.checker()(0, r), cannot)
    except ServedError:
        if not logprobs:
            raise
        logprobs = False  # some servers refuse logprobs: label-only rather than nothing
        bodies = gen.bodies(endpoint.model, collected.unique, gopts, logprobs)
        first, probed = probe(endpoint, "/chat/completions", bodies[0], request.client, cache,
                              lambda r: gen.checker()(0, r), cannot)
        log("note: the chat endpoint refused logprobs; the file is label-only")
    server.top_logprobs = logprobs and has_top_logprobs(first)
    if logprobs and not server.top_logprobs:
        log("note: the chat endpoint returns no top_logprobs; the file is label-only")
    bar, tick = _bar(len(bodies), request.progress)
    try:
        responses, usage = run_requests(endpoint, "/chat/completions", bodies, request.client,
                                        cache, gen.checker(), tick)
    finally:
        if bar is not None:
            bar.close()
    outcome.request_seconds = time.perf_counter() - started
    _add_probe(usage, probed)
    answers = [gen.answer(r, split_key(*u)[1], gopts)
               for r, u in zip(responses, collected.unique, strict=True)]
    outcome.invalid, outcome.label_only = write_answers(request.out, collected, answers)
    cache.close()
    outcome.usage = usage
    outcome.usage_all = _finish(request, endpoint, server, responses, usage,
                                _settings(request, None), collected)
    return outcome


def write_answers(out, collected, answers: list[dict]) -> tuple[int, int]:
    """Write the prediction file of generated answers; return (invalid rows, label-only rows).

    A row's label is its verbaliser's index, or
    :data:`consistency_bench.bench.served.answers.INVALID_ANSWER`;
    ``probs`` where the first answer token gave them (rounded to 6 places, as ``predict``).
    """
    from consistency_bench.bench.io.write import atomic_path
    from consistency_bench.bench.served.answers import INVALID_ANSWER

    invalid = label_only = 0
    with atomic_path(Path(out)) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for suite in collected.suites:
            for row_id, i in zip(suite.ids, suite.inputs, strict=True):
                found = answers[i]
                record: dict = {"id": row_id, "label": found["label"]}
                if found["label"] is None:
                    record["label"] = INVALID_ANSWER
                    invalid += 1
                if found["probs"] is None:
                    label_only += 1
                else:
                    record["probs"] = [round(p, 6) for p in found["probs"]]
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return invalid, label_only
