"""The small exception hierarchy of consistency-bench.

Every message names what was wrong (file, line, field, value) and what would be accepted.
The CLI turns any `BenchError` into one line on stderr and exit code 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class BenchError(Exception):
    """Base class of all errors the harness raises on purpose."""


class UnknownNameError(BenchError, KeyError):
    """A suite, task, metric or baseline name that is not registered."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        self.kind, self.name = kind, name
        super().__init__(f"Unknown {kind} {name!r}.{hint} Known: {', '.join(known)}")

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
        what = f" field {field!r}" if field else ""
        shown = ""
        if has_value:
            text = repr(value)
            shown = f" value {text[:80] + '...' if len(text) > 80 else text}"
        self.path, self.line, self.field, self.value = path, line, field, value
        super().__init__(f"{where}:{what}{shown}: {message}".replace(":: ", ": "))


class ConfigError(BenchError):
    """Bad command-line arguments or metadata that are not a file format problem."""
