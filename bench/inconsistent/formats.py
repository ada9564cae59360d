"""An inspect report as text, JSON or CSV (pure functions: report in, string out).

Texts come from suites and prediction files, so nothing is trusted: in text output control
characters (a terminal escape sequence in a hostile row) are shown as escapes and long texts
are cut; in CSV a cell that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``)
gets a leading ``'``, as the page's CSV download does; JSON escapes by construction.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable

from consistency_bench.bench.inconsistent.groups import Group, GroupRow
from consistency_bench.bench.inconsistent.inspect import Report, SuiteSummary

#: Characters of a text shown in text output (JSON and CSV keep the whole text).
TEXT_CHARS = 300
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_FORMULA = re.compile(r"^[=+\-@\t\r]")


def _plain(value: object, limit: int | None = TEXT_CHARS) -> str:
    """One line, control characters escaped, cut to ``limit`` characters."""
    text = "" if value is None else str(value)
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    text = text.replace("\n", "\\n")
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"… ({len(text):,} characters)"
    return text


def _marked(ops: list | None) -> str | None:
    """A word diff as ``kept [-removed-]{+added+}``."""
    if ops is None:
        return None
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return "".join(marks[op].format(text) for op, text in ops)


def describe_edit(change: dict | None) -> str:
    """One line for an edit (:func:`consistency_bench.bench.inconsistent.edits.edit`)."""
    if not change:
        return ""
    kind = change.get("type")
    if kind == "swap":
        return "the two texts swapped"
    if kind == "salad":
        return f"word salad ({change.get('transform')}) of the original"
    if kind == "rule":
        return f"inferred by {change.get('rule')} (must be {change.get('constraint')})"
    if kind == "span":
        return f"sub-span {change.get('start')}-{change.get('end')}"
    parts = [f"{name}: {_marked(change.get(name))}" for name in ("text", "text_pair")
             if change.get(name) is not None]
    label = "merged with the second item" if kind == "merge" else "edit"
    tag = f" ({change['tag']})" if change.get("tag") else ""
    return f"{label}{tag}: " + "; ".join(parts) if parts else label + tag


def _answer(row: GroupRow) -> str:
    answer = row.prediction if row.prediction is not None else "(invalid answer)"
    if row.probs is not None and row.prediction is not None:
        answer += f" {max(row.probs):.3f}"
    return answer


def _summary_line(s: SuiteSummary) -> str:
    score = "n/a" if s.main_score is None else f"{s.main_score:.4f}"
    head = f"{s.suite} ({s.kind}; {s.main_metric} {score})"
    if s.note:
        return f"{head}: {_plain(s.note)}"
    return (f"{head}: {s.units:,} units, {s.judged:,} judged, {s.inconsistent:,} inconsistent "
            f"({s.relation}), {s.wrong:,} consistent but wrong; listing {s.shown:,} of "
            f"{s.matching:,}")


def _group_lines(number: int, group: Group) -> list[str]:
    conf = "n/a" if group.confidence is None else f"{group.confidence:.3f}"
    broke = f" · broke: {group.broke}" if group.broke else ""
    ref = f" · compared with: {group.reference}" if group.reference else ""
    lines = [f"  {number}. {_plain(group.group)} · {group.status} · gold {group.gold} · "
             f"confidence {conf}{broke}{ref}"]
    for row in group.rows:
        mark = "*" if row.anchor else ("✗" if row.contradicts else " ")
        pair = f" || {_plain(row.text_pair)}" if row.text_pair is not None else ""
        lines.append(f"     {mark} {_plain(row.variant, 24):<14} → {_plain(_answer(row), 40):<22}"
                     f" gold {row.gold}: {_plain(row.text)}{pair}")
        change = describe_edit(row.edit)
        if change:
            lines.append(f"{'':21}{_plain(change, 600)}")
    return lines


def to_text(report: Report) -> str:
    """A human-readable listing: each suite's figures, then its groups."""
    lines = [f"predictions: {_plain(report.predictions)} (sha256 {report.sha256[:16]}…), "
             f"data: {_plain(report.data)}",
             "rows: * the row compared with, ✗ a row whose answer contradicts it"]
    for summary in report.suites:
        lines += ["", _summary_line(summary)]
        mine = [g for g in report.groups if g.suite == summary.suite]
        for i, group in enumerate(mine, 1):
            lines += _group_lines(i, group)
    return "\n".join(lines) + "\n"


def to_json(report: Report) -> str:
    """The whole report as JSON (every text in full)."""
    return json.dumps(report.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


CSV_COLUMNS = ("suite", "kind", "group", "status", "confidence", "gold", "broke", "reference",
               "position", "variant", "id", "text", "text_pair", "row_gold", "prediction",
               "probs", "contradicts", "anchor", "edit")


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if _FORMULA.match(text) and not _number(text) else text


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def to_csv(report: Report) -> str:
    """One line per row of every listed group (the group's fields repeated)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for g in report.groups:
        for i, row in enumerate(g.rows):
            writer.writerow([_cell(v) for v in (
                g.suite, g.kind, g.group, g.status, g.confidence, g.gold, g.broke, g.reference,
                i, row.variant, row.id, row.text, row.text_pair, row.gold, row.prediction,
                None if row.probs is None else json.dumps(row.probs),
                int(row.contradicts), int(row.anchor),
                None if row.edit is None else json.dumps(row.edit, ensure_ascii=False))])
    return out.getvalue()


#: The output formats of ``inspect --format``.
FORMATS: dict[str, Callable[[Report], str]] = {"text": to_text, "json": to_json, "csv": to_csv}
