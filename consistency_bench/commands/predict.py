"""``consistency-bench predict``: run a Hugging Face model over built suites."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time

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
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (also transformers' and the Hub's)")
    parser.set_defaults(func=run)


def parse_batch_size(text: str) -> int | None:
    """``auto`` -> None, else a positive int."""
    from bench.errors import ConfigError

    if text == "auto":
        return None
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"--batch-size {text!r}: use auto or a positive integer")
    return int(text)


def default_suites(data_dir, loaded, label_map, tasks=None) -> list[str]:
    """Built suites the model can answer; the others are listed on stderr as skipped.

    Classifiers: suites whose task labels map to the model's labels. Text-to-text models:
    tasks with a T5 prompt. Causal LMs: every suite but the ``*_t2t`` ones, which carry T5
    task prefixes (name them in ``--suites`` to run them anyway).
    """
    from bench.errors import ConfigError
    from bench.inputs import T5_PROMPTS
    from bench.manifest import read_manifest
    from bench.modeling import resolve_label_mapping
    from bench.runner import suite_task

    chosen, skipped, t2t = [], [], []
    for suite, entry in read_manifest(data_dir).items():
        task = entry["task"]
        if tasks and task not in tasks:
            continue
        if getattr(loaded, "is_causal", False):
            if suite.endswith(T2T_SUFFIX):
                t2t.append(suite)
                continue
            ok = True
        elif loaded.is_seq2seq:
            ok = task in T5_PROMPTS
        else:
            try:
                resolve_label_mapping(loaded.id2label, suite_task(entry), label_map)
                ok = True
            except ConfigError:
                ok = False
        (chosen if ok else skipped).append(suite)
    if skipped:
        print(f"skipping {len(skipped)} suites whose labels the model does not cover: "
              f"{', '.join(skipped)}", file=sys.stderr)
    if t2t:
        print(f"skipping {len(t2t)} text-to-text suites (T5 task prefixes; name them in "
              f"--suites to run them): {', '.join(t2t)}", file=sys.stderr)
    if not chosen:
        what = "text-to-text prompts" if loaded.is_seq2seq else f"labels {loaded.id2label}"
        if getattr(loaded, "is_causal", False):
            what = "prompts"
        raise ConfigError(
            f"the model's {what} cover no built suite in {data_dir}"
            + (f" of tasks {', '.join(tasks)}" if tasks else "")
            + "; pass --suites and --label-map"
        )
    return chosen


#: Suites built for text-to-text models (T5 task prefixes in the text).
T2T_SUFFIX = "_t2t"


def quiet_progress() -> None:
    """Silence transformers' and huggingface_hub's progress bars (``--no-progress``)."""
    import transformers

    transformers.utils.logging.disable_progress_bar()
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:  # pragma: no cover - every supported huggingface_hub has it
        return
    disable_progress_bars()


def run(args: argparse.Namespace) -> int:
    """Check everything, load the model, predict, print a summary line.

    Every check that needs no weights (options, suites, prompts, few-shot pools, lengths,
    label mapping) runs before the weights load, so a refused run costs seconds and leaves
    nothing behind.
    """
    from bench import distributed
    from bench.atomic import check_output_file
    from bench.errors import ConfigError
    from bench.manifest import read_manifest
    from bench.modeling import (
        inspect_model,
        load_model,
        parse_label_map,
        parse_max_memory,
        resolve_device,
    )
    from bench.runner import RunnerOptions, execute, max_length_of, prepare, truncation_warning

    start = time.perf_counter()
    label_map = parse_label_map(args.label_map)
    options = RunnerOptions(
        batch_size=parse_batch_size(args.batch_size), max_length=args.max_length,
        wic_format=args.wic_format, label_map=label_map, progress=not args.no_progress,
        amp=not args.no_amp, length_norm=args.length_norm, chat=args.chat,
        num_fewshot=args.num_fewshot, seed=args.fewshot_seed,
    )
    shard = distributed.parse_shard(args.shard)
    max_memory = parse_max_memory(args.max_memory)
    if max_memory and args.device_map is None:
        raise ConfigError("--max-memory applies with --device-map auto only")
    if args.device_map is not None and args.device not in (None, "auto"):
        raise ConfigError(f"--device {args.device} with --device-map {args.device_map}: the "
                          "device map places the model; drop --device (or use --max-memory)")
    procs = distributed.from_env()
    device = distributed.process_device(args.device, procs, args.device_map)
    if args.device_map is None:
        resolve_device(device)  # --device tpu, or cuda without CUDA, before anything is read
    read_manifest(args.data)  # a bad --data or --out fails before the model loads
    check_output_file(args.out)
    if args.no_progress:
        quiet_progress()
    info = inspect_model(args.model)
    if not info.is_causal and (args.chat or args.num_fewshot or args.length_norm):
        raise ConfigError("--chat, --num-fewshot and --length-norm apply to causal LMs only; "
                          f"{args.model} is not one")
    main = procs is None or procs.is_main
    if args.suites:
        suites = args.suites
    elif main:
        suites = default_suites(args.data, info, label_map, args.tasks)
    else:
        with contextlib.redirect_stderr(io.StringIO()):  # rank 0 lists the skipped suites
            suites = default_suites(args.data, info, label_map, args.tasks)
    prepared = prepare(info, args.model, args.data, suites, options)
    warning = truncation_warning(prepared, max_length_of(info, options))
    if warning and main:
        print(warning, file=sys.stderr)
    if procs is not None:
        distributed.init(procs)
    try:
        loaded = load_model(info, device=device, dtype=args.dtype, device_map=args.device_map,
                            max_memory=max_memory)
        stats = execute(prepared, loaded, args.out, options, shard=shard, procs=procs,
                        start=start)
    finally:
        if procs is not None:
            distributed.finish()
    if main:
        what = f"part {shard} of a run of " if shard else ""
        print(
            f"wrote {what}{stats.rows} rows of {stats.suites} suites to {args.out}: "
            f"{stats.unique} unique inputs ({stats.resumed} resumed, {stats.computed} computed"
            + (f" on rank 0 of {procs.world}" if procs else "")
            + f") in {stats.seconds:.1f}s, {stats.rows_per_second:.0f} rows/s"
        )
    return 0
