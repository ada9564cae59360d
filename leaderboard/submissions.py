"""The ``submissions/`` folder: one directory per entry, written atomically under a file lock.

Layout::

    submissions/
      .lock                      filelock; held only while an entry is renamed into place
      .staging/<pid>-<random>/   a submit in progress (owner pid in the name)
      <slug>/predictions.jsonl.gz  the prediction file as JSONL, gzip with mtime 0
      <slug>/meta.yaml            validated metadata
      <slug>/results.json         the scorer's results (with each suite's content hash)

A submit validates the metadata, scores the prediction file exactly as ``score`` does (any
format), converts it to JSONL with the same reader, and writes the three files into a staging
directory *outside* the lock. Only the final step takes the
lock: check that the slug is free (or ``replace``), then one ``rename`` of the staging
directory to ``<slug>``. A process killed before that rename leaves the previous state intact
(the staging directory is swept by the next submit once its owner is dead); a replace moves the
old entry aside first and a crashed replace is rolled back by the next locked operation, or
by the next command that reads the folder (``leaderboard``, ``rescore``, ``publish``), which
says so.

Nothing here follows a symbolic link: an entry folder, or a file in it, that is a link (or
resolves outside the submissions folder) is refused, never ranked, published or written
through (:func:`entry_dirs`).
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import os
import re
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

from bench.atomic import dir_mode, pid_alive, write_text
from bench.contamination import parse_training_data
from bench.errors import BenchError, ConfigError, shorten
from bench.json_input import JsonFileError, load_json_file
from bench.predictions import read_payload, to_jsonl
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

    Letters are transliterated (NFKD, accents dropped: ``café`` -> ``cafe``). When anything
    but case, spaces and ASCII punctuation is lost doing so, a short hash of the name is
    appended (``café`` -> ``cafe-2f3a9c``, ``cafè`` -> ``cafe-8b0e41``), so two different names
    do not share a slug by accident.

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
    text = unicodedata.normalize("NFC", name.strip())
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9._-]+", "-", ascii_text.lower()).strip("-.")
    if not text.isascii():
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        slug = f"{slug[:57]}-{digest}" if slug else f"x-{digest}"
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
    unknown = sorted(str(k) for k in set(data) - set(REQUIRED_META) - set(OPTIONAL_META))
    if unknown:
        raise ConfigError(
            f"{path}: unknown field(s) {', '.join(shorten(k, 40) for k in unknown[:5])}"
            f"{' and more' if len(unknown) > 5 else ''}; accepted: "
            f"{', '.join(REQUIRED_META + OPTIONAL_META)}"
        )
    missing = [k for k in REQUIRED_META if data.get(k) in (None, "")]
    if missing:
        raise ConfigError(f"{path}: missing required field(s) {missing}")
    out: dict = {}
    for key in REQUIRED_META:
        value = data[key]
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"{path}: field {key!r} value {shorten(value)}: expected a string")
        out[key] = str(value)
    if not re.match(r"^https?://\S+$", out["link"]):
        raise ConfigError(
            f"{path}: field 'link' value {shorten(out['link'])}: expected an http(s) URL")
    if "parameters" in data and data["parameters"] is not None:
        value = data["parameters"]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(
                f"{path}: field 'parameters' value {shorten(value)}: expected an integer count "
                "or a string such as '110M'"
            )
        if isinstance(value, int) and value <= 0:
            raise ConfigError(
                f"{path}: field 'parameters' value {shorten(value)}: must be positive")
        out["parameters"] = value
    out["date"] = _date(data.get("date"), path)
    if data.get("notes") is not None:
        if not isinstance(data["notes"], str):
            raise ConfigError(
                f"{path}: field 'notes' value {shorten(data['notes'])}: expected text")
        out["notes"] = data["notes"]
    if data.get("training_data") is not None:  # syntax: bench/contamination.py
        out["training_data"] = [str(t) for t in parse_training_data(data["training_data"], path)]
    for key, value in out.items():
        for text in value if isinstance(value, list) else [value]:
            _check_unicode(text, key, path)
    return dict(sorted(out.items()))


def _check_unicode(value: object, key: str, path: str) -> None:
    """Refuse a lone surrogate (YAML's ``"\\ud800"`` escape).

    Every page that shows the field would fail to encode it: one such entry stopped
    ``leaderboard`` with a traceback, for every entry.
    """
    if not isinstance(value, str):
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError(f"{path}: field {key!r} value {shorten(value)}: not valid Unicode (a "
                          f"lone surrogate {value[exc.start]!r} at character {exc.start}); "
                          "write the text as UTF-8") from None


def _date(value: object, path: str) -> str:
    """The ``date`` field as ``YYYY-MM-DD``; today when absent.

    Only a calendar date is accepted, written ``YYYY-MM-DD`` (ASCII digits): a time
    (``2026-01-01T10:00:00``, which YAML reads as a datetime) or another ISO spelling
    (``20260101``, ``2026-W01-1``) is refused, so that ``submit`` stores only what
    ``leaderboard`` reads back.
    """
    if value is None:
        return dt.date.today().isoformat()
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str) and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise ConfigError(f"{path}: field 'date' value {shorten(value)}: expected a date "
                      "YYYY-MM-DD (no time)")


def read_meta(path: str | os.PathLike) -> dict:
    """Read and validate a ``META.yaml``."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: metadata file not found")
    return validate_meta(_load_yaml(path), str(path))


