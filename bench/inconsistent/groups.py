"""Chosen units of a suite as groups: every variant's text, gold, answer, probabilities, edit.

:func:`select_units` picks and orders the units a report lists (by status, then by the
confidence of the contradiction), :func:`sample_units` draws a seeded sample of them (the
explorer of the leaderboard page), and :func:`build_groups` reads the texts of only those
units' rows and returns :class:`Group` records, ready for JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from consistency_bench.bench.inconsistent.edits import edit
from consistency_bench.bench.inconsistent.verdicts import INCONSISTENT, STATUS, WRONG, Verdicts
from consistency_bench.bench.io.arrays import indices
from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.scorers.contract import Aligned, SuiteData

#: Columns of a row shown besides the texts (when the suite has them).
SHOWN_COLUMNS = ("tag", "rule", "constraint", "agreement_with", "span_start", "span_end",
                 "span_label")
#: Digits of a probability in a report.
DIGITS = 4


@dataclass(frozen=True)
class GroupRow:
    """One row of a group.

    Attributes:
        id: Row id.
        variant: The row's variant (``original``, ``negated``, ``signal:[]``, ...).
        text: First text.
        text_pair: Second text, or ``None``.
        gold: Gold label name, or ``None``.
        prediction: Predicted label name, or ``None`` for an invalid answer.
        probs: Probabilities (rounded to :data:`DIGITS`), or ``None``.
        contradicts: Whether this row's answer contradicts the group's anchor row.
        anchor: Whether this is the row the others are compared with.
        edit: The edit that makes this row from the anchor
        (:func:`consistency_bench.bench.inconsistent.edits.edit`).
        extra: The suite's other columns of the row that explain it (tag, rule, span, ...).

    """

    id: str
    variant: str
    text: str
    text_pair: str | None
    gold: str | None
    prediction: str | None
    probs: list[float] | None
    contradicts: bool
    anchor: bool
    edit: dict | None
    extra: dict


@dataclass(frozen=True)
class Group:
    """One unit of a suite: its status and every row.

    Attributes:
        suite: Suite name.
        kind: Metric kind.
        group: Unit id (the ``group`` of its anchor row; the scorer's unit key).
        status: ``inconsistent``, ``wrong`` or ``right``.
        judged: Whether consistency could be judged (see :class:`Verdicts`).
        confidence: Confidence of the contradiction, or ``None``.
        gold: Gold label name of the unit, or ``None``.
        relation: What an inconsistent unit of this kind did.
        broke: Which relation broke (CALM: ``reverse``, ``signal``), or ``""``.
        reference: Word salad: the label the salad answer is compared with.
        rows: The unit's rows, in display order.

    """

    suite: str
    kind: str
    group: str
    status: str
    judged: bool
    confidence: float | None
    gold: str | None
    relation: str
    broke: str
    reference: str | None
    rows: tuple[GroupRow, ...]

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def select_units(verdicts: Verdicts, *, include_wrong: bool = False,
                 labels: Sequence[int] = ()) -> np.ndarray:
    """Units to list, in order: inconsistent first (then wrong with ``include_wrong``).

    Within a status, by the confidence of the contradiction, most confident first (units
    without a confidence last), then in suite order. ``labels``: only units with one of these
    gold label indices.
    """
    keep = verdicts.status == INCONSISTENT
    if include_wrong:
        keep |= verdicts.status == WRONG
    if labels:
        keep &= np.isin(verdicts.gold, np.asarray(list(labels), dtype=np.int64))
    units = np.flatnonzero(keep)
    conf = verdicts.confidence[units]
    missing = np.isnan(conf)
    order = np.lexsort((verdicts.rows[units, verdicts.anchor], np.where(missing, 0.0, -conf),
                        missing, verdicts.status[units]))
    return units[order]


def sample_units(units: np.ndarray, n: int, seed: int) -> np.ndarray:
    """A seeded sample of at most ``n`` of ``units``, kept in their order."""
    if len(units) <= n:
        return units
    chosen = np.random.default_rng(seed).choice(len(units), size=n, replace=False)
    return units[np.sort(chosen)]


def _columns(data: SuiteData, rows: np.ndarray) -> dict[str, list]:
    """The shown columns of ``rows`` (only those rows are taken from the file)."""
    take = indices(rows)
    names = ["id", "variant", "group", "text", "text_pair"]
    names += [c for c in SHOWN_COLUMNS if c in data.column_names]
    return {c: data.arrow(c).combine_chunks().take(take).to_pylist() for c in names}


def _label(names: list[str], code: int) -> str | None:
    return names[code] if 0 <= code < len(names) else None


def build_groups(data: SuiteData, aligned: Aligned, verdicts: Verdicts,
                 units: np.ndarray) -> list[Group]:
    """The :class:`Group` of each of ``units`` (in that order)."""
    units = np.asarray(units, dtype=np.int64)
    if not len(units):
        return []
    rows = verdicts.rows[units]
    flat = rows[rows >= 0]
    columns = _columns(data, flat)
    where = {int(r): i for i, r in enumerate(flat.tolist())}
    kind, names = data.info["kind"], data.label_names
    out = []
    for k, unit in enumerate(units.tolist()):
        unit_rows = [int(r) for r in rows[k] if r >= 0]
        records = [{c: v[where[r]] for c, v in columns.items()} for r in unit_rows]
        out.append(_group(data, aligned, verdicts, unit, unit_rows, records, kind, names))
    return out


def _group(data: SuiteData, aligned: Aligned, verdicts: Verdicts, unit: int,
           unit_rows: list[int], records: list[dict], kind: str, names: list[str]) -> Group:
    anchor = verdicts.anchor
    derived = kind in ("transitive", "additive")  # one edit: the derived row from the first
    base = records[0] if derived else records[anchor]
    shown = []
    for j, (r, rec) in enumerate(zip(unit_rows, records, strict=True)):
        pred = int(aligned.pred[r])
        probs = None if aligned.probs is None else [round(float(p), DIGITS)
                                                    for p in aligned.probs[r]]
        change = None
        if (j == anchor) if derived else (j != anchor):
            change = edit(kind, base, rec)
        extra = {c: rec[c] for c in SHOWN_COLUMNS if rec.get(c) not in (None, "")}
        shown.append(GroupRow(
            id=rec["id"], variant=rec["variant"] or "", text=rec["text"] or "",
            text_pair=rec["text_pair"], gold=_label(names, int(data.gold[r])),
            prediction=None if pred == INVALID else _label(names, pred), probs=probs,
            contradicts=bool(verdicts.broken[unit, j]), anchor=j == anchor, edit=change,
            extra=extra))
    conf = float(verdicts.confidence[unit])
    reference = None
    if verdicts.reference is not None:
        reference = _label(names, int(verdicts.reference[unit]))
    return Group(
        suite=data.name, kind=kind, group=records[anchor]["group"],
        status=STATUS[int(verdicts.status[unit])], judged=bool(verdicts.judged[unit]),
        confidence=None if np.isnan(conf) else round(conf, DIGITS),
        gold=_label(names, int(verdicts.gold[unit])), relation=verdicts.relation,
        broke=str(verdicts.tags[unit]), reference=reference, rows=tuple(shown))
