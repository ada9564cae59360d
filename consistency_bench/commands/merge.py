"""``consistency-bench merge-predictions``: join the part files of ``predict --shard i/N``."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_predictions_out


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``merge-predictions`` command."""
    parser = subparsers.add_parser(
        "merge-predictions",
        help="join the part files of predict --shard i/N into one prediction file",
        description="Check that the part files are parts 0..N-1 of one run (each once, the "
        "same model, options and suites' sha256, every row exactly once), check every row as "
        "score does against --data (the built folder the parts were predicted on), and write "
        "the prediction file, byte-identical to a single-process run (docs/runner.md).",
    )
    parser.add_argument("parts", nargs="+", metavar="PART", help="part files, in any order")
    add_data(parser, "built suite folder the parts were predicted on (rows are checked "
             "against it as score checks them)")
    add_predictions_out(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Merge (with the parts' run records, when they have them) and print a summary line."""
    from consistency_bench.bench.runrecord.merge import merge_with_record

    rows, record = merge_with_record(args.parts, args.out, args.data)
    note = (f"; run record {record}" if record
            else "; not every part has a run record, so none was written")
    print(f"wrote {rows} rows from {len(args.parts)} parts to {args.out}{note}")
    return 0
