"""``consistency-bench salad``: gradient-based word-salad configs for one model.

Drop, Repeat, Replace and CopyOne depend on the model under test (token importance =
embedding × gradient of its loss). This command loads the model, computes the importance of
every token of each requested task's evaluation split and writes ``<task>_salad_<transform>_
<name>`` configs into an existing (or new) suite folder, updating ``suites.json`` and the card.

The model is loaded with ``AutoModelForSequenceClassification`` / ``AutoTokenizer``
``.from_pretrained(PATH)`` (local paths only when ``HF_HUB_OFFLINE=1``). The model must have
been fine-tuned on the task, with the task's label order.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from consistency_bench.arguments import add_data, add_sources


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``salad`` command."""
    parser = subparsers.add_parser(
        "salad",
        help="build the model-specific gradient word-salad configs",
        description="Compute token importance with a model and write the gradient-based "
        "word-salad configs (drop, repeat, replace, copyone) into a suite folder.",
    )
    parser.add_argument("--model", required=True, metavar="PATH", help="fine-tuned model folder")
    parser.add_argument(
        "--suite", nargs="+", required=True, metavar="SUITE",
        help="<task>_salad_<drop|repeat|replace|copyone>, or <task>_salad_gradient for all four",
    )
    add_data(parser, "suite folder to write into", required=True)
    parser.add_argument("--name", help="model tag in the config names (default: folder name)")
    add_sources(parser)
    parser.add_argument(
        "--ratio", type=float, default=0.5, help="share r of the least important tokens",
    )
    parser.add_argument("--batch-size", type=int, default=16,
                        help="examples per gradient pass (>= 1)")
    parser.add_argument("--limit", type=int, help="only the first N examples, N >= 1 (quick runs)")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    parser.set_defaults(func=run)


def model_tag(name: str) -> str:
    """A config-name-safe tag: lower-case letters, digits and ``_``."""
    tag = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not tag:
        from bench.errors import ConfigError

        raise ConfigError(f"--name {name!r} has no letters or digits to make a config name")
    return tag


def parse_suites(names: list[str]) -> dict[str, list[str]]:
    """``{task: [transforms]}`` from ``--suite`` names (errors name the bad value)."""
    from bench.errors import ConfigError
    from bench.tasks import get_task
    from builders.salad.suites import GRADIENT, PAIR_ONLY, TASK_SOURCES

    plan: dict[str, list[str]] = {}
    for name in names:
        task, sep, transform = name.partition("_salad_")
        if not sep or task not in TASK_SOURCES or transform not in (*GRADIENT, "gradient"):
            raise ConfigError(
                f"--suite {name!r}: expected <task>_salad_<transform> with task in "
                f"{sorted(TASK_SOURCES)} and transform in {[*GRADIENT, 'gradient']}"
            )
        wanted = list(GRADIENT) if transform == "gradient" else [transform]
        pair = get_task(task).is_pair
        for item in wanted:
            if item in PAIR_ONLY and not pair:
                if transform != "gradient":
                    raise ConfigError(f"--suite {name!r}: {item} applies to pair tasks only")
                continue
            if item not in plan.setdefault(task, []):
                plan[task].append(item)
    return plan


def run(args: argparse.Namespace) -> int:
    """Compute importance, build the gradient configs, write them into ``--data``."""
    from bench.errors import ConfigError
    from bench.sources import SourceResolver
    from builders.export import build_all
    from builders.salad.gradient import replacement_vocabulary, token_importance, tokens_to_text
    from builders.salad.suites import gradient_specs, read_records

    if not 0 < args.ratio < 1:
        raise ConfigError(f"--ratio {args.ratio}: must lie strictly between 0 and 1")
    for flag, value in (("--batch-size", args.batch_size), ("--limit", args.limit)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} {value}: must be at least 1")
    plan = parse_suites(args.suite)
    model_path = Path(args.model)
    if not model_path.is_dir():
        raise ConfigError(f"--model {args.model!r}: not a model folder")
    tag = model_tag(args.name or model_path.resolve().name)
    model, tokenizer = load_model(model_path, args.device)
    resolver = SourceResolver(args.sources, download=not args.no_download)
    vocabulary = replacement_vocabulary(tokenizer)
    specs = []
    start = time.perf_counter()
    for task, transforms in plan.items():
        records = read_records(task, resolver)
        if args.limit is not None:
            records = records[: args.limit]
        if model.config.num_labels != _num_labels(task):
            raise ConfigError(
                f"--model {args.model}: {model.config.num_labels} labels, task {task} has "
                f"{_num_labels(task)}"
            )
        importances = token_importance(
            model, tokenizer, [r.text for r in records], [r.text_pair for r in records],
            [r.label for r in records], transform_pair=records[0].text_pair is not None
            if records else False, batch_size=args.batch_size,
        )
        specs += gradient_specs(
            task, transforms, records, importances, vocabulary,
            lambda tokens: tokens_to_text(tokenizer, tokens), tag, args.name or str(model_path),
            ratio=args.ratio,
        )
    build_all(specs, resolver, args.data)
    print(f"wrote {len(specs)} gradient configs into {args.data} in "
          f"{time.perf_counter() - start:.1f}s")
    return 0


def _num_labels(task: str) -> int:
    from bench.tasks import get_task

    return get_task(task).num_labels


def load_model(path: Path, device: str):
    """Load a sequence classifier and its tokenizer (the shared loader, ``bench.modeling``)."""
    from bench.errors import ConfigError
    from bench.modeling import load_classifier

    loaded = load_classifier(path, device=device)
    if loaded.is_seq2seq:
        raise ConfigError(f"{path}: word-salad gradients need a sequence classifier, "
                          "not a text-to-text model")
    return loaded.model, loaded.tokenizer
