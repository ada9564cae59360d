"""``consistency-bench leaderboard``: rank the stored submissions and render the leaderboard."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``leaderboard`` command."""
    parser = subparsers.add_parser(
        "leaderboard",
        help="rank submissions; write Markdown, HTML, PNG heatmap and JSON",
    )
    parser.add_argument("--submissions", default="submissions", metavar="DIR")
    parser.add_argument("--out", default="leaderboard/site", metavar="DIR")
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="built suite folder: when given, per-unit outcomes are recomputed from the stored "
        "predictions, for paired tests between neighbours (McNemar or paired bootstrap) and "
        "95%% rank intervals (paired bootstrap over shared units)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rank and render."""
    from leaderboard.ranking import Entry, rank
    from leaderboard.render import render_all
    from leaderboard.submissions import load_all

    subs = load_all(args.submissions)
    outcomes = None
    if args.data:
        from bench.scoring import unit_outcomes

        outcomes = {
            s.slug: unit_outcomes(s.path / "predictions.jsonl.gz", args.data) for s in subs
        }
    lb = rank([Entry(s.slug, s.results, s.meta) for s in subs], outcomes=outcomes)
    written = render_all(lb, args.out, args.submissions)
    print(f"{len(subs)} entries, {len(lb.suites)} suites; wrote {len(written)} files to {args.out}")
    return 0
