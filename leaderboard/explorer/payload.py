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

from consistency_bench.bench.inconsistent.groups import Group
from consistency_bench.bench.inconsistent.sample import SuiteSample
from consistency_bench.leaderboard.webpage.lazy import data_path, data_script

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


def _old_key(path: Path) -> str | None:
    """The key of an earlier render's file (``None``: absent, a link, or not this format)."""
    if path.is_symlink() or not path.is_file():
        return None
    m = _RECEIVE.fullmatch(path.read_text(encoding="ascii", errors="replace"))
    try:
        found = json.loads(json.loads(m.group(2))).get("key") if m else None
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def explorer_files(entries: Mapping[str, tuple[Path, Mapping]], stems: Mapping[str, str],
                   data: str | os.PathLike, old_site: Path | None,
                   n: int = DEFAULT_GROUPS) -> dict[str, str]:
    """Path -> text of every entry's explorer file.

    Args:
        entries: Entry name -> (its prediction file, its results).
        stems: Entry name -> its file stem (the page's ``data/entry`` stem).
        data: The built suite folder (the texts).
        old_site: The site being replaced: a file there with the same key is reused.
        n: Groups sampled per suite.

    """
    from consistency_bench.bench.inconsistent.sample import entry_samples

    out = {}
    for name, (predictions, results) in sorted(entries.items()):
        path = data_path("explorer", stems[name])
        key = file_key(results, n)
        if old_site is not None and _old_key(old_site / path) == key:
            out[path] = (old_site / path).read_text(encoding="ascii")
            continue
        samples = entry_samples(name, predictions, data, n, sorted(results.get("suites", {})))
        out[path] = data_script(path, payload(name, samples, n, key))
    return out
