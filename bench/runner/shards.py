"""Results on disk: the resume shards of a run (``<out>.parts/``) and the part files of ``--shard``.

:class:`ShardStore` keeps finished results so that a restarted run skips done batches;
:func:`merge_parts` joins the part files of ``predict --shard i/N`` (written by
:func:`consistency_bench.bench.runner.output.write_part`) into one prediction file.
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, DataError, PredictionFileError, shorten
from consistency_bench.bench.io.json_input import JsonTextError, load_json_file, parse_json
from consistency_bench.bench.io.write import atomic_path, write_text
from consistency_bench.bench.runner.distributed import MAX_SHARDS

PARTS_SUFFIX = ".parts"
RUN_FILE = "run.json"
#: First-line marker and version of a part file (``--shard``).
PART_FORMAT = "consistency-bench-part"
PART_VERSION = 1


class ShardStore:
    """Finished results on disk: ``<out>.parts/shard-<rank>-<n>.jsonl``, written atomically.

    A parts folder whose ``run.json`` names other settings is refused when it holds results;
    one that holds none (left by a run refused before its first batch) is taken over.
    """

    def __init__(self, parts: Path, fingerprint: dict, rank: int = 0, *, create: bool = True):
        self.parts, self.rank = parts, rank
        run_file = parts / RUN_FILE
        has_results = parts.is_dir() and any(parts.glob("shard-*.jsonl"))
        if run_file.is_file() and has_results:
            old = load_json_file(run_file)
            if old != fingerprint:
                raise ConfigError(
                    f"{parts} holds partial results of a different run ({old}); delete it or "
                    "use the same model and options to resume"
                )
        elif create:
            parts.mkdir(parents=True, exist_ok=True)
            write_text(run_file, json.dumps(fingerprint, sort_keys=True))
        self.done: dict[str, object] = {}
        for shard in sorted(parts.glob("shard-*.jsonl")) if parts.is_dir() else []:
            for line in shard.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                self.done[record["k"]] = record["v"]
        self._next = len(list(parts.glob(f"shard-{rank}-*.jsonl"))) if parts.is_dir() else 0
        self._buffer: list[tuple[str, object]] = []

    def add(self, key: str, value: object) -> None:
        """Buffer one finished result."""
        self._buffer.append((key, value))
        self.done[key] = value

    def flush(self) -> None:
        """Write buffered results as a new shard file."""
        if not self._buffer:
            return
        lines = [json.dumps({"k": k, "v": v}, ensure_ascii=False) for k, v in self._buffer]
        target = self.parts / f"shard-{self.rank}-{self._next:06d}.jsonl"
        write_text(target, "\n".join(lines) + "\n")
        self._next += 1
        self._buffer = []

    def remove_own(self) -> None:
        """Delete this rank's shard files (after the output is written)."""
        for shard in self.parts.glob(f"shard-{self.rank}-*.jsonl"):
            shard.unlink(missing_ok=True)


def _part_line(path: Path, number: int, line: str) -> object:
    """One JSON line of a part file: depth bounded before parsing, keys unique, valid Unicode.

    Raises:
        DataError: Nested more than :data:`consistency_bench.bench.io.json_input.MAX_DEPTH` deep
        (``json.loads``
            would raise ``RecursionError``), a key given twice (which value is meant?), a lone
            surrogate (the merged file could not be written as UTF-8), or not JSON.

    """
    try:
        value = parse_json(line, line=True)
    except JsonTextError as exc:  # too deep, a key given twice, not JSON
        raise DataError(f"{path}:{number}: {exc}") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DataError(f"{path}:{number}: not valid Unicode (a lone surrogate "
                        f"{exc.object[exc.start]!r}); write the text as UTF-8") from None
    return value


