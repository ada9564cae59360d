"""Writing the ``submissions/`` folder: staging, the lock, ``submit`` and crash recovery.

Part of :mod:`consistency_bench.leaderboard.submissions` (the folder's layout and the atomic-write
protocol are
described there).
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.json_input import JsonFileError, load_json_file
from consistency_bench.bench.io.staged_folder import pid_alive
from consistency_bench.bench.io.write import dir_mode
from consistency_bench.bench.predictions.records import to_jsonl
from consistency_bench.bench.scoring.engine import Recomputed, score_file
from consistency_bench.leaderboard.reproduce.run_records import (
    REPRODUCTION,
    RUN,
    entry_record,
    entry_reproduction,
)
from consistency_bench.leaderboard.submissions.meta import (
    META,
    PREDICTIONS,
    RESULTS,
    SLUG_RE,
    Scorer,
    Submission,
    read_meta,
    slugify,
)

LOCK = ".lock"
STAGING = ".staging"
#: Test hook: seconds to sleep after staging, before the entry is renamed into place.
PAUSE_ENV = "CONSISTENCY_BENCH_SUBMIT_PAUSE"


def gzip_bytes(data: bytes) -> bytes:
    """Deterministic gzip (mtime 0, no file name)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    return buf.getvalue()


def _sweep(root: Path) -> None:
    """Under the lock: remove dead stagings, roll back a crashed replace."""
    staging = root / STAGING
    if staging.is_dir():
        for d in staging.iterdir():
            try:
                pid = int(d.name.split("-", 1)[0])
            except ValueError:
                pid = -1
            if pid <= 0 or not pid_alive(pid):
                shutil.rmtree(d, ignore_errors=True)
    _roll_back(root)


def _roll_back(root: Path) -> list[str]:
    """Under the lock: undo replaces interrupted between their two renames.

    ``submit --replace`` moves ``<slug>`` to ``.<slug>.old`` and the new entry to ``<slug>``;
    a crash in between leaves only ``.<slug>.old``. Put it back (or drop it when the new entry
    did land).

    Returns:
        One line per entry put back.

    """
    restored = []
    for old in sorted(root.glob(".*.old")):
        slug = old.name[1:-4]
        target = root / slug
        if old.is_symlink() or not old.is_dir() or not SLUG_RE.match(slug):
            continue
        if os.path.lexists(target):
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(old, target)
            restored.append(f"{root}: entry {slug!r} restored from {old.name} (a `submit "
                            "--replace` was interrupted between its two renames)")
    return restored


def recover(root: Path, warn: Callable[[str], None], *, repair: bool = True) -> None:
    """Roll back an interrupted replace before reading ``root``; say so through ``warn``.

    A reader that cannot take the lock or rename (a read-only folder), or is told not to
    write (``repair`` false: ``rescore --dry-run``), warns instead: the entry then exists only
    as ``.<slug>.old`` and is not shown.
    """
    stranded = [p for p in root.glob(".*.old") if p.is_dir() and not p.is_symlink()
                and not os.path.lexists(root / p.name[1:-4])]
    if not stranded:
        return
    why = "not restored by a dry run"
    if repair:
        try:
            with lock(root):
                for line in _roll_back(root):
                    warn(line)
            return
        except OSError as exc:
            why = f"could not be restored ({exc.strerror})"
    for old in stranded:
        warn(f"{old}: entry {old.name[1:-4]!r} exists only as this folder (a `submit "
             f"--replace` was interrupted) and {why}; it is not shown. Rename it to "
             f"{old.name[1:-4]} to restore it")


def _stage(root: Path) -> Path:
    staging = root / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    # the owner's pid is in the name, so the directory is never seen without it
    stage = Path(tempfile.mkdtemp(dir=staging, prefix=f"{os.getpid()}-"))
    os.chmod(stage, dir_mode())  # mkdtemp makes 0700; an entry gets the usual 0755
    return stage


def _write_entry(stage: Path, jsonl: bytes, meta: Mapping, results: Mapping,
                 target: Path, extra: Mapping[str, bytes] | None = None) -> None:
    try:
        _write_files(stage, jsonl, meta, results, extra or {})
    except OSError as exc:  # a full disk names no file: name the entry
        raise OSError(exc.errno, f"cannot write the entry ({exc.strerror or exc}); nothing "
                      "was stored", str(target)) from None


