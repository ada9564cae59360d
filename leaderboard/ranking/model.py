"""The ranking's types and tables: entries, cells, suites, rows, views, the leaderboard.

The task, kind and family tables give display names and reading order; a suite's
:class:`SuiteInfo` is read from its results JSON (:func:`suite_info`), validated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from consistency_bench.bench.errors import BenchError
from consistency_bench.bench.metrics.consistent.salad_score import (
    OLD_SALAD_STATISTICS,
    UNIT_STATISTICS,
    no_signal,
)
from consistency_bench.bench.registries import families
from consistency_bench.leaderboard.paired import PairedResult, format_p

#: Per-unit outcomes: entry -> suite -> unit id -> success value (1 = consistent and right).
Outcomes = Mapping[str, Mapping[str, Mapping[str, float]]]

#: Display names and reading order of the tasks, the kinds and the families (others follow,
#: sorted): read from the family declarations (bench/registries/families.py), family by family.
TASKS = families.task_names()
KINDS = families.kinds()
FAMILIES = families.FAMILIES.names()
#: View groups in reading order.
VIEW_ORDER = ("task", "kind", "family", "lang", "all")
#: Tasks whose suites are not in English (the ``lang:en`` view leaves them out).
NON_ENGLISH_TASKS = {"kornli": "ko", "klue_nli": "ko", "klue_sts": "ko"}
#: Families of the ``lang:en`` view. The coherence suites are left out: they need span-level
#: outputs (CE) or a trained multiple-choice model with probabilities (ART).
ENGLISH_FAMILIES = ("becel", "calm", "salad")

ALPHA = 0.05
#: What the page's "hide contaminated" filter hides (``leaderboard.json`` ``filters``).
HIDE_CONTAMINATED = (
    "Hides the rows flagged contaminated in the view: entries whose meta.yaml training_data "
    "names a source file that one of the view's suites draws from (a #half= declaration "
    "included), so part of their score there may be in-sample. Their other views are not "
    "affected, and entries that declare no training data are never hidden.")


@dataclass(frozen=True)
class Entry:
    """One leaderboard entry: a slug, its results JSON and its metadata."""

    name: str
    results: Mapping
    meta: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """One entry's scores on one suite.

    Attributes:
        score: The paper's main metric (tau, C_R, agreement, coherence); ``None`` where it is
            undefined although the ranked score is not (tau_trn with an empty set C).
        goodness: Chance-corrected consistent accuracy (the ranked value); ``None`` on a suite
            whose originals have a single gold class (shown, not ranked).
        ci95: 95% interval of ``score``.
        n: Units of ``score``.
        rank: Rank among the entries on this suite (by ``goodness``); ``None`` for a
            degenerate cell (shown for reference, never ranked) or an unranked suite.
        sd_goodness: Standard error of ``goodness`` (binomial, for the interval fallback).
        consistency: ``score`` direction-normalised (higher is better).
        consistent_accuracy: Consistent accuracy before chance correction.
        chance: Its chance level.
        accuracy: Accuracy on the originals.
        degenerate: Why the cell is degenerate, or ``None``.
        degenerate_testable: Whether the tests on the originals apply to the suite (labelled
            originals, not >= 95% one gold class).
        contaminated: Why the cell is contaminated, or ``None``.
        goodness_ci95: 95% interval of ``goodness`` (the ranked score): paired-bootstrap
            percentiles over the cell's units when per-unit outcomes are given, else
            ``goodness ± 1.96 sd_goodness`` (none for word salad, whose score is not a mean).
        goodness_n: Units of ``goodness``.
        failing: Why a cell that is not degenerate is not significantly above chance (a real
            model failing a kind, e.g. never flipping under negation), or ``None``.
        unjudged: On a word-salad suite scored without probabilities, that the confidence
            half of the score could not be judged (the labels alone were), else ``None``.

    """

    score: float | None
    goodness: float | None
    ci95: tuple[float, float] | None
    n: int | None
    rank: int | None = None
    sd_goodness: float | None = None
    consistency: float | None = None
    consistent_accuracy: float | None = None
    chance: float | None = None
    accuracy: float | None = None
    degenerate: str | None = None
    contaminated: str | None = None
    degenerate_testable: bool = False
    goodness_ci95: tuple[float, float] | None = None
    goodness_n: int | None = None
    failing: str | None = None
    unjudged: str | None = None


@dataclass(frozen=True)
class SuiteInfo:
    """What the ranking needs to know about a suite (taken from the results)."""

    name: str
    family: str
    task: str
    kind: str
    main_metric: str
    higher_is_better: bool
    best_near: float | None = None
    source_files: tuple[str, ...] = ()
    #: How the ranked score is recomputed from resampled units (results
    #: ``metrics.ranked_units``); ``None``: the chance-corrected mean of the unit values.
    ranked_units: Mapping | None = None

    @property
    def direction(self) -> str:
        """Human-readable direction of the main metric: ``higher``, ``lower`` or ``near <c>``."""
        if self.best_near is not None:
            return f"near chance ({100 * self.best_near:.0f}%)"
        return "higher" if self.higher_is_better else "lower"


@dataclass(frozen=True)
class Row:
    """One entry in a view's overall table."""

    name: str
    rank: int | None
    covered: int
    total: int
    mean: float | None
    borda: float
    win_rate: float | None
    rank_borda: int | None
    rank_win_rate: int | None
    sd_mean: float | None
    vs_next: PairedResult | None = None
    rank_low: int | None = None
    rank_high: int | None = None
    accuracy: float | None = None
    consistency: float | None = None
    degenerate: str | None = None
    contaminated: str | None = None
    #: Per kind of the view, the mean ranked score over the kind's suites it covers.
    kind_means: dict[str, float | None] = field(default_factory=dict)
    #: Why a ranked (not degenerate) entry fails a kind (cells not above chance), or ``None``.
    failing: str | None = None
    #: Task -> why the entry is degenerate on it, for every task of the view where it is (a
    #: ranked row may have some; ``degenerate`` is set when they carry over half the weight).
    degenerate_tasks: dict[str, str] = field(default_factory=dict)
    #: Share of the view's weight (kinds weighted as in the score) of the suites it covers; a
    #: partial row's ``mean`` is over those suites only.
    coverage_weight: float = 0.0
    #: On how many of its word-salad suites the confidence could not be judged (no
    #: probabilities: judged on the labels alone), or ``None``.
    unjudged: str | None = None

    @property
    def complete(self) -> bool:
        """Whether the entry covers every suite of the view."""
        return self.covered == self.total

    @property
    def status(self) -> str:
        """``ranked``; ``reference`` (complete but degenerate: shown, never ranked); ``partial``."""
        if not self.complete:
            return "partial"
        return "reference" if self.degenerate else "ranked"

    @property
    def flags(self) -> list[str]:
        """Short flag names (``degenerate``, ``contaminated``, ``failing``)."""
        return [n for n in ("degenerate", "contaminated", "failing") if getattr(self, n)]


