"""The small exception hierarchy of consistency-bench.

Every message names what was wrong (file, line, field, value) and what would be accepted.
The CLI turns any `BenchError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable

#: Characters of a value echoed in a message; a longer value is cut, with its length noted.
SHOWN_CHARS = 80


def shorten(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters with a length note.

    A huge value (a 5 MB label) is never printed in full: a string's ``repr`` is built from
    its first ``limit`` characters only; containers go through a bounded ``reprlib`` (at most
    6 items per level, 3 levels). Lone surrogates and unprintable characters come out as
    escapes (``repr``); the CLI escapes what the terminal cannot encode (consistency_bench/cli.py).
    """
    if isinstance(value, str):
        text = repr(value[: limit + 1])
        if len(value) > limit:
            return f"{text[:limit]}... ({len(value):,} characters)"
        return text
    if isinstance(value, (bytes, bytearray)):
        text = repr(bytes(value[: limit + 1]))
        if len(value) > limit:
            return f"{text[:limit]}... ({len(value):,} bytes)"
        return text
    try:  # bounded: never the repr of a whole parsed tree (a YAML alias bomb expands to GBs)
        text = _SHORT.repr(value)
    except (RecursionError, ValueError):  # an int of > 4300 digits
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else f"{text[:limit]}..."


def _short_repr() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxlevel, short.maxdict, short.maxlist, short.maxtuple = 3, 4, 6, 6
    short.maxset = short.maxfrozenset = short.maxdeque = short.maxarray = 6
    short.maxstring, short.maxother, short.maxlong = SHOWN_CHARS, SHOWN_CHARS, 40
    return short


_SHORT = _short_repr()


class BenchError(Exception):
    """Base class of all errors the harness raises on purpose."""


class UnknownNameError(BenchError, KeyError):
    """A suite, task, metric or baseline name that is not registered."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        self.kind, self.name = kind, name
        super().__init__(f"Unknown {kind} {shorten(name)}.{hint} Known: {', '.join(known)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class DuplicateNameError(BenchError):
    """Registering a name twice."""


class SourceError(BenchError):
    """A source corpus file is missing, unreachable or fails its checksum."""


class SourceUnavailableError(SourceError):
    """A source file is neither local nor downloadable (offline); it is not corrupt.

    Building every suite skips the suites that need such a file (QQP is not in the mirror);
    a suite named explicitly still fails with this error.
    """


class DataError(BenchError):
    """A built suite folder is missing, incomplete or does not match its manifest."""


class PredictionFileError(BenchError):
    """A malformed prediction file. Names the file, line, field and bad value."""

    def __init__(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
        value: object = None,
        has_value: bool = False,
    ):
        where = str(path) + (f":{line}" if line is not None else "")
        what = f" field {shorten(field, 60)}" if field else ""
        shown = f" value {shorten(value)}" if has_value else ""
        self.path, self.line, self.field, self.value = path, line, field, value
        self.reason, self.has_value = message, has_value
        super().__init__(f"{where}:{what}{shown}: {message}".replace(":: ", ": "))


class ConfigError(BenchError):
    """Bad command-line arguments or metadata that are not a file format problem."""