def _write_files(stage: Path, jsonl: bytes, meta: Mapping, results: Mapping,
                 extra: Mapping[str, bytes] | None = None) -> None:
    """Write the entry's files into ``stage``; ``extra``: other files (``run.json``)."""
    import yaml

    (stage / PREDICTIONS).write_bytes(gzip_bytes(jsonl))
    (stage / META).write_text(
        yaml.safe_dump(dict(meta), sort_keys=True, allow_unicode=True), encoding="utf-8"
    )
    (stage / RESULTS).write_text(
        json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for name, data in (extra or {}).items():
        (stage / name).write_bytes(data)
    for name in (PREDICTIONS, META, RESULTS, *(extra or {})):
        with open(stage / name, "rb") as fh:
            os.fsync(fh.fileno())


@dataclass(frozen=True)
class ScoredFile:
    """A prediction file already scored by this process (``review``: once per entry).

    Attributes:
        jsonl_sha256: sha256 of the file's JSONL bytes
        (:func:`consistency_bench.bench.predictions.records.to_jsonl`)
            that were scored: ``submit`` stores them only when its own JSONL has this hash.
        results: What the scorer returned for the file (never the submitter's results).
        recomputed: The same pass as the entry's verified cells, when the scorer gave them
            (:func:`consistency_bench.bench.scoring.engine.score_file_recomputed`): the cache record
            written after the
            store (:func:`consistency_bench.leaderboard.cache.verified.remember_entry`).

    """

    jsonl_sha256: str
    results: Mapping
    recomputed: Recomputed | None = None


def _score(path: str | os.PathLike, data_dir: str | os.PathLike, scorer: Scorer,
           stored: bytes, scored: ScoredFile | None = None) -> dict:
    """Score the file as ``score`` would; record the stored JSONL's path and hash.

    With ``scored`` (the file scored already by this process), its results are taken instead,
    once they are shown to be those of the same JSONL bytes.

    Raises:
        ConfigError: ``scored`` was computed for other bytes than the file's.

    """
    from consistency_bench.bench.scoring.results_json import require_coverage

    if scored is None:
        results = dict(scorer(Path(path), data_dir))
    elif scored.jsonl_sha256 != hashlib.sha256(stored).hexdigest():
        raise ConfigError(f"{path}: the scores passed to submit are those of other "
                          f"predictions (sha256 {scored.jsonl_sha256[:12]}...); nothing stored")
    else:
        results = copy.deepcopy(dict(scored.results))
    require_coverage(results, str(path))
    results["predictions"] = {
        **results.get("predictions", {}),
        "path": PREDICTIONS,
        "sha256": hashlib.sha256(stored).hexdigest(),  # of the JSONL inside the .gz
    }
    return results


def lock(root: Path) -> FileLock:
    """Return the folder's file lock."""
    root.mkdir(parents=True, exist_ok=True)
    return FileLock(str(root / LOCK))


# One piece (over 60 lines): checks, scoring, staging and the locked rename read in the order
# that makes a crash at any line safe (the module docstring of
# consistency_bench.leaderboard.submissions).
def submit(
    predictions: str | os.PathLike,
    *,
    name: str,
    meta_path: str | os.PathLike,
    root: str | os.PathLike = "submissions",
    data_dir: str | os.PathLike = "consistency-bench",
    replace: bool = False,
    scorer: Scorer | None = None,
    arguments: Mapping | None = None,
    run_record: str | os.PathLike | None = None,
    reproduction: Mapping | None = None,
    variant: str | None = None,
    scored: ScoredFile | None = None,
) -> Submission:
    """Validate, score and store one submission; return it.

    The stored results are exactly what ``score`` computes for the same file, whatever its
    format: the file itself is scored, and the JSONL stored beside it scores the same.
    ``scored`` (``review --merge``) passes this process's own scores of the same JSONL bytes
    (checked by sha256), so the file is not scored twice.
    The run record (``run_record``, else ``<PRED>.run.json`` beside the file, if any) is
    stored as ``run.json`` when it describes this file
    (:func:`consistency_bench.leaderboard.reproduce.run_records.entry_record`).
    ``reproduction`` (``review --reproduce --merge``: the report of a passed reproduction of
    this file) is stored with the entry, in the same rename, as ``reproduction.json``.

    Raises:
        ConfigError: Bad name or metadata, the slug is taken and ``replace`` is false, or the
            entry duplicates a stored one (leaderboard/intake/duplicates.py: byte-identical
            predictions, or the same model, revision and setup without a new ``variant``).
        PredictionFileError: The scorer rejects the prediction file.

    """
    from consistency_bench.bench.scoring.results_json import provenance
    from consistency_bench.leaderboard.intake.duplicates import with_variant

    root = check_root(root)
    slug = slugify(name)
    meta = with_variant(read_meta(meta_path), variant, str(meta_path))
    target = root / slug
    if os.path.lexists(target) and not replace:
        raise ConfigError(_taken(slug, root))
    _check_same_name(target, name)
    jsonl = to_jsonl(os.fspath(predictions))
    record = entry_record(predictions, jsonl, run_record)  # before the costly scoring
    check_copy = _duplicate_check(root, slug, jsonl, meta, predictions, replace)
    check_copy()  # before the (expensive) scoring
    results = _score(predictions, data_dir, scorer or score_file, jsonl, scored)
    results["provenance"] = provenance("submit", arguments or {
        "predictions": str(predictions), "name": name, "meta": str(meta_path),
        "submissions": str(root), "data": str(data_dir), "replace": replace,
    })
    root.mkdir(parents=True, exist_ok=True)
    stage = _stage(root)
    try:
        _write_entry(stage, jsonl, meta, results, target,
                     _extra_files(record, reproduction, results, slug))
        pause = float(os.environ.get(PAUSE_ENV, "0") or 0)
        with lock(root):
            if pause:
                time.sleep(pause)
            _sweep(root)
            if os.path.lexists(target) and not replace:
                raise ConfigError(_taken(slug, root))
            check_copy()  # again: a submit that landed meanwhile
            _move_into_place(stage, target, root / f".{slug}.old", name)
            _fsync_dir(root)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return Submission(slug, target, dict(meta), results)


def _move_into_place(stage: Path, target: Path, old: Path, name: str) -> None:
    """Rename ``stage`` to ``target`` (with the lock held).

    A stored entry of the same name goes aside to ``old`` first and is deleted after.
    """
    if os.path.lexists(target):
        _check_same_name(target, name)
        os.replace(target, old)
        os.replace(stage, target)
        shutil.rmtree(old)
    else:
        os.replace(stage, target)


def _extra_files(record: bytes | None, reproduction: Mapping | None, results: Mapping,
                 slug: str) -> dict[str, bytes]:
    """The entry's ``run.json`` and ``reproduction.json``, those that it has."""
    extra = {RUN: record} if record is not None else {}
    if reproduction is not None:
        extra[REPRODUCTION] = entry_reproduction(reproduction, results, slug)
    return extra


def _duplicate_check(root: Path, slug: str, jsonl: bytes, meta: Mapping,
                     predictions: str | os.PathLike, replace: bool) -> Callable[[], None]:
    """The "one model, one entry" check of a new entry against ``root`` (issue 27 item 9).

    Returns a function that raises :class:`ConfigError` when the entry copies a stored one
    (leaderboard/intake/duplicates.py); ``submit`` calls it before scoring and under the lock.
    """
    from consistency_bench.leaderboard.intake.duplicates import (
        candidate,
        check_duplicate,
        run_record_beside,
        scan_candidates,
    )

    new = candidate(slug, jsonl, meta, run_record_beside(predictions))
    return lambda: check_duplicate(new, scan_candidates(root), how="--variant TEXT",
                                   replacing=slug if replace else None,
                                   where=f"{predictions}: ")


def check_root(root: str | os.PathLike) -> Path:
    """``--submissions`` as a ``Path``: not a link, a file or a folder inside a built folder."""
    root = Path(root)
    if root.is_symlink():
        raise ConfigError(f"--submissions {root}: is a symbolic link; name the folder itself")
    if root.exists() and not root.is_dir():
        raise ConfigError(f"--submissions {root}: is a file, not a folder")
    from consistency_bench.bench.io.output_checks import built_folder_of

    built = built_folder_of(root / "suites.json")  # the folder itself or one above it
    if built is not None:  # an entry there is a stray folder of the build (publish-suites)
        raise ConfigError(f"--submissions {root}: is inside the built suite folder {built} "
                          "(it holds suites.json); keep entries in a folder of their own")
    return root


def stored_name(entry: Path) -> str | None:
    """The ``--name`` an entry was submitted under (its results' provenance), if recorded."""
    try:
        data: Any = load_json_file(entry / RESULTS)  # any JSON value: checked by the lookups
        name = data["provenance"]["arguments"]["name"]
    except (JsonFileError, KeyError, TypeError):
        return None
    return name if isinstance(name, str) else None


def _check_same_name(target: Path, name: str) -> None:
    """Refuse to replace an entry that was submitted under another name with the same slug."""
    if target.is_symlink():
        raise ConfigError(f"{target}: is a symbolic link, not an entry; remove it first")
    if not target.is_dir():
        return
    before = stored_name(target)
    if before is not None and unicodedata.normalize("NFC", before.strip()) != \
            unicodedata.normalize("NFC", name.strip()):
        raise ConfigError(
            f"--name {name!r} gives slug {target.name!r}, which is the entry {before!r}; "
            f"--replace replaces an entry only under its own name. Pass --name {before!r}, "
            "or choose another name"
        )


def _taken(slug: str, root: Path) -> str:
    return f"submission {slug!r} already exists in {root}; pass --replace to overwrite it"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _default_warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