@dataclass(frozen=True)
class View:
    """Overall ranking over a subset of suites (all, one family, one kind, one task)."""

    name: str
    suites: tuple[str, ...]
    rows: tuple[Row, ...]
    title: str = ""
    unranked_suites: tuple[str, ...] = ()
    #: Consistency kinds of the view's ranked suites, in display order (each weighs the same).
    kinds: list[str] = field(default_factory=list)
    #: The one sentence shown above the table when the view ranks nobody, saying why.
    note: str | None = None


@dataclass(frozen=True)
class Leaderboard:
    """Everything the renderers need."""

    suites: dict[str, SuiteInfo]  # in display order: family, kind, task
    cells: dict[str, dict[str, Cell]]  # suite -> entry -> cell
    suite_order: dict[str, list[str]]  # suite -> entries, best first
    suite_tests: dict[str, list[PairedResult | None]]  # suite -> test of i vs i+1
    views: dict[str, View]  # in reading order (VIEW_ORDER)
    meta: dict[str, dict]
    #: Entry -> sha256 of its predictions (JSONL), where the results record it: what
    #: ``submit --hub`` compares a new file with (leaderboard/intake/duplicates.py).
    predictions_sha256: dict[str, str | None] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict of everything (``view_order`` keeps the reading order)."""
        return {
            "schema_version": 2,
            "ranked_on": "consistent_accuracy_cc",
            "suite_order_display": list(self.suites),
            "view_order": list(self.views),
            "suites": {k: asdict(v) | {"direction": v.direction} for k, v in self.suites.items()},
            "cells": {s: {e: asdict(c) for e, c in cs.items()} for s, cs in self.cells.items()},
            "suite_order": self.suite_order,
            "suite_tests": {
                s: [_test_dict(t) for t in ts] for s, ts in self.suite_tests.items()
            },
            "views": {
                k: {
                    "title": v.title,
                    "suites": list(v.suites),
                    "unranked_suites": list(v.unranked_suites),
                    "kinds": list(v.kinds),
                    "note": v.note,
                    "rows": [
                        asdict(r) | {"complete": r.complete, "status": r.status,
                                     "flags": r.flags, "vs_next": _test_dict(r.vs_next),
                                     "reproduced": self.meta.get(r.name, {}).get("reproduced")}
                        for r in v.rows
                    ],
                }
                for k, v in self.views.items()
            },
            "meta": self.meta,
            "predictions_sha256": self.predictions_sha256,
            "filters": {"hide_contaminated": HIDE_CONTAMINATED},
        }


def _test_dict(test: PairedResult | None) -> dict | None:
    if test is None:
        return None
    return asdict(test) | {"p_text": format_p(test.p_value)}


def consistency(score: float, info: SuiteInfo) -> float:
    """The paper's metric direction-normalised to [0, 1], higher is better."""
    if info.best_near is not None:  # 0 at both ends: always keeping and always changing
        c = info.best_near
        return float(no_signal(np.array(score), np.array(c)))
    return score if info.higher_is_better else 1.0 - score


