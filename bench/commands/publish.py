"""``consistency-bench publish`` and ``publish-suites``: push to the Hugging Face Hub."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``publish`` and ``publish-suites``."""
    parser = subparsers.add_parser(
        "publish",
        help="push the rendered leaderboard as a dataset repo (one commit)",
        description="Push the leaderboard (results JSON, card with the table, HTML page, "
        "heatmap, each entry's metadata and results) in one commit. Token: HF_TOKEN or the "
        "stored login; never printed.",
    )
    parser.add_argument("--repo", required=True, metavar="ORG/NAME")
    parser.add_argument("--site", default="leaderboard/site", metavar="DIR",
                        help="output of `consistency-bench leaderboard`")
    parser.add_argument("--submissions", default="submissions", metavar="DIR")
    parser.add_argument("--dry-run", action="store_true", help="list operations, send nothing")
    parser.add_argument("--model-card", metavar="PATH",
                        help="also write one entry's scores into this model card's model-index")
    parser.add_argument("--entry", help="entry whose scores go into --model-card")
    parser.set_defaults(func=run_publish)

    parser = subparsers.add_parser(
        "publish-suites",
        help="push the built suites so load_dataset(ORG/NAME, config) works (one commit)",
    )
    parser.add_argument("--repo", required=True, metavar="ORG/NAME")
    parser.add_argument("--data", default="consistency-bench", metavar="DIR")
    parser.add_argument("--dry-run", action="store_true", help="list operations, send nothing")
    parser.set_defaults(func=run_publish_suites)


def run_publish(args: argparse.Namespace) -> int:
    """Publish the leaderboard."""
    from bench.errors import ConfigError
    from leaderboard.publish import check_repo_id, plan_leaderboard, write_model_card

    repo = check_repo_id(args.repo)
    if args.model_card:
        if not args.entry:
            raise ConfigError("--model-card needs --entry NAME (the submission to take scores)")
        results_path = Path(args.submissions) / args.entry / "results.json"
        if not results_path.is_file():
            raise ConfigError(f"{results_path}: no such submission")
        results = json.loads(results_path.read_text(encoding="utf-8"))
        if args.dry_run:
            print(f"would write model-index for {args.entry!r} into {args.model_card}")
        else:
            write_model_card(args.model_card, results, args.entry, repo)
            print(f"wrote model-index for {args.entry!r} into {args.model_card}")
    with tempfile.TemporaryDirectory() as tmp:
        plan = plan_leaderboard(args.site, args.submissions, repo, Path(tmp) / "README.md")
        return _go(plan, args.dry_run)


def run_publish_suites(args: argparse.Namespace) -> int:
    """Publish the built suites."""
    from leaderboard.publish import check_repo_id, plan_suites

    return _go(plan_suites(args.data, check_repo_id(args.repo)), args.dry_run)


def _go(plan, dry_run: bool) -> int:
    from leaderboard.publish import execute

    if dry_run:
        print("\n".join(plan.describe()))
        print("dry run: nothing sent")
        return 0
    execute(plan)
    return 0
