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
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (also transformers' and the Hub's)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Predict (:func:`bench.predict.predict`) and print a summary line."""
    from bench.predict import PredictRequest, predict

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
