"""One model, one entry: refuse a copy of a stored entry (issue 27 item 9).

``submit`` (local and ``--hub``) and ``review`` refuse an entry

- whose predictions are byte-identical to a stored entry's (the same sha256 of the JSONL):
  a copy adds nothing, whatever it claims to be; and
- whose ``model`` + ``revision`` + setup equal a stored entry's, unless its ``variant`` (the
  ``--variant TEXT`` of ``submit``, ``variant`` in ``meta.yaml``) differs from that entry's:
  the variant says what differs (few-shot K, chat template, prompt).

The setup is the run record's ``mode`` and ``settings`` (``<PRED>.run.json``, stored as the
entry's ``run.json``; ``repro`` owns the format), or none when there is no record. Model and
revision are compared after Unicode NFC, trimming and case folding (Hub ids are
case-insensitive). An entry being replaced (``submit --replace``) is not compared with itself.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from consistency_bench.bench.errors import ConfigError, shorten

#: The run record of a stored entry (the contract between branches, ``repro``'s format).
RUN_RECORD = "run.json"
#: Suffix of the run record beside a prediction file ``<PRED>.run.json``.
RUN_SUFFIX = ".run.json"


@dataclass(frozen=True)
class Candidate:
    """What the duplicate check compares of an entry.

    Attributes:
        name: Entry slug.
        sha256: sha256 of its predictions as JSONL.
        model: ``meta.yaml`` ``model``.
        revision: ``meta.yaml`` ``revision``.
        setup: The run record's setup (:func:`setup_of`), or ``None``.
        variant: ``meta.yaml`` ``variant``, or ``None``.

    """

    name: str
    sha256: str
    model: str
    revision: str
    setup: Mapping | None = None
    variant: str | None = None

    def key(self) -> tuple:
        """What two entries of one model must not share: model, revision, setup, variant."""
        return (_norm(self.model), _norm(self.revision), _frozen(self.setup),
                _norm(self.variant) if self.variant else None)


def _norm(text: str) -> str:
    return unicodedata.normalize("NFC", str(text)).strip().casefold()


def _frozen(value: object) -> object:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def setup_of(record: Mapping | None) -> dict | None:
    """The setup of a run record: its ``mode`` and ``settings`` (None without a record)."""
    if not isinstance(record, Mapping):
        return None
    settings = record.get("settings")
    return {"mode": record.get("mode"),
            "settings": dict(settings) if isinstance(settings, Mapping) else None}


def read_run_record(path: Path) -> Mapping | None:
    """A run record, or ``None`` when there is none.

    Raises:
        ConfigError: The record exists but is not a JSON object.

    """
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = load_json_file(path)
    except JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a run record must be a JSON object")
    return data


def candidate(name: str, jsonl: bytes, meta: Mapping, record: Mapping | None = None
              ) -> Candidate:
    """The candidate of a new entry: its JSONL bytes, validated meta and run record."""
    return Candidate(name, hashlib.sha256(jsonl).hexdigest(), str(meta["model"]),
                     str(meta["revision"]), setup_of(record), meta.get("variant"))


def with_variant(meta: Mapping, variant: str | None, where: str) -> dict:
    """``meta`` with ``--variant TEXT`` set (checked); refused when the file says otherwise."""
    from consistency_bench.leaderboard.submissions.meta import variant_text

    out = dict(meta)
    if variant is None:
        return out
    text = variant_text(variant, "--variant")
    if out.get("variant") not in (None, text):
        raise ConfigError(f"--variant {shorten(text)}: {where} says variant "
                          f"{shorten(out['variant'])}; give one")
    out["variant"] = text
    return dict(sorted(out.items()))


def stored_candidates(entries: Iterable) -> list[Candidate]:
    """Candidates of stored entries (``Submission`` objects: slug, path, meta, results)."""
    out = []
    for sub in entries:
        sha = (sub.results.get("predictions") or {}).get("sha256")
        record = read_run_record(Path(sub.path) / RUN_RECORD)
        out.append(Candidate(sub.slug, str(sha), str(sub.meta.get("model", "")),
                             str(sub.meta.get("revision", "")), setup_of(record),
                             sub.meta.get("variant")))
    return out


def duplicate_problem(new: Candidate, stored: Iterable[Candidate], *, how: str,
                      replacing: str | None = None) -> str | None:
    """Why ``new`` duplicates a stored entry, or ``None``.

    Args:
        new: The entry being submitted.
        stored: The stored entries.
        how: How to say what differs, for the message (``--variant TEXT`` or the meta field).
        replacing: The slug being replaced (not compared).

    """
    for old in stored:
        if old.name in (replacing, None):
            continue
        if old.sha256 == new.sha256:
            return (f"its predictions are byte-identical to those of entry {old.name!r} "
                    f"(sha256 {new.sha256[:12]}...): an entry that copies another's "
                    "predictions is refused, whatever it is called")
    for old in stored:
        if old.name != replacing and old.key() == new.key():
            setup = "no run record" if new.setup is None else "the same run settings"
            variant = f", variant {old.variant!r}" if old.variant else ""
            return (f"entry {old.name!r} already has model {shorten(old.model, 60)}, revision "
                    f"{shorten(old.revision, 60)}{variant} and {setup}: one model is one entry; "
                    f"say what differs (few-shot K, chat template, prompt) with {how}")
    return None


def check_duplicate(new: Candidate, stored: Iterable[Candidate], *, how: str,
                    replacing: str | None = None, where: str = "",
                    outcome: str = "nothing was stored") -> None:
    """Raise :class:`ConfigError` when :func:`duplicate_problem` finds one."""
    problem = duplicate_problem(new, stored, how=how, replacing=replacing)
    if problem:
        raise ConfigError(f"{where}{problem}; {outcome}")


def scan_candidates(root: Path) -> list[Candidate]:
    """Candidates of the entry folders of ``root``, read directly (no lock taken).

    ``submit`` calls it again under the folder's lock, just before the new entry is renamed
    into place, so two submits of one file at once cannot both land. An unreadable entry is
    left out (``leaderboard`` reports it).
    """
    from consistency_bench.bench.errors import BenchError
    from consistency_bench.bench.io.json_input import load_json_file
    from consistency_bench.leaderboard.submissions.meta import META, RESULTS, read_meta

    out: list[Candidate] = []
    if not root.is_dir():
        return out
    for d in sorted(root.iterdir()):
        if d.name.startswith(".") or d.is_symlink() or not d.is_dir():
            continue
        try:
            meta = read_meta(d / META)
            results: Any = load_json_file(d / RESULTS)  # any JSON: checked by the lookups
            sha = results["predictions"]["sha256"]
            record = read_run_record(d / RUN_RECORD)
        except (BenchError, KeyError, TypeError, OSError):
            continue
        out.append(Candidate(d.name, str(sha), meta["model"], meta["revision"],
                             setup_of(record), meta.get("variant")))
    return out


def board_candidates(board: object) -> list[Candidate]:
    """Candidates of a published ``leaderboard.json``: its ``meta`` and ``predictions_sha256``.

    The setup there is ``meta[NAME].setup`` (the run record's setup as the site shows it).
    """
    if not isinstance(board, Mapping) or not isinstance(board.get("meta"), Mapping):
        return []
    hashes = board.get("predictions_sha256")
    hashes = hashes if isinstance(hashes, Mapping) else {}
    out = []
    for name, meta in board["meta"].items():
        if not isinstance(meta, Mapping):
            continue
        setup = meta.get("setup")
        out.append(Candidate(str(name), str(hashes.get(name)), str(meta.get("model", "")),
                             str(meta.get("revision", "")),
                             setup if isinstance(setup, Mapping) else None,
                             meta.get("variant") if isinstance(meta.get("variant"), str)
                             else None))
    return out


def check_request(slug: str, jsonl: bytes, meta: Mapping, stored: Iterable,
                  stored_already: bool, refuse: Callable[[str], Exception]) -> None:
    """``review``'s check of one pull request against the maintainer's stored entries.

    Args:
        slug: The request's entry name.
        jsonl: Its predictions as JSONL.
        meta: Its validated ``meta.yaml``.
        stored: The maintainer's stored entries (``Submission`` objects).
        stored_already: An interrupted review stored this very request (not compared).
        refuse: Builds the exception the review raises (``Refused``), from the reason.

    """
    problem = duplicate_problem(
        candidate(slug, jsonl, meta), stored_candidates(stored),
        how="the 'variant' field of meta.yaml (`submit --hub --variant TEXT`)",
        replacing=slug if stored_already else None)
    if problem:
        raise refuse(problem)


def run_record_beside(predictions: str | os.PathLike) -> Mapping | None:
    """The run record ``<PRED>.run.json`` that ``predict`` writes beside a prediction file."""
    return read_run_record(Path(f"{predictions}{RUN_SUFFIX}"))
