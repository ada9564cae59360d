"""What a verified-cells record is keyed on: everything its content is a function of.

A record holds what scoring an entry's stored predictions again gives (the recomputed results,
and each cell's ranked score on its suite's shared resamples). That is a function of

- the bytes of the stored ``predictions.jsonl.gz`` (its sha256);
- every suite the file has a row of: each one's ``suites.json`` entry (which holds the sha256
  of its Parquet file, its labels and metric) and the Parquet file itself, checked against that
  sha256 on every render (:class:`SuiteFiles`);
- the scoring parameters (those of the re-scoring pass and of the resamples);
- the code: the harness version, and a sha256 of every source and data file of the scoring
  layer (``bench/``), of the ranking (``leaderboard/ranking/``, which holds the resamples and
  the unit scorers), of this cache and of ``leaderboard/stored.py`` (the comparison whose pass
  a record remembers), so any change of a scorer (e.g. the word-salad score, its cross-fitting
  in ``bench/metrics/calibration.py`` or the per-task statistics of ``bench/scoring/engine.py``), of
  the resampling or of the comparison invalidates every record; the numpy, pyarrow and Python
  versions, and the CPU architecture with the SIMD features numpy uses.

So a record is reused only when a fresh computation would give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import asdict
from functools import cache
from pathlib import Path

from consistency_bench.bench.io.digest import add_files, file_sha256

#: Version of the record's layout and of what it holds (bump on any change). 2: the
#: recomputed per-task statistics (results ``tasks``, issue 27) are kept and compared. 3: the
#: recomputed results are kept without their bootstrap intervals (never compared), so the
#: record ``review`` writes from its one scoring of an entry is the render's, bit for bit.
RECORD_VERSION = 3


@cache
def code_version() -> str:
    """sha256 of the scoring layer's, the ranking's, this cache's and the comparison's files.

    Names and bytes of every file under ``bench/``, ``leaderboard/ranking/`` and
    ``leaderboard/cache/``, and of ``leaderboard/stored.py``.
    """
    import consistency_bench.leaderboard.ranking
    import consistency_bench.leaderboard.stored
    from consistency_bench import bench

    roots = (("bench", Path(bench.__file__).parent),
             ("leaderboard/ranking", Path(consistency_bench.leaderboard.ranking.__file__).parent),
             ("leaderboard/cache", Path(__file__).parent),
             ("leaderboard/stored.py", Path(consistency_bench.leaderboard.stored.__file__)))
    digest = hashlib.sha256()
    for label, root in roots:
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
        add_files(digest, ((label if path == root else
                            f"{label}/{path.relative_to(root).as_posix()}", path)
                           for path in files))
    return digest.hexdigest()


def manifest_entry_hash(entry: Mapping) -> str:
    """sha256 of a suite's ``suites.json`` entry (canonical JSON)."""
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@cache
def _fixed() -> dict:
    """The parts of every key that do not depend on the entry."""
    import numpy as np
    import pyarrow as pa

    from consistency_bench.bench import __version__
    from consistency_bench.bench.scoring.engine import ScoreOptions
    from consistency_bench.leaderboard.ranking.resample import DRAW_BLOCK, N_BOOT
    from consistency_bench.leaderboard.stored import RECOMPUTE_N_BOOT

    return {
        "record": RECORD_VERSION,
        "harness_version": __version__,
        "code": code_version(),
        "scoring": json.loads(json.dumps(asdict(ScoreOptions(n_boot=RECOMPUTE_N_BOOT)),
                                         sort_keys=True, default=str)),
        "resample": {"n_boot": N_BOOT, "block": DRAW_BLOCK},
        "versions": {"numpy": np.__version__, "pyarrow": pa.__version__,
                     "python": ".".join(map(str, sys.version_info[:3]))},
        "machine": _machine(),
    }


def _machine() -> str:
    """The CPU architecture and the SIMD features numpy uses.

    They can change the last bit of a BLAS product or a reduction, so a record is not carried
    to another kind of CPU.
    """
    import importlib
    import platform

    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # numpy 1.x
        umath = importlib.import_module("numpy.core._multiarray_umath")
    features = getattr(umath, "__cpu_features__", {})
    enabled = ",".join(sorted(k for k, v in features.items() if v))
    return f"{platform.machine()}:{hashlib.sha256(enabled.encode()).hexdigest()[:16]}"


def entry_key(predictions_sha256: str, touched: list[str] | tuple[str, ...],
              manifest: Mapping[str, Mapping]) -> dict:
    """The key of an entry's record.

    Args:
        predictions_sha256: sha256 of the stored ``predictions.jsonl.gz`` (its bytes).
        touched: The suites the file has a row of.
        manifest: The built folder's ``suites.json`` entries.

    """
    return {
        **_fixed(),
        "predictions_file_sha256": predictions_sha256,
        "suites": {s: manifest_entry_hash(manifest[s]) if s in manifest else None
                   for s in sorted(touched)},
    }


class SuiteFiles:
    """Whether each suite's Parquet file still has the sha256 its ``suites.json`` entry gives.

    Hashed once per render; a record that touches a suite whose file changed is not reused
    (the re-scoring then reports the changed file, as it always did).
    """

    def __init__(self, root: Path, manifest: Mapping[str, Mapping]):
        self.root, self.manifest = root, manifest
        self._ok: dict[str, bool] = {}

    def intact(self, suite: str) -> bool:
        """The suite's file is a regular file whose sha256 matches ``suites.json``."""
        if suite not in self._ok:
            entry = self.manifest.get(suite)
            ok = False
            if entry is not None:
                path = self.root / str(entry.get("path", ""))
                try:
                    ok = path.is_file() and file_sha256(path) == entry.get("sha256")
                except OSError:
                    ok = False
            self._ok[suite] = ok
        return self._ok[suite]
