"""``rescore``: every stored entry scored again, changed results rewritten atomically.

Part of :mod:`consistency_bench.leaderboard.submissions`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.write import write_text
from consistency_bench.bench.predictions.files import read_payload
from consistency_bench.bench.scoring.engine import score_file
from consistency_bench.leaderboard.submissions.meta import PREDICTIONS, RESULTS, Scorer
from consistency_bench.leaderboard.submissions.reader import load_all, read_stored_predictions
from consistency_bench.leaderboard.submissions.storage import (
    _default_warn,
    _score,
    lock,
    stored_name,
)


@dataclass(frozen=True)
class Change:
    """What ``rescore`` changed for one submission and suite."""

    slug: str
    suite: str
    what: str
    before: object
    after: object


def diff_results(slug: str, old: Mapping, new: Mapping) -> list[Change]:
    """Suite-level differences between two results JSONs (score, hash, version, presence)."""
    changes = []
    a, b = old.get("suites", {}), new.get("suites", {})
    for suite in sorted(set(a) | set(b)):
        if suite not in b:
            changes.append(Change(slug, suite, "removed", a[suite].get("main_score"), None))
        elif suite not in a:
            changes.append(Change(slug, suite, "added", None, b[suite].get("main_score")))
        else:
            for key in ("content_hash", "version", "main_score", "ci95", "consistent_accuracy",
                        "consistent_accuracy_chance", "consistent_accuracy_cc"):
                if (key in a[suite], a[suite].get(key)) != (key in b[suite], b[suite].get(key)):
                    changes.append(Change(slug, suite, key, a[suite].get(key), b[suite].get(key)))
            # how the leaderboard recomputes the ranked score (word salad, issue 18)
            units = [(r.get("metrics") or {}).get("ranked_units") for r in (a[suite], b[suite])]
            if units[0] != units[1]:
                changes.append(Change(slug, suite, "metrics.ranked_units", *units))
    # the per-task degenerate statistics (issue 27); missing counts as changed
    a_tasks, b_tasks = old.get("tasks"), new.get("tasks")
    for task in sorted(set(a_tasks or {}) | set(b_tasks or {})) if a_tasks != b_tasks else ():
        before, after = (t.get(task) if isinstance(t, Mapping) else None
                         for t in (a_tasks, b_tasks))
        if before != after:
            changes.append(Change(slug, f"(task {task})", "tasks",
                                  _task_summary(before), _task_summary(after)))
    return changes


def _task_summary(stats: object) -> object:
    """``correct/n`` of a task's statistics, for the rescore report."""
    if not isinstance(stats, Mapping):
        return stats
    return f"{stats.get('n_original_correct')}/{stats.get('n_original')}"


def rescore(
    root: str | os.PathLike = "submissions",
    data_dir: str | os.PathLike = "consistency-bench",
    *,
    scorer: Scorer | None = None,
    dry_run: bool = False,
) -> list[Change]:
    """Rescore every submission against ``data_dir``; rewrite changed results atomically.

    Every entry is read and rescored before anything is written, so a corrupt entry (a
    truncated ``.gz``, a broken ``results.json``) stops the run with its name and changes
    nothing.
    """
    from consistency_bench.bench.scoring.results_json import provenance

    root = Path(root)
    scorer = scorer or score_file
    changes: list[Change] = []
    rewrites = []
    for sub in load_all(root, check_values=False, repair=not dry_run):
        stored = read_stored_predictions(sub)
        new = _score(sub.path / PREDICTIONS, data_dir, scorer, stored)
        found = diff_results(sub.slug, sub.results, new)
        changes.extend(found)
        if found:
            arguments = {"submissions": str(root), "data": str(data_dir)}
            if (name := stored_name(sub.path)) is not None:
                arguments["name"] = name  # keeps the entry's own name (`submit --replace`)
            new["provenance"] = provenance("rescore", arguments)
            rewrites.append((sub, new, hashlib.sha256(stored).hexdigest()))
    if not dry_run:
        for sub, new, digest in rewrites:
            # Under the lock, the entry must still be the one scored: a `submit --replace`
            # that landed meanwhile has new predictions, and the old scores must not go there.
            with lock(root):
                path = root / sub.slug
                if path.is_symlink() or not path.is_dir() or (path / RESULTS).is_symlink():
                    raise ConfigError(f"{path}: is no longer an entry folder; not rewritten")
                now = hashlib.sha256(read_payload(path / PREDICTIONS)).hexdigest()
                if now != digest:
                    _default_warn(f"{path}: was replaced while rescoring; its new results "
                                  "were kept (run rescore again to check them)")
                    changes = [c for c in changes if c.slug != sub.slug]
                    continue
                write_text(
                    path / RESULTS,
                    json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                )
    return changes
