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
                        help="site folder; the files an earlier run wrote there are replaced, "
                        "any other file is kept; a non-empty folder that is not an earlier site "
                        "is refused without --overwrite")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty --out that is not an earlier leaderboard "
                        "(its other files are kept)")
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="built suite folder: when given, every entry is scored again from its stored "
        "predictions and refused (named, not ranked) when its predictions hash or any stored "
        "score differs; the per-unit outcomes give paired tests between neighbours (McNemar or "
        "paired bootstrap) and 95%% rank intervals (paired bootstrap over shared units)",
    )
    parser.set_defaults(func=run)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Rank and render."""
    from pathlib import Path

    from bench.atomic import atomic_dir, built_folder_of, check_output_dir
    from bench.errors import BenchError
    from leaderboard.ranking import Entry, rank
    from leaderboard.render import HEATMAP, HTML, JSON, MARKDOWN, render_all
    from leaderboard.stored import verify
    from leaderboard.submissions import load_all, site_record

    built = built_folder_of(Path(args.out) / "suites.json")  # itself or one above it
    if built is not None:  # a site there is a stray folder of the build (publish-suites)
        raise BenchError(f"--out {args.out}: is inside the built suite folder {built} (it "
                         "holds suites.json); name a folder outside it")
    out = check_output_dir(args.out, overwrite=args.overwrite, replaceable=JSON,
                           owner="leaderboard")
    subs = load_all(args.submissions, on_error=_warn)
    outcomes = None
    if args.data:
        outcomes, kept = {}, []
        for s in subs:
            try:
                outcomes[s.slug] = verify(s.results, s.path / "predictions.jsonl.gz", args.data,
                                          f"entry {s.slug!r} ({s.path})")
            except BenchError as exc:
                _warn(f"{exc}; not ranked")
                continue
            kept.append(s)
        subs = kept
    lb = rank([Entry(s.slug, s.results, s.meta) for s in subs], outcomes=outcomes)
    record = site_record(args.submissions, subs)
    legacy = (JSON, MARKDOWN, HTML, HEATMAP, "submissions/*/meta.yaml")  # sites before the record
    with atomic_dir(out, owner="leaderboard", record=record, legacy=legacy) as tmp:
        written = render_all(lb, tmp, args.submissions)
    print(f"{len(subs)} entries, {len(lb.suites)} suites; wrote {len(written)} files to {out}")
    return 0
