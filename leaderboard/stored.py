"""Stored results are checked before they are ranked; with the suites, they are recomputed.

A ``results.json`` is written by ``submit`` or ``rescore``, but it is a file anyone can edit.
:func:`check_values` (always) refuses a value of the wrong type or out of range: a ranked score
(``consistent_accuracy_cc``) of NaN, ``1e300``, ``-50`` or a string, or one that does not
follow from the stored consistent accuracy and chance level. :func:`verify` (``leaderboard
--data``) scores the stored ``predictions.jsonl.gz`` again against the built suites and refuses
an entry whose predictions hash, suite hash or any score differs from what is stored; only the
bootstrap intervals (``ci95``, ``*_ci95``) are not compared (docs/leaderboard.md). The
comparison itself is :func:`check_recomputed`, which the verified-cells cache runs on every
render against the results it recomputed once (``leaderboard/cache``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TypeGuard

from consistency_bench.bench.errors import ConfigError

#: Fractions in [0, 1] (docs/metrics.md: every main score is a fraction in [0, 1]).
FRACTIONS = ("main_score", "consistent_accuracy", "consistent_accuracy_chance", "best_near")
#: Fractions in ``metrics`` that the ranking reads (flags, accuracy column).
METRIC_FRACTIONS = ("accuracy", "accuracy_original", "majority_rate", "top_prediction_share",
                    "consistent_accuracy_unbalanced")
#: Counts in ``metrics`` that the ranking reads.
METRIC_COUNTS = ("n_original", "n_original_correct", "consistent_accuracy_n")
#: Relative tolerance when comparing a stored score with a recomputed one.
REL_TOL = 1e-9
#: Resamples of the paper metric's ``ci95`` when an entry is scored again to be verified
#: (the intervals are not compared, so few are enough).
RECOMPUTE_N_BOOT = 100
#: Rounding slack of a stored fraction: the scorer's weighted means of a perfect entry come
#: out as 1.0000000000000002 (sst2_semantic, an oracle file), which is not an edit.
FRACTION_SLACK = 1e-9


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bad(where: str, suite: str, field: str, value: object, want: str) -> ConfigError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return ConfigError(f"{where}: suite {suite!r} field {field!r} value {shown}: {want}")


def _fraction(where: str, suite: str, field: str, value: object) -> None:
    if value is None:
        return
    if (not _number(value) or not math.isfinite(value)
            or not -FRACTION_SLACK <= value <= 1.0 + FRACTION_SLACK):
        raise _bad(where, suite, field, value, "expected a number in [0, 1] or null")


def check_values(results: Mapping, where: str) -> None:
    """Refuse a stored value the ranking would misread; every suite, every field it reads.

    The ranked score must be a finite number that follows from the stored consistent accuracy
    ``ca`` and chance level ``c``: ``cc = (ca - c) / (1 - c)``
    (:func:`consistency_bench.bench.metrics.consistent.score.chance_corrected`, the scorer's own
    function), so a
    hand-edited ``consistent_accuracy_cc`` is refused even without the suites.

    Args:
        results: A parsed ``results.json`` (its ``suites`` mapping already checked to exist).
        where: The file, for the message.

    Raises:
        ConfigError: Naming the file, the suite, the field and the value.

    """
    for suite, res in results["suites"].items():
        if not isinstance(res, Mapping):
            raise _bad(where, suite, "suites", res, "expected a mapping of fields")
        if not isinstance(res.get("main_metric"), str):
            raise _bad(where, suite, "main_metric", res.get("main_metric"), "expected a string")
        if not isinstance(res.get("higher_is_better"), bool):
            raise _bad(where, suite, "higher_is_better", res.get("higher_is_better"),
                       "expected true or false")
        for field in ("family", "task", "kind", "content_hash"):
            if field in res and not isinstance(res[field], str):
                raise _bad(where, suite, field, res[field], "expected a string")
        for field in FRACTIONS:
            _fraction(where, suite, field, res.get(field))
        n = res.get("n")
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
            raise _bad(where, suite, "n", n, "expected a count (an integer >= 0)")
        ci = res.get("ci95")
        if ci is not None and not (
            isinstance(ci, list) and len(ci) == 2
            and all(x is None or (_number(x) and math.isfinite(x)) for x in ci)
            and (None in ci or ci[0] <= ci[1])
        ):
            raise _bad(where, suite, "ci95", ci, "expected [low, high] with low <= high")
        metrics = res.get("metrics", {})
        if not isinstance(metrics, Mapping):
            raise _bad(where, suite, "metrics", metrics, "expected a mapping")
        for field in METRIC_FRACTIONS:
            _fraction(where, suite, f"metrics.{field}", metrics.get(field))
        for field in METRIC_COUNTS:
            value = metrics.get(field)
            if value is not None and (not _number(value) or not math.isfinite(value)
                                      or value < 0 or value != int(value)):
                raise _bad(where, suite, f"metrics.{field}", value, "expected a count >= 0")
        _check_cc(where, suite, res)
    _check_tasks(results.get("tasks"), where)


def _check_tasks(tasks: object, where: str) -> None:
    """``tasks`` (the per-task degenerate statistics): counts and fractions in range.

    Absent in results scored before issue 27 (the ranking falls back, docs/leaderboard.md).
    """
    if tasks is None:
        return
    if not isinstance(tasks, Mapping):
        raise ConfigError(f"{where}: field 'tasks' value {str(tasks)[:40]!r}: expected a mapping")
    for task, stats in tasks.items():
        name = f"(task {task})"
        if not isinstance(stats, Mapping):
            raise _bad(where, name, "tasks", stats, "expected a mapping of fields")
        for field in ("majority_rate", "top_prediction_share"):
            _fraction(where, name, f"tasks.{field}", stats.get(field))
        counts = {}
        for field in ("n_original", "n_original_correct", "n_original_rows"):
            value = stats.get(field)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                raise _bad(where, name, f"tasks.{field}", value, "expected a count >= 0")
            counts[field] = value
        if counts["n_original_correct"] > counts["n_original"]:
            raise _bad(where, name, "tasks.n_original_correct", counts["n_original_correct"],
                       f"more than n_original {counts['n_original']}")
        if not isinstance(stats.get("suites"), list):
            raise _bad(where, name, "tasks.suites", stats.get("suites"), "expected a list")


def _check_cc(where: str, suite: str, res: Mapping) -> None:
    """``consistent_accuracy_cc``: null, or finite and equal to ``(ca - c) / (1 - c)``."""
    if "consistent_accuracy_cc" not in res:
        return  # an old results file: the ranking asks for a rescore
    cc = res["consistent_accuracy_cc"]
    if cc is None:
        return
    field = "consistent_accuracy_cc"
    if not _number(cc) or not math.isfinite(cc) or cc > 1.0 + FRACTION_SLACK:
        raise _bad(where, suite, field, cc, "expected a finite number <= 1 or null")
    # the scorer's own formula
    from consistency_bench.bench.metrics.consistent.score import chance_corrected

    ca, chance = res.get("consistent_accuracy"), res.get("consistent_accuracy_chance")
    metrics = res.get("metrics") or {}
    if metrics.get("ranked_units") is not None:
        # Another ranked statistic (the word-salad score of issue 18): not a function of ca;
        # still a chance-corrected fraction, so within [-chance / (1 - chance), 1].
        if chance is not None and chance < 1.0 and cc < -chance / (1.0 - chance) - 1e-9:
            raise _bad(where, suite, field, cc, f"below the lowest chance-corrected value "
                       f"{-chance / (1.0 - chance):.6g} for its chance level {chance}")
        return
    expected = chance_corrected(ca, chance)
    if expected is None:
        raise _bad(where, suite, field, cc, "a ranked score needs consistent_accuracy and "
                   "consistent_accuracy_chance < 1 beside it")
    if not math.isclose(cc, expected, rel_tol=1e-6, abs_tol=1e-9):
        raise _bad(where, suite, field, cc, f"does not follow from consistent_accuracy {ca} and "
                   f"its chance level {chance} (expected {expected:.6g}); the file was changed "
                   "after scoring: run `consistency-bench rescore`")


def _bootstrap_key(key: str) -> bool:
    return key == "ci95" or key.endswith("_ci95")


def differences(stored: object, fresh: object, path: str = "") -> list[str]:
    """Where ``stored`` and ``fresh`` (JSON values) differ, bootstrap intervals left out."""
    if isinstance(stored, Mapping) and isinstance(fresh, Mapping):
        out = []
        for key in sorted(set(stored) | set(fresh), key=str):
            if _bootstrap_key(str(key)):
                continue
            sub = f"{path}.{key}" if path else str(key)
            if key not in stored or key not in fresh:
                out.append(f"{sub} {'missing' if key not in stored else 'extra'}")
            else:
                out += differences(stored[key], fresh[key], sub)
        return out
    if isinstance(stored, list) and isinstance(fresh, list) and len(stored) == len(fresh):
        return [d for i, (a, b) in enumerate(zip(stored, fresh, strict=True))
                for d in differences(a, b, f"{path}[{i}]")]
    if _number(stored) and _number(fresh):
        a, b = float(stored), float(fresh)
        if a == b or (math.isfinite(a) and math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)):
            return []
        return [f"{path} stored {stored!r}, recomputed {fresh!r}"]
    if stored == fresh and type(stored) is type(fresh):
        return []
    return [f"{path} stored {str(stored)[:40]!r}, recomputed {str(fresh)[:40]!r}"]


def verify(results: Mapping, predictions: Path, data_dir, where: str):
    """Score ``predictions`` again and compare with ``results``; return the unit outcomes.

    Args:
        results: The stored results.
        predictions: The stored ``predictions.jsonl.gz``.
        data_dir: The built suite folder (a path, or a shared
        ``consistency_bench.bench.scoring.engine.SuiteFolder``).
        where: The entry, for the message.

    Returns:
        Per-unit outcomes by suite (for the paired tests), from the same pass.

    Raises:
        ConfigError: As :func:`check_recomputed`.

    """
    from consistency_bench.bench.scoring.engine import recompute

    fresh = recompute(predictions, data_dir, n_boot=RECOMPUTE_N_BOOT)
    check_recomputed(results, fresh.sha256, fresh.suites, fresh.manifest, predictions.name,
                     where, getattr(data_dir, "root", data_dir), fresh.tasks)
    return fresh.units


# One piece (over 60 lines): stored and recomputed scores compared field by field.
def check_recomputed(results: Mapping, sha256: str, fresh: Mapping[str, Mapping],
                     manifest: Mapping[str, Mapping], predictions: str, where: str,
                     data_dir, tasks: Mapping[str, Mapping]) -> None:
    """Compare stored results with the results recomputed from the stored predictions.

    The comparison of :func:`verify`, on its own: ``leaderboard --data`` calls it on every
    render, with the recomputed results fresh or from the verified-cells cache
    (``leaderboard/cache``), so an edited ``results.json`` is caught either way.

    Args:
        results: The stored results.
        sha256: The recomputed hash of the predictions' content.
        fresh: Recomputed results entry per fully covered suite (JSON values).
        manifest: The built folder's manifest entries, by suite.
        predictions: The predictions file's name, for the message.
        where: The entry, for the message.
        data_dir: The built folder, for the message.
        tasks: The recomputed per-task statistics (results ``tasks``, JSON values).

    Raises:
        ConfigError: The predictions hash, a suite's content hash or any stored score differs
            from the recomputed one (naming the entry, suite and field), a stored suite is
            not in the folder or no longer covered, or ``tasks`` is missing or differs.

    """
    import json

    recorded = results.get("predictions", {}).get("sha256") if isinstance(
        results.get("predictions"), Mapping) else None
    if recorded != sha256:
        raise ConfigError(
            f"{where}: {predictions} has sha256 {sha256[:12]}..., results.json "
            f"records {str(recorded)[:12]}...: the predictions changed after scoring; entry "
            "refused (restore them, or submit again with --replace)"
        )
    problems = []
    for suite, stored in sorted(results["suites"].items()):
        if suite not in manifest:
            problems.append(f"suite {suite!r} is not in {data_dir}")
            continue
        digest = manifest[suite].get("sha256")
        if stored.get("content_hash") != digest:
            problems.append(f"suite {suite!r} was scored on other suite files (content_hash "
                            f"{str(stored.get('content_hash'))[:12]}..., the folder has "
                            f"{str(digest)[:12]}...): run `consistency-bench rescore`")
            continue
        if suite not in fresh:
            problems.append(f"suite {suite!r} is not fully covered by the stored predictions")
            continue
        found = differences(stored, json.loads(json.dumps(fresh[suite])))
        problems += [f"suite {suite!r} {d}" for d in found[:3]]
    if "tasks" not in results:
        problems.append("'tasks' missing (scored before the per-task degenerate statistics): "
                        "run `consistency-bench rescore`")
    else:
        found = differences(results["tasks"], json.loads(json.dumps(tasks)))
        problems += [f"tasks.{d}" for d in found[:3]]
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ConfigError(
            f"{where}: stored results differ from the scores recomputed from its predictions: "
            + "; ".join(problems[:3]) + more + "; entry refused"
        )
