"""Reading the ``submissions/`` folder: entry folders (no links), entries checked, site records.

Part of :mod:`consistency_bench.leaderboard.submissions`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from consistency_bench.bench.errors import BenchError, ConfigError
from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.bench.io.json_input import JsonFileError, load_json_file
from consistency_bench.bench.io.output_checks import require_regular_file
from consistency_bench.bench.predictions.files import read_payload
from consistency_bench.leaderboard.submissions.meta import (
    META,
    PREDICTIONS,
    RESULTS,
    Submission,
    _load_yaml,
    validate_meta,
)
from consistency_bench.leaderboard.submissions.storage import _default_warn, recover


def entry_dirs(root: Path, on_error: Callable[[str], None] | None = None) -> list[Path]:
    """The entry folders of ``root`` (dot-folders skipped), sorted; links refused.

    An entry that is a symbolic link, or resolves outside ``root``, is reported to
    ``on_error`` and left out (raised without ``on_error``): it is never ranked, published or
    written through.

    Raises:
        ConfigError: Without ``on_error``, an entry is a link.

    """
    real_root = root.resolve()
    out = []
    for d in sorted(root.iterdir()):
        if d.name.startswith("."):
            continue
        problem = None
        if d.is_symlink():
            problem = (f"{d}: is a symbolic link (to {os.readlink(d)}), not an entry folder; "
                       "entries are never followed through links")
        elif not d.is_dir():
            continue
        elif d.resolve().parent != real_root:
            problem = f"{d}: resolves outside {root}; entry refused"
        if problem is None:
            out.append(d)
        elif on_error is None:
            raise ConfigError(problem)
        else:
            on_error(f"{problem}; entry skipped")
    return out


def load_all(
    root: str | os.PathLike = "submissions",
    on_error: Callable[[str], None] | None = None,
    *,
    check_values: bool = True,
    warn: Callable[[str], None] | None = None,
    repair: bool = True,
) -> list[Submission]:
    """Every stored submission, sorted by slug (dot-folders are skipped).

    A replace interrupted between its two renames is rolled back first, with a warning.

    Args:
        root: The submissions folder.
        on_error: When given, an unreadable entry (missing file, bad ``meta.yaml``, corrupt
            ``results.json``, a value out of range, a symbolic link) is reported to it as one
            line and skipped, so one stray folder does not block the whole leaderboard;
            otherwise it raises.
        check_values: Check the stored values
        (:func:`consistency_bench.leaderboard.stored.check_values`);
            ``rescore`` turns it off, since it recomputes them.
        warn: Receives the roll-back notes (default: stderr).
        repair: Roll back an interrupted replace (else only warn about it).

    Raises:
        ConfigError: The folder is missing, or (without ``on_error``) an entry is unreadable.

    """
    root = Path(root)
    if root.is_symlink():
        raise ConfigError(f"{root}: the submissions folder is a symbolic link; name it itself")
    if not root.is_dir():
        raise ConfigError(f"{root}: submissions folder not found")
    recover(root, warn or on_error or _default_warn, repair=repair)
    out = []
    for d in entry_dirs(root, on_error):
        try:
            out.append(load_entry(d, check_values=check_values))
        except BenchError as exc:
            if on_error is None:
                raise
            on_error(f"{exc}; entry skipped")
    return out


def load_entry(d: Path, *, check_values: bool = True) -> Submission:
    """One stored entry, its metadata and results checked.

    Raises:
        ConfigError: A missing file, a file that is a symbolic link, invalid ``meta.yaml`` or
            corrupt ``results.json`` (a value of the wrong type or out of range included),
            naming the file.

    """
    from consistency_bench.leaderboard.stored import check_values as check

    links = [f for f in (PREDICTIONS, META, RESULTS) if (d / f).is_symlink()]
    if links:
        raise ConfigError(f"{d / links[0]}: is a symbolic link; an entry's files must be its "
                          "own regular files")
    missing = [f for f in (PREDICTIONS, META, RESULTS) if not (d / f).exists()]
    if missing:
        raise ConfigError(f"{d}: incomplete submission, missing {missing}")
    for name in (PREDICTIONS, META, RESULTS):  # a FIFO or a folder: what it is, not "missing"
        require_regular_file(d / name, str(d / name))
    meta = validate_meta(_load_yaml(d / META), str(d / META))
    try:
        results = load_json_file(d / RESULTS)
    except JsonFileError as exc:  # too deep, not JSON, not UTF-8, a key given twice
        raise ConfigError(str(exc)) from None
    if not isinstance(results, dict) or not isinstance(results.get("suites"), dict):
        raise ConfigError(f"{d / RESULTS}: not a results JSON (no 'suites' mapping)")
    for suite, entry in results["suites"].items():
        if not isinstance(entry, dict) or "main_score" not in entry:
            raise ConfigError(f"{d / RESULTS}: suite {suite!r} has no 'main_score'")
    if check_values:
        check(results, str(d / RESULTS))
    return Submission(d.name, d, meta, results)


def site_record(root: str | os.PathLike, subs: list[Submission]) -> dict:
    """What a rendered site was made from: the submissions folder and each entry's files.

    ``publish`` checks the entries it sends against this record (:func:`check_site_record`),
    so a site is never published beside entries of another ``--submissions``.
    """
    return {
        "submissions": str(root),  # as given, so the record does not depend on the machine
        "entries": {s.slug: {name: file_sha256(s.path / name) for name in _shown_files(s.path)}
                    for s in subs},
    }


def _shown_files(entry: Path) -> list[str]:
    """The files of an entry a site shows and ``publish`` sends.

    ``meta.yaml`` and ``results.json``; ``run.json`` and ``reproduction.json`` when the entry
    has them (issue 28 item 13: the page shows the setup and the reproduction).
    """
    from consistency_bench.leaderboard.reproduce.run_records import REPRODUCTION, RUN

    optional = [n for n in (RUN, REPRODUCTION)
                if (entry / n).is_file() and not (entry / n).is_symlink()]
    return [META, RESULTS, *optional]


def site_entries(record: Mapping | None, site: Path, root: Path) -> dict[str, Path]:
    """The entries a rendered site shows, as folders of ``root``, checked against the site.

    ``publish`` sends exactly these, so a site is never published beside the entries of
    another ``--submissions`` (entries of ``root`` that the site does not show are left out).

    Args:
        record: The site's record (:func:`site_record`), ``None`` when it has none.
        site: The site folder, for the message.
        root: The submissions folder.

    Raises:
        ConfigError: The site has no record, or an entry it shows is missing from ``root``, a
            link, or its ``meta.yaml`` / ``results.json`` differ from what was rendered.

    """
    if record is None or not isinstance(record.get("entries"), Mapping):
        raise ConfigError(
            f"{site}: the site does not record which submissions it shows (rendered before "
            "this check existed, or not by `consistency-bench leaderboard`); render it again "
            "with `consistency-bench leaderboard --submissions DIR --out SITE`"
        )
    recover(root, _default_warn)
    found = {d.name: d for d in entry_dirs(root)}
    problems = []
    for name, files in sorted(record["entries"].items()):
        if name not in found:
            problems.append(f"{name}: not in {root}")
            continue
        recorded = files if isinstance(files, Mapping) else {}
        for file in sorted({*recorded, *_shown_files(found[name])}):
            path = found[name] / file
            want = recorded.get(file)
            if want is None:
                problems.append(f"{name}/{file}: added since the site was rendered")
            elif path.is_symlink() or not path.is_file():
                problems.append(f"{name}/{file}: missing or a symbolic link")
            elif file_sha256(path) != want:
                problems.append(f"{name}/{file}: differs from the one the site was rendered "
                                "from")
    if problems:
        more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
        raise ConfigError(
            f"--site {site} was rendered from other submissions than --submissions {root} "
            f"(recorded: {record.get('submissions')}): " + "; ".join(problems[:4]) + more
            + "; render the site again from these submissions. Nothing was sent"
        )
    return {name: found[name] for name in sorted(record["entries"])}


def read_stored_predictions(sub: Submission) -> bytes:
    """Return the stored predictions as JSONL bytes."""
    return read_payload(sub.path / PREDICTIONS)
