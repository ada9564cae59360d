"""How many of BECEL's released, human-verified negational rows the generator's rules reproduce.

For every row of ``becel/<task>/negational.tsv`` the original modified input (hypothesis /
sentence2 / question) is run through ``negate_doc`` (both styles) and the antonym rule
(WordNet; no ConceptNet database is available offline). A released row counts as reproduced
when one candidate equals the released text after lower-casing and collapsing whitespace.
Usage: ``nice -n 10 python benchmarks/generate_reproduction.py [CORPORA_DIR]``.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

from consistency_bench.builders.generate.antonyms import (
    ChainedAntonyms,
    WordNetAntonyms,
    antonym_candidates,
)
from consistency_bench.builders.generate.negation import Negated, load_parser, negate_doc

TASKS = {  # task -> (modified column, negated column)
    "snli": ("hypothesis", "hypothesis_neg"),
    "rte": ("sentence2", "sentence2_neg"),
    "mrpc": ("sentence2", "sentence2_neg"),
    "boolq": ("question", "question_neg"),
}


def norm(text: str) -> str:
    """Lower-cased, whitespace collapsed."""
    return " ".join(text.lower().split())


def loose(text: str) -> str:
    """``norm`` plus no space before punctuation (MRPC originals are tokenised: "prison .")."""
    return re.sub(r" ([.,!?;:'])", r"\1", norm(text)).replace(" n't", "n't")


def main() -> None:
    """Print the reproduction figures as JSON."""
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[2] / "shared"
                / "corpora")
    nlp = load_parser()
    antonyms = ChainedAntonyms([WordNetAntonyms()])
    results = {}
    start = time.perf_counter()
    for task, (column, negated) in TASKS.items():
        path = root / "becel" / task / "negational.tsv"
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        counts: Counter = Counter()
        reasons: Counter = Counter()
        docs = nlp.pipe([r[column] for r in rows], batch_size=64)
        for row, doc in zip(rows, docs, strict=True):
            tag, target = row["tag"], norm(row[negated])
            counts[f"{tag}:released"] += 1
            full, release = negate_doc(doc, "full"), negate_doc(doc, "release")
            if tag == "negation":
                if isinstance(full, Negated):
                    counts["negation:generated"] += 1
                    counts[f"negation:rule:{full.rule}"] += 1
                else:
                    reasons[full.reason.split(" (")[0]] += 1
                counts["negation:exact_full"] += isinstance(full, Negated) and norm(
                    full.text) == target
                counts["negation:exact_release"] += isinstance(release, Negated) and norm(
                    release.text) == target
                counts["negation:loose_release"] += isinstance(release, Negated) and loose(
                    release.text) == loose(row[negated])
            elif tag == "antonym":
                made, _ = antonym_candidates(doc, antonyms)
                counts["antonym:generated_any"] += bool(made)
                counts["antonym:exact_any"] += any(norm(c.text) == target for c in made)
                counts["antonym:loose_any"] += any(loose(c.text) == loose(row[negated])
                                                   for c in made)
        results[task] = {"counts": dict(sorted(counts.items())),
                         "negation_rejections": dict(reasons.most_common(6))}
    results["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
