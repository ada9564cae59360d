"""``consistency-bench reproduce``: run an entry's recorded model again on a sample of its rows."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_submissions

#: Exit code of a reproduction that ran and failed (2 is a refusal: nothing was written).
FAILED = 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``reproduce`` command."""
    from consistency_bench.bench.reproduce.sample import DEFAULT_GROUPS

    parser = subparsers.add_parser(
        "reproduce",
        help="run an entry's recorded model again on a seeded sample of groups and compare",
        description="Read the entry's run.json, check that meta.yaml names the recorded model, "
        "run the recorded model (or baseline) with the recorded settings on a seeded sample of "
        "groups per suite (every variant of a sampled group) on this machine, compare labels "
        "and probabilities with the stored predictions and write reproduction.json into the "
        "entry. Exit 0: passed; 1: failed (figures written); 2: refused, nothing written (no "
        "run record, a served model, the weights or training data not here). Thresholds: "
        "docs/maintain.md, Reproduction.",
    )
    parser.add_argument("name", metavar="NAME", help="entry name (folder under --submissions)")
    add_submissions(parser)
    add_data(parser, "built suite folder holding the entry's suites (same sha256)")
    parser.add_argument("--groups-per-suite", type=int, default=DEFAULT_GROUPS, metavar="N",
                        help="groups sampled per suite (every row of each)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample of groups")
    parser.add_argument("--model", default=None, metavar="NAME_OR_PATH",
                        help="a local copy of the recorded weights (default: the recorded Hub "
                        "id at its commit, or the recorded folder); its weight files must "
                        "hash to the recorded sha256")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: auto)")
    parser.add_argument("--sources", metavar="DIR", default=None,
                        help="baselines: the source mirror with their training data (default: "
                        "the download cache, downloading what is missing)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Reproduce one entry and print one line of figures."""
    from consistency_bench.leaderboard.reproduce.rerun import reproduce_entry
    from consistency_bench.leaderboard.reproduce.shown import summary_line

    outcome = reproduce_entry(args.name, args.submissions, args.data,
                              groups=args.groups_per_suite, seed=args.seed, model=args.model,
                              device=args.device, sources=args.sources)
    print(f"{outcome.report.get('entry', args.name)}: {summary_line(outcome.report)}; wrote "
          f"{outcome.path}")
    return 0 if outcome.passed else FAILED
