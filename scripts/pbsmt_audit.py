"""How the PBSMT word-salad rows come about, per suite: survivors and overlap with the source.

Builds the rows of ``<task>_salad_pbsmt`` in memory (as the build does) and prints, per task,
the evaluated records, the training records, each record's outcome
(``builders.salad.suites.pbsmt_outcome``: ``best``, ``n-best``, ``permutation``, ``copy``,
``empty``) and the overlap of the kept outputs with the source the system translated (the
figures of ``builders.card_figures.pbsmt_overlap``). ``--copy-penalty`` and
``--keep-unknown`` rebuild with another setting, to measure what each one does. Usage::

    python scripts/pbsmt_audit.py --sources ../shared/corpora [--tasks mnli snli sst2]
        [--copy-penalty W] [--keep-unknown]

Prints one JSON line per task. Takes about as long as building the suites (one process).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from bench.sources import SourceResolver
from builders.salad import lexical, pbsmt
from builders.salad import suites as salad


def audit(task: str, resolver: SourceResolver) -> dict[str, object]:
    """Outcome counts and overlap figures of ``<task>_salad_pbsmt`` (current settings)."""
    records, train = salad.pbsmt_inputs(task, resolver)
    counts: Counter = Counter()
    rows = []
    for part in salad.pbsmt_parts(task):
        rows += salad.part_rows(task, records, train, part, counts)
    out = dict.fromkeys(("tokens", "from_source", "permutations", "mostly_source"), 0)
    for _, (original, changed) in rows:
        record = salad.Record(0, original["text"], original["text_pair"], original["label"])
        source, _ = salad.pbsmt_pair(record)
        text = changed["text_pair"] if original["text_pair"] is not None else changed["text"]
        output = lexical.tokenize(text, True)
        seen = set(source)
        found = sum(w in seen for w in output)
        out["tokens"] += len(output)
        out["from_source"] += found
        out["permutations"] += sorted(output) == sorted(source)
        out["mostly_source"] += found >= 0.9 * len(output) and len(output) >= 0.8 * len(source)
    kept = len(rows)
    target_tokens = target_found = 0  # the real texts the outputs replace, for comparison
    for record in records:
        source, target = salad.pbsmt_pair(record)
        seen = set(source)
        target_tokens += len(target)
        target_found += sum(w in seen for w in target)
    return {
        "suite": f"{task}_salad_pbsmt", "evaluated": len(records), "training": len(train),
        "outcomes": dict(sorted(counts.items())), "kept": kept,
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
    parser.add_argument("--copy-penalty", type=float, default=pbsmt.COPY_PENALTY)
    parser.add_argument("--keep-unknown", action="store_true",
                        help="pass unknown words through instead of dropping them")
    args = parser.parse_args(argv)
    # the settings are default arguments; replaced here for this process only
    pbsmt.train.__defaults__ = (args.copy_penalty,)
    for function in (pbsmt.translate, pbsmt.translate_nbest):
        function.__defaults__ = (not args.keep_unknown,)
    resolver = SourceResolver(args.sources, download=False)
    for task in args.tasks:
        result = audit(task, resolver)
        result["settings"] = {"copy_penalty": args.copy_penalty,
                              "drop_unknown": not args.keep_unknown}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
