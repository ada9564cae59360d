"""The run record's format: file names, version, validation, reading and writing.

A run record is one JSON object (docs/runner.md, "Run record")::

    schema_version    1
    harness_version   consistency-bench version that made the predictions
    git_commit        commit of the harness checkout (null for an installed wheel)
    date              UTC time the record was written
    mode              classifier | text-to-text | loglikelihood | generate | baseline
    model             {id, source (hub | local | baseline | api), revision (asked), commit,
                       commit_source, weights_sha256, ...}
    settings          everything that changes the numbers (dtype, max length, chat, few-shot K
                      and seed, prompts version, ...)
    suites            [{name, sha256, rows}] of the suites predicted
    predictions       {file, sha256, rows} of the prediction file it describes
    device            {type, name, precision, ...} of the machine that ran it
    packages          versions of the libraries that computed the numbers
    run               how the work was split (shard, processes, parts), batch size, seconds
    api               null, or for a served model what the endpoint reported

``predictions.sha256`` ties the record to the exact file: ``submit`` stores a record only
beside the file it describes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, shorten
from consistency_bench.bench.io.digest import file_sha256

SCHEMA_VERSION = 1
#: ``<PRED>.run.json`` beside a prediction file ``<PRED>``.
SUFFIX = ".run.json"
#: The record's name inside a submission entry.
ENTRY_FILE = "run.json"
#: Modes of a run: local classifier, T5-style text-to-text, causal LM log-likelihood,
#: generated answers (served chat models), a baseline's deterministic recipe.
MODES = ("classifier", "text-to-text", "loglikelihood", "generate", "baseline")
#: Where the weights come from (``api``: a served model, issue 30; its weights are not here).
SOURCES = ("hub", "local", "baseline", "api")
#: Largest record read (a record is a few KB; a bigger file is not one).
MAX_BYTES = 1 << 20
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def record_path(predictions: str | os.PathLike) -> Path:
    """The record beside a prediction file: ``<PRED>.run.json``."""
    return Path(os.fspath(predictions) + SUFFIX)


def _fail(where: str, field: str, value: object, expected: str) -> ConfigError:
    return ConfigError(f"{where}: field {field!r} value {shorten(value)}: expected {expected}")


def _strings_clean(value: object, where: str, field: str) -> None:
    """No control characters in any string of the record (a terminal or a page shows them)."""
    if isinstance(value, str):
        if _CONTROL.search(value):
            raise _fail(where, field, value, "text without control characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings_clean(key, where, field)
            _strings_clean(item, where, f"{field}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _strings_clean(item, where, f"{field}[{i}]")


def _check_count(value: object, where: str, field: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _fail(where, field, value, "a count (integer >= 0)")


def _check_suites(suites: object, where: str) -> None:
    if not isinstance(suites, list):
        raise _fail(where, "suites", suites, "a list of {name, sha256, rows}")
    seen = set()
    for i, item in enumerate(suites):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise _fail(where, f"suites[{i}]", item, "{name, sha256, rows}")
        if item["name"] in seen:
            raise _fail(where, f"suites[{i}].name", item["name"], "each suite once")
        seen.add(item["name"])
        if not isinstance(item.get("sha256"), str) or not _SHA256.fullmatch(item["sha256"]):
            raise _fail(where, f"suites[{i}].sha256", item.get("sha256"), "64 hex digits")
        _check_count(item.get("rows"), where, f"suites[{i}].rows")


def validate_record(data: object, where: str) -> dict:
    """Check a run record's structure; return it.

    Checks what ``submit``, ``reproduce`` and the leaderboard read: the version, the mode,
    the model's id and source, the settings object, the suites with their sha256, the
    prediction file's sha256, and that no string holds a control character.

    Raises:
        ConfigError: Naming the file, the field and the bad value.

    """
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: not a run record (expected a JSON object, got "
                          f"{type(data).__name__})")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise _fail(where, "schema_version", data.get("schema_version"),
                    f"{SCHEMA_VERSION} (this version reads run records of version "
                    f"{SCHEMA_VERSION})")
    _strings_clean(data, where, "record")
    if data.get("mode") not in MODES:
        raise _fail(where, "mode", data.get("mode"), f"one of {', '.join(MODES)}")
    model = data.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("id"), str) or not model["id"]:
        raise _fail(where, "model", model, "an object with a non-empty 'id'")
    if model.get("source") not in SOURCES:
        raise _fail(where, "model.source", model.get("source"), f"one of {', '.join(SOURCES)}")
    for key in ("commit", "revision", "weights_sha256", "name"):
        if model.get(key) is not None and not isinstance(model[key], str):
            raise _fail(where, f"model.{key}", model[key], "a string or null")
    if not isinstance(data.get("settings"), dict):
        raise _fail(where, "settings", data.get("settings"), "an object")
    _check_suites(data.get("suites"), where)
    predictions = data.get("predictions")
    if (not isinstance(predictions, dict) or not isinstance(predictions.get("sha256"), str)
            or not _SHA256.fullmatch(predictions["sha256"])):
        raise _fail(where, "predictions", predictions, "{file, sha256 (64 hex digits), rows}")
    _check_count(predictions.get("rows"), where, "predictions.rows")
    api = data.get("api")
    if api is not None and not isinstance(api, dict):
        raise _fail(where, "api", api, "null or an object")
    for key in ("device", "packages", "run"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise _fail(where, key, data[key], "an object or null")
    return data


def read_record(path: str | os.PathLike) -> dict:
    """Read and validate a run record.

    Raises:
        ConfigError: Not a regular file, not JSON, too large or deep, or not a valid record.

    """
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: run record not found (or not a regular file)")
    try:
        data = load_json_file(path, max_bytes=MAX_BYTES)
    except JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    return validate_record(data, str(path))


def record_text(record: dict) -> str:
    """The record as written: indented JSON, keys sorted, one trailing newline."""
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_record(path: str | os.PathLike, record: dict) -> Path:
    """Validate ``record`` and write it to ``path`` atomically (temporary file, then rename)."""
    from consistency_bench.bench.io.write import write_text

    validate_record(record, str(path))
    write_text(path, record_text(record))
    return Path(path)


def describes(record: dict, predictions: str | os.PathLike) -> bool:
    """Whether ``record`` was written for exactly this prediction file (its sha256)."""
    return record["predictions"]["sha256"] == file_sha256(predictions)


def new_record(*, mode: str, model: dict, settings: dict, suites: list[dict],
               predictions: str | os.PathLike, rows: int, device: dict | None,
               packages: dict, run: dict, api: dict | None = None) -> dict:
    """A run record with the fields every producer shares filled in (version, date, file).

    ``predict`` (:mod:`consistency_bench.bench.runrecord.predict_record`), ``baseline``
    (:mod:`consistency_bench.bench.runrecord.baseline_record`) and served runs (issue 30: ``mode``
    and ``api``
    their own) build theirs with it; ``predictions`` is the file written, hashed here.
    """
    import datetime as dt

    from consistency_bench.bench import __version__
    from consistency_bench.bench.scoring.results_json import git_commit

    return {
        "schema_version": SCHEMA_VERSION,
        "harness_version": __version__,
        "git_commit": git_commit(),
        "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "mode": mode,
        "model": model,
        "settings": settings,
        "suites": suites,
        "predictions": {"file": Path(predictions).name, "sha256": file_sha256(predictions),
                        "rows": rows, "sampled": False},
        "device": device,
        "packages": packages,
        "run": run,
        "api": api,
    }
