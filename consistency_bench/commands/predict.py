"""``consistency-bench predict``: run a Hugging Face model over built suites."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_predictions_out, add_suites


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``predict`` command."""
    parser = subparsers.add_parser(
        "predict",
        help="run a Hugging Face classifier, text-to-text model or causal LM over built suites",
        description="Predict every row of the chosen suites with an "
        "AutoModelForSequenceClassification, AutoModelForSeq2SeqLM or AutoModelForCausalLM "
        "model (a decoder-only config is scored by the log-likelihood of each verbalised "
        "label, docs/runner.md) and write a prediction file (JSONL with id, label, probs). "
        "Interrupted runs resume. Several GPUs: torchrun --nproc_per_node N -m consistency_bench "
        "predict ... (or accelerate launch); several machines without a shared disk: "
        "--shard i/N on each, then merge-predictions.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--model", required=True, metavar="NAME_OR_PATH",
                        help="Hub model id or local model folder")
    parser.add_argument("--revision", default=None, metavar="REV",
                        help="Hub model: the branch, tag or commit to load (the commit loaded "
                        "is recorded in <out>.run.json either way)")
    add_data(parser)
    add_predictions_out(parser)
    add_suites(parser, "suites to predict (default: every built suite whose task the model's "
               "labels cover)")
    parser.add_argument("--tasks", nargs="+", metavar="TASK",
                        help="with no --suites: only the built suites of these tasks")
    parser.add_argument("--batch-size", default="auto", metavar="auto|N",
                        help="inputs per batch; auto fills a token budget and halves on OOM")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: auto)")
    parser.add_argument("--dtype", default=None,
                        help="weight dtype: float32, bfloat16, float16 (default: checkpoint's)")
    parser.add_argument("--label-map", default=None, metavar="SPEC|FILE.json",
                        help="task:label=model_label,...;task:... or a JSON file (causal LMs: "
                        "task:label=verbaliser,...)")
    parser.add_argument("--wic-format", default="word-prefix", choices=("word-prefix", "pair"),
                        help="WiC input: '<word>: sentence1' + sentence2, or the plain pair")
    parser.add_argument("--max-length", type=int, default=None,
                        help="truncation in tokens (default: 512; causal LMs: the model's "
                        "context length, as lm-eval)")
    parser.add_argument("--length-norm", choices=("chars", "tokens"), default=None,
                        help="causal LMs: divide each choice's log-likelihood by its length "
                        "(chars = lm-eval's acc_norm)")
    parser.add_argument("--chat", action="store_true",
                        help="causal LMs: apply the tokenizer's chat template")
    parser.add_argument("--num-fewshot", type=int, default=0, metavar="K",
                        help="causal LMs: K demonstrations from the task's declared pool")
    parser.add_argument("--fewshot-seed", type=int, default=0, help="seed of the few-shot draws")
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="run part I of N (0 <= I < N) and write a part file to --out; "
                        "join the N parts with merge-predictions")
    parser.add_argument("--device-map", default=None, choices=("auto",),
                        help="spread a model larger than one device over every GPU, then CPU "
                        "(transformers/accelerate); one process per node")
    parser.add_argument("--max-memory", default=None, metavar="DEV=SIZE,...",
                        help="with --device-map auto: per-device limits, e.g. "
                        "0=20GiB,1=20GiB,cpu=60GiB")
    parser.add_argument("--no-amp", action="store_true", help="no autocast on CUDA")
    add_api_options(parser)
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (also transformers' and the Hub's)")
    parser.set_defaults(func=run)


def add_api_options(parser: argparse.ArgumentParser) -> None:
    """The options of a served model (``--api openai``; docs/runner.md, "Served models")."""
    api = parser.add_argument_group(
        "served models", "with --api openai, --model is the served model name and every "
        "request goes to an OpenAI-compatible endpoint (vLLM, SGLang, TGI, hosted APIs)")
    api.add_argument("--api", choices=("openai",), default=None,
                     help="run against an OpenAI-compatible endpoint instead of local weights")
    api.add_argument("--base-url", metavar="URL", help="the API root, e.g. "
                     "http://localhost:8000/v1 (non-local http:// needs --allow-insecure)")
    api.add_argument("--mode", choices=("loglikelihood", "generate"), default="loglikelihood",
                     help="loglikelihood: completions with echo log-probabilities (as the "
                     "local path); generate: the chat endpoint answers with a label word")
    api.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                     help="environment variable holding the key (never printed or stored)")
    api.add_argument("--allow-insecure", action="store_true",
                     help="allow plain http:// to another machine")
    api.add_argument("--tokenizer", metavar="NAME_OR_PATH",
                     help="the served model's tokenizer (loglikelihood: default --model; "
                     "generate: exact token counts for --dry-run)")
    api.add_argument("--concurrency", type=int, default=8, help="requests in flight at once")
    api.add_argument("--max-rps", type=float, default=None, help="most requests per second")
    api.add_argument("--request-timeout", type=float, default=120.0, metavar="SECONDS",
                     help="per-request timeout")
    api.add_argument("--retries", type=int, default=6,
                     help="retries of a 429, 5xx, timeout or malformed response (exponential "
                     "backoff with jitter, honouring Retry-After)")
    api.add_argument("--backoff", type=float, default=1.0, metavar="SECONDS",
                     help="base of the exponential backoff between retries")
    api.add_argument("--cache", metavar="DIR", default=None,
                     help="request cache folder (default: ~/.cache/consistency-bench/requests)")
    api.add_argument("--dry-run", action="store_true",
                     help="print the request count and a token estimate; send nothing")
    api.add_argument("--max-tokens", type=int, default=8, help="generate: answer length")
    api.add_argument("--top-logprobs", type=int, default=20,
                     help="generate: top tokens asked for (0: label-only file)")
    api.add_argument("--structured", choices=("choice", "guided-choice", "json-schema"),
                     default=None, help="generate: constrain the answer to a label word "
                     "(choice: vLLM structured_outputs; guided-choice: vLLM < 0.12; "
                     "json-schema: response_format)")


