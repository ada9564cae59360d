"""``export-lm-eval`` and ``convert-lm-eval``: lm-evaluation-harness in, predictions out."""

from __future__ import annotations

import argparse
import sys

from consistency_bench.arguments import add_data, add_predictions_out, add_suites


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``export-lm-eval`` and ``convert-lm-eval``."""
    export = subparsers.add_parser(
        "export-lm-eval",
        help="write lm-evaluation-harness task YAMLs (one per suite, group consistency_bench)",
        description="Write one lm-eval multiple_choice task per built suite "
        "(consistency_bench_<suite>) and the group consistency_bench, with the prompts and "
        "verbalisers predict uses. Run them with: lm_eval --model hf --model_args "
        "pretrained=MODEL --include_path TASKDIR --tasks consistency_bench --log_samples "
        "--output_path OUT; then convert-lm-eval OUT.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_data(export)
    export.add_argument("--out", required=True, metavar="TASKDIR",
                        help="folder for the task YAMLs (lm_eval --include_path)")
    add_suites(export, "suites to export (default: every built suite)")
    export.add_argument("--hub", default=None, metavar="ORG/NAME",
                        help="load the published dataset from the Hub instead of --data")
    export.add_argument("--dataset-revision", metavar="SHA",
                        help="with --hub: the dataset commit the tasks pin (default: main, "
                        "resolved to its commit SHA through the Hub at export time)")
    export.add_argument("--overwrite", action="store_true",
                        help="replace a non-empty --out folder that is not an earlier export")
    export.add_argument("--generative", action="store_true",
                        help="write generate_until variants (consistency_bench_gen_*, group "
                        "consistency_bench_gen) for chat models: the prompt asks for one label "
                        "word, a strict answer filter; run with lm_eval --model "
                        "local-chat-completions --apply_chat_template")
    export.add_argument("--fewshot-seed", type=int, default=0,
                        help="order of each few-shot pool, as predict --fewshot-seed: with "
                        "lm_eval --num_fewshot K both routes show the same K demonstrations")
    export.set_defaults(func=run_export)

    convert = subparsers.add_parser(
        "convert-lm-eval",
        help="turn lm-eval --log_samples output into a prediction file",
        description="Read lm-eval samples of consistency_bench_* tasks (an --output_path "
        "folder or samples_*.jsonl files), check each suite's sha256 against the built "
        "folder, that every sample's document is the suite row it names and that every row "
        "is covered, and write a prediction file.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    convert.add_argument("paths", nargs="+", metavar="PATH",
                         help="lm-eval --output_path folder(s) or samples_*.jsonl files")
    add_data(convert, "built suite folder the tasks were exported from")
    add_predictions_out(convert)
    convert.add_argument("--length-norm", choices=("chars",), default=None,
                         help="divide log-likelihoods by the choice length (lm-eval acc_norm)")
    convert.set_defaults(func=run_convert)


def run_export(args: argparse.Namespace) -> int:
    """Write the task YAMLs."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.lm_eval.export_tasks import export_tasks

    if args.dataset_revision and not args.hub:
        raise ConfigError("--dataset-revision applies to --hub exports only")
    written = export_tasks(args.data, args.out, args.suites, args.hub, args.overwrite,
                           seed=args.fewshot_seed, revision=args.dataset_revision,
                           log=lambda line: print(line, file=sys.stderr),
                           generative=args.generative)
    group = "consistency_bench_gen" if args.generative else "consistency_bench"
    print(f"wrote {len(written) - 1} lm-eval tasks and the group {group} to {args.out}",
          file=sys.stderr)
    return 0


def run_convert(args: argparse.Namespace) -> int:
    """Convert samples to a prediction file."""
    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.lm_eval.convert_samples import convert_samples, input_files

    # folders are searched for the output by identity (samples files found inside them too)
    check_output_file(args.out, inputs=(*args.paths, *input_files(args.paths)))
    counts = convert_samples(args.paths, args.data, args.out, args.length_norm,
                             log=lambda line: print(line, file=sys.stderr))
    print(f"wrote {sum(counts.values())} rows of {len(counts)} suites to {args.out}",
          file=sys.stderr)
    return 0
