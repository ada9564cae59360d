"""Stored predictions against the predictions made again: labels and probabilities (pure).

A label is compared as a task label index: an integer, or a string matched to a label name as
the scorer matches it (case, spaces, ``_`` and ``-`` ignored) or an index written as text; any
other string (a text-to-text model's free answer) is compared as its normalised text. The
probability difference of a row is the largest absolute difference over its labels; a row
where one side has ``probs`` and the other has none counts as ``missing_probs`` (a file made
by the recorded run has them exactly where that run writes them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def label_index(value: object, label_names: Sequence[str]) -> int | str | None:
    """The label as an index when it names one, else its normalised text (None: no label)."""
    from consistency_bench.bench.modeling.label_map import normalise_label

    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = normalise_label(str(value))
    for i, name in enumerate(label_names):
        if normalise_label(name) == text:
            return i
    return int(text) if text.isdigit() and int(text) < len(label_names) else text


def prob_diff(a: object, b: object) -> float | None:
    """Largest absolute difference of two ``probs`` rows; None when either has none.

    Rows of different lengths, or with a value that is not a finite number, differ by 1.0
    (as much as probabilities can).
    """
    if not isinstance(a, list) or not isinstance(b, list):
        return None
    if len(a) != len(b):
        return 1.0
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if (not isinstance(x, (int, float)) or not isinstance(y, (int, float))
                or not math.isfinite(x) or not math.isfinite(y)):
            return 1.0
        worst = max(worst, abs(float(x) - float(y)))
    return worst


@dataclass
class SuiteComparison:
    """One suite's rows compared.

    Attributes:
        suite: The suite.
        groups: Groups checked.
        rows: Rows checked.
        agree: Rows whose labels agree.
        prob_rows: Rows where both sides have ``probs``.
        missing_probs: Rows where only one side has ``probs``.
        max_prob_diff: Largest probability difference (None: no row has ``probs`` on both
            sides).
        first_disagreement: The first row id (sorted) whose label differs, or None.

    """

    suite: str
    groups: int
    rows: int = 0
    agree: int = 0
    prob_rows: int = 0
    missing_probs: int = 0
    max_prob_diff: float | None = None
    first_disagreement: str | None = None

    @property
    def agreement(self) -> float:
        """Share of rows whose labels agree (1.0 for no rows)."""
        return self.agree / self.rows if self.rows else 1.0

    def to_dict(self) -> dict:
        """JSON-ready figures."""
        return {"groups": self.groups, "rows": self.rows, "agree": self.agree,
                "label_agreement": round(self.agreement, 6), "prob_rows": self.prob_rows,
                "missing_probs": self.missing_probs,
                "max_prob_diff": _rounded(self.max_prob_diff),
                "first_disagreement": self.first_disagreement}


def _rounded(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.3g}")


@dataclass
class Comparison:
    """Every sampled suite compared."""

    suites: dict[str, SuiteComparison] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        """Rows checked."""
        return sum(s.rows for s in self.suites.values())

    @property
    def groups(self) -> int:
        """Groups checked."""
        return sum(s.groups for s in self.suites.values())

    @property
    def agree(self) -> int:
        """Rows whose labels agree."""
        return sum(s.agree for s in self.suites.values())

    @property
    def label_agreement(self) -> float:
        """Share of all checked rows whose labels agree."""
        return self.agree / self.rows if self.rows else 1.0

    @property
    def max_prob_diff(self) -> float | None:
        """Largest probability difference over every suite (None: no probabilities)."""
        diffs = [s.max_prob_diff for s in self.suites.values() if s.max_prob_diff is not None]
        return max(diffs) if diffs else None

    @property
    def missing_probs(self) -> int:
        """Rows where only one side has ``probs``."""
        return sum(s.missing_probs for s in self.suites.values())

    def worst_suite(self) -> SuiteComparison | None:
        """The suite with the lowest label agreement (ties: the first by name)."""
        if not self.suites:
            return None
        return min(self.suites.values(), key=lambda s: (s.agreement, s.suite))


def compare(stored: Mapping[str, Mapping], rerun: Mapping[str, Mapping],
            rows: Mapping[str, frozenset[str]], groups: Mapping[str, int],
            label_names: Mapping[str, Sequence[str]]) -> Comparison:
    """Compare the stored and the re-made record of every sampled row.

    Args:
        stored: Row id -> the stored record (``label``, ``probs``).
        rerun: Row id -> the record made again.
        rows: Suite -> the sampled row ids.
        groups: Suite -> the number of sampled groups.
        label_names: Suite -> its task's label names.

    A sampled row missing on either side counts as a disagreement (and, when the other side
    has ``probs``, as missing probabilities).

    """
    out = Comparison()
    for suite in sorted(rows):
        result = SuiteComparison(suite, groups.get(suite, 0))
        names = label_names[suite]
        for row_id in sorted(rows[suite]):
            a, b = stored.get(row_id, {}), rerun.get(row_id, {})
            result.rows += 1
            la, lb = label_index(a.get("label"), names), label_index(b.get("label"), names)
            if la is not None and la == lb:
                result.agree += 1
            elif result.first_disagreement is None:
                result.first_disagreement = row_id
            pa, pb = a.get("probs"), b.get("probs")
            diff = prob_diff(pa, pb)
            if diff is not None:
                result.prob_rows += 1
                result.max_prob_diff = max(result.max_prob_diff or 0.0, diff)
            elif (pa is None) != (pb is None):
                result.missing_probs += 1
        out.suites[suite] = result
    return out
