"""The edit that makes a variant from the row it is compared with (pure functions).

What a reader needs to see a contradiction: the negation words or the antonym (a word diff),
the swapped sentences, the added item, the salad beside its original, the format markers of a
CALM variant (a word diff), the sub-span of a coherence example, the rule of a transitive
pair. An edit is a small JSON-ready dict; its texts are the suite's own and are escaped where
they are shown (text output, HTML), never here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

#: Tokens compared at most per text: the word diff is quadratic in the worst case, and a
#: hostile or very long text is shown whole ("replace") instead.
MAX_DIFF_TOKENS = 400
_TOKENS = re.compile(r"\s+|[^\s]+")

Ops = list[list[str]]


def word_diff(before: str, after: str) -> Ops:
    """``[[op, text], ...]`` turning ``before`` into ``after``; op ``=``, ``-`` or ``+``.

    Whitespace is kept with the words, so joining the ``=`` and ``+`` texts gives ``after``
    and the ``=`` and ``-`` texts give ``before``. Adjacent operations of one kind are merged.
    A text longer than :data:`MAX_DIFF_TOKENS` tokens gives one ``-`` and one ``+``.
    """
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    if before == after:
        return [["=", before]] if before else []
    if len(a) > MAX_DIFF_TOKENS or len(b) > MAX_DIFF_TOKENS:
        return [op for op in (["-", before], ["+", after]) if op[1]]
    ops: Ops = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        parts = [("=", a[i1:i2])] if tag == "equal" else [("-", a[i1:i2]), ("+", b[j1:j2])]
        for op, tokens in parts:
            text = "".join(tokens)
            if not text:
                continue
            if ops and ops[-1][0] == op:
                ops[-1][1] += text
            else:
                ops.append([op, text])
    return ops


def _text(row: Mapping, name: str) -> str:
    value = row.get(name)
    return "" if value is None else str(value)


def _diff(base: Mapping, row: Mapping) -> dict:
    """A word diff of ``text`` and ``text_pair`` (``None`` for an unchanged field)."""
    out: dict = {"type": "diff"}
    for name in ("text", "text_pair"):
        before, after = _text(base, name), _text(row, name)
        out[name] = None if before == after else word_diff(before, after)
    return out


def edit(kind: str, base: Mapping, row: Mapping) -> dict | None:
    """The edit from ``base`` (the row compared with) to ``row``; ``None`` for ``base`` itself.

    Args:
        kind: The suite's metric kind.
        base: The anchor row (original, end row; for additive the first item), as a mapping
            with ``id``, ``variant``, ``text``, ``text_pair`` and the suite's other columns.
        row: A row of the same unit.

    """
    if row.get("id") == base.get("id"):
        return None
    variant = str(row.get("variant") or "")
    swapped = (_text(row, "text") == _text(base, "text_pair")
               and _text(row, "text_pair") == _text(base, "text") and _text(row, "text"))
    if kind == "salad":
        return {"type": "salad", "transform": variant}
    if kind == "transitive":
        return {"type": "rule", "rule": row.get("rule") or None,
                "constraint": row.get("constraint") or None}
    if kind in ("coherence", "coherence_theta"):
        return {"type": "span", "start": row.get("span_start"), "end": row.get("span_end")}
    if swapped:
        return {"type": "swap"}
    out = _diff(base, row)
    if kind == "additive":
        out["type"] = "merge"
    if row.get("tag"):
        out["tag"] = str(row["tag"])
    return out
