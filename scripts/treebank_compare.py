"""Compare the word-salad tokenizer (``consistency_bench.builders.salad.treebank``) with NLTK's, text by text.

Tokenizes every distinct text of the word-salad sources (MNLI dev matched, SNLI validation
and test, SST-2 GLUE train and dev, MRPC validation: every field of every row) with NLTK's
``TreebankWordTokenizer`` and with :func:`consistency_bench.builders.salad.treebank.tokenize`, and
prints the
number of texts, the CPU seconds of each and the texts whose tokens differ. Usage::

    python scripts/treebank_compare.py --sources ../shared/corpora
"""  # noqa: E501

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

FILES = ("becel/snli/validation.tsv", "becel/snli/test.tsv", "sst2/glue_train.tsv",
         "sst2/glue_dev.tsv", "becel/mrpc/validation.tsv")


def texts_of(sources: Path) -> list[str]:
    """Every distinct field of every row of the word-salad sources, in file order."""
    texts: list[str] = []
    with open(sources / "mnli/dev_matched.generative-nli.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            texts += [row["premise"], row["hypothesis"]]
    for name in FILES:
        with open(sources / name, encoding="utf-8") as handle:
            for line in handle:
                texts += line.rstrip("\n").split("\t")
    return list(dict.fromkeys(texts))


def main() -> None:
    """Print the comparison."""
    from nltk.tokenize import TreebankWordTokenizer

    from consistency_bench.builders.salad.treebank import tokenize

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=Path, required=True)
    texts = texts_of(parser.parse_args().sources)
    nltk = TreebankWordTokenizer()
    start = time.process_time()
    reference = [nltk.tokenize(text) for text in texts]
    middle = time.process_time()
    ours = [tokenize(text) for text in texts]
    end = time.process_time()
    differ = [t for t, a, b in zip(texts, reference, ours, strict=True) if a != b]
    print(f"{len(texts):,} texts; NLTK {middle - start:.2f} s CPU, ours {end - middle:.2f} s "
          f"CPU ({(middle - start) / (end - middle):.1f}x); {len(differ)} differ")
    for text in differ[:20]:
        print(repr(text))


if __name__ == "__main__":
    main()
