"""Read the tab-separated files of the BECEL release and GLUE.

Fields may be quoted with doubled quotes inside (CSV conventions); empty fields stay ``""``.
Repeated header names (``mrpc/symmetric.tsv`` has ``index`` twice) keep the first column.
"""

from __future__ import annotations

import csv
from pathlib import Path

from consistency_bench.bench.errors import SourceError


def read_tsv(path: Path, *, quoting: int = csv.QUOTE_MINIMAL) -> list[dict[str, str]]:
    """All data rows of a TSV file with a header, as dicts keyed by column name.

    Args:
        path: The file.
        quoting: ``csv`` quoting mode; ``csv.QUOTE_NONE`` for files with bare quotes.

    Raises:
        SourceError: A row has a different number of fields than the header.

    """
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=quoting)
        header = next(reader)
        first: dict[str, int] = {}
        for position, name in enumerate(header):
            first.setdefault(name, position)
        rows = []
        for number, fields in enumerate(reader):
            if len(fields) != len(header):
                raise SourceError(
                    f"{path}: data row {number}: {len(fields)} fields, header has {len(header)}"
                )
            rows.append({name: fields[position] for name, position in first.items()})
    return rows
