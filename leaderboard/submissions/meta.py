"""A submission's names and metadata: the entry's file names, its slug, ``meta.yaml`` checked.

Part of :mod:`consistency_bench.leaderboard.submissions` (the folder's layout is described there).

From ``consistency_bench.leaderboard.submissions``, a re-export module that issue 29 deleted:

The ``submissions/`` folder: one directory per entry, written atomically under a file lock.

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

The parts live in modules of one job each: :mod:`~consistency_bench.leaderboard.submissions.meta`
(the file
names, :class:`Submission`, the slug and ``meta.yaml``),
:mod:`~consistency_bench.leaderboard.submissions.storage`
(staging, the lock, ``submit``, crash recovery),
:mod:`~consistency_bench.leaderboard.submissions.reader` (entry
folders, :func:`load_all`, the site record) and
:mod:`~consistency_bench.leaderboard.submissions.rescore`
(``rescore``).

"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, shorten
from consistency_bench.bench.scoring.contamination import parse_training_data

PREDICTIONS = "predictions.jsonl.gz"
META = "meta.yaml"
RESULTS = "results.json"


REQUIRED_META = ("model", "revision", "license", "link", "contact")
OPTIONAL_META = ("parameters", "date", "notes", "training_data", "variant")
#: Longest accepted ``variant`` (one line saying what differs from another entry of the model).
VARIANT_MAX = 200
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
    problem = slug_problem(slug)
    if problem:
        raise ConfigError(f"submission name {name!r} gives slug {slug!r}, which is not valid: "
                          f"{problem}")
    return slug


def slug_problem(slug: str) -> str | None:
    """What is wrong with ``slug`` as an entry's folder name, or ``None``: the one name rule.

    ``submit`` (through :func:`slugify`), ``submit --hub`` and ``review`` (the name of a pull
    request's ``requests/<slug>/``) all apply this rule, first, so that a name one of them
    accepts is never refused by another later (``review`` accepted ``0...`` and ``submit``
    refused it inside ``review --merge``, which then stopped every later merge). A valid slug
    is its own slug: ``slugify(slug) == slug``.
    """
    if not SLUG_RE.fullmatch(slug):
        return ("it must start with a letter or digit and have at most 64 of "
                "a-z 0-9 . _ -")
    if ".." in slug:
        return "it holds '..'"
    if slug.endswith((".", "-")):
        return "it ends with '.' or '-'"
    return None


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
    if data.get("parameters") is not None:
        out["parameters"] = _parameters(data["parameters"], path)
    if data.get("variant") is not None:
        out["variant"] = variant_text(data["variant"], f"{path}: field 'variant'")
    out["date"] = _date(data.get("date"), path)
    if data.get("notes") is not None:
        if not isinstance(data["notes"], str):
            raise ConfigError(
                f"{path}: field 'notes' value {shorten(data['notes'])}: expected text")
        out["notes"] = data["notes"]
    if data.get("training_data") is not None:  # syntax: bench/scoring/contamination.py
        out["training_data"] = [str(t) for t in parse_training_data(data["training_data"], path)]
    for key, value in out.items():
        for text in value if isinstance(value, list) else [value]:
            _check_unicode(text, key, path)
            _check_controls(text, key, path)
    return dict(sorted(out.items()))


#: Fields of running text, where a tab and a line break are allowed (nowhere else).
PROSE_META = ("notes",)
#: Bidirectional embeddings, overrides and isolates: they reorder what a page or a terminal
#: shows (the "Trojan Source" trick), so a field could read as something else.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _check_controls(value: object, key: str, path: str) -> None:
    """Refuse control characters: NUL, ANSI escapes, C1 codes, bidirectional controls.

    ``meta.yaml`` fields are shown on the page, in the review comment, in a terminal and in
    the Hub's YAML: an ANSI escape rewrites what a maintainer's terminal shows, a NUL cuts
    the text in C code. A tab and a line break are allowed in :data:`PROSE_META` only.
    """
    if not isinstance(value, str):
        return
    allowed = "\t\n" if key in PROSE_META else ""
    for i, char in enumerate(value):
        if char in allowed:
            continue
        if unicodedata.category(char) == "Cc" or char in _BIDI:
            where = "" if allowed else " (tab and line break only in notes)"
            raise ConfigError(f"{path}: field {key!r} value {shorten(value)}: control character "
                              f"U+{ord(char):04X} at character {i}; write plain text{where}")


def _parameters(value: object, path: str) -> int:
    """``parameters``: the model's parameter count, an integer >= 0 (0: nothing trained).

    For an entry with one model per task, the largest of them. Text (``22.7M; AdamW ...``,
    ``1 threshold per task``) is refused: the page filters on the number, and prose belongs in
    ``notes``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"{path}: field 'parameters' value {shorten(value)}: expected the model's parameter "
            "count as an integer >= 0 (e.g. 22713216; 0 when nothing is trained); put any "
            "description in 'notes'")
    return value


def variant_text(value: object, where: str) -> str:
    """A ``variant``: one line saying what differs from another entry of the model.

    At most :data:`VARIANT_MAX` characters, e.g. few-shot K, chat template, prompt.

    Raises:
        ConfigError: Not text, empty, several lines, control characters or too long.

    """
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} value {shorten(value)}: expected one line of text saying "
                          "what differs (e.g. '5-shot, chat template')")
    text = value.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in text) or len(text) > VARIANT_MAX:
        raise ConfigError(f"{where} value {shorten(value)}: expected one line of at most "
                          f"{VARIANT_MAX} characters without control characters")
    return text


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
    from consistency_bench.bench.io.output_checks import require_regular_file

    path = require_regular_file(path, f"{path}: metadata file")  # a FIFO, /dev/zero: said so
    return validate_meta(_load_yaml(path), str(path))


def _load_yaml(path: Path) -> object:
    """YAML from a file; a clear error for bad encoding, syntax, or an impossible date.

    Bounded (bench/io/safe_yaml.py): at most 256 KiB, no anchors or aliases (a 436-byte alias
    bomb expanded to 1.1 GB), at most 20 levels deep.
    """
    from consistency_bench.bench.io.safe_yaml import read_yaml_file

    return read_yaml_file(path)  # an impossible date (2026-13-45): ConfigError too