#: Local-model options a served run refuses when given (flag -> default).
LOCAL_ONLY = {"--batch-size": "auto", "--device": None, "--dtype": None, "--shard": None,
              "--device-map": None, "--max-memory": None, "--wic-format": "word-prefix"}
#: Served-model options that need --api (flag -> default).
API_ONLY = {"--base-url": None, "--tokenizer": None, "--max-rps": None, "--cache": None,
            "--dry-run": False, "--structured": None, "--allow-insecure": False,
            "--mode": "loglikelihood", "--concurrency": 8, "--request-timeout": 120.0,
            "--retries": 6, "--backoff": 1.0, "--api-key-env": "OPENAI_API_KEY",
            "--max-tokens": 8,
            "--top-logprobs": 20}


def _given(args: argparse.Namespace, flags: dict) -> list[str]:
    return [f for f, default in flags.items()
            if getattr(args, f[2:].replace("-", "_")) != default]


def run_served(args: argparse.Namespace) -> int:
    """``--api openai``: :func:`consistency_bench.bench.served.served_run.predict_served`, then a summary."""  # noqa: E501
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.served.client import ClientOptions
    from consistency_bench.bench.served.generate import GenerateOptions
    from consistency_bench.bench.served.options import ServedRequest
    from consistency_bench.bench.served.served_run import predict_served

    local = _given(args, LOCAL_ONLY) + (["--no-amp"] if args.no_amp else [])
    if local:
        raise ConfigError(f"{', '.join(local)}: options of local weights; a served run "
                          "(--api) leaves batching and devices to the server")
    if not args.base_url:
        raise ConfigError("--api openai needs --base-url URL (e.g. http://localhost:8000/v1)")
    outcome = predict_served(ServedRequest(
        model=args.model, base_url=args.base_url, out=args.out, data=args.data, mode=args.mode,
        api=args.api, suites=args.suites, tasks=args.tasks, label_map=args.label_map,
        max_length=args.max_length, length_norm=args.length_norm,
        num_fewshot=args.num_fewshot, fewshot_seed=args.fewshot_seed, chat=args.chat,
        tokenizer=args.tokenizer, api_key_env=args.api_key_env,
        allow_insecure=args.allow_insecure,
        client=ClientOptions(concurrency=args.concurrency, max_rps=args.max_rps,
                             timeout=args.request_timeout, retries=args.retries,
                             backoff=args.backoff),
        generate=GenerateOptions(max_tokens=args.max_tokens, top_logprobs=args.top_logprobs,
                                 structured=args.structured),
        cache=args.cache, dry_run=args.dry_run, progress=not args.no_progress,
    ))
    if outcome.estimate is not None:
        est = outcome.estimate
        how = "counted with the tokenizer" if est["exact"] else "estimated as characters / 4"
        print(f"dry run ({args.mode}): {outcome.rows} rows of {outcome.suites} suites, "
              f"{est['requests']} requests ({est['prompts']} prompts), "
              f"{est['prompt_tokens']} prompt tokens ({how}), at most "
              f"{est['completion_tokens']} completion tokens; nothing sent")
        return 0
    usage = outcome.usage
    totals = outcome.usage_all or {}
    extra = (f"; {outcome.invalid} invalid answers, {outcome.label_only} label-only rows"
             if args.mode == "generate" else "")
    print(f"wrote {outcome.rows} rows of {outcome.suites} suites to {args.out}: "
          f"{outcome.distinct} requests ({usage.sent} sent, {usage.cached} cached, "
          f"{usage.retried} retries) in {outcome.seconds:.1f}s (requests "
          f"{outcome.request_seconds:.2f}s); tokens this run "
          f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion, "
          f"whole file {totals.get('prompt_tokens', 0)} + "
          f"{totals.get('completion_tokens', 0)}{extra}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Predict (:func:`consistency_bench.bench.runner.predict_run.predict`) and print a summary line."""  # noqa: E501
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.runner.predict_run import PredictRequest, predict

    if args.api:
        return run_served(args)
    given = _given(args, API_ONLY)
    if given:
        raise ConfigError(f"{', '.join(given)}: options of a served model; add --api openai")

    outcome = predict(PredictRequest(
        model=args.model, out=args.out, data=args.data, suites=args.suites, tasks=args.tasks,
        batch_size=args.batch_size, device=args.device, dtype=args.dtype,
        label_map=args.label_map, wic_format=args.wic_format, max_length=args.max_length,
        length_norm=args.length_norm, chat=args.chat, num_fewshot=args.num_fewshot,
        fewshot_seed=args.fewshot_seed, shard=args.shard, device_map=args.device_map,
        max_memory=args.max_memory, amp=not args.no_amp, progress=not args.no_progress,
        revision=args.revision,
    ))
    if outcome.main:
        stats, shard = outcome.stats, outcome.shard
        what = f"part {shard} of a run of " if shard else ""
        print(
            f"wrote {what}{stats.rows} rows of {stats.suites} suites to {args.out}: "
            f"{stats.unique} unique inputs ({stats.resumed} resumed, {stats.computed} computed"
            + (f" on rank 0 of {outcome.world}" if outcome.world else "")
            + f") in {stats.seconds:.1f}s, {stats.rows_per_second:.0f} rows/s; run record "
            f"{args.out}.run.json"
        )
    return 0
