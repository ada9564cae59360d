"""Write suites as a Hub-style dataset folder: Parquet per config, manifest and dataset card.

The folder is what ``datasets.load_dataset(folder, config)`` reads and what ``publish-suites``
pushes to the Hub. Output is deterministic: the same sources give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from bench import __version__
from bench.atomic import atomic_path, write_text
from bench.errors import DataError, SourceUnavailableError
from bench.manifest import MANIFEST, SPLIT, parquet_path, read_manifest
from bench.sources import SOURCES, SourceResolver
from builders.card import render_card, split_num_bytes
from builders.suite import Row, SuiteSpec


def contract_table(features: datasets.Features, rows: Sequence[Row], name: str) -> pa.Table:
    """Arrow table of ``rows`` with ``features`` (HF metadata included).

    Raises:
        DataError: A row lacks a column or has an unexpected one, or two rows share an id.

    """
    columns = set(features)
    for number, row in enumerate(rows):
        if set(row) != columns:
            missing, extra = columns - set(row), set(row) - columns
            raise DataError(
                f"suite {name}: row {number} ({row.get('id')!r}) does not follow the row "
                f"contract: missing {sorted(missing)}, unexpected {sorted(extra)}"
            )
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise DataError(f"suite {name}: duplicate row ids")
    return pa.Table.from_pylist(list(rows), schema=features.arrow_schema)


def rows_to_table(spec: SuiteSpec, rows: Sequence[Row]) -> pa.Table:
    """Arrow table of a registered suite's rows (see :func:`contract_table`)."""
    return contract_table(spec.features, rows, spec.name)


def count_variants(rows: Sequence[Row]) -> dict[str, int]:
    """Rows per variant, sorted by variant name."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["variant"]] = counts.get(row["variant"], 0) + 1
    return dict(sorted(counts.items()))


def write_parquet(table: pa.Table, target: Path) -> str:
    """Write ``table`` deterministically and atomically; return the file's sha256."""
    with atomic_path(target) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            row_group_size=65_536,
            write_statistics=False,
            store_schema=True,
        )
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    return digest


@dataclass(frozen=True)
class BuiltSuite:
    """What was written for one suite."""

    spec: SuiteSpec
    rows: int
    groups: int
    sha256: str
    variants: dict[str, int]
    num_bytes: int = 0  # what ``datasets`` records for the split (card.split_num_bytes)
    parquet_bytes: int = 0


def build_suite(spec: SuiteSpec, resolver: SourceResolver, root: Path) -> BuiltSuite:
    """Build one suite's rows and write its Parquet file under ``root``."""
    rows = list(spec.build(resolver))
    target = parquet_path(root, spec.name)
    digest = write_parquet(rows_to_table(spec, rows), target)
    groups = len({r["group"] for r in rows})
    return BuiltSuite(spec, len(rows), groups, digest, count_variants(rows),
                      split_num_bytes(target), target.stat().st_size)


def manifest_entry(built: BuiltSuite) -> dict:
    """The ``suites.json`` entry of a built suite."""
    spec = built.spec
    return {
        "family": spec.family,
        "task": spec.task,
        "kind": spec.kind,
        "version": spec.version,
        "label_names": list(spec.task_spec.label_names),
        "main_metric": spec.main_metric,
        "higher_is_better": spec.higher_is_better,
        "rows": built.rows,
        "groups": built.groups,
        "variants": built.variants,
        "expected_size": spec.expected_rows,
        "sha256": built.sha256,
        "num_bytes": built.num_bytes,
        "parquet_bytes": built.parquet_bytes,
        "path": f"{spec.name}/{SPLIT}.parquet",
        "sources": [
            {"path": p, "md5": SOURCES[p].md5, "url": SOURCES[p].url} for p in spec.sources
        ],
    }


def build_all(
    specs: Sequence[SuiteSpec],
    resolver: SourceResolver,
    out: str | os.PathLike,
    log: Callable[[str], None] = print,
    *,
    skip_unavailable: bool = False,
) -> dict[str, dict]:
    """Build ``specs`` into ``out``; merge them into an existing manifest; write the card.

    Suites already in ``out`` and not rebuilt are kept, so ``--suites`` can add to a folder.

    Args:
        specs: The suites to build, in order.
        resolver: Where source files come from.
        out: The dataset folder.
        log: Receives one line per suite.
        skip_unavailable: When building every suite: a suite whose source file is not available
            (offline, not in the mirror: QQP) is skipped with a logged reason instead of
            failing the build. Corrupt files still fail. Suites named explicitly should pass
            ``False`` so that the ``SourceUnavailableError`` reaches the user.

    """
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(root) if (root / MANIFEST).is_file() else {}
    for spec in specs:
        try:
            built = build_suite(spec, resolver, root)
        except SourceUnavailableError as exc:
            if not skip_unavailable:
                raise
            log(f"{spec.name:<24} skipped: {exc}")
            continue
        entry = manifest_entry(built)
        manifest[spec.name] = entry
        units = built.groups if spec.kind != "transitive" else built.variants.get("transitive")
        expected = spec.expected_rows
        note = ""
        if expected is not None and units != expected:
            note = f"  (paper: {expected}, difference {units - expected:+d}; see docs/)"
        log(f"{spec.name:<24} {built.rows:>7} rows {units:>7} test items{note}")
    return save_manifest(root, manifest)


def save_manifest(root: Path, manifest: dict[str, dict], card_suffix: str = "") -> dict:
    """Write ``suites.json`` and the dataset card of a folder; return the sorted manifest."""
    manifest = dict(sorted(manifest.items()))
    payload = {"harness_version": __version__, "suites": manifest}
    write_text(root / MANIFEST, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    write_text(root / "README.md", render_card(manifest, root) + card_suffix)
    return manifest
