"""``consistency-bench generate``: candidate consistency suites from any corpus.

Two modes: generate (``--data ... --out DIR``) writes candidate suites, rating sheets for the
ones people must verify, and a quality report; ``--import-ratings FILE --out DIR`` applies
filled-in rating sheets (see docs/generate.md).
"""

from __future__ import annotations

import argparse

from consistency_bench.bench.errors import ConfigError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``generate`` command."""
    parser = subparsers.add_parser(
        "generate",
        help="generate candidate consistency suites from a corpus (BECEL rules)",
        description="Generate negational, symmetric, transitive, additive (and, with a local "
        "paraphrase model, semantic) suites from a CSV/TSV/JSONL file or Hub dataset; or, with "
        "--import-ratings, keep the human-verified candidates.",
    )
    parser.add_argument("--data", help="local .csv/.tsv/.jsonl file or Hub dataset id")
    parser.add_argument("--split", default="test", help="split of a Hub dataset (default: test)")
    parser.add_argument("--task-type", choices=["nli", "paraphrase", "qa", "wic", "single"],
                        help="what the input columns are (sets the rules that apply)")
    parser.add_argument("--columns", help="input columns, comma-separated, in task-type order "
                        "(nli: premise,hypothesis; paraphrase: s1,s2; qa: question,passage; "
                        "wic: s1,s2,word[,start1,end1,start2,end2]; single: text)")
    parser.add_argument("--label-column", default="label", help="column with the gold label")
    parser.add_argument("--labels", help="label names in index order, comma-separated")
    parser.add_argument("--types", default="negational",
                        help="comma-separated: semantic,negational,symmetric,transitive,additive")
    parser.add_argument("--name", help="suite prefix and task name (default: file stem)")
    parser.add_argument("--out", required=True,
                        help="output folder: new, empty, or a suite folder (suites.json) the new "
                        "suites are merged into; an existing suite of the same name needs "
                        "--overwrite")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace suites of the same name in --out (never registered suites)")
    parser.add_argument("--negation-style", choices=["full", "release"], default="full",
                        help="'full': does not / did not; 'release': doesn't / didn't (BECEL)")
    parser.add_argument("--conceptnet", metavar="DB", help="local conceptnet-lite database")
    parser.add_argument("--conceptnet-assertions", metavar="CSV",
                        help="build --conceptnet DB from this local assertions file first")
    parser.add_argument("--no-wordnet", action="store_true", help="no WordNet antonym fallback")
    parser.add_argument("--paraphraser", metavar="MODEL_DIR",
                        help="local transformers seq2seq model (semantic sets)")
    parser.add_argument("--paraphrase-prefix", default="", help="text before each input")
    parser.add_argument("--additive-size", type=int, help="pairs to keep, >= 1 (default: all)")
    parser.add_argument("--reference", help="file whose texts (first --columns column) set the "
                        "additive length threshold (BECEL: training data; default: --data)")
    parser.add_argument("--seed", type=int, default=0, help="seed of sampling (>= 0)")
    parser.add_argument("--import-ratings", metavar="CSV",
                        help="apply filled-in rating sheets to the suites in --out")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Generate suites (:func:`consistency_bench.builders.generate.generate_run.generate_suites`), or import ratings."""  # noqa: E501
    if args.import_ratings:
        from consistency_bench.builders.generate.verify import apply_ratings

        for suite, counts in apply_ratings(args.out, args.import_ratings).items():
            print(f"{suite}: kept {counts['kept']}, rejected {counts['rejected']}, unrated "
                  f"(dropped) {counts['unrated_dropped']}")
        return 0
    missing = [f"--{n.replace('_', '-')}" for n in ("data", "task_type", "columns", "labels")
               if not getattr(args, n)]
    if missing:
        raise ConfigError(f"generate needs {', '.join(missing)} (or --import-ratings)")
    from consistency_bench.builders.generate.generate_run import GenerateRequest, generate_suites

    outcome = generate_suites(GenerateRequest(
        data=args.data, task_type=args.task_type, columns=args.columns, labels=args.labels,
        out=args.out, types=args.types, name=args.name, split=args.split,
        label_column=args.label_column, overwrite=args.overwrite,
        negation_style=args.negation_style, conceptnet=args.conceptnet,
        conceptnet_assertions=args.conceptnet_assertions, wordnet=not args.no_wordnet,
        paraphraser=args.paraphraser, paraphrase_prefix=args.paraphrase_prefix,
        additive_size=args.additive_size, reference=args.reference, seed=args.seed,
    ))
    for suite in outcome.suites:
        line = f"{suite.name:<28} {suite.rows:>7} rows"
        if suite.sheet is not None:
            line += f"  UNVERIFIED: rate {suite.to_rate} candidates in {suite.sheet}"
        print(line)
    print(f"report: {outcome.report}")
    return 0