def _load_yaml(path: Path) -> object:
    """YAML from a file; a clear error for bad encoding, syntax, or an impossible date.

    Bounded (bench/safe_yaml.py): at most 256 KiB, no anchors or aliases (a 436-byte alias
    bomb expanded to 1.1 GB), at most 20 levels deep.
    """
    from bench.safe_yaml import read_yaml_file

    return read_yaml_file(path)  # an impossible date (2026-13-45): ConfigError too


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
                 target: Path) -> None:
    try:
        _write_files(stage, jsonl, meta, results)
    except OSError as exc:  # a full disk names no file: name the entry
        raise OSError(exc.errno, f"cannot write the entry ({exc.strerror or exc}); nothing "
                      "was stored", str(target)) from None


def _write_files(stage: Path, jsonl: bytes, meta: Mapping, results: Mapping) -> None:
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


def _score(path: str | os.PathLike, data_dir: str | os.PathLike, scorer: Scorer,
           stored: bytes) -> dict:
    """Score the file as ``score`` would; record the stored JSONL's path and hash."""
    from bench.results import require_coverage

    results = dict(scorer(Path(path), data_dir))
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
) -> Submission:
    """Validate, score and store one submission; return it.

    The stored results are exactly what ``score`` computes for the same file, whatever its
    format: the file itself is scored, and the JSONL stored beside it scores the same.

    Raises:
        ConfigError: Bad name or metadata, or the slug is taken and ``replace`` is false.
        PredictionFileError: The scorer rejects the prediction file.

    """
    from bench.results import provenance

    root = _check_root(root)
    slug = slugify(name)
    meta = read_meta(meta_path)
    target = root / slug
    if os.path.lexists(target) and not replace:
        raise ConfigError(_taken(slug, root))
    _check_same_name(target, name)
    jsonl = to_jsonl(os.fspath(predictions))
    scorer = scorer or score_file
    results = _score(predictions, data_dir, scorer, jsonl)
    results["provenance"] = provenance("submit", arguments or {
        "predictions": str(predictions), "name": name, "meta": str(meta_path),
        "submissions": str(root), "data": str(data_dir), "replace": replace,
    })
    root.mkdir(parents=True, exist_ok=True)
    stage = _stage(root)
    try:
        _write_entry(stage, jsonl, meta, results, target)
        pause = float(os.environ.get(PAUSE_ENV, "0") or 0)
        with lock(root):
            if pause:
                time.sleep(pause)
            _sweep(root)
            if os.path.lexists(target):
                if not replace:
                    raise ConfigError(_taken(slug, root))
                _check_same_name(target, name)
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


def _check_root(root: str | os.PathLike) -> Path:
    root = Path(root)
    if root.is_symlink():
        raise ConfigError(f"--submissions {root}: is a symbolic link; name the folder itself")
    if root.exists() and not root.is_dir():
        raise ConfigError(f"--submissions {root}: is a file, not a folder")
    from bench.atomic import built_folder_of

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


def entry_dirs(root: Path, on_error: Callable[[str], None] | None = None) -> list[Path]:
    """The entry folders of ``root`` (dot-folders skipped), sorted; links refused.

    An entry that is a symbolic link, or resolves outside ``root``, is reported to
    ``on_error`` and left out (raised without ``on_error``): it is never ranked, published or
    written through.

    Raises:
        ConfigError: Without ``on_error``, an entry is a link.

    """
    real_root = root.resolve()
    out = []
    for d in sorted(root.iterdir()):
        if d.name.startswith("."):
            continue
        problem = None
        if d.is_symlink():
            problem = (f"{d}: is a symbolic link (to {os.readlink(d)}), not an entry folder; "
                       "entries are never followed through links")
        elif not d.is_dir():
            continue
        elif d.resolve().parent != real_root:
            problem = f"{d}: resolves outside {root}; entry refused"
        if problem is None:
            out.append(d)
        elif on_error is None:
            raise ConfigError(problem)
        else:
            on_error(f"{problem}; entry skipped")
    return out


def load_all(
    root: str | os.PathLike = "submissions",
    on_error: Callable[[str], None] | None = None,
    *,
    check_values: bool = True,
    warn: Callable[[str], None] | None = None,
    repair: bool = True,
) -> list[Submission]:
    """Every stored submission, sorted by slug (dot-folders are skipped).

    A replace interrupted between its two renames is rolled back first, with a warning.

    Args:
        root: The submissions folder.
        on_error: When given, an unreadable entry (missing file, bad ``meta.yaml``, corrupt
            ``results.json``, a value out of range, a symbolic link) is reported to it as one
            line and skipped, so one stray folder does not block the whole leaderboard;
            otherwise it raises.
        check_values: Check the stored values (:func:`leaderboard.stored.check_values`);
            ``rescore`` turns it off, since it recomputes them.
        warn: Receives the roll-back notes (default: stderr).
        repair: Roll back an interrupted replace (else only warn about it).

    Raises:
        ConfigError: The folder is missing, or (without ``on_error``) an entry is unreadable.

    """
    root = Path(root)
    if root.is_symlink():
        raise ConfigError(f"{root}: the submissions folder is a symbolic link; name it itself")
    if not root.is_dir():
        raise ConfigError(f"{root}: submissions folder not found")
    recover(root, warn or on_error or _default_warn, repair=repair)
    out = []
    for d in entry_dirs(root, on_error):
        try:
            out.append(load_entry(d, check_values=check_values))
        except BenchError as exc:
            if on_error is None:
                raise
            on_error(f"{exc}; entry skipped")
    return out


