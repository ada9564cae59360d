"""Each entry's explorer file: ``data/explorer/<entry-id>.js`` (``webpage.lazy`` format).

The payload, per suite the entry covers (docs/leaderboard.md, "The explorer"): the suite,
kind, task, label names, unit and inconsistent counts, the sample's seed, what an
inconsistent unit did, and the sampled groups
(:class:`consistency_bench.bench.inconsistent.groups.Group`):
gold label, confidence of the contradiction, which relation broke, and every row with its
variant, gold label, answer, probabilities, whether it contradicts the anchor row, and the
edit that makes it. A row whose edit is a word diff of a text carries the diff instead of
that text (the text is the diff's kept and added parts), so a CALM group is not ten copies
of one sentence.

The file also holds a key: the sha256 of what it depends on (this module's
:data:`VERSION`, the sample size, the entry's prediction hash and the hash of every suite it
covers). A render reuses an earlier render's file with the same key instead of reading the
predictions again (:func:`explorer_files`); deleting the site recomputes every file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from consistency_bench.bench.inconsistent.groups import Group
from consistency_bench.bench.inconsistent.sample import SuiteSample
from consistency_bench.leaderboard.webpage.lazy import data_path, data_script

if TYPE_CHECKING:
    from consistency_bench.bench.scoring.engine import SuiteFolder

#: Bumped when the payload or the sample changes (invalidates every reused file).
VERSION = 1
#: Groups sampled per suite (``leaderboard --explorer-groups``).
DEFAULT_GROUPS = 10
_RECEIVE = re.compile(r'window\.consistencyBench\.receive\(("[^"]*"),(".*")\);\n?', re.S)


def _row(row, kind: str) -> dict:
    out: dict = {"variant": row.variant, "gold": row.gold, "pred": row.prediction,
                 "probs": None if row.probs is None else [round(p, 3) for p in row.probs],
                 "x": row.contradicts, "anchor": row.anchor, "edit": row.edit}
    diff = row.edit if row.edit and row.edit.get("type") in ("diff", "merge") else {}
    if diff.get("text") is None:
        out["text"] = row.text
    if diff.get("text_pair") is None:
        out["pair"] = row.text_pair
    if row.extra.get("tag"):
        out["tag"] = row.extra["tag"]
    return out


def _group(group: Group) -> dict:
    return {"group": group.group, "gold": group.gold, "confidence": group.confidence,
            "broke": group.broke, "reference": group.reference,
            "rows": [_row(r, group.kind) for r in group.rows]}


def payload(entry: str, samples: list[SuiteSample], n: int, key: str) -> dict:
    """The explorer file's payload of one entry."""
    return {"entry": entry, "key": key, "n": n, "suites": [
        {"suite": s.suite, "kind": s.kind, "task": s.task, "labels": list(s.labels),
         "units": s.units, "inconsistent": s.inconsistent, "seed": s.seed,
         "relation": s.relation, "groups": [_group(g) for g in s.groups]}
        for s in samples]}


def file_key(results: Mapping, n: int) -> str:
    """What an entry's explorer file depends on, hashed (see the module docstring)."""
    suites = {name: r.get("content_hash") for name, r in sorted((results.get("suites")
                                                                  or {}).items())}
    basis = {"version": VERSION, "n": n, "suites": suites,
             "predictions": (results.get("predictions") or {}).get("sha256")}
    return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()


def _old_key(text: str) -> str | None:
    """The key of an earlier render's file text (``None``: not this format)."""
    m = _RECEIVE.fullmatch(text)
    try:
        found = json.loads(json.loads(m.group(2))).get("key") if m else None
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


#: The head of a file :func:`payload` wrote for a slug-named entry: its path, then the
#: payload's first two fields, the entry and the key (read without parsing the payload,
#: about 1.3 MB per entry over every suite).
_HEAD = re.compile(r'window\.consistencyBench\.receive\("(data/explorer/[a-z0-9-]+\.js)",'
                   r'"\{\\"entry\\":\\"[A-Za-z0-9._-]*\\",\\"key\\":\\"([0-9a-f]{64})\\",')


