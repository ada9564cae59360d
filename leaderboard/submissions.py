"""The ``submissions/`` folder: one directory per entry, written atomically under a file lock.

Layout::

    submissions/
      .lock                      filelock; held only while an entry is renamed into place
      .staging/<pid>-<random>/   a submit in progress (owner pid in the name)
      <slug>/predictions.jsonl.gz  the prediction file as JSONL, gzip with mtime 0
      <slug>/meta.yaml            validated metadata
      <slug>/results.json         the scorer's results (with each suite's content hash)

A submit validates the metadata, normalises the predictions to JSONL, scores them, and writes
the three files into a staging directory *outside* the lock. Only the final step takes the
lock: check that the slug is free (or ``replace``), then one ``rename`` of the staging
directory to ``<slug>``. A process killed before that rename leaves the previous state intact
(the staging directory is swept by the next submit once its owner is dead); a replace moves the
old entry aside first and a crashed replace is rolled back by the next locked operation.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from bench.atomic import write_text
from bench.contamination import parse_training_data
from bench.errors import BenchError, ConfigError, PredictionFileError
from bench.scoring import score_file

PREDICTIONS = "predictions.jsonl.gz"
META = "meta.yaml"
RESULTS = "results.json"
LOCK = ".lock"
STAGING = ".staging"
#: Test hook: seconds to sleep after staging, before the entry is renamed into place.
PAUSE_ENV = "CONSISTENCY_BENCH_SUBMIT_PAUSE"

REQUIRED_META = ("model", "revision", "license", "link", "contact")
OPTIONAL_META = ("parameters", "date", "notes", "training_data")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

Scorer = Callable[..., dict]


@dataclass(frozen=True)
class Submission:
    """One stored entry."""

    slug: str
    path: Path
    meta: dict
    results: dict


def slugify(name: str) -> str:
    """Turn a display name into a folder name; reject anything that could escape the folder.

    Raises:
        ConfigError: Empty names, path separators, ``..``, or nothing left after slugging.

    """
    if not name or not name.strip():
        raise ConfigError("submission name is empty; pass --name NAME (letters, digits, . _ -)")
    if "/" in name or "\\" in name or ".." in name or "\x00" in name:
        raise ConfigError(
            f"submission name {name!r} contains a path separator or '..'; use letters, "
            "digits, '.', '_' and '-' only"
        )
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.strip().lower()).strip("-.")
    if not SLUG_RE.match(slug):
        raise ConfigError(
            f"submission name {name!r} gives slug {slug!r}, which is not valid: it must start "
            "with a letter or digit and have at most 64 of a-z 0-9 . _ -"
        )
    return slug


def validate_meta(data: object, path: str = META) -> dict:
    """Check submission metadata; return it normalised (keys sorted, date as ISO string).

    Raises:
        ConfigError: Naming the file, the field and the bad value.

    """
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of fields, got {type(data).__name__}")
    unknown = sorted(set(data) - set(REQUIRED_META) - set(OPTIONAL_META))
    if unknown:
        raise ConfigError(
            f"{path}: unknown field(s) {unknown}; accepted: "
            f"{', '.join(REQUIRED_META + OPTIONAL_META)}"
        )
    missing = [k for k in REQUIRED_META if data.get(k) in (None, "")]
    if missing:
        raise ConfigError(f"{path}: missing required field(s) {missing}")
    out: dict = {}
    for key in REQUIRED_META:
        value = data[key]
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"{path}: field {key!r} value {value!r}: expected a string")
        out[key] = str(value)
    if not re.match(r"^https?://\S+$", out["link"]):
        raise ConfigError(f"{path}: field 'link' value {out['link']!r}: expected an http(s) URL")
    if "parameters" in data and data["parameters"] is not None:
        value = data["parameters"]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(
                f"{path}: field 'parameters' value {value!r}: expected an integer count or a "
                "string such as '110M'"
            )
        if isinstance(value, int) and value <= 0:
            raise ConfigError(f"{path}: field 'parameters' value {value!r}: must be positive")
        out["parameters"] = value
    date = data.get("date")
    if date is None:
        date = dt.date.today()
    if isinstance(date, str):
        try:
            date = dt.date.fromisoformat(date)
        except ValueError:
            raise ConfigError(
                f"{path}: field 'date' value {date!r}: expected YYYY-MM-DD"
            ) from None
    if not isinstance(date, dt.date):
        raise ConfigError(f"{path}: field 'date' value {date!r}: expected YYYY-MM-DD")
    out["date"] = date.isoformat()
    if data.get("notes") is not None:
        if not isinstance(data["notes"], str):
            raise ConfigError(f"{path}: field 'notes' value {data['notes']!r}: expected text")
        out["notes"] = data["notes"]
    if data.get("training_data") is not None:  # syntax: bench/contamination.py
        out["training_data"] = [str(t) for t in parse_training_data(data["training_data"], path)]
    return dict(sorted(out.items()))


def read_meta(path: str | os.PathLike) -> dict:
    """Read and validate a ``META.yaml``."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: metadata file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    return validate_meta(data, str(path))


def predictions_to_jsonl(path: str | os.PathLike) -> bytes:
    """Return the prediction file as JSONL bytes (CSV / Parquet converted row by row)."""
    path = Path(path)
    if not path.is_file():
        raise PredictionFileError(str(path), "file not found")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return path.read_bytes()
    if suffix == ".gz":
        with gzip.open(path, "rb") as fh:
            return fh.read()
    if suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        raise PredictionFileError(
            str(path), f"unknown file type {suffix!r}; accepted: .jsonl, .csv, .parquet"
        )
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows)


