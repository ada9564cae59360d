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

import pyarrow as pa
import pyarrow.parquet as pq

from bench import __version__
from bench.atomic import atomic_path, write_text
from bench.errors import DataError, SourceUnavailableError
from bench.manifest import MANIFEST, SPLIT, parquet_path, read_manifest
from bench.sources import SOURCES, SourceResolver
from builders.suite import Row, SuiteSpec


def rows_to_table(spec: SuiteSpec, rows: Sequence[Row]) -> pa.Table:
    """Arrow table of ``rows`` with the suite's features (HF metadata included)."""
    schema = spec.features.arrow_schema
    columns = list(spec.features)
    for number, row in enumerate(rows):
        if set(row) != set(columns):
            missing, extra = set(columns) - set(row), set(row) - set(columns)
            raise DataError(
                f"suite {spec.name}: row {number} ({row.get('id')!r}) does not follow the row "
                f"contract: missing {sorted(missing)}, unexpected {sorted(extra)}"
            )
    return pa.Table.from_pylist(list(rows), schema=schema)


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


def build_suite(spec: SuiteSpec, resolver: SourceResolver, root: Path) -> BuiltSuite:
    """Build one suite's rows and write its Parquet file under ``root``."""
    rows = list(spec.build(resolver))
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise DataError(f"suite {spec.name}: duplicate row ids")
    table = rows_to_table(spec, rows)
    digest = write_parquet(table, parquet_path(root, spec.name))
    variants: dict[str, int] = {}
    for row in rows:
        variants[row["variant"]] = variants.get(row["variant"], 0) + 1
    groups = len({r["group"] for r in rows})
    return BuiltSuite(spec, len(rows), groups, digest, dict(sorted(variants.items())))


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
    from builders.card import render_card  # local: card rendering needs the full manifest

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
    manifest = dict(sorted(manifest.items()))
    payload = {"harness_version": __version__, "suites": manifest}
    write_text(root / MANIFEST, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    write_text(root / "README.md", render_card(manifest))
    return manifest
