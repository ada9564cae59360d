"""``consistency-bench convert-becel``: BECEL prediction arrays to a prediction file."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_predictions_out


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``convert-becel`` command."""
    parser = subparsers.add_parser(
        "convert-becel",
        help="convert prediction arrays in BECEL's layout to a prediction file",
        description="Turn a BECEL-style JSON of prediction arrays (original_preds + "
        "paraphrase_preds, transitive_preds + originated_preds, ...) into a JSONL prediction "
        "file for one suite.",
    )
    parser.add_argument("json", help="BECEL prediction arrays (JSON)")
    parser.add_argument("--suite", required=True, help="suite the arrays belong to")
    add_data(parser)
    add_predictions_out(parser, "JSONL prediction file to write")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Convert."""
    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.predictions.becel_arrays import convert_file

    check_output_file(args.out, inputs=(args.json,))
    count = convert_file(args.json, args.suite, args.data, args.out)
    print(f"wrote {count} predictions for {args.suite} to {args.out}")
    return 0