def gzip_bytes(data: bytes) -> bytes:
    """Deterministic gzip (mtime 0, no file name)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    return buf.getvalue()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(root: Path) -> None:
    """Under the lock: remove dead stagings, roll back a crashed replace."""
    staging = root / STAGING
    if staging.is_dir():
        for d in staging.iterdir():
            try:
                pid = int(d.name.split("-", 1)[0])
            except ValueError:
                pid = -1
            if pid <= 0 or not _pid_alive(pid):
                shutil.rmtree(d, ignore_errors=True)
    for old in root.glob(".*.old"):
        slug = old.name[1:-4]
        target = root / slug
        if target.exists():
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(old, target)


def _stage(root: Path) -> Path:
    staging = root / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    # the owner's pid is in the name, so the directory is never seen without it
    return Path(tempfile.mkdtemp(dir=staging, prefix=f"{os.getpid()}-"))


def _write_entry(stage: Path, jsonl: bytes, meta: Mapping, results: Mapping) -> None:
    import yaml

    (stage / PREDICTIONS).write_bytes(gzip_bytes(jsonl))
    (stage / META).write_text(
        yaml.safe_dump(dict(meta), sort_keys=True, allow_unicode=True), encoding="utf-8"
    )
    (stage / RESULTS).write_text(
        json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for name in (PREDICTIONS, META, RESULTS):
        with open(stage / name, "rb") as fh:
            os.fsync(fh.fileno())


def _score(jsonl: bytes, stage: Path, data_dir: str | os.PathLike, scorer: Scorer,
           shown: str = "predictions") -> dict:
    plain = stage / "predictions.jsonl"
    plain.write_bytes(jsonl)
    try:
        results = scorer(plain, data_dir)
    except BenchError as exc:  # name the user's file, not the staging copy
        exc.args = tuple(
            a.replace(str(plain), shown) if isinstance(a, str) else a for a in exc.args
        )
        raise
    finally:
        plain.unlink()
    results = dict(results)
    results["predictions"] = {**results.get("predictions", {}), "path": PREDICTIONS}
    if not results.get("suites"):
        skipped = results.get("skipped", {})
        detail = "; ".join(f"{k}: {v}" for k, v in sorted(skipped.items())[:5])
        raise PredictionFileError(
            "predictions", f"no suite could be scored (every suite incomplete). {detail}"
        )
    return results


def lock(root: Path) -> FileLock:
    """Return the folder's file lock."""
    root.mkdir(parents=True, exist_ok=True)
    return FileLock(str(root / LOCK))


def submit(
    predictions: str | os.PathLike,
    *,
    name: str,
    meta_path: str | os.PathLike,
    root: str | os.PathLike = "submissions",
    data_dir: str | os.PathLike = "consistency-bench",
    replace: bool = False,
    scorer: Scorer | None = None,
) -> Submission:
    """Validate, score and store one submission; return it.

    Raises:
        ConfigError: Bad name or metadata, or the slug is taken and ``replace`` is false.
        PredictionFileError: The scorer rejects the prediction file.

    """
    root = Path(root)
    slug = slugify(name)
    meta = read_meta(meta_path)
    target = root / slug
    if target.exists() and not replace:
        raise ConfigError(_taken(slug, root))
    jsonl = predictions_to_jsonl(predictions)
    scorer = scorer or score_file
    root.mkdir(parents=True, exist_ok=True)
    stage = _stage(root)
    try:
        results = _score(jsonl, stage, data_dir, scorer, str(predictions))
        _write_entry(stage, jsonl, meta, results)
        pause = float(os.environ.get(PAUSE_ENV, "0") or 0)
        with lock(root):
            if pause:
                time.sleep(pause)
            _sweep(root)
            if target.exists():
                if not replace:
                    raise ConfigError(_taken(slug, root))
                old = root / f".{slug}.old"
                os.replace(target, old)
                os.replace(stage, target)
                shutil.rmtree(old)
            else:
                os.replace(stage, target)
            _fsync_dir(root)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return Submission(slug, target, dict(meta), results)


def _taken(slug: str, root: Path) -> str:
    return f"submission {slug!r} already exists in {root}; pass --replace to overwrite it"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load_all(root: str | os.PathLike = "submissions") -> list[Submission]:
    """Every stored submission, sorted by slug (dot-folders are skipped)."""
    import yaml

    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root}: submissions folder not found")
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        missing = [f for f in (PREDICTIONS, META, RESULTS) if not (d / f).is_file()]
        if missing:
            raise BenchError(f"{d}: incomplete submission, missing {missing}")
        meta = yaml.safe_load((d / META).read_text(encoding="utf-8"))
        results = json.loads((d / RESULTS).read_text(encoding="utf-8"))
        out.append(Submission(d.name, d, meta, results))
    return out


def read_stored_predictions(sub: Submission) -> bytes:
    """Return the stored predictions as JSONL bytes."""
    with gzip.open(sub.path / PREDICTIONS, "rb") as fh:
        return fh.read()


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
    return changes


def rescore(
    root: str | os.PathLike = "submissions",
    data_dir: str | os.PathLike = "consistency-bench",
    *,
    scorer: Scorer | None = None,
    dry_run: bool = False,
) -> list[Change]:
    """Rescore every submission against ``data_dir``; rewrite changed results atomically."""
    root = Path(root)
    scorer = scorer or score_file
    changes: list[Change] = []
    for sub in load_all(root):
        stage = _stage(root)
        try:
            new = _score(read_stored_predictions(sub), stage, data_dir, scorer,
                         str(sub.path / PREDICTIONS))
        finally:
            shutil.rmtree(stage, ignore_errors=True)
        found = diff_results(sub.slug, sub.results, new)
        changes.extend(found)
        if found and not dry_run:
            with lock(root):
                write_text(
                    sub.path / RESULTS,
                    json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                )
    return changes
