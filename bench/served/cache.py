"""The persistent request cache: SQLite, keyed on the endpoint, served model and request body.

Every finished response is committed before its request counts as done, so a killed or
failed run resumes without sending a finished request again, and an identical re-run sends
none. The key is the sha256 of ``[URL, model, body]`` (the body as canonical JSON); the API
key is never part of it or stored. WAL journal with ``synchronous=NORMAL``: a reader never
blocks the writer, a process killed mid-write leaves the database as of its last commit, and
a commit costs no fsync (only a power loss can drop the last commits, which are then sent
again).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from consistency_bench.bench.errors import ConfigError

#: Database file inside ``--cache DIR``.
CACHE_FILE = "requests.sqlite3"
SCHEMA = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY, url TEXT NOT NULL, model TEXT NOT NULL, body TEXT NOT NULL,
    response TEXT NOT NULL)"""


def request_key(url: str, model: str, body: dict) -> str:
    """The cache key of a request."""
    payload = json.dumps([url, model, body], sort_keys=True, ensure_ascii=False,
                         separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class RequestCache:
    """Responses by request key; ``folder`` None keeps nothing (``--no-cache``)."""

    def __init__(self, folder: str | Path | None) -> None:
        self.path: Path | None = None
        self._db: sqlite3.Connection | None = None
        if folder is None:
            return
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"--cache {folder}: not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / CACHE_FILE
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # a commit survives the process being killed (the OS has it) without an fsync
            # per response; after a power loss the last responses may be asked for again
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"--cache {self.path}: not a request cache ({exc})") from None

    def get(self, key: str) -> dict | None:
        """The stored response of ``key``, or None."""
        if self._db is None:
            return None
        row = self._db.execute("SELECT response FROM responses WHERE key = ?",
                               (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, url: str, model: str, body: dict, response: dict | str) -> None:
        """Store a response (its JSON text as received, or a dict), committed at once."""
        if self._db is None:
            return
        text = response if isinstance(response, str) else json.dumps(response,
                                                                      ensure_ascii=False)
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, url, model, body, response) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, url, model, json.dumps(body, ensure_ascii=False), text),
        )

    def close(self) -> None:
        """Close the database."""
        if self._db is not None:
            self._db.close()
            self._db = None
