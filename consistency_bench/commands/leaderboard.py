"""``consistency-bench leaderboard``: rank the stored submissions and render the leaderboard."""

from __future__ import annotations

import argparse
import sys

from consistency_bench.arguments import add_data, add_site, add_submissions


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``leaderboard`` command."""
    parser = subparsers.add_parser(
        "leaderboard",
        help="rank submissions; write Markdown, HTML, PNG heatmap and plots, and JSON",
        description="Rank the stored submissions and write the site (leaderboard.md, "
        "index.html, heatmap.png, plots/accuracy-consistency.png, plots/profile.png, "
        "leaderboard.json, each entry's meta.yaml) into a temporary "
        "folder that replaces --out only when every file is written. An unreadable entry is "
        "skipped with a warning naming its file.",
    )
    add_submissions(parser)
    add_site(parser, "site folder; the files an earlier run wrote there are replaced, any other "
             "file is kept; a non-empty folder that is not an earlier site is refused without "
             "--overwrite", flag="--out")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty --out that is not an earlier leaderboard "
                        "(its other files are kept)")
    add_data(
        parser,
        "built suite folder: when given, every entry is scored again from its stored "
        "predictions and refused (named, not ranked) when its predictions hash or any stored "
        "score differs; the per-unit outcomes give paired tests between neighbours (McNemar or "
        "paired bootstrap) and 95%% rank intervals (paired bootstrap over shared units). What "
        "scoring an entry again gives is cached in SUBMISSIONS/.verified-cells/ and reused "
        "while the entry's predictions, the suites, the parameters and the code are unchanged",
        default=None,
    )
    parser.add_argument("--profile", metavar="ENTRY",
                        help="entry whose per-kind profile plots/profile.png draws beside the "
                        "#1 of 'all suites' (default: the next row of that view)")
    parser.add_argument("--explorer-groups", type=int, default=None, metavar="N",
                        help="inconsistent groups sampled per entry and suite for the page's "
                        "explorer (with --data; default 10; 0: no explorer)")
    parser.add_argument("--no-cache", action="store_true",
                        help="with --data: score every entry again, ignoring (and not "
                        "writing) the verified-cells cache; the site is the same")
    parser.set_defaults(func=run)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Rank and render (:func:`consistency_bench.leaderboard.webpage.build_site.build_site`)."""
    from consistency_bench.leaderboard.webpage.build_site import build_site

    site = build_site(args.submissions, args.out, args.data, overwrite=args.overwrite,
                      warn=_warn, cache=not args.no_cache, profile=args.profile,
                      explorer_groups=args.explorer_groups)
    print(f"{site.entries} entries, {site.suites} suites; wrote {len(site.files)} files to "
          f"{site.out}")
    if site.recomputed is not None:
        n = len(site.recomputed)
        print(f"scored again: {n} {'entry' if n == 1 else 'entries'}; the others were "
              "verified from the cache")
    return 0
