"""``leaderboard --data``'s verification of every entry, through the verified-cells cache.

For each entry, either its record is current (:mod:`leaderboard.cache.keys`: the same
predictions bytes, suites, parameters and code) and is read, or the stored predictions are
scored again against the built suites (:func:`bench.scoring.recompute`, one shared
:class:`~bench.scoring.SuiteFolder`, so each suite is loaded and hash-checked once per render)
and each covered cell's ranked score is recomputed on its suite's shared resamples
(:func:`leaderboard.ranking.resample.sample_cells`); the new record is written. Then, for every
entry, cached or not, its ``results.json`` is compared with the recomputed results
(:func:`leaderboard.stored.check_recomputed`): an entry whose stored results differ is left out,
named in a warning, exactly as without the cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.errors import BenchError
from leaderboard.cache.keys import SuiteFiles, entry_key, file_sha256
from leaderboard.cache.store import CacheUnavailable, CellStore, Record, load_key
from leaderboard.ranking.resample import CellSample, sample_cells, units_key
from leaderboard.stored import RECOMPUTE_N_BOOT, check_recomputed
from leaderboard.submissions_meta import PREDICTIONS, Submission

#: Entries scored again before their samples are made and their records written: bounds the
#: memory of a cold render, and what a kill in the middle of one loses.
CHUNK = 32


@dataclass
class Verified:
    """What :func:`verify_entries` found.

    Attributes:
        kept: The entries whose stored results are what their predictions score.
        samples: Suite -> entry -> the cell's sample, for the kept entries.
        recomputed: The entries scored again in this run (the others came from the cache).

    """

    kept: list[Submission] = field(default_factory=list)
    samples: dict[str, dict[str, CellSample]] = field(default_factory=dict)
    recomputed: list[str] = field(default_factory=list)


def verify_entries(subs: Sequence[Submission], data_dir: str | os.PathLike,
                   root: str | os.PathLike, *, cache: bool = True,
                   warn: Callable[[str], None] = lambda line: None) -> Verified:
    """Verify every entry against the built suites; reuse and update the cache in ``root``.

    Args:
        subs: The stored entries (already read and value-checked).
        data_dir: The built suite folder.
        root: The submissions folder (the cache lives in it).
        cache: Read and write the cache (``False``: score every entry again, write nothing).
        warn: Receives one line per entry left out, and notes about the cache.

    """
    from bench.scoring import SuiteFolder

    folder = SuiteFolder(Path(data_dir))
    files = SuiteFiles(folder.root, folder.manifest)
    store = _open_store(root, warn) if cache else None
    out = Verified()
    records: dict[str, Record] = {}
    refused: dict[str, str] = {}
    pending: list[tuple[Submission, object]] = []
    for sub in subs:
        try:
            digest = file_sha256(sub.path / PREDICTIONS)
        except OSError as exc:
            refused[sub.slug] = f"{sub.path / PREDICTIONS}: cannot read it ({exc.strerror})"
            continue
        record = store.read(sub.slug) if store is not None else None
        if record is not None and _current(record, digest, folder.manifest, files):
            records[sub.slug] = record
            continue
        from bench.scoring import recompute

        try:
            fresh = recompute(sub.path / PREDICTIONS, folder, n_boot=RECOMPUTE_N_BOOT)
        except BenchError as exc:
            refused[sub.slug] = str(exc)
            continue
        out.recomputed.append(sub.slug)
        pending.append((sub, (fresh, entry_key(digest, fresh.touched, folder.manifest))))
        if len(pending) >= CHUNK:
            store = _finish(pending, folder.manifest, store, records, warn)
            pending = []
    store = _finish(pending, folder.manifest, store, records, warn)
    _compare(subs, records, refused, folder.manifest, data_dir, out, warn)
    if store is not None:
        store.prune({s.slug for s in subs})
    return out


def _compare(subs: Sequence[Submission], records: dict[str, Record], refused: dict[str, str],
             manifest, data_dir, out: Verified, warn: Callable[[str], None]) -> None:
    """Keep each entry whose stored results are what its record says its predictions score."""
    for sub in subs:
        record = records.get(sub.slug)
        try:
            if record is None:
                raise BenchError(refused[sub.slug])
            check_recomputed(sub.results, record.data["sha256"], record.data["fresh"], manifest,
                             PREDICTIONS, f"entry {sub.slug!r} ({sub.path})", data_dir)
        except BenchError as exc:
            warn(f"{exc}; not ranked")
            continue
        out.kept.append(sub)
        for suite, sample in samples_of(record).items():
            out.samples.setdefault(suite, {})[sub.slug] = sample


def _open_store(root: str | os.PathLike, warn: Callable[[str], None]) -> CellStore | None:
    try:
        return CellStore(root, load_key(), warn)
    except CacheUnavailable as exc:
        warn(f"the verified-cells cache is not used ({exc}); every entry is scored again")
        return None


def _current(record: Record, digest: str, manifest, files: SuiteFiles) -> bool:
    """The record was made from these predictions, suites, parameters and code."""
    touched = record.data.get("touched")
    if not isinstance(touched, list):
        return False
    return (record.key == entry_key(digest, touched, manifest)
            and all(files.intact(s) for s in touched))


def _finish(pending, manifest, store: CellStore | None, records: dict[str, Record],
            warn: Callable[[str], None]) -> CellStore | None:
    """Make the samples of the entries scored again, keep their records, write them.

    Returns:
        The store, or ``None`` once a record could not be written (the cache is then not
        written for the rest of the run; one note says why).

    """
    groups: dict[tuple[str, str], list[tuple[str, np.ndarray, Mapping | None, float]]] = {}
    for sub, (fresh, _key) in pending:
        for suite, units in sorted(fresh.units.items()):
            res = fresh.suites[suite]
            if res.get("consistent_accuracy_cc") is None:  # not ranked: no interval, no test
                continue
            codes = np.ascontiguousarray(units.codes, dtype=np.int64)
            unit_set = units_key(suite, str(manifest[suite]["sha256"]), codes.tobytes())
            spec = (res.get("metrics") or {}).get("ranked_units")
            groups.setdefault((suite, unit_set), []).append(
                (sub.slug, units.values, spec, float(res.get("consistent_accuracy_chance")
                                                     or 0.0)))
    made: dict[str, dict[str, CellSample]] = {sub.slug: {} for sub, _ in pending}
    for (suite, unit_set), cells in sorted(groups.items()):
        samples = sample_cells(suite, unit_set, [(v, spec, c) for _, v, spec, c in cells])
        for (slug, *_), sample in zip(cells, samples, strict=True):
            made[slug][suite] = sample
    for sub, (fresh, key) in pending:
        record = make_record(key, fresh, made[sub.slug])
        records[sub.slug] = record
        if store is not None:
            try:
                store.write(sub.slug, record)
            except CacheUnavailable as exc:
                warn(f"the verified-cells cache is not written ({exc})")
                store = None
    return store


def make_record(key: dict, fresh, samples: dict[str, CellSample]) -> Record:
    """A record: the recomputed results and the cells' samples."""
    order = sorted(samples)
    arrays: dict[str, np.ndarray] = {
        "scores": np.stack([samples[s].scores for s in order]) if order
        else np.zeros((0, 0))}
    for s in order:
        if samples[s].binary is not None:
            arrays[f"binary:{s}"] = np.asarray(samples[s].binary, dtype=bool)
    data = {
        "sha256": fresh.sha256,
        "touched": list(fresh.touched),
        "fresh": json.loads(json.dumps(fresh.suites)),
        "samples": [[s, samples[s].units, samples[s].n, samples[s].mean] for s in order],
    }
    return Record(key, data, arrays)


def samples_of(record: Record) -> dict[str, CellSample]:
    """The cells' samples a record holds."""
    scores = record.arrays["scores"]
    return {s: CellSample(units, int(n), scores[i], mean,
                          record.arrays.get(f"binary:{s}"))
            for i, (s, units, n, mean) in enumerate(record.data["samples"])}


def cache_folder(root: str | os.PathLike) -> Path:
    """Where the cache of a submissions folder lives."""
    from leaderboard.cache.store import FOLDER

    return Path(root) / FOLDER
