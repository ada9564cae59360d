"""How the PBSMT word-salad rows come about, per suite: survivors and overlap with the source.

Builds the rows of ``<task>_salad_pbsmt`` in memory (as the build does, without the build
cache) and prints, per task, the evaluated records, the training records, each record's
outcome (``consistency_bench.builders.salad.pbsmt.suite_rows.outcome_of``: ``best``,
``n-best:<why>``,
``permutation``, ``copy``, ``empty``, ``short``, ``function words``, ``source run``), the kept
rows and the dropped ones, the overlap of the kept outputs with the source the system
translated (the figures of ``consistency_bench.builders.card.figures.pbsmt_overlap``) and the
degenerate kept
outputs by reason (``consistency_bench.builders.salad.degenerate``; ``degenerate_share`` of the kept
rows).
``--copy-penalty`` and ``--keep-unknown`` rebuild with another setting, to measure what each
one does; ``--nbest 3 --keep-degenerate`` makes the rows of version 2.0.0 (an n-best list of
the NLTK stack's 3 hypotheses, degenerate outputs kept), to measure what 3.0.0 changed.
Usage::

    python scripts/pbsmt_audit.py --sources ../shared/corpora [--tasks mnli snli sst2]
        [--copy-penalty W] [--keep-unknown] [--nbest N] [--keep-degenerate]

Prints one JSON line per task. Takes about as long as building the suites (one process).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.salad import degenerate
from consistency_bench.builders.salad.lexical import transform as lexical
from consistency_bench.builders.salad.pbsmt import decode as pbsmt_decode
from consistency_bench.builders.salad.pbsmt import phrase_table as pbsmt_train
from consistency_bench.builders.salad.pbsmt import suite_rows as pbsmt_rows
from consistency_bench.builders.salad.sources import Record


def audit(task: str, resolver: SourceResolver) -> dict[str, object]:
    """Outcome counts and overlap figures of ``<task>_salad_pbsmt`` (current settings)."""
    records, train = pbsmt_rows.pbsmt_inputs(task, resolver)
    counts: Counter = Counter()
    rows = []
    for part in pbsmt_rows.pbsmt_parts(task):
        rows += pbsmt_rows.part_rows(task, records, train, part, counts)
    out = dict.fromkeys(("tokens", "from_source", "permutations", "mostly_source"), 0)
    degenerate_kept: Counter = Counter()
    for _, (original, changed) in rows:
        record = Record(0, original["text"], original["text_pair"], original["label"])
        source, target = pbsmt_rows.pbsmt_pair(record)
        text = changed["text_pair"] if original["text_pair"] is not None else changed["text"]
        output = lexical.tokenize(text, True)
        replaced = target if record.text_pair is not None else lexical.tokenize(record.text, True)
        reason = degenerate.degenerate(output, source, replaced)
        if reason is not None:
            degenerate_kept[reason] += 1
        seen = set(source)
        found = sum(w in seen for w in output)
        out["tokens"] += len(output)
        out["from_source"] += found
        out["permutations"] += sorted(output) == sorted(source)
        out["mostly_source"] += found >= 0.9 * len(output) and len(output) >= 0.8 * len(source)
    kept = len(rows)
    target_tokens = target_found = 0  # the real texts the outputs replace, for comparison
    for record in records:
        source, target = pbsmt_rows.pbsmt_pair(record)
        seen = set(source)
        target_tokens += len(target)
        target_found += sum(w in seen for w in target)
    return {
        "suite": f"{task}_salad_pbsmt", "evaluated": len(records), "training": len(train),
        "outcomes": dict(sorted(counts.items())), "kept": kept, "dropped": len(records) - kept,
        "degenerate": dict(sorted(degenerate_kept.items())),
        "degenerate_share": round(sum(degenerate_kept.values()) / max(kept, 1), 4),
        "from_source": round(out["from_source"] / max(out["tokens"], 1), 4),
        "permutations": out["permutations"],
        "mostly_source": out["mostly_source"],
        "mostly_source_share": round(out["mostly_source"] / max(kept, 1), 4),
        "tokens_per_output": round(out["tokens"] / max(kept, 1), 2),
        "target_from_source": round(target_found / max(target_tokens, 1), 4),
        "tokens_per_target": round(target_tokens / max(len(records), 1), 2),
    }


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, set the decoder's settings and print one audit per task."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", required=True, help="local mirror of the corpora")
    parser.add_argument("--tasks", nargs="+", default=["mnli", "snli", "sst2"])
    parser.add_argument("--copy-penalty", type=float, default=pbsmt_train.COPY_PENALTY)
    parser.add_argument("--keep-unknown", action="store_true",
                        help="pass unknown words through instead of dropping them")
    parser.add_argument("--nbest", type=int, default=pbsmt_decode.NBEST,
                        help="hypotheses of the last stack (2.0.0: 3)")
    parser.add_argument("--keep-degenerate", action="store_true",
                        help="keep degenerate outputs (as 2.0.0 did)")
    args = parser.parse_args(argv)
    # the settings are default arguments and module names; replaced for this process only
    pbsmt_train.train.__defaults__ = (args.copy_penalty,)
    for function in (pbsmt_decode.translate, pbsmt_decode.translate_nbest):
        function.__defaults__ = (not args.keep_unknown,)
    pbsmt_decode.decode_nbest.__defaults__ = (pbsmt_decode.STACK_SIZE, args.nbest)
    if args.keep_degenerate:
        pbsmt_rows.degenerate = lambda *_: None
    resolver = SourceResolver(args.sources, download=False)
    for task in args.tasks:
        result = audit(task, resolver)
        result["settings"] = {"copy_penalty": args.copy_penalty,
                              "drop_unknown": not args.keep_unknown, "nbest": args.nbest,
                              "keep_degenerate": args.keep_degenerate}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
