"""The human verification loop (BECEL section 3.2 used MTurk with three raters per item).

1. ``export_sheet`` writes a CSV per suite: one line per candidate with the original and the new
   text and empty ``rating_1..3`` columns.
2. People fill in the ratings (similarity 1-5 for semantic and negational candidates; 1 = the
   rule holds, 0 = it does not, for NLI transitive candidates).
3. ``apply_ratings`` keeps candidates by the paper's thresholds (mean >= 4 semantic, mean <= 2
   negational, at least two 1s transitive), drops unrated ones, rewrites the Parquet file and
   marks the suite verified in suites.json and the card.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from consistency_bench.bench.errors import ConfigError, SourceError
from consistency_bench.bench.io.manifest import parquet_path
from consistency_bench.bench.io.write import write_text
from consistency_bench.builders.card.render import count_test_items
from consistency_bench.builders.export import read_manifest
from consistency_bench.builders.generate.writer import save_manifest
from consistency_bench.builders.table_io import write_parquet

CANDIDATE_VARIANTS = {"semantic": "paraphrase", "negational": "negated",
                      "transitive": "transitive"}
RATERS = 3


def _shown(row: dict, other: dict | None) -> str:
    if other is None:
        return " || ".join(x for x in (row["text"], row["text_pair"]) if x)
    if row["text"] != other["text"]:
        return row["text"]
    return row["text_pair"] or ""


def sheet_rows(rows: list[dict], kind: str) -> list[dict]:
    """Rating-sheet lines of one suite's rows."""
    variant = CANDIDATE_VARIANTS[kind]
    by_id = {r["id"]: r for r in rows}
    originals = {r["group"]: r for r in rows if r["variant"] == "original"}
    out = []
    for row in rows:
        if row["variant"] != variant:
            continue
        if kind == "transitive":
            first, second = (by_id[i] for i in row["antecedent_ids"])
            original = (f"[1] {first['text']} || {first['text_pair']} "
                        f"[2] {second['text']} || {second['text_pair']}")
            new = f"{row['text']} || {row['text_pair']} (rule {row['rule']})"
        else:
            base = originals[row["group"]]
            original, new = _shown(base, row), _shown(row, base)
        line = {"id": row["id"], "kind": kind, "rule": row.get("rule") or row.get("tag", ""),
                "original": original, "new": new}
        line.update({f"rating_{i}": "" for i in range(1, RATERS + 1)})
        out.append(line)
    return out


def export_sheet(root: str | Path, suite: str, target: str | Path) -> int:
    """Write the rating sheet of ``suite`` to ``target`` (CSV); return the number of lines."""
    manifest = read_manifest(Path(root))
    if suite not in manifest:
        raise ConfigError(f"suite {suite!r} not in {root}/suites.json")
    kind = manifest[suite]["kind"]
    if kind not in CANDIDATE_VARIANTS:
        raise ConfigError(f"suite {suite!r} ({kind}) is rule-based and needs no rating sheet")
    rows = pq.read_table(parquet_path(Path(root), suite)).to_pylist()
    lines = sheet_rows(rows, kind)
    buffer = io.StringIO()
    fields = ["id", "kind", "rule", "original", "new", *[f"rating_{i}" for i in
                                                         range(1, RATERS + 1)]]
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(lines)
    write_text(target, buffer.getvalue())
    return len(lines)


def read_ratings(path: str | Path) -> dict[str, list[float]]:
    """Ratings per candidate id from a CSV with ``id`` and ``rating*`` columns.

    Wide (``rating_1..n`` on one line) and long (one ``rating`` per line, ids repeated) sheets
    both work; empty cells are skipped.
    """
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path}: ratings file not found")
    reader = csv.DictReader(path.read_text(encoding="utf-8").splitlines())
    columns = [c for c in (reader.fieldnames or []) if c.startswith("rating")]
    if "id" not in (reader.fieldnames or []) or not columns:
        raise SourceError(f"{path}: needs an 'id' column and at least one 'rating' column, got "
                          f"{reader.fieldnames}")
    ratings: dict[str, list[float]] = defaultdict(list)
    for record in reader:
        for column in columns:
            value = (record.get(column) or "").strip()
            if not value:
                continue
            try:
                number = float(value)
            except ValueError:
                number = float("nan")
            if not 0 <= number <= 5:
                raise SourceError(f"{path}:{reader.line_num}: field {column!r} value {value!r} "
                                  "is not a rating 0-5")
            ratings[record["id"]].append(number)
    return dict(ratings)


def keeps(kind: str, values: list[float]) -> bool:
    """The paper's acceptance rule for one candidate's ratings."""
    if not values:
        return False
    if kind == "semantic":
        return sum(values) / len(values) >= 4
    if kind == "negational":
        return sum(values) / len(values) <= 2
    if kind == "transitive":
        return sum(1 for v in values if v == 1) >= 2
    raise ConfigError(f"no rating rule for {kind!r}")


def apply_ratings(root: str | Path, ratings_path: str | Path) -> dict[str, dict]:
    """Filter every suite the ratings cover; return per suite kept / rejected / unrated counts."""
    root = Path(root)
    manifest = read_manifest(root)
    ratings = read_ratings(ratings_path)
    suites = defaultdict(dict)
    for rid, values in ratings.items():
        suite = rid.split("/", 1)[0]
        if suite not in manifest:
            raise SourceError(f"{ratings_path}: id {rid!r} names suite {suite!r}, which is not in "
                              f"{root}/suites.json")
        suites[suite][rid] = values
    summary = {}
    for suite, rated in sorted(suites.items()):
        entry = manifest[suite]
        kind = entry["kind"]
        if kind not in CANDIDATE_VARIANTS:
            raise SourceError(f"{ratings_path}: suite {suite!r} ({kind}) is not rated")
        table = pq.read_table(parquet_path(root, suite))
        rows = table.to_pylist()
        candidates = [r for r in rows if r["variant"] == CANDIDATE_VARIANTS[kind]]
        known = {r["id"] for r in candidates}
        unknown = sorted(set(rated) - known)
        if unknown:
            raise SourceError(f"{ratings_path}: id {unknown[0]!r} is not a candidate of {suite}")
        kept = {r["id"] for r in candidates if keeps(kind, rated.get(r["id"], []))}
        unrated = sum(1 for r in candidates if r["id"] not in rated)
        if kind == "transitive":
            needed = {a for r in candidates if r["id"] in kept for a in r["antecedent_ids"]}
            rows = [r for r in rows if r["id"] in kept or r["id"] in needed]
        else:
            groups = {r["group"] for r in candidates if r["id"] in kept}
            rows = [r for r in rows if r["group"] in groups]
        new = table.schema.empty_table().from_pylist(rows, schema=table.schema)
        entry["sha256"] = write_parquet(new, parquet_path(root, suite))
        entry["rows"], entry["groups"] = len(rows), len({r["group"] for r in rows})
        variants: dict[str, int] = {}
        for r in rows:
            variants[r["variant"]] = variants.get(r["variant"], 0) + 1
        entry["variants"] = dict(sorted(variants.items()))
        entry["test_items"] = count_test_items(entry)  # groups, or derived rows (transitive)
        entry["verified"] = True
        counts = {"kept": len(kept), "rejected": len(candidates) - len(kept) - unrated,
                  "unrated_dropped": unrated}
        entry["verification"] = (f"human-verified: {counts['kept']} kept, {counts['rejected']} "
                                 f"rejected by rating, {unrated} unrated dropped")
        summary[suite] = counts
    save_manifest(root, manifest)
    return summary
