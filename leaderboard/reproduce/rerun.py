"""``consistency-bench reproduce``: run an entry's recorded model again on a sample and judge it.

For an entry with a run record (``run.json``):

1. Checks that need no model, each a failure when it does not hold: ``meta.yaml``'s
   ``model`` names the recorded model (its id, Hub id, or a baseline's display name) and a
   commit in ``revision`` is the recorded one; the record describes the stored predictions
   (sha256); every scored suite is one the record lists.
2. The scored suites must be the builds the run predicted, and the maintainer's ``--data``
   must hold them (sha256), or nothing is done.
3. A seeded sample of groups per suite (:mod:`consistency_bench.bench.reproduce.sample`) is
   predicted again
   (:mod:`consistency_bench.bench.reproduce.rerun`) and compared with the stored rows
   (:mod:`consistency_bench.bench.reproduce.compare`); the tier of the two runs' precisions sets the
   limits
   (:mod:`consistency_bench.bench.reproduce.thresholds`).
4. ``reproduction.json`` is written into the entry, under the submissions lock, and only if
   the entry still holds the predictions that were checked.

An entry without a run record, a served model, or a model that cannot be read here is
refused with one line (exit 2) and nothing is written.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError

#: Version of ``reproduction.json``.
REPORT_VERSION = 1
_HEX_COMMIT = re.compile(r"[0-9a-f]{7,40}")


@dataclass(frozen=True)
class Outcome:
    """A reproduction: the report (``reproduction.json``) and where it was written."""

    report: dict
    path: Path | None

    @property
    def passed(self) -> bool:
        """Whether the entry reproduced."""
        return self.report["status"] == "passed"


def _norm(text: object) -> str:
    return str(text).strip().casefold().rstrip("/")


def model_mismatch(meta: Mapping, record: dict) -> str | None:
    """Why ``meta.yaml`` does not name the recorded model, or None when it does.

    ``model`` must equal (ignoring case and surrounding space) the record's model id, its Hub
    id, or a baseline's display name; a ``revision`` that is a commit (7 to 40 hex digits)
    must begin the recorded commit when that is a Hub commit.
    """
    model = record["model"]
    names = [n for n in (model.get("id"), model.get("hub_id"), model.get("name")) if n]
    if _norm(meta.get("model", "")) not in {_norm(n) for n in names}:
        return (f"meta.yaml names model {meta.get('model')!r}, but the predictions were made "
                f"with {' / '.join(repr(n) for n in names)} (run.json)")
    revision = _norm(meta.get("revision", ""))
    commit = model.get("commit") or ""
    if (model.get("commit_source") in ("config", "snapshot") and _HEX_COMMIT.fullmatch(revision)
            and not commit.startswith(revision)):
        return (f"meta.yaml gives revision {meta.get('revision')!r}, but the predictions were "
                f"made at commit {commit} (run.json)")
    return None


def file_problems(meta: Mapping, results: Mapping, record: dict) -> str | None:
    """What makes the entry fail before any model runs, or None.

    The model's name (:func:`model_mismatch`), the record describing the stored predictions,
    and every scored suite being one the record lists.
    """
    why = model_mismatch(meta, record)
    if why:
        return why
    stored = (results.get("predictions") or {}).get("sha256")
    if stored != record["predictions"]["sha256"]:
        return (f"run.json describes other predictions (sha256 "
                f"{record['predictions']['sha256'][:12]}...) than the entry stores "
                f"({str(stored)[:12]}...)")
    listed = {s["name"]: s["sha256"] for s in record["suites"]}
    extra = sorted(set(results.get("suites", {})) - set(listed))
    if extra:
        return (f"{len(extra)} scored suite(s) are not in the run record ({', '.join(extra[:4])}"
                "): those predictions were not made by the recorded run")
    return None


def check_suite_builds(results: Mapping, record: dict) -> None:
    """The entry's scored suites must be the builds the run predicted (sha256).

    They differ after ``rescore`` on rebuilt suites: the stored rows are then compared with
    another build, which says nothing about the entry, so nothing is done.

    Raises:
        NotReproducible: Naming the first suite whose build differs.

    """
    from consistency_bench.bench.reproduce.rerun import NotReproducible

    listed = {s["name"]: s["sha256"] for s in record["suites"]}
    for suite, res in sorted(results.get("suites", {}).items()):
        if res.get("content_hash") != listed.get(suite, res.get("content_hash")):
            raise NotReproducible(
                f"{suite}: the entry is scored on sha256 {str(res.get('content_hash'))[:12]}..."
                f" (rescored on a rebuilt suite), the run predicted sha256 "
                f"{listed[suite][:12]}...; the recorded run can only be compared on the build "
                "it predicted; nothing was changed")


def check_data(data_dir: str | os.PathLike, results: Mapping) -> dict[str, list[str]]:
    """Suite -> label names, after checking ``--data`` holds the entry's suites (sha256).

    Raises:
        ConfigError: A suite is missing from ``--data`` or is another build (nothing done).

    """
    from consistency_bench.bench.io.manifest import read_manifest

    manifest = read_manifest(Path(data_dir))
    out = {}
    for suite, res in sorted(results.get("suites", {}).items()):
        entry = manifest.get(suite)
        if entry is None or entry.get("sha256") != res.get("content_hash"):
            found = "is not built there" if entry is None else "is another build (sha256)"
            raise ConfigError(f"--data {data_dir}: suite {suite} {found}; reproduce needs the "
                              "suites the entry was scored on; nothing was changed")
        out[suite] = list(entry["label_names"])
    return out


def stored_rows(predictions: Path, ids: set[str]) -> dict[str, dict]:
    """The stored records of ``ids`` from an entry's ``predictions.jsonl.gz`` (or JSONL)."""
    import json

    from consistency_bench.bench.predictions.files import read_payload

    out = {}
    for line in read_payload(predictions).decode("utf-8").splitlines():
        item = json.loads(line)
        if isinstance(item, dict) and item.get("id") in ids:
            out[item["id"]] = item
    return out


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def _report(status: str, reason: str, record: dict, results: Mapping, **figures) -> dict:
    """The ``reproduction.json`` object (figures null where nothing was run)."""
    from consistency_bench.bench import __version__
    from consistency_bench.bench.scoring.results_json import git_commit

    base = {"schema_version": REPORT_VERSION, "status": status, "reason": reason,
            "date": _now(), "harness_version": __version__, "git_commit": git_commit(),
            "label_agreement": None, "max_prob_diff": None, "groups": 0, "rows": 0,
            "recorded_model": {k: record["model"].get(k) for k in
                               ("id", "hub_id", "name", "commit", "commit_source")},
            "recorded_device": record.get("device"),
            "predictions_sha256": (results.get("predictions") or {}).get("sha256")}
    return {**base, **figures}


