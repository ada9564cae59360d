"""Writing one built suite and the folder's manifest and card (:mod:`consistency_bench.builders.export`).

A suite's rows as its Parquet file (contract columns, :func:`write_parquet`), its
``suites.json`` entry, and the folder's ``suites.json`` and dataset card.
"""  # noqa: E501

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from consistency_bench.bench import __version__
from consistency_bench.bench.io.manifest import MANIFEST, SPLIT, parquet_path, read_manifest
from consistency_bench.bench.io.write import write_text
from consistency_bench.bench.registries.source_files import SOURCES, SourceResolver
from consistency_bench.builders.card.render import count_test_items, render_card, split_num_bytes
from consistency_bench.builders.freshness import code_version
from consistency_bench.builders.suite.spec import Row, SuiteSpec
from consistency_bench.builders.table_io import contract_table, write_parquet


def rows_to_table(spec: SuiteSpec, rows: Sequence[Row]) -> pa.Table:
    """Arrow table of a registered suite's rows (see :func:`contract_table`)."""
    return contract_table(spec.features, rows, spec.name)


def count_variants(rows: Sequence[Row]) -> dict[str, int]:
    """Rows per variant, sorted by variant name."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["variant"]] = counts.get(row["variant"], 0) + 1
    return dict(sorted(counts.items()))


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
    return write_suite(spec, list(spec.build(resolver)), root)


def write_suite(spec: SuiteSpec, rows: list[Row], root: Path) -> BuiltSuite:
    """Write a suite's rows as its Parquet file under ``root``."""
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
        "test_items": count_test_items({"kind": spec.kind, "groups": built.groups,
                                        "variants": built.variants}),
        "variants": built.variants,
        "expected_size": spec.expected_rows,
        "sha256": built.sha256,
        "num_bytes": built.num_bytes,
        "parquet_bytes": built.parquet_bytes,
        "path": f"{spec.name}/{SPLIT}.parquet",
        "sources": [
            {"path": p, "md5": SOURCES[p].md5, "url": SOURCES[p].url} for p in spec.sources
        ],
        "code_version": code_version(),
    }


def _pools_current(root: Path) -> bool:
    """Whether the folder's few-shot pools were built by this code against its suites.

    ``consistency_bench.builders.fewshot``: same code version, and checked against the suites the
    folder holds
    now (``checked_against``); a folder whose every pool came out empty has none to check.
    """
    from consistency_bench.bench.prompting.demonstrations import read_pools
    from consistency_bench.builders.overlap.folder_texts import suites_digest

    pools = read_pools(root)
    digest = suites_digest(read_manifest(root))
    return bool(pools) and all(
        e.get("code_version") == code_version() and (root / e["path"]).is_file()
        and e.get("checked_against") == digest for e in pools.values())


def save_manifest(root: Path, manifest: dict[str, dict], card_suffix: str = "",
                  pools: dict[str, dict] | None = None) -> dict:
    """Write ``suites.json`` and the dataset card of a folder; return the sorted manifest.

    ``pools`` (``consistency_bench.builders.fewshot``) are written under ``"fewshot"``; None keeps
    the folder's.
    """
    from consistency_bench.bench.prompting.demonstrations import FOLDER, read_pools

    manifest = dict(sorted(manifest.items()))
    if pools is None and (root / MANIFEST).is_file():
        from consistency_bench.builders.fewshot import (
            recheck_pools,  # local: fewshot loads the catalogue
        )

        pools = recheck_pools(root, manifest, read_pools(root))  # the suites may have changed
    payload = {"harness_version": __version__, "suites": manifest}
    if pools:
        payload[FOLDER] = dict(sorted(pools.items()))
    write_text(root / MANIFEST, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    write_text(root / "README.md", render_card(manifest, root) + card_suffix)
    return manifest
