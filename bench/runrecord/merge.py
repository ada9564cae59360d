"""The run record of ``merge-predictions``: one record from the records of the ``--shard`` parts.

Each ``predict --shard i/N`` writes ``<PART>.run.json`` beside its part file. The parts of one
run share the model (commit and weights sha256), the mode, the settings and the suites; they
differ in the shard, the machine, the date and the time taken. When every part has a record,
the merged record is the first part's, with ``run.shard`` null, ``run.parts`` listing each
part's shard, device, date and seconds, and ``predictions`` describing the merged file.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

from consistency_bench.bench.errors import DataError

#: Fields the parts' records must share beyond what the part headers hold: the settings and
#: suites are in every part's header, and :func:`consistency_bench.bench.runner.shards.merge_parts`
#: compares those (its
#: messages name the setting); the weights (sha256, commit) are only in the records.
SHARED = ("mode", "model", "api")


def part_records(parts: Sequence[str | os.PathLike]) -> list[dict] | None:
    """The validated records of the part files, or None unless every part has one.

    A part without a record (made before records existed, or edited and its record moved
    away) gives a merged file without one: nothing then claims how the file was made.

    Raises:
        DataError: A record describes another file than its part, or two records differ in a
            shared field (names the files and the field).

    """
    from consistency_bench.bench.runrecord.schema import describes, read_record, record_path

    paths = [record_path(p) for p in parts]
    if not all(p.is_file() for p in paths):
        return None
    records = []
    for part, path in zip(parts, paths, strict=True):
        record = read_record(path)
        if not describes(record, part):
            raise DataError(f"{path}: describes another file than {part} (its sha256 "
                            "differs); the part was rewritten after its record")
        records.append(record)
    first = records[0]
    for path, record in zip(paths[1:], records[1:], strict=True):
        for field in SHARED:
            if record.get(field) != first.get(field):
                raise DataError(f"{path}: not a part of the same run as {paths[0]} ({field} "
                                f"differs{_which(first.get(field), record.get(field))})")
    return records


def _which(a: object, b: object) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if keys:
            return f": {keys[0]} {a.get(keys[0])!r} vs {b.get(keys[0])!r}"
    return ""


def merged_record(records: Sequence[dict], out: str | os.PathLike, rows: int) -> dict:
    """The record of the merged prediction file ``out`` (``rows`` rows) from its parts'."""
    from consistency_bench.bench.io.digest import file_sha256

    ordered = sorted(records, key=lambda r: (r.get("run") or {}).get("shard") or [0, 1])
    merged = {key: value for key, value in ordered[0].items()}
    merged["date"] = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    merged["predictions"] = {"file": Path(out).name, "sha256": file_sha256(out), "rows": rows,
                             "sampled": False}
    run = dict(ordered[0].get("run") or {})
    run["shard"] = None
    run["parts"] = [{"shard": (r.get("run") or {}).get("shard"), "device": r.get("device"),
                     "date": r.get("date"), "seconds": (r.get("run") or {}).get("seconds")}
                    for r in ordered]
    run["seconds"] = None
    merged["run"] = run
    return merged


def merge_with_record(parts: Sequence[str | os.PathLike], out: str | os.PathLike,
                      data_dir: str | os.PathLike) -> tuple[int, Path | None]:
    """``merge-predictions``: check the parts' records, merge the parts, write both files.

    The records are checked before anything is written; every row is checked against the
    built suites of ``data_dir`` as ``score`` checks it
    (:func:`consistency_bench.bench.runner.shards.merge_parts`);
    the merged record is written after the merged file (it names the file's sha256).

    Returns:
        Rows written, and the record written (None unless every part has one).

    Raises:
        DataError: The parts or their records are not of one run (nothing is written).

    """
    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.runner.shards import merge_parts
    from consistency_bench.bench.runrecord.schema import record_path, write_record

    check_output_file(out, inputs=tuple(parts))
    check_output_file(record_path(out), inputs=tuple(parts), flag="run record")
    records = part_records(parts)
    rows = merge_parts(parts, out, data_dir)  # settings, suites: compared in the part headers
    if records is None:
        return rows, None
    return rows, write_record(record_path(out), merged_record(records, out, rows))
