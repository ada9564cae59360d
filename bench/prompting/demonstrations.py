"""Few-shot demonstration pools of a built folder, and the demonstrations a seed picks.

A built folder ships one pool per prompt key (``consistency_bench.bench.prompting.prompts``:
``(family,
task)`` where the
family has its own prompt, else ``(None, task)``) as ``fewshot/<pool>.parquet``, listed under
``"fewshot"`` in ``suites.json`` (built by ``consistency_bench.builders.fewshot`` from training data
in the
mirror; docs/runner.md lists the sources). A suite whose prompt key has no pool has no
demonstrations: ``predict --num-fewshot K`` skips it with a message, and the lm-eval export
pins ``num_fewshot: 0`` for it.

Both routes pick the same demonstrations: :func:`seed_order` orders a pool by
``sha256(f"{seed}\\0{id}")`` and the first ``K`` rows of that order are the demonstrations
of every row of every suite that uses the pool. ``predict`` takes them directly;
``export-lm-eval`` writes the ordered pool as ``fewshot_config.samples`` with lm-eval's
``first_n`` sampler, which returns ``samples[:K]``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from consistency_bench.bench.errors import DataError

#: Folder of the pools inside a built folder; key of their entries in ``suites.json``.
FOLDER = "fewshot"
#: Columns a pool row carries (the template's columns plus provenance).
COLUMNS = ("id", "pool", "task", "text", "text_pair", "word", "label", "source_file",
           "source_row")


def pool_name(family: str | None, task: str) -> str:
    """File stem of the pool of prompt key ``(family, task)``: ``task`` or ``family_task``."""
    return task if family is None else f"{family}_{task}"


def prompt_key(family: str | None, task: str) -> tuple[str | None, str]:
    """The prompt-table key a suite uses (the family's own entry, else the task's)."""
    from consistency_bench.bench.prompting.prompts import PROMPTS

    return (family, task) if (family, task) in PROMPTS else (None, task)


def read_pools(root: str | Path) -> dict[str, dict]:
    """The ``"fewshot"`` entries of a built folder's ``suites.json`` (empty when absent)."""
    from consistency_bench.bench.io.json_input import load_json_file
    from consistency_bench.bench.io.manifest import MANIFEST

    manifest = load_json_file(Path(root) / MANIFEST)  # JsonFileError (a DataError)
    if not isinstance(manifest, dict):
        raise DataError(f"{Path(root) / MANIFEST}: not a valid suite manifest (expected an "
                        f"object, got {type(manifest).__name__})")
    return manifest.get(FOLDER, {})


def suite_pool(pools: Mapping[str, dict], entry: Mapping) -> str | None:
    """Name of the pool a suite (its ``suites.json`` entry) draws from, or None."""
    name = pool_name(*prompt_key(entry.get("family"), entry["task"]))
    return name if name in pools else None


def no_pool_reason(entry: Mapping) -> str:
    """Why a suite has no pool, for the per-suite message."""
    family, task = prompt_key(entry.get("family"), entry["task"])
    key = task if family is None else f"{family} {task}"
    return (f"no few-shot pool for {key} (no labelled row in the mirror that is not a test row "
            "of this folder's suites, exactly or as a near duplicate; docs/runner.md)")


def load_pool(root: str | Path, name: str, entry: Mapping) -> list[dict]:
    """The rows of pool ``name``, checked against its ``suites.json`` sha256.

    Raises:
        DataError: The file is missing or its bytes differ from the manifest's sha256.

    """
    import pyarrow.parquet as pq

    path = Path(root) / entry["path"]
    if not path.is_file():
        raise DataError(f"{path}: few-shot pool {name} is missing; rebuild the folder")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != entry["sha256"]:
        raise DataError(f"{path}: sha256 {digest} differs from suites.json's {entry['sha256']}; "
                        "rebuild the folder")
    return pq.read_table(path).to_pylist()


def seed_order(rows: Sequence[Mapping], seed: int) -> list[Mapping]:
    """``rows`` ordered by ``sha256(f"{seed}\\0{id}")``: the first K are the demonstrations."""
    return sorted(rows, key=lambda r: hashlib.sha256(f"{int(seed)}\0{r['id']}".encode()).digest())


def demonstrations(rows: Sequence[Mapping], k: int, seed: int, where: str) -> list[Mapping]:
    """The ``k`` demonstrations of a pool for ``seed`` (lm-eval ``first_n`` of :func:`seed_order`).

    Raises:
        DataError: The pool holds fewer than ``k`` rows.

    """
    if k <= 0:
        return []
    if len(rows) < k:
        raise DataError(f"--num-fewshot {k}: {where} has {len(rows)} demonstrations in its pool")
    return list(seed_order(rows, seed)[:k])
