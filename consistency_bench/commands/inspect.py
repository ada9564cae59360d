"""``consistency-bench inspect``: list the groups where a model contradicts itself."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data
from consistency_bench.bench.scorers.params import KNOWN_PARAMS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``inspect`` command."""
    parser = subparsers.add_parser(
        "inspect",
        help="list the groups where the model is inconsistent, most confident first",
        description="Read a prediction file (or a stored entry folder, submissions/NAME) and "
        "list, per suite, the groups where the model is inconsistent by the suite's own "
        "definition (negational: the same answer on the original and its negation; "
        "semantic: different answers on paraphrases; symmetric: the order changed the "
        "answer; transitive: the inferred relation violated; additive: the combined item "
        "lost its label; CALM: the format changed the answer; word salad: the original "
        "answer kept on a salad, not declined; coherence: the sub-span answers contradict "
        "the right answer on the whole; docs/metrics.md), with the texts of every variant, "
        "gold labels, answers and probabilities, sorted by the confidence of the "
        "contradiction.",
    )
    parser.add_argument("source", metavar="PREDICTIONS_OR_ENTRY",
                        help="prediction file, or a stored entry folder (submissions/NAME)")
    add_data(parser)
    parser.add_argument("--suite", action="append", default=[], metavar="SUITE",
                        help="only this suite (repeatable; default: every suite covered)")
    parser.add_argument("--kind", action="append", default=[], metavar="KIND",
                        help="only suites of this metric kind (repeatable): semantic, "
                        "negational, symmetric, transitive, additive, calm, salad, coherence, "
                        "coherence_theta")
    parser.add_argument("--label", action="append", default=[], metavar="LABEL",
                        help="only groups with this gold label (repeatable)")
    parser.add_argument("--limit", type=int, default=20, metavar="N",
                        help="groups listed per suite; 0 lists all")
    parser.add_argument("--format", choices=("text", "json", "csv"), default="text",
                        help="output format (json and csv keep every text whole)")
    parser.add_argument("--all", action="store_true", dest="include_wrong",
                        help="also list the consistent but wrong groups, after the "
                        "inconsistent ones")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="scoring parameter as for `score` (moves thresholds); known: "
                        + ", ".join(KNOWN_PARAMS))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Inspect and print."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.inconsistent.formats import FORMATS
    from consistency_bench.bench.inconsistent.inspect import InspectRequest, inspect_predictions
    from consistency_bench.bench.scorers.params import parse_params

    if args.limit < 0:
        raise ConfigError(f"--limit {args.limit}: must be >= 0 (0 lists all)")
    request = InspectRequest(
        source=args.source, data=args.data, suites=tuple(args.suite), kinds=tuple(args.kind),
        labels=tuple(args.label), limit=args.limit or None, include_wrong=args.include_wrong,
        params=parse_params(args.param))
    print(FORMATS[args.format](inspect_predictions(request)), end="")
    return 0
