"""``consistency-bench leaderboard``: rank the stored submissions and render the leaderboard."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``leaderboard`` command."""
    parser = subparsers.add_parser(
        "leaderboard",
        help="rank submissions; write Markdown, HTML, PNG heatmap and JSON",
        description="Rank the stored submissions and write the site (leaderboard.md, "
        "index.html, heatmap.png, leaderboard.json, each entry's meta.yaml) into a temporary "
        "folder that replaces --out only when every file is written. An unreadable entry is "
        "skipped with a warning naming its file.",
    )
    parser.add_argument("--submissions", default="submissions", metavar="DIR",
                        help="folder of stored entries")
    parser.add_argument("--out", default="leaderboard/site", metavar="DIR",
                        help="site folder; replaced when it holds an earlier leaderboard.json "
                        "(or with --overwrite), refused when it holds anything else")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a non-empty --out that is not an earlier leaderboard")
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="built suite folder: when given, per-unit outcomes are recomputed from the stored "
        "predictions, for paired tests between neighbours (McNemar or paired bootstrap) and "
        "95%% rank intervals (paired bootstrap over shared units)",
    )
    parser.set_defaults(func=run)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Rank and render."""
    from bench.atomic import atomic_dir, check_output_dir
    from bench.errors import BenchError
    from leaderboard.ranking import Entry, rank
    from leaderboard.render import JSON, render_all
    from leaderboard.submissions import load_all

    out = check_output_dir(args.out, overwrite=args.overwrite, replaceable=JSON)
    subs = load_all(args.submissions, on_error=_warn)
    outcomes = None
    if args.data:
        from bench.scoring import unit_outcomes

        outcomes = {}
        for s in list(subs):
            try:
                outcomes[s.slug] = unit_outcomes(s.path / "predictions.jsonl.gz", args.data)
            except BenchError as exc:
                _warn(f"{exc}; no paired tests for {s.slug}")
    lb = rank([Entry(s.slug, s.results, s.meta) for s in subs], outcomes=outcomes)
    with atomic_dir(out) as tmp:  # no page without its PNG and JSON
        written = render_all(lb, tmp, args.submissions)
    print(f"{len(subs)} entries, {len(lb.suites)} suites; wrote {len(written)} files to {out}")
    return 0
