"""Test helpers: where the corpus mirror is; prediction files made from a built folder; a
Python snippet run in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pyarrow.parquet as pq

from consistency_bench.bench.io.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[1]
#: The local corpus mirror: ``../shared/corpora`` beside the repository, or
#: ``$CONSISTENCY_BENCH_TEST_CORPORA``.
CORPORA = Path(os.environ.get("CONSISTENCY_BENCH_TEST_CORPORA", ROOT.parent / "shared" / "corpora"))


def oracle_label(row: dict, label_names: list[str]) -> int:
    """The gold label, or for a row without one a label its constraint allows."""
    if row["label"] is not None:
        return row["label"]
    op, _, name = row["constraint"].partition(":")
    assert op == "not"
    return next(i for i, n in enumerate(label_names) if n != name)


def write_predictions(folder: Path, out: Path, suites: list[str], choose=oracle_label) -> Path:
    """A JSONL prediction file for every row of ``suites``, labels from ``choose``."""
    manifest = read_manifest(folder)
    with open(out, "w") as handle:
        for name in suites:
            names = manifest[name]["label_names"]
            for row in pq.read_table(folder / name / "test.parquet").to_pylist():
                handle.write(json.dumps({"id": row["id"], "label": choose(row, names)}) + "\n")
    return out


def python_stdout(code: str, *args: str, env: Mapping[str, str] | None = None) -> str:
    """The standard output of ``python -c code *args`` in a fresh interpreter.

    For what one process cannot show about itself (which modules an import pulls in, what
    happens before numpy is imported). The repository is on ``PYTHONPATH``; ``env`` (default:
    this process's environment) is the rest of the environment. A failure fails the test with
    the snippet's stderr.
    """
    environ = {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=environ, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def build_suites(corpora: Path, out: Path, suites: list[str]) -> Path:
    """Build the registered ``suites`` from the mirror ``corpora`` into ``out`` (no download)."""
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.catalog import get_suite
    from consistency_bench.builders.export import build_all

    build_all([get_suite(s) for s in suites], SourceResolver(corpora, download=False), out,
              log=lambda _: None)
    return out
