"""JSON from users: nesting depth bounded before any parser sees it, keys unique.

pyarrow's JSON reader recurses once per level of nesting and crashes the whole process
(SIGSEGV, exit 139) on a line nested about 20,000 deep; Python's ``json`` raises
``RecursionError`` at about 1,000 levels. No input of the harness needs more than a few
levels (a prediction record needs 2), so every JSON text read from a user is refused above
:data:`MAX_DEPTH` levels, before it is parsed.

Two checks, one rule:

* :class:`LineScanner`: a cheap streaming bound for JSONL, fed the raw blocks a parser is about
  to read. A line can be no deeper than the number of ``[`` and ``{`` bytes it holds, so only a
  line with more than :data:`MAX_DEPTH` of them is suspect: the block is reduced to those bytes
  and line breaks (``bytes.translate``, C speed) and searched for such a run. A suspect block
  raises :class:`DeepJsonError`; the caller then reads the file line by line with the exact
  check, which names the line (or finds the brackets were inside strings, and goes on).
* :func:`depth_above`: the exact depth of one JSON text (strings removed first), computed only
  when the text holds more than :data:`MAX_DEPTH` opening brackets.

Duplicate keys: ``json.loads`` keeps the last value of a key given twice; pyarrow refuses the
line. :func:`unique_object` (an ``object_pairs_hook``) makes Python's parser refuse it too.

Every JSON text the harness reads from a file goes through one of two functions that apply
both rules and word every refusal the same way:

* :func:`parse_json`: one text (a line of a JSONL file with ``line=True``); raises
  :class:`JsonTextError`, which the line readers turn into their error naming the line;
* :func:`load_json_file`: a whole file (``suites.json``, ``results.json``, a BECEL arrays
  file, ...), read up to :data:`MAX_JSON_FILE_BYTES`; raises :class:`JsonFileError` (a
  :class:`consistency_bench.bench.errors.DataError`) naming the file.

Pure functions and a small state object; no heavy imports beyond numpy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from consistency_bench.bench.errors import DataError, shorten

#: Deepest nesting read from any JSON input (arrays and objects, the outermost counting 1).
MAX_DEPTH = 100
#: Most bytes of a JSON file read whole by :func:`load_json_file` (64 MiB). The files read so
#: are small (the ``suites.json`` of 51 suites: 71 KB; a committed ``results.json``: at most
#: 75 KB; a BECEL arrays file of the largest suite, 158,250 labels: under 2 MB); the cap keeps
#: ``json.loads`` from building a multi-GB tree from a huge or endless file (``/dev/zero``).
MAX_JSON_FILE_BYTES = 64 << 20
#: The wording of a key given twice (after ``key`` or ``key 'x'``).
_TWICE = "given twice in one object (which value is meant?)"

#: ``bytes.translate`` deletion tables: keep openers and line breaks / every bracket.
_NOT_OPENER_OR_NEWLINE = bytes(b for b in range(256) if b not in b"[{\n")
#: ``{`` read as ``[``, so that a run of openers is one plain substring search.
_BRACE_AS_BRACKET = bytes.maketrans(b"{", b"[")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int64)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1
#: A JSON string (escapes included); brackets inside strings are not nesting.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


class DeepJsonError(Exception):
    """A block holds a line that may be nested more than :data:`MAX_DEPTH` deep.

    Raised by :class:`LineScanner` before the block reaches a parser; not a
    :class:`consistency_bench.bench.errors.BenchError`: the caller runs the exact, line-naming
    check.
    """


class LineScanner:
    """Streaming bound on the nesting depth of each line of a JSONL byte stream.

    Feed the blocks in order; :meth:`feed` raises :class:`DeepJsonError` as soon as one line
    (possibly spanning blocks) holds more than ``limit`` opening brackets. Lines with fewer are
    certainly no deeper than ``limit``.
    """

    def __init__(self, limit: int = MAX_DEPTH):
        self.limit = limit
        self._run = 0  # openers of the current, unfinished line
        self._long = b"[" * (limit + 1)

    def feed(self, block) -> None:
        """Check the next block (bytes-like)."""
        if not isinstance(block, bytes):
            block = bytes(block)
        reduced = block.translate(_BRACE_AS_BRACKET, _NOT_OPENER_OR_NEWLINE)
        if not reduced:
            return
        head = len(reduced) - len(reduced.lstrip(b"["))
        if head == len(reduced):  # no line break in the block
            self._run += head
        else:
            if self._run + head > self.limit or self._long in reduced:
                raise DeepJsonError
            self._run = len(reduced) - len(reduced.rstrip(b"["))
        if self._run > self.limit:
            raise DeepJsonError


def exact_depth(text: bytes | str) -> int:
    """The nesting depth of one JSON text: brackets inside strings do not count.

    For invalid JSON (an unterminated string, a stray closing bracket) this is an upper bound
    of how deep a parser goes before it stops at the error.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    reduced = _STRING.sub(b"", data).translate(None, _NOT_BRACKET)
    if not reduced:
        return 0
    return max(int(np.cumsum(_STEP[np.frombuffer(reduced, dtype=np.uint8)]).max()), 0)


