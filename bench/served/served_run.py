"""One served run: check everything, build the inputs, ask the endpoint, write the file.

What ``consistency-bench predict --api openai`` does (docs/runner.md, "Served models"):

1. options, URL, output file, suites: checked before anything is read from the network;
2. the inputs: the local causal path's
   (``consistency_bench.bench.runner.unique_inputs.collect_causal_inputs``), tokenised
   with the model's tokenizer for ``loglikelihood``, as chat turns for ``generate``;
3. ``--dry-run``: the request count and a token estimate, and nothing is sent;
4. preflight (``consistency_bench.bench.served.preflight``): reachable, key accepted, model listed,
   mode served;
5. the requests (``consistency_bench.bench.served.client``: cached, concurrent, rate-limited,
   retried);
6. the prediction file (atomic) and its run record ``<out>.run.json``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.served.flows import run_generate, run_loglikelihood
from consistency_bench.bench.served.generate import GenerateOptions
from consistency_bench.bench.served.options import (
    MODES,
    T2T_SUFFIX,
    ServedOutcome,
    ServedRequest,
    default_cache,
)


def check_request(request: ServedRequest) -> None:
    """Refuse option combinations a served run cannot honour (before anything is read).

    Raises:
        ConfigError: The combination and what to do instead.

    """
    if request.api != "openai":
        raise ConfigError(f"--api {request.api!r}: use openai (any OpenAI-compatible endpoint)")
    if request.mode not in MODES:
        raise ConfigError(f"--mode {request.mode!r}: use {' or '.join(MODES)}")
    if request.mode == "generate" and (request.length_norm or request.chat):
        raise ConfigError("--length-norm and --chat apply to --mode loglikelihood; --mode "
                          "generate uses the chat endpoint, which applies the served model's "
                          "chat template itself")
    if request.mode == "loglikelihood" and request.generate != GenerateOptions():
        raise ConfigError("--max-tokens, --top-logprobs and --structured apply to --mode "
                          "generate only")
    if request.max_length is not None and request.max_length < 2:
        raise ConfigError(f"--max-length {request.max_length}: use 2 or more tokens")
    if request.num_fewshot < 0:
        raise ConfigError(f"--num-fewshot {request.num_fewshot}: use 0 or more")


def choose_suites(request: ServedRequest) -> list[str]:
    """``--suites``, else the built suites (of ``--tasks``) but the ``*_t2t`` ones."""
    from consistency_bench.bench.io.manifest import read_manifest

    manifest = read_manifest(request.data)
    if request.suites:
        return list(request.suites)
    chosen = [s for s, e in manifest.items() if not s.endswith(T2T_SUFFIX)
              and (not request.tasks or e["task"] in request.tasks)]
    if not chosen:
        raise ConfigError(f"no built suite in {request.data}"
                          + (f" of tasks {', '.join(request.tasks)}" if request.tasks else ""))
    return chosen


def load_tokenizer(name: str):
    """The model's tokenizer (``--tokenizer``, else ``--model``), or a clean error."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ConfigError("--mode loglikelihood needs transformers (pip install "
                          "'consistency-bench[models]') for the model's tokenizer") from None
    try:
        return AutoTokenizer.from_pretrained(name)
    except Exception as exc:  # OSError, ValueError, HF errors: one line either way
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise ConfigError(f"cannot load the tokenizer {name!r} ({first}); pass --tokenizer "
                          "PATH with the served model's tokenizer") from None


def predict_served(request: ServedRequest,
                   log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)
                   ) -> ServedOutcome:
    """Run the suites against the endpoint and write ``request.out`` (see module docstring).

    Raises:
        ConfigError: A bad option, URL, suite, tokenizer or output path (nothing sent).
        ServedError: The endpoint is unreachable, refuses the key, does not list the model or
            cannot serve the mode (nothing of the run sent); or a request failed for good
            (what finished is cached).

    """
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.modeling.label_map import parse_label_map
    from consistency_bench.bench.runner.options import RunnerOptions
    from consistency_bench.bench.runner.unique_inputs import collect_causal_inputs
    from consistency_bench.bench.served.endpoint import make_endpoint

    start = time.perf_counter()
    check_request(request)
    endpoint = make_endpoint(request.base_url, request.model, request.api_key_env,
                             request.allow_insecure)
    read_manifest(request.data)
    # a --label-map file, a --tokenizer folder and the --cache folder are inputs
    check_output_file(request.out, inputs=(request.label_map, request.tokenizer,
                                           request.cache or default_cache()))
    suites = choose_suites(request)
    options = RunnerOptions(label_map=parse_label_map(request.label_map), progress=False,
                            length_norm=request.length_norm, chat=request.chat,
                            num_fewshot=request.num_fewshot, seed=request.fewshot_seed,
                            max_length=request.max_length)
    if request.mode == "loglikelihood":
        try:
            tokenizer = load_tokenizer(request.tokenizer or request.model)
        except ConfigError as exc:
            if not request.dry_run or request.chat:
                raise
            log(f"note: {exc}; the dry run estimates tokens as characters / 4")
            tokenizer = None
        collected = collect_causal_inputs(request.data, suites, options, tokenizer)
        outcome = run_loglikelihood(request, endpoint, collected, tokenizer, options, log)
    else:
        tokenizer = load_tokenizer(request.tokenizer) if request.tokenizer else None
        collected = collect_causal_inputs(request.data, suites, options, messages=True)
        outcome = run_generate(request, endpoint, collected, tokenizer, options, log)
    outcome.seconds = time.perf_counter() - start
    return outcome