def _check_header(path: Path, header: object) -> dict:
    """The header line of a part: format, version, ``shard [i, n]``, ``rows``, ``run``."""
    if not isinstance(header, dict) or header.get("format") != PART_FORMAT:
        raise DataError(f"{path}:1: not a part file of `predict --shard` (no {PART_FORMAT} "
                        "header); pass the files written with --shard i/N")
    if header.get("version") != PART_VERSION:
        raise DataError(f"{path}:1: part format version {shorten(header.get('version'))}; "
                        f"this version reads {PART_VERSION}")
    shard, rows = header.get("shard"), header.get("rows")

    def count(x: object) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    if not (isinstance(shard, list) and len(shard) == 2 and all(count(x) for x in shard)
            and shard[0] < shard[1] <= MAX_SHARDS):
        raise DataError(f"{path}:1: field 'shard' value {shorten(shard)}: expected [i, n] "
                        f"with 0 <= i < n <= {MAX_SHARDS}; the file was edited")
    if not count(rows):
        raise DataError(f"{path}:1: field 'rows' value {shorten(rows)}: expected a count; the "
                        "file was edited")
    if not isinstance(header.get("run"), dict):
        raise DataError(f"{path}:1: field 'run' value {shorten(header.get('run'))}: expected "
                        "an object; the file was edited")
    return header


def _read_part(path: Path) -> tuple[dict, list[tuple[int, dict, int]]]:
    """Header and ``(position, record, line)`` rows of a part file, checked for order."""
    from consistency_bench.bench.predictions.files import check_input_file

    check_input_file(path)  # a folder, FIFO (which would block), device or ``-``
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a part file (not UTF-8: {exc})") from None
    try:
        header = _part_line(path, 1, lines[0]) if lines else None
    except DataError:
        header = None
    header = _check_header(path, header)
    rows, last = [], -1
    for number, line in enumerate(lines[1:], start=2):
        item = _part_line(path, number, line)
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)):
            raise DataError(f"{path}:{number}: expected [row position, record], got "
                            f"{shorten(line)}")
        pos, record = item
        if (not isinstance(pos, int) or isinstance(pos, bool) or not 0 <= pos < header["rows"]
                or pos <= last):
            raise DataError(f"{path}:{number}: row position {shorten(pos)} after {last}: a "
                            f"part lists its rows in increasing order below {header['rows']}; "
                            "the file was edited or cut")
        rows.append((pos, record, number))
        last = pos
    return header, rows


def _run_suites(path: Path, header: dict) -> list[tuple[str, str, int]]:
    """The header's ``run.suites``: ``(suite, sha256, rows)`` in row order, summing to ``rows``.

    Raises:
        DataError: Missing, malformed, or not adding up to the part's ``rows``.

    """
    suites = header["run"].get("suites")
    ok = isinstance(suites, list) and all(
        isinstance(s, list) and len(s) == 3 and isinstance(s[0], str)
        and isinstance(s[1], str) and isinstance(s[2], int) and not isinstance(s[2], bool)
        and s[2] >= 0 for s in suites)
    if not ok or sum(s[2] for s in suites) != header["rows"]:
        raise DataError(f"{path}:1: field 'run.suites' value {shorten(suites)}: expected "
                        f"[suite, sha256, rows] lists adding up to {header['rows']} rows; the "
                        "file was edited")
    return [(s[0], s[1], s[2]) for s in suites]


def check_part_rows(path: Path, header: dict, rows: list[tuple[int, dict, int]],
                    folder) -> None:
    """A part's rows checked as ``score`` checks a prediction file's, against ``--data``.

    The same row validator (:func:`consistency_bench.bench.predictions.records.collect_records`:
    ``id``,
    ``label``, finite ``probs`` summing to 1) and the same match against the built suites
    (:func:`consistency_bench.bench.predictions.resolve.resolve_columns`: known suite and id, label
    in range,
    one probability per label); each row's id must belong to the suite its position falls
    in, and the suites must be the ones the part was predicted on (sha256). Before, a NaN
    probability, an id of another suite and an id of no suite merged with exit 0.

    Raises:
        PredictionFileError: A bad row, naming the part, its line, the field and the value.
        DataError: The part was predicted on other suites than ``folder`` holds.

    """
    from consistency_bench.bench.predictions.records import collect_records
    from consistency_bench.bench.predictions.resolve import resolve_columns

    suites = _run_suites(path, header)
    for suite, sha, _ in suites:
        have = folder.manifest.get(suite, {}).get("sha256")
        if have != sha:
            found = "lacks it" if have is None else f"has sha256 {str(have)[:12]}..."
            raise DataError(f"{path}:1: the part was predicted on suite {suite} with sha256 "
                            f"{sha[:12]}...; --data {folder.root} {found}: pass the built "
                            "folder the parts were made from")
    if not rows:
        return
    columns = collect_records(path, ((line, record) for _, record, line in rows))
    ends = [0]
    for _, _, n in suites:
        ends.append(ends[-1] + n)
    for (pos, _, line), row_id in zip(rows, columns.ids, strict=True):
        suite = suites[bisect.bisect_right(ends, pos) - 1][0]
        if row_id.split("/", 1)[0] != suite:
            raise PredictionFileError(str(path), f"row {pos} is a row of suite {suite}; this "
                                      "id is not: the file was edited", line=line,
                                      field="id", value=row_id, has_value=True)
    resolve_columns(str(path), columns, folder.manifest, folder.ids)


