"""Print a fixed sample of generated NLI transitive rows for judging by hand (docs/generate.md).

Input: the SNLI test split of the corpus mirror (``becel/snli/test.tsv``). ``nli_transitive``
derives rows from rows sharing a premise; for each rule every ``k``-th derived row is
printed (``--n`` per rule) with its premise P, H, Z and the constraint.

    PYTHONPATH=. .venv/bin/python benchmarks/transitive_sample.py --corpora ../shared/corpora
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", default="../shared/corpora")
    parser.add_argument("--n", type=int, default=15)
    parser.add_argument("--offset", type=int, default=0, help="first row printed, per rule")
    args = parser.parse_args()

    from consistency_bench.builders.generate.logical import Pair, nli_transitive

    path = Path(args.corpora) / "becel/snli/test.tsv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    pairs = [Pair(i, r["premise"], r["hypothesis"], int(r["label"])) for i, r in enumerate(rows)
             if r["label"] in ("0", "1", "2")]
    premise = {p.row: p.text for p in pairs}
    derived = nli_transitive(pairs, ("entailment", "neutral", "contradiction"))
    for rule in sorted({d.rule for d in derived}):
        chosen = [d for d in derived if d.rule == rule]
        step = max(1, len(chosen) // args.n)
        print(f"## {rule}: {len(chosen)} rows from {len(pairs)} pairs, every {step}th printed")
        for number, d in enumerate(chosen[args.offset::step][: args.n], start=1):
            print(f"{number}\tP: {premise[d.first]}\n\tH: {d.text}\n\tZ: {d.text_pair}\t"
                  f"{d.constraint}")


if __name__ == "__main__":
    main()
