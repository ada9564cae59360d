"""``publish``, ``publish-suites`` and ``publish-results``: push to the Hugging Face Hub."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_dry_run, add_site, add_submissions

TOKEN_NOTE = ("Token: HF_TOKEN or the stored login (`hf auth login`); never printed. "
              "HF_ENDPOINT selects another Hub.")


def _parser(subparsers, name: str, help: str, description: str) -> argparse.ArgumentParser:
    return subparsers.add_parser(
        name, help=help, description=f"{description} {TOKEN_NOTE}",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``publish``, ``publish-suites`` and ``publish-results``."""
    _add_publish(subparsers)
    _add_publish_suites(subparsers)
    _add_publish_results(subparsers)


def _add_publish(subparsers: argparse._SubParsersAction) -> None:
    """Register ``publish``."""
    parser = _parser(
        subparsers, "publish",
        "push the leaderboard data to a dataset repo (one commit) and the page to a Space",
        "Push the leaderboard (card with the table, leaderboard.json, index.html, heatmap, "
        "each entry's meta.yaml, results.json and predictions.jsonl.gz) to a dataset repo in "
        "one commit; with --space, then push the page to a static Space in one commit.",
    )
    parser.add_argument("--repo", required=True, metavar="ORG/NAME",
                        help="dataset repo of the leaderboard (created when missing)")
    add_site(parser, "output folder of `consistency-bench leaderboard`")
    add_submissions(parser, "submissions folder whose entries are published")
    parser.add_argument("--space", metavar="ORG/NAME",
                        help="also push the page to this static Space (created when missing); "
                             "it links to --repo")
    parser.add_argument("--suites-repo", metavar="ORG/NAME",
                        help="dataset repo of the suites (publish-suites), linked from the "
                             "Space card")
    add_dry_run(parser)
    parser.add_argument("--model-card", metavar="PATH",
                        help="also write one entry's scores into this local model card's "
                             "model-index metadata (needs --entry)")
    parser.add_argument("--entry", metavar="SLUG", help="entry whose scores go into --model-card")
    add_data(parser, "built suite folder the entries were scored on: also publish the "
             "'details' config (each entry's suite rows with its answers, probabilities and "
             "a consistent flag per group); without it no details are sent", default=None)
    parser.set_defaults(func=run_publish)


def _add_publish_suites(subparsers: argparse._SubParsersAction) -> None:
    """Register ``publish-suites``."""
    parser = _parser(
        subparsers, "publish-suites",
        "push the built suites and eval.yaml so load_dataset(ORG/NAME, config) works",
        "Push a built suite folder (card, suites.json, every Parquet file) plus a generated "
        "eval.yaml (one Hub Eval Results task per suite) to a dataset repo in one commit. "
        "Every Parquet file is checked against suites.json's sha256 before anything is sent. "
        "Unchanged files are not sent again.",
    )
    parser.add_argument("--repo", required=True, metavar="ORG/NAME",
                        help="dataset repo of the suites (created when missing)")
    add_data(parser, "built suite folder (output of `consistency-bench build`)")
    parser.add_argument("--evaluation-framework", default=None, metavar="NAME",
                        help="evaluation_framework written into eval.yaml: a name the Hub "
                        "lists (consistency_bench.leaderboard.hub.eval_results.HUB_FRAMEWORKS); left out by default, as "  # noqa: E501
                        "neither consistency-bench nor lm-evaluation-harness is listed")
    add_dry_run(parser)
    parser.set_defaults(func=run_publish_suites)


