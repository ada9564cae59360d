"""``consistency-bench generate``: candidate consistency suites from any corpus.

Two modes: generate (``--data ... --out DIR``) writes candidate suites, rating sheets for the
ones people must verify, and a quality report; ``--import-ratings FILE --out DIR`` applies
filled-in rating sheets (see docs/generate.md).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench.errors import ConfigError


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
    """Generate suites, or import ratings."""
    if args.import_ratings:
        from builders.generate.verify import apply_ratings

        for suite, counts in apply_ratings(args.out, args.import_ratings).items():
            print(f"{suite}: kept {counts['kept']}, rejected {counts['rejected']}, unrated "
                  f"(dropped) {counts['unrated_dropped']}")
        return 0
    missing = [f"--{n.replace('_', '-')}" for n in ("data", "task_type", "columns", "labels")
               if not getattr(args, n)]
    if missing:
        raise ConfigError(f"generate needs {', '.join(missing)} (or --import-ratings)")
    return _generate(args)


def check_names(name: str, kinds: list[str], out: Path, overwrite: bool) -> None:
    """Refuse suite names that are registered, or that exist in ``out`` without --overwrite.

    Raises:
        ConfigError: ``name`` is a registered task, a suite ``<name>_<kind>`` is a registered
            suite (whatever ``--overwrite`` says), ``out`` is a file or a non-empty folder that
            is not a suite folder, or a suite to write is already in ``out``.

    """
    from bench.atomic import check_output_dir
    from bench.manifest import MANIFEST, read_manifest
    from bench.tasks import TASKS
    from builders.catalog import SUITES

    if not name or not re.fullmatch(r"[a-z0-9][a-z0-9_]*", name):
        raise ConfigError(f"--name {name!r}: use lower-case letters, digits and '_'")
    suites = [f"{name}_{kind}" for kind in kinds]
    registered = [s for s in suites if s in SUITES]
    if name in TASKS or registered:
        clash = ", ".join(registered) or f"task {name!r}"
        raise ConfigError(
            f"--name {name!r}: collides with the registered {clash}; the official suites are "
            "never overwritten. Choose another --name"
        )
    check_output_dir(out, overwrite=overwrite, replaceable=MANIFEST)
    if (out / MANIFEST).is_file() and not overwrite:
        taken = sorted(set(suites) & set(read_manifest(out)))
        if taken:
            raise ConfigError(
                f"--out {out}: already holds {', '.join(taken)}; pass --overwrite to replace "
                "them, or choose another --name"
            )


def _generate(args: argparse.Namespace) -> int:
    from builders.generate.inputs import load_corpus
    from builders.generate.pipeline import GenerateConfig, generate, parse_list
    from builders.generate.report import render, summarise, to_json
    from builders.generate.tasktypes import get_task_type
    from builders.generate.verify import export_sheet
    from builders.generate.writer import write_folder

    task_type = get_task_type(args.task_type)
    labels, columns, kinds = (parse_list(x) for x in (args.labels, args.columns, args.types))
    name = args.name or re.sub(r"[^a-z0-9_]+", "_", Path(args.data).stem.lower()).strip("_")
    check_names(name, kinds, Path(args.out), args.overwrite)
    if args.additive_size is not None and args.additive_size < 1:
        raise ConfigError(f"--additive-size {args.additive_size}: must be at least 1 "
                          "(leave it out to keep every pair)")
    if args.seed < 0:
        raise ConfigError(f"--seed {args.seed}: must be >= 0")
    reference = None
    if args.reference:
        ref = load_corpus(args.reference, columns[:1], labels, label_column=args.label_column)
        reference = tuple(r.fields[columns[0]] for r in ref.records)
    conceptnet = args.conceptnet
    if args.conceptnet_assertions:
        if not conceptnet:
            raise ConfigError("--conceptnet-assertions needs --conceptnet DB (where to build it)")
        if not Path(conceptnet).exists():
            from builders.generate.antonyms import build_conceptnet_db

            build_conceptnet_db(args.conceptnet_assertions, conceptnet)
    config = GenerateConfig(
        name=name, task_type=task_type, labels=labels, columns=columns, kinds=kinds,
        negation_style=args.negation_style, conceptnet=conceptnet,
        wordnet=not args.no_wordnet, seed=args.seed, additive_size=args.additive_size,
        reference_texts=reference,
    )
    corpus = load_corpus(args.data, columns, labels, label_column=args.label_column,
                         split=args.split)
    paraphraser = None
    if "semantic" in kinds:
        from builders.generate.paraphrase import load_paraphraser

        paraphraser = load_paraphraser(args.paraphraser, args.paraphrase_prefix)
    suites = generate(config, corpus, paraphraser=paraphraser)
    antonyms = "+".join(x for x in ("conceptnet" if conceptnet else "",
                                    "" if args.no_wordnet else "wordnet") if x)
    out = Path(args.out)
    write_folder(out, config, suites, corpus.source, corpus.sha256, {"antonyms": antonyms})
    summaries = [summarise(s) for s in suites]
    from bench.atomic import write_text

    write_text(out / "reports" / f"{name}.md", render(summaries))
    write_text(out / "reports" / f"{name}.json", to_json(summaries))
    for suite in suites:
        line = f"{suite.name:<28} {len(suite.rows):>7} rows"
        if suite.needs_verification:
            sheet = out / "verification" / f"{suite.name}.csv"
            count = export_sheet(out, suite.name, sheet)
            line += f"  UNVERIFIED: rate {count} candidates in {sheet}"
        print(line)
    print(f"report: {out / 'reports' / f'{name}.md'}")
    return 0