#: Backwards-compatible name of :func:`consistency`.
goodness = consistency


def suite_info(name: str, result: Mapping, where: str = "") -> SuiteInfo:
    """Build a ``SuiteInfo`` from one suite's entry in a results JSON; validates what it reads."""
    try:
        best = result.get("best_near")
        spec = (result.get("metrics") or {}).get("ranked_units")
        if spec is not None and spec.get("statistic") in OLD_SALAD_STATISTICS:
            raise BenchError(
                f"{where}suite {name!r}: scored with the word-salad statistic "
                f"{spec.get('statistic')!r}, before the salad answer's confidence counted "
                "(issue 27); run `consistency-bench rescore`")
        if spec is not None and spec.get("statistic") not in UNIT_STATISTICS:
            raise BenchError(
                f"{where}suite {name!r}: metrics.ranked_units.statistic "
                f"{spec.get('statistic')!r} is unknown (known: {sorted(UNIT_STATISTICS)})")
        if spec is None and result.get("family") == "salad":
            raise BenchError(
                f"{where}suite {name!r}: results lack metrics.ranked_units (scored before the "
                "word-salad score measured the signal left in the salad answers); run "
                "`consistency-bench rescore`")
        return SuiteInfo(
            name=name,
            family=str(result.get("family", "")),
            task=str(result.get("task", "")),
            kind=str(result.get("kind", "")),
            main_metric=str(result["main_metric"]),
            higher_is_better=bool(result["higher_is_better"]),
            best_near=None if best is None else float(best),
            source_files=tuple(result.get("source_files", ())),
            ranked_units=None if spec is None else dict(spec),
        )
    except KeyError as exc:
        raise BenchError(f"{where}suite {name!r}: results lack field {exc.args[0]!r}") from None


def kind_weights(slots: Sequence[str], kind_of: Mapping[str, str]) -> dict[str, float]:
    """Weight of each slot in a view score: ``1 / (kinds * slots of its kind)``.

    Every consistency kind weighs the same however many suites it has (MTEB's
    "Mean (TaskType)"): five word-salad transformations are one kind, as one negation suite is.
    """
    groups: dict[str, list[str]] = {}
    for s in slots:
        groups.setdefault(kind_of[s], []).append(s)
    return {s: 1.0 / (len(groups) * len(g)) for g in groups.values() for s in g}


def _order_key(value: str, order: Sequence[str]) -> tuple[int, str]:
    return (order.index(value), value) if value in order else (len(order), value)


def suite_sort_key(info: SuiteInfo) -> tuple:
    """Display order of suites: family, then kind, then task, then name."""
    return (_order_key(info.family, FAMILIES), _order_key(info.kind, KINDS),
            _order_key(info.task, tuple(TASKS)), info.name)
