"""``consistency-bench submit`` and ``rescore``: store scored submissions for the leaderboard."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_dry_run, add_submissions


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``submit`` and ``rescore`` commands."""
    parser = subparsers.add_parser(
        "submit",
        help="validate, score and store a prediction file as a leaderboard entry",
        description="Score PREDICTIONS against the built suites and store it under "
        "submissions/<slug>/ (predictions.jsonl.gz, meta.yaml, results.json). Writes are "
        "atomic and serialised with a file lock.",
    )
    parser.add_argument("predictions", help="prediction file (JSONL, CSV or Parquet)")
    parser.add_argument("--name", required=True, help="entry name (slugged: a-z 0-9 . _ -)")
    parser.add_argument("--meta", required=True, metavar="META.yaml",
                        help="model, revision, license, link, contact [, parameters, date, notes]")
    add_data(parser)
    add_submissions(parser)
    parser.add_argument("--replace", action="store_true", help="overwrite an existing entry")
    parser.add_argument("--run-record", metavar="RUN.json", default=None,
                        help="the run record to store as the entry's run.json (default: "
                        "PREDICTIONS.run.json beside the file, written by predict or baseline, "
                        "if there is one); an entry without one is not reproducible")
    parser.add_argument("--variant", metavar="TEXT",
                        help="what differs from a stored entry of the same model and revision "
                             "(e.g. '5-shot, chat template'); stored as meta.yaml's variant. "
                             "Without it such an entry is refused, as is one whose predictions "
                             "are byte-identical to a stored entry's")
    parser.add_argument("--hub", metavar="ORG/LEADERBOARD",
                        help="instead of storing the entry, validate it the same way and open a "
                             "pull request adding requests/<slug>/ (predictions.jsonl.gz, "
                             "meta.yaml) to this leaderboard dataset repo; prints its URL. "
                             "Token: HF_TOKEN or `hf auth login`")
    add_dry_run(parser, "with --hub: validate and list the pull request, send nothing")
    parser.set_defaults(func=run_submit)

    parser = subparsers.add_parser(
        "rescore",
        help="rescore every submission (after a suite version change) and say what changed",
        description="Rescore every stored entry's predictions against the built suites and "
        "print each change (score, CI, content hash, version, suites added or removed). Every "
        "entry is rescored before anything is written: a corrupt entry stops the run and "
        "changes nothing.",
    )
    add_data(parser, "built suite folder to score against")
    add_submissions(parser)
    add_dry_run(parser, "report changes, write nothing")
    parser.set_defaults(func=run_rescore)


def run_submit(args: argparse.Namespace) -> int:
    """Store one submission, or with ``--hub`` open a pull request with it."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.scoring.results_json import arguments, invalid_warning

    if args.hub:
        return run_submit_hub(args)
    if args.dry_run:
        raise ConfigError("--dry-run needs --hub (a local submit has no dry run)")
    from consistency_bench.leaderboard.submissions.storage import submit

    sub = submit(
        args.predictions, name=args.name, meta_path=args.meta, root=args.submissions,
        data_dir=args.data, replace=args.replace, arguments=arguments(args),
        run_record=args.run_record,
        variant=args.variant,
    )
    warning = invalid_warning(sub.results, args.predictions)
    if warning:
        print(warning)
    suites = sub.results.get("suites", {})
    from consistency_bench.leaderboard.reproduce.run_records import RUN

    record = ("with its run record" if (sub.path / RUN).is_file()
              else "no run record: not reproducible")
    print(f"stored {sub.path} ({len(suites)} suites scored, "
          f"{len(sub.results.get('skipped', {}))} skipped; {record})")
    return 0


def run_submit_hub(args: argparse.Namespace) -> int:
    """Validate the submission as a local submit does, then open a pull request."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.leaderboard.hub.pull_requests import submit_request

    if args.replace:
        raise ConfigError("--replace is for the local submissions folder; a pull request "
                          "replaces nothing (ask the maintainers to remove an entry)")
    if args.run_record:
        raise ConfigError("--run-record is for a local submit; with --hub the record beside "
                          "the prediction file (PREDICTIONS.run.json) is sent")
    submit_request(args.predictions, name=args.name, meta_path=args.meta, data_dir=args.data,
                   repo_id=args.hub, dry_run=args.dry_run, variant=args.variant)
    return 0


def run_rescore(args: argparse.Namespace) -> int:
    """Rescore all submissions."""
    from consistency_bench.leaderboard.submissions.rescore import rescore

    changes = rescore(args.submissions, args.data, dry_run=args.dry_run)
    for c in changes:
        print(f"{c.slug}\t{c.suite}\t{c.what}\t{c.before} -> {c.after}")
    print(f"{len(changes)} change(s)" + (" (dry run, nothing written)" if args.dry_run else ""))
    return 0
