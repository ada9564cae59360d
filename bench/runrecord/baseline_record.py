"""The run record of a ``baseline`` run: the deterministic recipe that made the predictions.

A baseline has no weights: it is its code (``bench/baselines/``), the training files it read
from the source mirror (each pinned by md5 in ``bench/data/sources.tsv``) and its seed. The
record names the baseline (``model.id`` ``baseline:NAME``; ``model.name`` the display name
of its packaged ``bench/baselines/meta/NAME.yaml``, which is what the entry's ``meta.yaml``
says), the sha256 of the baseline code, the seed and the source files with their md5.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

#: Prefix of a baseline's model id in a run record.
ID_PREFIX = "baseline:"
#: The code a baseline's predictions depend on (relative to the ``bench`` package).
CODE = ("baselines/*.py", "prompting/row_inputs.py", "registries/tasks.py",
        "scoring/contamination.py")


@cache
def code_sha256() -> str:
    """sha256 over the baseline code files (names and contents, sorted)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    missing = [pattern for pattern in CODE if not any(root.glob(pattern))]
    if missing:  # a moved module would silently drop out of the hash
        raise RuntimeError(f"baseline code files not found: {', '.join(missing)}")
    for path in sorted(p for pattern in CODE for p in root.glob(pattern)):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def display_name(name: str) -> str | None:
    """The ``model`` field of the baseline's packaged ``meta/NAME.yaml``, or None."""
    from consistency_bench.bench.io.safe_yaml import read_yaml_file

    path = Path(__file__).resolve().parents[1] / "baselines" / "meta" / f"{name}.yaml"
    if not path.is_file():
        return None
    data = read_yaml_file(path)
    value = data.get("model") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def baseline_record(name: str, *, seed: int, written: Mapping[str, int],
                    data_dir: str | os.PathLike, out: str | os.PathLike,
                    sources: Mapping[str, str | None], seconds: float | None = None) -> dict:
    """The run record of ``baseline NAME`` that wrote ``written`` (suite -> rows) to ``out``."""
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.bench.runrecord.environment import cpu_name, package_versions
    from consistency_bench.bench.runrecord.schema import new_record

    manifest = read_manifest(Path(data_dir))
    return new_record(
        mode="baseline",
        model={"id": f"{ID_PREFIX}{name}", "name": display_name(name), "source": "baseline",
               "revision": None, "commit": code_sha256(), "commit_source": "code-sha256",
               "weights_sha256": None},
        settings={"baseline": name, "seed": seed, "sources": dict(sorted(sources.items()))},
        suites=[{"name": suite, "sha256": manifest[suite].get("sha256"), "rows": rows}
                for suite, rows in written.items()],
        predictions=out, rows=sum(written.values()),
        device={"type": "cpu", "name": cpu_name(), "precision": "float64"},
        packages=package_versions(("numpy", "scikit-learn", "scipy", "vaderSentiment")),
        run={"shard": None, "processes": 1,
             "seconds": None if seconds is None else round(seconds, 1)},
    )