def depth_above(text: bytes | str, limit: int = MAX_DEPTH) -> int | None:
    """The depth of one JSON text when it is above ``limit``, else ``None``.

    Cheap for ordinary texts: the exact depth is computed only when the text holds more than
    ``limit`` opening brackets.
    """
    if isinstance(text, str):
        openers = text.count("[") + text.count("{")
    else:
        openers = text.count(b"[") + text.count(b"{")
    if openers <= limit:
        return None
    depth = exact_depth(text)
    return depth if depth > limit else None


def too_deep_message(depth: int, limit: int = MAX_DEPTH) -> str:
    """The shared wording of the error."""
    return (f"JSON nested {depth} levels deep; at most {limit} are read (refused before "
            "parsing: deep nesting crashes JSON parsers)")


class DuplicateKeyError(ValueError):
    """A JSON object names a key twice (``json.loads`` would keep the last value silently)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_object(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook`` for ``json.loads``: a dict, or :class:`DuplicateKeyError`."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return out


class JsonTextError(ValueError):
    """A JSON text refused by :func:`parse_json`; the message is the shared wording.

    Attributes:
        reason: Why, without the key: ``"key given twice in one object (...)"`` for a key
            given twice (for errors that name the key as their field).
        key: The key given twice, else ``None``.

    """

    def __init__(self, reason: str, key: str | None = None):
        self.reason, self.key = reason, key
        super().__init__(reason if key is None else f"key {shorten(key)} {_TWICE}")


def parse_json(text: str, *, line: bool = False) -> object:
    """One JSON text read from a user: depth bounded before parsing, keys unique.

    Args:
        text: The text: a whole file, or one line of a JSONL file.
        line: Word a syntax error for one line (its column, and "truncated line?").

    Raises:
        JsonTextError: Nested more than :data:`MAX_DEPTH` deep, not JSON (an integer of more
            than 4,300 digits included), or a key given twice.

    """
    depth = depth_above(text)
    if depth is not None:
        raise JsonTextError(too_deep_message(depth))
    try:
        return json.loads(text, object_pairs_hook=unique_object)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at column {exc.colno}); truncated line?" if line else f"{exc})"
        raise JsonTextError(f"not valid JSON ({where}") from None
    except DuplicateKeyError as exc:
        raise JsonTextError(f"key {_TWICE}", exc.key) from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        what = "an integer of more than 4,300 digits" if "digits" in str(exc) else exc
        raise JsonTextError(f"not valid JSON ({what})") from None


class JsonFileError(DataError):
    """A JSON file that cannot be read: unreadable, too large, not UTF-8, or not accepted.

    Not accepted: refused by :func:`parse_json`. The message is ``"<file>: <detail>"``.

    Attributes:
        path: The file.
        detail: The message without the file.
        reason: As :attr:`JsonTextError.reason` (``detail`` without the key).
        key: The key given twice, else ``None``.

    """

    def __init__(self, path: str | Path, reason: str, key: str | None = None):
        self.path, self.reason, self.key = str(path), reason, key
        self.detail = reason if key is None else f"key {shorten(key)} {_TWICE}"
        super().__init__(f"{path}: {self.detail}")


def load_json_file(path: str | Path, *, max_bytes: int = MAX_JSON_FILE_BYTES) -> object:
    """A whole JSON file read from a user: size capped, UTF-8, depth bounded, keys unique.

    Callers whose errors are another class (``ConfigError``, ``PredictionFileError``) catch
    :class:`JsonFileError` and raise theirs with its message (or ``reason`` and ``key``).

    Args:
        path: The file.
        max_bytes: Most bytes read; a larger file is refused without being read further.

    Raises:
        JsonFileError: The file cannot be opened or read, holds more than ``max_bytes``
            bytes, is not UTF-8, or :func:`parse_json` refuses its text.

    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise JsonFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise JsonFileError(path, f"more than {max_bytes:,} bytes; a JSON file is read up "
                            "to that size")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonFileError(path, f"not valid JSON (not UTF-8: {exc.reason} at byte "
                            f"{exc.start})") from None
    try:
        return parse_json(text)
    except JsonTextError as exc:
        raise JsonFileError(path, exc.reason, exc.key) from None
