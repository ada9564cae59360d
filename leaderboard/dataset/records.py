"""The ``results`` config of the leaderboard dataset repo: flat records (issue 27 item 10).

``leaderboard.json`` is one nested object, which the Hub's Dataset Viewer and
``load_dataset`` cannot read as rows (``ArrowInvalid: JSON parse error: Column() changed from
object to string``). The site therefore also holds ``results.parquet``: one row per view and
entry, with a fixed Arrow schema (:data:`SCHEMA`; the kind means are a struct with one field
per consistency kind of the board, null where the view has no such kind), so that
``load_dataset("ORG/leaderboard", "results", split="train")`` reads it. Scores are fractions
(as in ``leaderboard.json``), not %.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from consistency_bench.leaderboard.ranking.model import KINDS, Leaderboard

#: The Parquet file of the ``results`` config, in the site and the dataset repo.
RESULTS_FILE = "results.parquet"
#: The ``results`` config of the dataset card (:func:`card_configs` lists every config).
RESULTS_CONFIG = {"config_name": "results", "default": True,
                  "data_files": [{"split": "train", "path": RESULTS_FILE}]}

_FIELDS = [
    ("view", pa.string()), ("view_title", pa.string()), ("entry", pa.string()),
    ("status", pa.string()), ("rank", pa.int32()), ("rank_low", pa.int32()),
    ("rank_high", pa.int32()), ("score", pa.float64()), ("score_sd", pa.float64()),
    ("score_low", pa.float64()), ("score_high", pa.float64()), ("accuracy", pa.float64()),
    ("consistency", pa.float64()), ("borda", pa.float64()), ("win_rate", pa.float64()),
    ("covered", pa.int32()), ("total", pa.int32()), ("coverage_weight", pa.float64()),
    ("flags", pa.list_(pa.string())), ("degenerate", pa.string()), ("failing", pa.string()),
    ("contaminated", pa.string()), ("degenerate_tasks", pa.list_(pa.string())),
    ("vs_next_p", pa.float64()),
]
#: 95% normal quantile of the score interval ``score ± 1.96 score_sd``.
Z95 = 1.959964


def kinds_of(lb: Leaderboard) -> list[str]:
    """Every consistency kind of the board's views, in display order (the struct's fields)."""
    found = {k for v in lb.views.values() for k in v.kinds}
    return sorted(found, key=lambda k: (KINDS.index(k) if k in KINDS else len(KINDS), k))


def schema(kinds: Sequence[str]) -> pa.Schema:
    """The records' Arrow schema: :data:`_FIELDS` and ``kind_means`` (one field per kind)."""
    means = pa.struct([(k, pa.float64()) for k in kinds]) if kinds else pa.struct(
        [("none", pa.float64())])
    return pa.schema([*_FIELDS[:17], ("kind_means", means), *_FIELDS[17:]])


def records(lb: Leaderboard) -> list[dict]:
    """One record per view and entry, in the views' reading order and their row order."""
    kinds = kinds_of(lb)
    out = []
    for key, view in lb.views.items():
        for row in view.rows:
            sd = row.sd_mean
            low = None if row.mean is None or sd is None else row.mean - Z95 * sd
            high = None if row.mean is None or sd is None else row.mean + Z95 * sd
            out.append({
                "view": key, "view_title": view.title, "entry": row.name,
                "status": row.status, "rank": row.rank, "rank_low": row.rank_low,
                "rank_high": row.rank_high, "score": row.mean, "score_sd": sd,
                "score_low": low, "score_high": high, "accuracy": row.accuracy,
                "consistency": row.consistency, "borda": row.borda, "win_rate": row.win_rate,
                "covered": row.covered, "total": row.total,
                "kind_means": {k: row.kind_means.get(k) for k in kinds} if kinds
                else {"none": None},
                "coverage_weight": row.coverage_weight, "flags": list(row.flags),
                "degenerate": row.degenerate, "failing": row.failing,
                "contaminated": row.contaminated,
                "degenerate_tasks": list(row.degenerate_tasks),
                "vs_next_p": None if row.vs_next is None else row.vs_next.p_value,
            })
    return out


def parquet_bytes(lb: Leaderboard) -> bytes:
    """``results.parquet``: :func:`records` with :func:`schema`, written deterministically."""
    table = pa.Table.from_pylist(records(lb), schema=schema(kinds_of(lb)))
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", write_statistics=False)
    return buffer.getvalue()


def card_configs() -> list[dict]:
    """The ``configs:`` list of the leaderboard dataset card: one list, every config in it.

    ``results`` (these records) is the default; issue 31's ``details`` config is appended
    here by its owner.
    """
    return [RESULTS_CONFIG]
