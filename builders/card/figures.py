"""Figures the dataset card states about the built rows, measured from the Parquet files.

The card (``builders/card/render.py``) prints these figures as constants of
``builders/card/data.py``; ``tests/test_card.py`` measures them again with the functions
below from a fresh build and fails when a constant no longer matches the rows. ``python -m
consistency_bench.builders.card.figures DIR``
prints every figure of a built folder (the command behind the numbers in docs/).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path


def _rows(root: Path, config: str, columns: list[str]) -> list[dict]:
    # local: ``import consistency_bench.builders.card.figures`` stays light
    import pyarrow.parquet as pq

    return pq.read_table(root / config / "test.parquet", columns=columns).to_pylist()


def _pbsmt_outputs(root: Path, config: str) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """``(source, replaced, output)`` tokens of each transformed row of a PBSMT config.

    The source is what the system translated
    (``consistency_bench.builders.salad.pbsmt.suite_rows.pbsmt_pair``: the
    premise, or the first half of an SST-2 sentence), lower-cased and tokenized as the build
    does; ``replaced`` is the text the output replaces (the hypothesis; SST-2: the whole
    sentence); the output is the transformed row's replaced text, tokenized the same way.
    """
    from consistency_bench.builders.salad.lexical import transform as lexical
    from consistency_bench.builders.salad.pbsmt.suite_rows import pbsmt_pair
    from consistency_bench.builders.salad.sources import Record

    rows = _rows(root, config, ["group", "variant", "text", "text_pair", "label"])
    originals = {r["group"]: r for r in rows if r["variant"] == "original"}
    for row in rows:
        if row["variant"] != "pbsmt":
            continue
        orig = originals[row["group"]]
        source, target = pbsmt_pair(Record(0, orig["text"], orig["text_pair"], orig["label"]))
        pair = orig["text_pair"] is not None
        replaced = target if pair else lexical.tokenize(orig["text"], True)
        yield source, replaced, lexical.tokenize(row["text_pair"] if pair else row["text"], True)


def pbsmt_permutations(root: Path, config: str) -> tuple[int, int]:
    """``(outputs that are a permutation of their source's tokens, outputs)`` of a PBSMT config.

    Source and output as :func:`_pbsmt_outputs` reads them.
    """
    same = total = 0
    for source, _, output in _pbsmt_outputs(root, config):
        total += 1
        same += sorted(output) == sorted(source)
    return same, total


def pbsmt_overlap(root: Path, config: str) -> dict[str, int]:
    """How much of a PBSMT config's outputs comes from the source the system translated.

    Source and output as :func:`_pbsmt_outputs` reads them. Returns integer counts:
    ``outputs``; ``tokens`` (output tokens) and ``from_source`` (those found among the
    source's tokens); ``permutations`` (outputs that are a permutation of the source);
    ``mostly_source`` (outputs with at least 90% of their tokens found in the source and at
    least 80% of its length: the issue 21 audit's figure).
    """
    out = dict.fromkeys(("outputs", "tokens", "from_source", "permutations",
                         "mostly_source"), 0)
    for source, _, output in _pbsmt_outputs(root, config):
        seen = set(source)
        found = sum(w in seen for w in output)
        out["outputs"] += 1
        out["tokens"] += len(output)
        out["from_source"] += found
        out["permutations"] += sorted(output) == sorted(source)
        out["mostly_source"] += (found >= 0.9 * len(output)
                                 and len(output) >= 0.8 * len(source))
    return out


def pbsmt_degenerate(root: Path, config: str) -> dict[str, int]:
    """Degenerate outputs of a PBSMT config (``consistency_bench.builders.salad.degenerate``), by reason.

    Returns ``outputs``, ``degenerate`` (all reasons) and one count per reason (``short``,
    ``function words``, ``source run``); source, replaced text and output as
    :func:`_pbsmt_outputs` reads them.
    """  # noqa: E501
    from consistency_bench.builders.salad.degenerate import FUNCTION, SHORT, SOURCE_RUN, degenerate

    out = dict.fromkeys(("outputs", "degenerate", SHORT, FUNCTION, SOURCE_RUN), 0)
    for source, replaced, output in _pbsmt_outputs(root, config):
        out["outputs"] += 1
        reason = degenerate(output, source, replaced)
        if reason is not None:
            out["degenerate"] += 1
            out[reason] += 1
    return out


def reversed_pairs(root: Path, config: str) -> tuple[int, int]:
    """``(merged groups whose reverse order is also a group, groups)`` of an additive config."""
    rows = _rows(root, config, ["group", "variant", "source_row"])
    parts: dict[str, dict[str, int]] = {}
    for row in rows:
        parts.setdefault(row["group"], {})[row["variant"]] = row["source_row"]
    pairs = {(p["first"], p["second"]) for p in parts.values()}
    return sum((b, a) in pairs for a, b in pairs), len(parts)


def label_share(root: Path, config: str, variant: str, label: int) -> tuple[int, int]:
    """``(rows of ``variant`` with gold ``label``, rows of ``variant``)`` of a config."""
    rows = _rows(root, config, ["variant", "label"])
    labels = Counter(r["label"] for r in rows if r["variant"] == variant)
    return labels[label], sum(labels.values())


def transitive_order(root: Path, config: str, label: str) -> tuple[int, int, int]:
    """How the derived rows of one released SNLI label order their two hypotheses.

    ``label`` is the constraint of the released label (``not:entailment`` for label 3,
    ``is:contradiction`` for label 2). A derived row's antecedents are the two released rows
    in ``originated_idx`` order; the result is ``(rows whose text is the first antecedent's
    hypothesis and text_pair the second's, the same with whitespace stripped, rows)``.
    """
    rows = _rows(root, config, ["id", "variant", "text", "text_pair", "antecedent_ids",
                                "constraint"])
    hypothesis = {r["id"]: r["text_pair"] for r in rows if r["variant"] == "source"}
    derived = [r for r in rows if r["variant"] == "transitive" and r["constraint"] == label]
    exact = stripped = 0
    for row in derived:
        first, second = (hypothesis[i] for i in row["antecedent_ids"])
        exact += row["text"] == first and row["text_pair"] == second
        stripped += row["text"].strip() == first.strip() and (
            row["text_pair"].strip() == second.strip())
    return exact, stripped, len(derived)


def rows_per_group(root: Path, config: str) -> set[int]:
    """The distinct numbers of rows per group of a config."""
    rows = _rows(root, config, ["group"])
    return set(Counter(r["group"] for r in rows).values())


def measure(root: Path) -> dict[str, object]:
    """Every figure above for the configs the card talks about (those present in ``root``)."""
    present = {p.parent.name for p in root.glob("*/test.parquet")}
    out: dict[str, object] = {}
    for config in ("mnli_salad_pbsmt", "snli_salad_pbsmt", "sst2_salad_pbsmt"):
        if config in present:
            out[f"permutations:{config}"] = pbsmt_permutations(root, config)
            out[f"overlap:{config}"] = pbsmt_overlap(root, config)
            out[f"degenerate:{config}"] = pbsmt_degenerate(root, config)
    for config in ("sst2_additive", "ag_news_additive"):
        if config in present:
            out[f"reversed:{config}"] = reversed_pairs(root, config)
    if "sst2_additive" in present:
        out["positive:sst2_additive"] = label_share(root, "sst2_additive", "merged", 1)
    if "snli_transitive" in present:
        for label in ("not:entailment", "is:contradiction"):
            out[f"first_hypothesis_first:snli_transitive:{label}"] = transitive_order(
                root, "snli_transitive", label)
    if "mnli_calm" in present:
        out["rows_per_group:mnli_calm"] = sorted(rows_per_group(root, "mnli_calm"))
    return out


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1])), indent=1))
