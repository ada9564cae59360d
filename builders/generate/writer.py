"""Write generated suites as a Hub-style folder (Parquet + suites.json + README card).

Same layout as ``builders/export.py``, so ``datasets.load_dataset(folder, config)`` reads it.
Manifest entries add ``verified`` (false until ratings are imported) and ``generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from consistency_bench.bench.io.manifest import MANIFEST, SPLIT, parquet_path, read_manifest
from consistency_bench.builders.card.render import count_test_items
from consistency_bench.builders.generate.pipeline import GenerateConfig, GeneratedSuite
from consistency_bench.builders.schema import features_for
from consistency_bench.builders.suite import write as suite_write
from consistency_bench.builders.suite.write import count_variants
from consistency_bench.builders.table_io import contract_table, write_parquet

MAIN_METRIC = {
    "semantic": ("tau_sem", False), "negational": ("tau_neg", False),
    "symmetric": ("tau_sym", False), "transitive": ("tau_trn", False),
    "additive": ("tau_add", False),
}
VERIFY_RULE = {
    "semantic": "keep when the mean similarity rating (1-5) is >= 4",
    "negational": "keep when the mean similarity rating (1-5) is <= 2",
    "transitive": "keep when at least two ratings say the rule holds (rating 1)",
}


def write_suite(root: Path, features, suite: GeneratedSuite, entry_extra: dict) -> dict:
    """Write one suite's Parquet file; return its manifest entry."""
    table = contract_table(features, suite.rows, suite.name)
    digest = write_parquet(table, parquet_path(root, suite.name))
    metric, higher = MAIN_METRIC[suite.kind]
    return {
        "family": "generated",
        "task": entry_extra["task"],
        "kind": suite.kind,
        "version": "0.0.0-candidate",
        "label_names": entry_extra["label_names"],
        "main_metric": metric,
        "higher_is_better": higher,
        "rows": len(suite.rows),
        "groups": len({r["group"] for r in suite.rows}),
        "test_items": count_test_items({"kind": suite.kind, "variants": count_variants(
            suite.rows), "groups": len({r["group"] for r in suite.rows})}),
        "variants": count_variants(suite.rows),
        "expected_size": None,
        "sha256": digest,
        "path": f"{suite.name}/{SPLIT}.parquet",
        "sources": [{"path": entry_extra["source"], "md5": entry_extra["source_sha256"][:32],
                     "url": ""}],
        "verified": not suite.needs_verification,
        "verification": (f"unverified candidates: {VERIFY_RULE[suite.kind]}"
                         if suite.needs_verification else "rule-based; no human check needed"),
        "generator": entry_extra["generator"],
    }


def write_folder(out: str | Path, config: GenerateConfig, suites: Sequence[GeneratedSuite],
                 source: str, source_sha256: str, rules: dict | None = None) -> dict[str, dict]:
    """Write ``suites`` into ``out`` (merging an existing manifest) with manifest and card."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(root) if (root / MANIFEST).is_file() else {}
    for suite in suites:
        features = features_for(config.task, suite.extras)
        extra = {
            "task": config.name, "label_names": list(config.labels), "source": source,
            "source_sha256": source_sha256,
            "generator": {
                "task_type": config.task_type.name, "columns": list(config.columns),
                "negation_style": config.negation_style, "seed": config.seed,
                "antonyms": (rules or {}).get("antonyms", ""), "notes": suite.notes,
            },
        }
        manifest[suite.name] = write_suite(root, features, suite, extra)
    save_manifest(root, manifest)
    return manifest


def save_manifest(root: Path, manifest: dict[str, dict]) -> None:
    """Write suites.json and the card (with the verification status of each suite)."""
    manifest = dict(sorted(manifest.items()))
    suite_write.save_manifest(root, manifest, card_suffix=verification_section(manifest))


def verification_section(manifest: dict[str, dict]) -> str:
    """Card section listing which generated suites are still unverified candidates."""
    generated = {n: e for n, e in manifest.items() if e.get("family") == "generated"}
    if not generated:
        return ""
    lines = ["", "## Generated suites: verification status", "",
             "Made by `consistency-bench generate` (BECEL section 3.2 rules). **Unverified** "
             "suites are machine-made candidates that people have not rated yet; do not report "
             "scores on them as BECEL-equivalent.", "",
             "| config | status | how it is verified |", "| --- | --- | --- |"]
    for name, e in generated.items():
        status = "verified" if e.get("verified") else "**UNVERIFIED**"
        lines.append(f"| `{name}` | {status} | {e.get('verification', '')} |")
    return "\n".join(lines) + "\n"