def reused_text(path: Path, rel: str, key: str) -> str | None:
    """The earlier render's file at ``path`` if it has ``key``, else ``None``.

    ``None`` also for a file that is absent, a link or not this format. A file whose head
    names ``rel`` and ``key`` and that ends its ``receive`` call is taken without parsing its
    payload (parsing one entry's file over every suite, about 1.3 MB, took 12 ms; its head
    takes 0.3 ms); any other file is parsed in full, as before.
    """
    if path.is_symlink() or not path.is_file():
        return None
    raw = path.read_bytes()
    if not raw.isascii():  # every file this module writes is ASCII
        return None
    text = raw.decode("ascii")
    head = _HEAD.match(text)
    if head is not None and text.endswith('");\n'):
        return text if head.group(1) == rel and head.group(2) == key else None
    return text if _old_key(text) == key else None


def reusable_file(path: Path, rel: str, key: str) -> bool:
    """The earlier render's file at ``path`` is one :func:`reused_text` would take whole.

    Read from its head and its last bytes only (a regular file, not a link, whose head names
    ``rel`` and ``key`` and that ends its ``receive`` call), so the render links it into the
    new site instead of reading and writing its 1.3 MB again.
    """
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as fh:
            head = fh.read(512)
            fh.seek(-4, os.SEEK_END)
            tail = fh.read()
    except OSError:
        return False
    if not head.isascii():
        return False
    found = _HEAD.match(head.decode("ascii"))
    return (found is not None and tail == b'");\n' and found.group(1) == rel
            and found.group(2) == key)


def explorer_files(entries: Mapping[str, tuple[Path, Mapping]], stems: Mapping[str, str],
                   data: str | os.PathLike, old_site: Path | None,
                   n: int = DEFAULT_GROUPS, *, folder: SuiteFolder | None = None
                   ) -> ExplorerFiles:
    """Path -> text of every entry's explorer file, each made when it is read.

    Args:
        entries: Entry name -> (its prediction file, its results).
        stems: Entry name -> its file stem (the page's ``data/entry`` stem).
        data: The built suite folder (the texts).
        old_site: The site being replaced: a file there with the same key is reused.
        n: Groups sampled per suite.
        folder: The suite folder at ``data``, already open (the verification's); default:
            opened when the first file is made.

    """
    return ExplorerFiles(entries, stems, data, old_site, n, folder)


class ExplorerFiles(Mapping[str, str]):
    """Every entry's explorer file, made (or read from the old site) when it is looked up.

    The paths are known at once; a file's text is made on each lookup and not kept, so the
    render writes the board's explorer files one at a time (about 1.3 MB each over every
    suite: 650 MB for 500 entries when they were all held). One suite folder serves every
    entry (each suite loaded and hash-checked once per render). The old site must stay in
    place until every file is read (``build_site`` replaces it after ``render_all``).
    """

    def __init__(self, entries: Mapping[str, tuple[Path, Mapping]], stems: Mapping[str, str],
                 data: str | os.PathLike, old_site: Path | None, n: int,
                 folder: SuiteFolder | None = None):
        self._entries, self._data, self._old, self._n = entries, data, old_site, n
        self._names = {data_path("explorer", stems[name]): name for name in sorted(entries)}
        self._folder = folder

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self):
        return iter(self._names)

    def _old_file(self, path: str) -> Path | None:
        """``path`` in the earlier render's site, unless a folder on the way is a link."""
        if self._old is None:
            return None
        folder = self._old
        for part in Path(path).parts[:-1]:  # data/explorer: never followed out of the site
            folder = folder / part
            if folder.is_symlink() or not folder.is_dir():
                return None
        return folder / Path(path).name

    def reused(self, path: str) -> Path | None:
        """The earlier render's file to link for ``path`` when it is current, else ``None``."""
        old = self._old_file(path)
        key = file_key(self._entries[self._names[path]][1], self._n)
        return old if old is not None and reusable_file(old, path, key) else None

    def __getitem__(self, path: str) -> str:
        from consistency_bench.bench.inconsistent.sample import entry_samples
        from consistency_bench.bench.scoring.engine import SuiteFolder

        name = self._names[path]
        predictions, results = self._entries[name]
        key = file_key(results, self._n)
        old = self._old_file(path)
        reused = reused_text(old, path, key) if old is not None else None
        if reused is not None:
            return reused
        if self._folder is None:  # opened on the first file made: each suite loaded once
            self._folder = SuiteFolder(Path(self._data))
        samples = entry_samples(name, predictions, self._data, self._n,
                                sorted(results.get("suites", {})), folder=self._folder)
        return data_script(path, payload(name, samples, self._n, key))
