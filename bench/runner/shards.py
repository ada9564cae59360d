"""Results on disk: the resume shards of a run (``<out>.parts/``) and the part files of ``--shard``.

:class:`ShardStore` keeps finished results so that a restarted run skips done batches;
:func:`merge_parts` joins the part files of ``predict --shard i/N`` (written by
:func:`bench.runner.output.write_part`) into one prediction file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from bench.atomic import atomic_path, write_text
from bench.errors import ConfigError, DataError, shorten
from bench.json_input import JsonTextError, load_json_file, parse_json

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
        DataError: Nested more than :data:`bench.json_input.MAX_DEPTH` deep (``json.loads``
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
            and shard[0] < shard[1]):
        raise DataError(f"{path}:1: field 'shard' value {shorten(shard)}: expected [i, n] "
                        "with 0 <= i < n; the file was edited")
    if not count(rows):
        raise DataError(f"{path}:1: field 'rows' value {shorten(rows)}: expected a count; the "
                        "file was edited")
    if not isinstance(header.get("run"), dict):
        raise DataError(f"{path}:1: field 'run' value {shorten(header.get('run'))}: expected "
                        "an object; the file was edited")
    return header


def _read_part(path: Path) -> tuple[dict, list[tuple[int, dict]]]:
    """Header and ``(position, record)`` rows of a part file, checked for order."""
    from bench.predictions.files import check_input_file

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
        rows.append((pos, record))
        last = pos
    return header, rows


def merge_parts(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> int:
    """Join the part files of ``predict --shard i/N`` into one prediction file.

    Checks that the parts are parts ``0 .. N-1`` of one run, each given once, with the same
    settings and suites (sha256), and that together they hold every row exactly once; writes
    the rows in the order of a single-process run (the file is byte-identical to it).

    Returns:
        The number of rows written.

    Raises:
        DataError: A file that is not a part, a missing or repeated part, parts of different
            runs, a row missing or in two parts (names the files and what differs).

    """
    parsed = [(Path(p), *_read_part(Path(p))) for p in paths]
    if not parsed:
        raise ConfigError("merge-predictions: no part files given")
    first_path, first, _ = parsed[0]
    count = first["shard"][1]
    by_index: dict[int, Path] = {}
    for path, header, _ in parsed:
        index, n = header["shard"]
        if n != count:
            raise DataError(f"{path}: part {index}/{n}, but {first_path} is part of {count}")
        if index in by_index:
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
    owner: dict[int, Path] = {}
    records: list[tuple[int, dict]] = []
    for path, _, rows in parsed:
        for pos, record in rows:
            if pos in owner:
                raise DataError(f"row {pos} is in {owner[pos]} and in {path}: the parts were "
                                "not made with the same batch plan")
            owner[pos] = path
            records.append((pos, record))
    if len(owner) != first["rows"]:
        gap = next(i for i in range(first["rows"]) if i not in owner)
        raise DataError(f"the parts hold {len(owner)} of {first['rows']} rows (row {gap} is "
                        "in none): a part was cut or made with another batch plan")
    records.sort(key=lambda r: r[0])
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for _, record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(records)


def _first_difference(a, b) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return f"{key} {a.get(key)!r} vs {b.get(key)!r}"
    return f"{a!r} vs {b!r}"
