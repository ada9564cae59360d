"""Which weights a model name or folder is: the commit and the sha256 of its files.

How the commit is resolved, recorded as ``commit_source``:

* ``snapshot``: a Hub id: the commit of the cache snapshot its files were read from
  (``.../models--ORG--NAME/snapshots/<commit>/``, downloaded or already in the cache; the
  revision asked for, else ``main``, resolved by the cache's ``refs/``); or a local folder
  that is such a snapshot: the commit in its path, and the Hub id from the folder above;
* ``config``: a Hub id whose snapshot is not found in the cache: transformers'
  ``config._commit_hash``, where the installed version still sets it (4.x);
* ``weights-sha256``: any other local folder: no commit exists, so the record's ``commit`` is
  the sha256 of its weight files (:func:`weights_digest`).

The weights' sha256 is recorded in every case (for a Hub model, of the snapshot's files), so
that ``reproduce --model PATH`` can check that a local copy holds the same weights.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

#: Files that hold weights (sharded checkpoints: every shard; index files are JSON, not here).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".msgpack", ".h5", ".gguf", ".ckpt")
#: Files that define a tokenizer.
TOKENIZER_PREFIXES = ("tokenizer", "vocab", "merges", "special_tokens_map", "added_tokens",
                      "spiece", "sentencepiece", "chat_template")
_SNAPSHOT = re.compile(
    r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/(?P<commit>[0-9a-f]{40})$")


def _digest(folder: Path, files: list[Path]) -> str | None:
    """sha256 over ``relative path NUL sha256-of-file`` lines, in sorted path order."""
    if not files:
        return None
    from consistency_bench.bench.io.digest import file_sha256

    lines = [f"{f.relative_to(folder).as_posix()}\0{file_sha256(f)}\n" for f in files]
    return hashlib.sha256("".join(sorted(lines)).encode("utf-8")).hexdigest()


def _files(folder: Path, keep) -> list[Path]:
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).parts
        if any(part.startswith(".") for part in rel) or not path.is_file():
            continue  # .cache/, .git/: not the model
        if keep(path.name):
            out.append(path)
    return out


def weights_digest(folder: str | os.PathLike) -> tuple[str | None, int]:
    """sha256 of a model folder's weight files (names and contents), and how many there are.

    Only the weight files count (:data:`WEIGHT_SUFFIXES`, at any depth, hidden folders
    skipped): a ``README.md`` or ``training.json`` written beside the same weights does not
    change it.
    """
    folder = Path(folder)
    files = _files(folder, lambda name: name.endswith(WEIGHT_SUFFIXES))
    return _digest(folder, files), len(files)


def tokenizer_digest(folder: str | os.PathLike) -> str | None:
    """sha256 of a model folder's tokenizer files (:data:`TOKENIZER_PREFIXES`), or None."""
    folder = Path(folder)
    files = _files(folder, lambda name: name.startswith(TOKENIZER_PREFIXES))
    return _digest(folder, files)


def snapshot_of(folder: str | os.PathLike) -> tuple[str, str] | None:
    """``(hub id, commit)`` when ``folder`` is a Hub cache snapshot, else None."""
    text = Path(os.path.abspath(folder)).as_posix()
    match = _SNAPSHOT.search(text)
    if match is None:
        return None
    return f"{match['org']}/{match['name']}", match["commit"]


def cached_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The cache snapshot folder of a Hub model at ``revision`` (None: ``main``), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub ships with transformers
        return None
    try:
        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except ValueError:  # not a valid repo id
        return None
    return Path(found).parent if isinstance(found, str) else None


def identify(name_or_path: str, config: object, revision: str | None = None) -> dict:
    """The ``model`` block of a run record for a model given as ``--model name_or_path``.

    Args:
        name_or_path: Hub id or local folder, as given.
        config: Its loaded ``PretrainedConfig`` (``_commit_hash`` is read from it).
        revision: The revision asked for (``--revision``), if any.

    """
    commit = getattr(config, "_commit_hash", None)
    record: dict = {"id": name_or_path, "revision": revision, "hub_id": None,
                    "commit_source": None}
    folder: Path | None = Path(name_or_path)
    if folder is not None and folder.is_dir():
        record["source"] = "local"
        snapshot = snapshot_of(folder)
        if snapshot is not None:
            record["hub_id"], commit = snapshot
            record["commit_source"] = "snapshot"
    else:
        record.update(source="hub", hub_id=name_or_path,
                      commit_source="config" if commit else None)
        folder = cached_snapshot(name_or_path, revision or commit)
        snapshot = snapshot_of(folder) if folder is not None else None
        if snapshot is not None:
            commit, record["commit_source"] = snapshot[1], "snapshot"
    weights, count = weights_digest(folder) if folder is not None else (None, 0)
    if record["source"] == "local" and record["commit_source"] is None:
        commit, record["commit_source"] = weights, "weights-sha256"
    record.update(commit=commit, weights_sha256=weights, weights_files=count,
                  tokenizer_sha256=tokenizer_digest(folder) if folder is not None else None)
    return record