def reproduce_files(record: dict, meta: Mapping, results: Mapping, predictions: Path,
                    data_dir: str | os.PathLike, *, groups: int = 32, seed: int = 0,
                    model: str | None = None, device: str | None = None,
                    sources: str | os.PathLike | None = None) -> dict:
    """Judge one entry's files: checks, the sample run again, the comparison; the report.

    Used by ``reproduce`` (an entry folder) and by ``review --reproduce`` (a pull request's
    files). Writes nothing.

    Raises:
        NotReproducible: Not runnable here (served model, no weights, no training data).
        ConfigError: ``--data`` lacks the entry's suites, or ``model`` holds other weights.

    """
    from consistency_bench.bench.reproduce.compare import compare
    from consistency_bench.bench.reproduce.rerun import NotReproducible, rerun
    from consistency_bench.bench.reproduce.sample import sample_rows
    from consistency_bench.bench.reproduce.thresholds import threshold_dict, tier_for, verdict

    if record.get("api") is not None or record["mode"] == "generate":
        raise NotReproducible(f"the predictions were made by a served model ({record['mode']}"
                              "): reproduce runs local weights only; nothing was changed")
    why = file_problems(meta, results, record)
    if why:
        return _report("failed", why, record, results)
    check_suite_builds(results, record)
    names = check_data(data_dir, results)
    sample = sample_rows(data_dir, sorted(names), groups, seed)
    stored = stored_rows(predictions, {i for ids in sample.rows.values() for i in ids})
    with tempfile.TemporaryDirectory(prefix="cb-reproduce-") as tmp:
        again = rerun(record, data_dir, sample.rows, Path(tmp), model=model, device=device,
                      sources=sources)
    found = compare(stored, again.predictions, sample.rows,
                    {s: len(g) for s, g in sample.groups.items()}, names)
    threshold = tier_for(record, again.record)
    ok, why = verdict(found, threshold)
    device_block = again.record.get("device") or {}
    return _report(
        "passed" if ok else "failed", why, record, results,
        label_agreement=round(found.label_agreement, 6),
        max_prob_diff=None if found.max_prob_diff is None else float(f"{found.max_prob_diff:.3g}"),
        groups=found.groups, rows=found.rows, agree=found.agree,
        missing_probs=found.missing_probs, groups_per_suite=groups, seed=seed,
        threshold=threshold_dict(threshold), model=again.model_check,
        device=device_block, dtype=(again.record.get("settings") or {}).get("weights_dtype"),
        precision=device_block.get("precision"), settings=again.record.get("settings"),
        suites={s: c.to_dict() for s, c in found.suites.items()},
    )