def _add_publish_results(subparsers: argparse._SubParsersAction) -> None:
    """Register ``publish-results``."""
    parser = _parser(
        subparsers, "publish-results",
        "open a pull request adding an entry's scores to a model repo (.eval_results)",
        "Open a pull request on the model repo that adds "
        ".eval_results/consistency-bench_<setup>.yaml: one Hub Eval Results entry per scored "
        "suite, valued by consistent_accuracy_cc, pointing at the benchmark dataset published "
        "by `publish-suites`. An entry that is degenerate or incomplete on a suite is refused "
        "unless --include-flagged.",
    )
    parser.add_argument("--entry", required=True, metavar="SLUG",
                        help="submission whose results are published")
    parser.add_argument("--model", required=True, metavar="ORG/MODEL",
                        help="model repo on the Hub that gets the pull request")
    parser.add_argument("--dataset", required=True, metavar="ORG/NAME",
                        help="benchmark dataset repo (where publish-suites put eval.yaml)")
    parser.add_argument("--dataset-revision", metavar="SHA",
                        help="git revision of the benchmark dataset the scores refer to")
    parser.add_argument("--setup", required=True, choices=("classifier", "plain", "chat"),
                        help="how the model was run: a classification head, or a causal LM "
                        "with a plain prompt or its chat template (file name and notes)")
    parser.add_argument("--num-fewshot", type=int, default=0, metavar="K",
                        help="few-shot demonstrations of the run (causal LMs)")
    parser.add_argument("--length-norm", choices=("none", "chars", "tokens"), default="none",
                        help="length normalisation of the run (causal LMs)")
    parser.add_argument("--force", action="store_true",
                        help="publish although --model differs from the entry's meta.yaml "
                        "'model' (only when the entry really evaluates that model)")
    parser.add_argument("--include-flagged", action="store_true",
                        help="publish suites the leaderboard flags degenerate (the flag goes "
                        "into notes) and an entry incomplete on some suites")
    parser.add_argument("--leaderboard-url", metavar="URL",
                        help="source.url of every result (default: the benchmark dataset's "
                        "page, where the Hub shows its leaderboard)")
    add_submissions(parser, "submissions folder holding SLUG/results.json")
    add_data(parser, "built suite folder that was published: refuse results scored on other "
             "files, leave out suites it lacks", default=None)
    parser.add_argument("--model-card", metavar="PATH",
                        help="your copy of the model's README.md: the pull request also "
                             "replaces README.md with it plus this entry's model-index "
                             "(the local file is not changed)")
    add_dry_run(parser)
    parser.set_defaults(func=run_publish_results)


def run_publish(args: argparse.Namespace) -> int:
    """Publish the leaderboard data (dataset repo) and, with ``--space``, the page (Space)."""
    import tempfile

    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.leaderboard.publish.commit import check_repo_id
    from consistency_bench.leaderboard.publish.model_results import write_model_card
    from consistency_bench.leaderboard.publish.steps import plan_publish, read_results

    with tempfile.TemporaryDirectory(prefix="cb-details-") as details:
        plans = plan_publish(args.site, args.submissions, args.repo, space=args.space,
                             suites_repo=args.suites_repo, data=args.data,
                             details_dir=details if args.data else None)
        if not args.data:
            print("note: no --data: the 'details' config is not published")
        if args.model_card:
            if not args.entry:
                raise ConfigError("--model-card needs --entry SLUG (the submission to take "
                                  "scores)")
            results = read_results(args.submissions, args.entry)
            if args.dry_run:
                print(f"would write model-index for {args.entry!r} into {args.model_card}")
            else:
                write_model_card(args.model_card, results, args.entry, check_repo_id(args.repo))
                print(f"wrote model-index for {args.entry!r} into {args.model_card}")
        for plan in plans:
            _go(plan, args.dry_run)
    return 0


def run_publish_suites(args: argparse.Namespace) -> int:
    """Publish the built suites with their eval.yaml."""
    from consistency_bench.leaderboard.publish.commit import check_repo_id
    from consistency_bench.leaderboard.publish.plans import plan_suites

    plan = plan_suites(args.data, check_repo_id(args.repo), framework=args.evaluation_framework)
    return _go(plan, args.dry_run, show=("eval.yaml",))


def run_publish_results(args: argparse.Namespace) -> int:
    """Open a pull request with an entry's Eval Results on the model repo."""
    from consistency_bench.leaderboard.hub.eval_results import Setup
    from consistency_bench.leaderboard.publish.steps import plan_entry_results

    setup = Setup(args.setup, args.num_fewshot, args.length_norm)
    plan, skipped = plan_entry_results(
        args.entry, args.model, args.dataset, setup, submissions=args.submissions,
        dataset_revision=args.dataset_revision, data=args.data, model_card=args.model_card,
        source_url=args.leaderboard_url, include_flagged=args.include_flagged, force=args.force,
    )
    if skipped:
        print(f"left out {len(skipped)} suite(s): "
              + "; ".join(f"{s}: {why}" for s, why in sorted(skipped.items())))
    return _go(plan, args.dry_run, show=(setup.path,))


def _go(plan, dry_run: bool, show: tuple[str, ...] = ()) -> int:
    from consistency_bench.leaderboard.publish.commit import execute

    if dry_run:
        print("\n".join(plan.describe()))
        for path in show:
            print(f"--- {path} ---")
            print(plan.files[path].decode("utf-8"), end="")
        print("dry run: nothing sent")
        return 0
    execute(plan)
    return 0