def load_entry(d: Path, *, check_values: bool = True) -> Submission:
    """One stored entry, its metadata and results checked.

    Raises:
        ConfigError: A missing file, a file that is a symbolic link, invalid ``meta.yaml`` or
            corrupt ``results.json`` (a value of the wrong type or out of range included),
            naming the file.

    """
    from leaderboard.stored import check_values as check

    links = [f for f in (PREDICTIONS, META, RESULTS) if (d / f).is_symlink()]
    if links:
        raise ConfigError(f"{d / links[0]}: is a symbolic link; an entry's files must be its "
                          "own regular files")
    missing = [f for f in (PREDICTIONS, META, RESULTS) if not (d / f).is_file()]
    if missing:
        raise ConfigError(f"{d}: incomplete submission, missing {missing}")
    meta = validate_meta(_load_yaml(d / META), str(d / META))
    try:
        results = load_json_file(d / RESULTS)
    except JsonFileError as exc:  # too deep, not JSON, not UTF-8, a key given twice
        raise ConfigError(str(exc)) from None
    if not isinstance(results, dict) or not isinstance(results.get("suites"), dict):
        raise ConfigError(f"{d / RESULTS}: not a results JSON (no 'suites' mapping)")
    for suite, entry in results["suites"].items():
        if not isinstance(entry, dict) or "main_score" not in entry:
            raise ConfigError(f"{d / RESULTS}: suite {suite!r} has no 'main_score'")
    if check_values:
        check(results, str(d / RESULTS))
    return Submission(d.name, d, meta, results)


def _file_sha256(path: Path) -> str:
    with path.open("rb") as fh:
        digest = hashlib.sha256()  # hashlib.file_digest needs Python 3.11
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
        return digest.hexdigest()


def site_record(root: str | os.PathLike, subs: list[Submission]) -> dict:
    """What a rendered site was made from: the submissions folder and each entry's files.

    ``publish`` checks the entries it sends against this record (:func:`check_site_record`),
    so a site is never published beside entries of another ``--submissions``.
    """
    return {
        "submissions": str(root),  # as given, so the record does not depend on the machine
        "entries": {s.slug: {name: _file_sha256(s.path / name) for name in (META, RESULTS)}
                    for s in subs},
    }


def site_entries(record: Mapping | None, site: Path, root: Path) -> dict[str, Path]:
    """The entries a rendered site shows, as folders of ``root``, checked against the site.

    ``publish`` sends exactly these, so a site is never published beside the entries of
    another ``--submissions`` (entries of ``root`` that the site does not show are left out).

    Args:
        record: The site's record (:func:`site_record`), ``None`` when it has none.
        site: The site folder, for the message.
        root: The submissions folder.

    Raises:
        ConfigError: The site has no record, or an entry it shows is missing from ``root``, a
            link, or its ``meta.yaml`` / ``results.json`` differ from what was rendered.

    """
    if record is None or not isinstance(record.get("entries"), Mapping):
        raise ConfigError(
            f"{site}: the site does not record which submissions it shows (rendered before "
            "this check existed, or not by `consistency-bench leaderboard`); render it again "
            "with `consistency-bench leaderboard --submissions DIR --out SITE`"
        )
    recover(root, _default_warn)
    found = {d.name: d for d in entry_dirs(root)}
    problems = []
    for name, files in sorted(record["entries"].items()):
        if name not in found:
            problems.append(f"{name}: not in {root}")
            continue
        for file in (META, RESULTS):
            path = found[name] / file
            want = files.get(file) if isinstance(files, Mapping) else None
            if path.is_symlink() or not path.is_file():
                problems.append(f"{name}/{file}: missing or a symbolic link")
            elif _file_sha256(path) != want:
                problems.append(f"{name}/{file}: differs from the one the site was rendered "
                                "from")
    if problems:
        more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
        raise ConfigError(
            f"--site {site} was rendered from other submissions than --submissions {root} "
            f"(recorded: {record.get('submissions')}): " + "; ".join(problems[:4]) + more
            + "; render the site again from these submissions. Nothing was sent"
        )
    return {name: found[name] for name in sorted(record["entries"])}


def read_stored_predictions(sub: Submission) -> bytes:
    """Return the stored predictions as JSONL bytes."""
    return read_payload(sub.path / PREDICTIONS)


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
    return changes


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
    from bench.results import provenance

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