# One piece (over 60 lines): every part checked against the others before the one write.
def merge_parts(paths: Sequence[str | os.PathLike], out: str | os.PathLike,
                data_dir: str | os.PathLike) -> int:
    """Join the part files of ``predict --shard i/N`` into one prediction file.

    Checks that the parts are parts ``0 .. N-1`` of one run, each given once, with the same
    settings and suites (sha256), that together they hold every row exactly once, and that
    every row passes ``score``'s row validator against the built suites of ``data_dir``
    (:func:`check_part_rows`); writes the rows in the order of a single-process run (the file
    is byte-identical to it).

    Returns:
        The number of rows written.

    Raises:
        DataError: A file that is not a part, a missing or repeated part, parts of different
            runs, a row missing or in two parts (names the files and what differs).
        PredictionFileError: A row ``score`` would refuse (part, line, field and value).

    """
    from consistency_bench.bench.scoring.engine import SuiteFolder

    parsed = [(os.fspath(p), *_read_part(Path(p))) for p in paths]
    if not parsed:
        raise ConfigError("merge-predictions: no part files given")
    first_path, first, _ = parsed[0]
    count = first["shard"][1]
    by_index: dict[int, str] = {}
    for path, header, _ in parsed:
        index, n = header["shard"]
        if n != count:
            raise DataError(f"{path}: part {index}/{n}, but {first_path} is part of {count}")
        if index in by_index:  # both spellings as given (p1 and ./p1)
            raise DataError(f"part {index}/{count} given twice: {by_index[index]} and {path}")
        by_index[index] = path
        for field_name in ("rows", "run"):
            if header[field_name] != first[field_name]:
                diff = _first_difference(first[field_name], header[field_name])
                raise DataError(f"{path}: not a part of the same run as {first_path} "
                                f"({field_name}: {diff})")
    missing = [f"{i}/{count}" for i in range(count) if i not in by_index]
    if missing:
        raise DataError(f"missing part(s) {', '.join(missing)} (given: "
                        f"{', '.join(f'{i}/{count}' for i in sorted(by_index))})")
    owner: dict[int, str] = {}
    records: list[tuple[int, dict]] = []
    for path, _, rows in parsed:
        for pos, record, _ in rows:
            if pos in owner:
                raise DataError(f"row {pos} is in {owner[pos]} and in {path}: the parts were "
                                "not made with the same batch plan")
            owner[pos] = path
            records.append((pos, record))
    if len(owner) != first["rows"]:
        gap = next(i for i in range(first["rows"]) if i not in owner)
        raise DataError(f"the parts hold {len(owner)} of {first['rows']} rows (row {gap} is "
                        "in none): a part was cut or made with another batch plan")
    folder = SuiteFolder(data_dir)
    seen: dict[str, str] = {}
    for path, header, rows in parsed:
        check_part_rows(Path(path), header, rows, folder)
        for _, record, line in rows:  # an id in two parts (each part is checked on its own)
            where = seen.setdefault(record["id"], f"{path}:{line}")
            if where != f"{path}:{line}":
                raise PredictionFileError(path, f"duplicate id (also at {where})", line=line,
                                          field="id", value=record["id"], has_value=True)
    records.sort(key=lambda r: r[0])
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for _, record in records:  # standard JSON only (the rows are finite: checked above)
            handle.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
    return len(records)


def _first_difference(a, b) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return f"{key} {a.get(key)!r} vs {b.get(key)!r}"
    return f"{a!r} vs {b!r}"
