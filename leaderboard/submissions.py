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

The parts live in modules of one job each: :mod:`~leaderboard.submissions_meta` (the file
names, :class:`Submission`, the slug and ``meta.yaml``), :mod:`~leaderboard.submissions_store`
(staging, the lock, ``submit``, crash recovery), :mod:`~leaderboard.submissions_read` (entry
folders, :func:`load_all`, the site record) and :mod:`~leaderboard.submissions_rescore`
(``rescore``). Their names are importable from here too.
"""

from __future__ import annotations

from leaderboard.submissions_meta import (
    META,
    OPTIONAL_META,
    PREDICTIONS,
    REQUIRED_META,
    RESULTS,
    SLUG_RE,
    Scorer,
    Submission,
    read_meta,
    slugify,
    validate_meta,
)
from leaderboard.submissions_read import (
    entry_dirs,
    load_all,
    load_entry,
    read_stored_predictions,
    site_entries,
    site_record,
)
from leaderboard.submissions_rescore import (
    Change,
    diff_results,
    rescore,
)
from leaderboard.submissions_store import (
    LOCK,
    PAUSE_ENV,
    STAGING,
    gzip_bytes,
    lock,
    recover,
    stored_name,
    submit,
)

__all__ = [
    "LOCK",
    "META",
    "OPTIONAL_META",
    "PAUSE_ENV",
    "PREDICTIONS",
    "REQUIRED_META",
    "RESULTS",
    "SLUG_RE",
    "STAGING",
    "Change",
    "Scorer",
    "Submission",
    "diff_results",
    "entry_dirs",
    "gzip_bytes",
    "load_all",
    "load_entry",
    "lock",
    "read_meta",
    "read_stored_predictions",
    "recover",
    "rescore",
    "site_entries",
    "site_record",
    "slugify",
    "stored_name",
    "submit",
    "validate_meta",
]