def reproduce_entry(name: str, submissions: str | os.PathLike, data_dir: str | os.PathLike,
                    *, groups: int = 32, seed: int = 0, model: str | None = None,
                    device: str | None = None, sources: str | os.PathLike | None = None,
                    log: Callable[[str], None] = lambda _: None) -> Outcome:
    """``reproduce NAME``: judge the entry and write its ``reproduction.json``.

    Raises:
        ConfigError: No such entry, no run record (not reproducible), ``--data`` without the
            entry's suites, a model with other weights; nothing is written.
        NotReproducible: The recorded model or training data cannot be read here.

    """
    from consistency_bench.bench.reproduce.rerun import NotReproducible
    from consistency_bench.leaderboard.reproduce.run_records import read_run
    from consistency_bench.leaderboard.submissions.meta import PREDICTIONS, slugify
    from consistency_bench.leaderboard.submissions.reader import load_entry

    root = Path(submissions)
    entry = root / slugify(name)
    if entry.is_symlink() or not entry.is_dir():
        raise ConfigError(f"{entry}: no such entry in {root}")
    sub = load_entry(entry)
    record = read_run(entry)
    if record is None:
        raise NotReproducible(f"{entry}: the entry has no run.json (its predictions were not "
                              "made by `consistency-bench predict` or `baseline`, or were "
                              "submitted without the record): not reproducible; nothing was "
                              "changed")
    log(f"{sub.slug}: {record['mode']} run of {record['model']['id']}; sampling {groups} "
        f"groups per suite (seed {seed})")
    report = reproduce_files(record, sub.meta, sub.results, entry / PREDICTIONS, data_dir,
                             groups=groups, seed=seed, model=model, device=device,
                             sources=sources)
    report["entry"] = sub.slug
    return Outcome(report, write_report(root, sub.slug, report))


def write_report(root: Path, slug: str, report: dict) -> Path:
    """Write ``reproduction.json`` into the entry, under the lock, if it is unchanged.

    Raises:
        ConfigError: The entry was replaced or removed while it was being reproduced
            (its predictions differ from those checked); nothing is written.

    """
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file
    from consistency_bench.bench.io.write import write_text
    from consistency_bench.leaderboard.reproduce.run_records import REPRODUCTION, reproduction_text
    from consistency_bench.leaderboard.submissions.meta import RESULTS
    from consistency_bench.leaderboard.submissions.storage import lock

    entry = root / slug
    with lock(root):
        try:
            now = load_json_file(entry / RESULTS)
        except JsonFileError:  # removed or unreadable: not the entry that was checked
            now = None
        sha = (now.get("predictions") or {}).get("sha256") if isinstance(now, dict) else None
        if entry.is_symlink() or sha != report.get("predictions_sha256"):
            raise ConfigError(f"{entry}: the entry changed while it was reproduced (replaced "
                              "or removed); run reproduce again; nothing was written")
        path = entry / REPRODUCTION
        write_text(path, reproduction_text(report))
    return path
