"""``leaderboard --data``'s verification of every entry, through the verified-cells cache.

For each entry, either its record is current (:mod:`consistency_bench.leaderboard.cache.keys`: the
same
predictions bytes, suites, parameters and code) and is read, or the stored predictions are
scored again against the built suites (:func:`consistency_bench.bench.scoring.engine.recompute`, one
shared
:class:`~consistency_bench.bench.scoring.engine.SuiteFolder`, so each suite is loaded and
hash-checked once
per render)
and each covered cell's ranked score is recomputed on its suite's shared resamples
(:func:`consistency_bench.leaderboard.ranking.resample.sample_cells`); the new record is written.
Then, for every
entry, cached or not, its ``results.json`` is compared with the recomputed results
(:func:`consistency_bench.leaderboard.stored.check_recomputed`): an entry whose stored results
differ is left out,
named in a warning, exactly as without the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from consistency_bench.bench.errors import BenchError
from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.bench.scoring.engine import Recomputed, SuiteFolder, recompute
from consistency_bench.leaderboard.cache.keys import SuiteFiles, entry_key
from consistency_bench.leaderboard.cache.store import CacheUnavailable, CellStore, Record, load_key
from consistency_bench.leaderboard.ranking.resample import CellSample, sample_cells, units_key
from consistency_bench.leaderboard.stored import RECOMPUTE_N_BOOT, check_recomputed
from consistency_bench.leaderboard.submissions.meta import PREDICTIONS, Submission

#: Entries scored again before their samples are made and their records written: bounds the
#: memory of a cold render, and what a kill in the middle of one loses.
CHUNK = 32
#: Threads hashing the stored predictions (the machines this runs on have 2 cores or more).
HASH_THREADS = 2


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
                   warn: Callable[[str], None] = lambda line: None,
                   folder: SuiteFolder | None = None) -> Verified:
    """Verify every entry against the built suites; reuse and update the cache in ``root``.

    Args:
        subs: The stored entries (already read and value-checked).
        data_dir: The built suite folder.
        root: The submissions folder (the cache lives in it).
        cache: Read and write the cache (``False``: score every entry again, write nothing).
        warn: Receives one line per entry left out (in the entries' order), and notes about
            the cache.
        folder: The built suite folder at ``data_dir``, already open (shared with the
            explorer's files, so each suite is loaded once per render); default: opened here.

    """
    run = _Run(data_dir, _open_store(root, warn) if cache else None, warn, folder)
    pending: list[tuple[Submission, Recomputed, dict]] = []
    for sub, digest in zip(subs, _hashes(subs), strict=True):
        if isinstance(digest, OSError):
            run.problems[sub.slug] = f"{sub.path / PREDICTIONS}: cannot read it " \
                f"({digest.strerror})"
            continue
        record = run.store.read(sub.slug) if run.store is not None else None
        if record is not None and run.current(record, digest):
            run.settle(sub, record, written=True)
            continue
        try:
            fresh = recompute(sub.path / PREDICTIONS, run.folder, n_boot=RECOMPUTE_N_BOOT)
        except BenchError as exc:
            run.problems[sub.slug] = str(exc)
            continue
        run.out.recomputed.append(sub.slug)
        pending.append((sub, fresh, entry_key(digest, fresh.touched, run.folder.manifest)))
        if len(pending) >= CHUNK:
            run.finish(pending)
            pending = []
    run.finish(pending)
    for sub in subs:  # in the entries' order, whichever way each was verified
        if sub.slug in run.problems:
            warn(f"{run.problems[sub.slug]}; not ranked")
        else:
            run.out.kept.append(sub)
            for suite, sample in run.samples.pop(sub.slug).items():
                run.out.samples.setdefault(suite, {})[sub.slug] = sample
    if run.store is not None:
        run.store.prune({s.slug for s in subs})
    return run.out


def _hashes(subs: Sequence[Submission]) -> list[str | OSError]:
    """sha256 of each entry's stored predictions (or the error reading it), two at a time.

    hashlib releases the GIL while it hashes, so two threads use two cores.
    """
    from concurrent.futures import ThreadPoolExecutor

    def one(sub: Submission) -> str | OSError:
        try:
            return file_sha256(sub.path / PREDICTIONS)
        except OSError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=HASH_THREADS) as pool:
        return list(pool.map(one, subs))


def _open_store(root: str | os.PathLike, warn: Callable[[str], None]) -> CellStore | None:
    try:
        return CellStore(root, load_key(), warn)
    except CacheUnavailable as exc:
        warn(f"the verified-cells cache is not used ({exc}); every entry is scored again")
        return None


def results_digest(results: Mapping) -> str:
    """sha256 of a parsed ``results.json`` (canonical JSON): what the comparison reads."""
    text = json.dumps(results, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


class _Run:
    """One render's verification: the shared suite folder, the store, what was found."""

    def __init__(self, data_dir: str | os.PathLike, store: CellStore | None,
                 warn: Callable[[str], None], folder: SuiteFolder | None = None):
        from consistency_bench.bench.scoring.engine import SuiteFolder

        self.data_dir = data_dir
        self.folder = folder if folder is not None else SuiteFolder(Path(data_dir))
        self.files = SuiteFiles(self.folder.root, self.folder.manifest)
        self.store, self.warn = store, warn
        self.out = Verified()
        #: Entry -> its cells' samples (only these are kept of a record: its recomputed
        #: results are compared in :meth:`settle` and then freed, so the verification holds
        #: one entry's results at a time, not the board's).
        self.samples: dict[str, dict[str, CellSample]] = {}
        self.problems: dict[str, str] = {}

    def current(self, record: Record, digest: str) -> bool:
        """The record was made from these predictions, suites, parameters and code."""
        touched = record.data.get("touched")
        if not isinstance(touched, list):
            return False
        return (record.key == entry_key(digest, touched, self.folder.manifest)
                and all(self.files.intact(s) for s in touched))

    def settle(self, sub: Submission, record: Record, written: bool) -> None:
        """Compare the entry's results with its record; keep the record; write it if needed.

        A record remembers the digest of the last ``results.json`` that passed, so an
        unchanged entry is not compared again (the comparison is a function of the results
        and of what the record's key covers); a changed one is compared in full.
        """
        digest = results_digest(sub.results)
        if record.data.get("passed") != digest:
            try:
                check_recomputed(sub.results, record.data["sha256"], record.data["fresh"],
                                 self.folder.manifest, PREDICTIONS,
                                 f"entry {sub.slug!r} ({sub.path})", self.data_dir,
                                 record.data["tasks"])
            except BenchError as exc:
                self.problems[sub.slug] = str(exc)
            else:
                record = Record(record.key, {**record.data, "passed": digest}, record.arrays)
                written = False
        self.samples[sub.slug] = samples_of(record)
        if not written and self.store is not None:
            try:
                self.store.write(sub.slug, record)
            except CacheUnavailable as exc:
                self.warn(f"the verified-cells cache is not written ({exc})")
                self.store = None

    def finish(self, pending: list[tuple[Submission, Recomputed, dict]]) -> None:
        """Make the samples of the entries scored again, then settle each."""
        made = make_samples([(sub.slug, fresh) for sub, fresh, _ in pending],
                            self.folder.manifest)
        for sub, fresh, key in pending:
            self.settle(sub, make_record(key, fresh, made[sub.slug]), written=False)


def make_samples(scored: list[tuple[str, Recomputed]],
                 manifest: Mapping[str, Mapping]) -> dict[str, dict[str, CellSample]]:
    """Each entry's samples, per suite: one set of draws per suite and unit set for all."""
    groups: dict[tuple[str, str], list[tuple[str, np.ndarray, Mapping | None, float]]] = {}
    for slug, fresh in scored:
        for suite, units in sorted(fresh.units.items()):
            res = fresh.suites[suite]
            if res.get("consistent_accuracy_cc") is None:  # not ranked: no interval, no test
                continue
            codes = np.ascontiguousarray(units.codes, dtype=np.int64)
            unit_set = units_key(suite, str(manifest[suite]["sha256"]), codes.tobytes())
            spec = (res.get("metrics") or {}).get("ranked_units")
            groups.setdefault((suite, unit_set), []).append(
                (slug, units.outcomes, spec, float(res.get("consistent_accuracy_chance") or 0.0)))
    made: dict[str, dict[str, CellSample]] = {slug: {} for slug, _ in scored}
    for (suite, unit_set), cells in sorted(groups.items()):
        samples = sample_cells(suite, unit_set, [(v, spec, c) for _, v, spec, c in cells])
        for (slug, *_), sample in zip(cells, samples, strict=True):
            made[slug][suite] = sample
    return made


def make_record(key: dict, fresh: Recomputed, samples: dict[str, CellSample]) -> Record:
    """A record: the recomputed results (suites and per-task statistics) and the samples."""
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
        "fresh": json.loads(json.dumps(without_intervals(fresh.suites))),
        "tasks": json.loads(json.dumps(fresh.tasks)),
        "samples": [[s, samples[s].units, samples[s].n, samples[s].mean] for s in order],
    }
    return Record(key, data, arrays)


def without_intervals(value: object) -> object:
    """A JSON value without its bootstrap intervals (``ci95``, ``*_ci95``; never compared).

    They are the only values that depend on the number of resamples, so a record is the same
    whether its results were recomputed with 100 resamples (a render) or scored with 10,000
    (``review``, :func:`remember_entry`).
    """
    if isinstance(value, Mapping):
        return {k: without_intervals(v) for k, v in value.items()
                if not (k == "ci95" or str(k).endswith("_ci95"))}
    if isinstance(value, list):
        return [without_intervals(v) for v in value]
    return value


def remember_entry(root: str | os.PathLike, entry: Submission, fresh: Recomputed,
                   warn: Callable[[str], None] = lambda line: None) -> bool:
    """Write a just-stored entry's record from the scoring that stored it (issue 33 item 2).

    ``review --merge`` scores a pull request's entry once
    (:func:`consistency_bench.bench.scoring.engine.
    score_file_recomputed`), stores those results (``submit``), then writes this record, so
    the render after the merge reads it instead of scoring the entry again. The record is
    keyed as the render keys it (the sha256 of the stored ``predictions.jsonl.gz``, of every
    suite the file touches, the parameters and the code) and authenticated with this
    machine's key; the render still compares ``results.json`` with it and still checks each
    suite's file. Nothing is written unless ``fresh`` was scored from the stored predictions
    (its content hash is the one ``submit`` recorded for them).

    Returns:
        Whether the record was written (the cache may be unavailable: then the render scores
        the entry, as before).

    """
    stored = entry.results.get("predictions") if isinstance(entry.results, Mapping) else None
    if not isinstance(stored, Mapping) or stored.get("sha256") != fresh.sha256:
        warn(f"{entry.slug}: the scores are not those of the stored predictions; no cache "
             "record written (the render scores the entry)")
        return False
    store = _open_store(root, warn)
    if store is None:
        return False
    try:
        digest = file_sha256(entry.path / PREDICTIONS)
        key = entry_key(digest, fresh.touched, fresh.manifest)
        samples = make_samples([(entry.slug, fresh)], fresh.manifest)[entry.slug]
        store.write(entry.slug, make_record(key, fresh, samples))
    except (CacheUnavailable, OSError) as exc:
        warn(f"the verified-cells cache is not written ({exc})")
        return False
    return True


def samples_of(record: Record) -> dict[str, CellSample]:
    """The cells' samples a record holds."""
    scores = record.arrays["scores"]
    return {s: CellSample(units, int(n), scores[i], mean,
                          record.arrays.get(f"binary:{s}"))
            for i, (s, units, n, mean) in enumerate(record.data["samples"])}


def cache_folder(root: str | os.PathLike) -> Path:
    """Where the cache of a submissions folder lives."""
    from consistency_bench.leaderboard.cache.store import FOLDER

    return Path(root) / FOLDER
