"""Pure ranking over a table of results: views, aggregates, flags, rank intervals, paired tests.

Input is one results JSON (docs/contracts.md) per entry; nothing here reads files.

**What is ranked.** Every suite entry carries ``consistent_accuracy_cc``, the chance-corrected
consistent accuracy (docs/metrics.md): the share of units where the model is right on the
original(s) *and* consistent, mapped so that a uniform random predictor scores 0 and a perfect
one 1 (word salad: right on the originals times the share of signal removed from the salad
answers, docs/metrics.md). A constant or random predictor cannot win it. A cell's ``goodness`` is
that value, with its own interval ``goodness_ci95`` and unit count ``goodness_n``. The
paper's own metric (tau, C_R, agreement, coherence) is kept as the cell's ``score`` and, direction
normalised, as ``consistency`` (higher is better, in [0, 1]):

- ``higher_is_better: true``  -> ``s``
- ``higher_is_better: false`` -> ``1 - s``  (BECEL's tau)
- ``best_near: c``            -> ``s / c`` below ``c``, ``(1 - s) / (1 - c)`` above (word-salad
  agreement: 0 when always keeping and when always changing the answer)

**Aggregates** over the suites of a view that an entry covers: ``mean`` (the rank key: the mean
over the view's consistency kinds of the mean goodness over each kind's suites, MTEB's
"Mean (TaskType)"; ``kind_means`` per kind), ``borda`` (as MTEB: per suite one point per other
entry beaten, half per tie) and ``win_rate`` (as HELM: mean share of other entries beaten), both
per suite. Only entries that cover every suite
of the view are ranked; partial entries are listed with their coverage and ``rank = None``. A
format variant (``X_t2t``: the groups of ``X`` formatted for text-to-text models) and ``X`` are one
slot of a view: a classifier covers it with ``X``, a text-to-text model with ``X_t2t``.

**Degenerate entries are references, never ranked.** An entry flagged degenerate in a view (see
Flags) is listed below the ranked entries with ``rank = None`` and ``status = "reference"``;
per suite, a degenerate cell is shown with ``rank = None`` below the ranked cells. A constant or
random predictor is always flagged, so it can never rank first, however weak the other entries
are (a real model below chance on consistent accuracy loses to random on the score itself).

**Views** come in reading order: per task first, then per consistency kind, per family, the
English suites (``lang:en``: BECEL, CALM and word salad without the Korean tasks), and ``all``
last (``VIEW_ORDER`` in ``Leaderboard.view_order``).

**Rank intervals.** With per-unit outcomes, ranks are bootstrapped: the units of each suite
shared by all ranked entries are resampled (the same resample for every entry, so the bootstrap
is paired), every entry's view score recomputed (per suite its ranked score, recomputed from the
resampled units, word salad included; then kind-weighted) and ranked; the 2.5% and 97.5%
quantiles of an entry's rank are its 95% rank interval. Resampling units whose outcome vectors
are equal is resampling patterns: a multinomial draw over the distinct outcome patterns gives
exactly the same distribution in O(patterns) per resample (above ``MANY_PATTERNS`` patterns, as
word-salad codes make, unit indices are drawn instead).

**Flags.** A cell is *degenerate* when one label takes at least 95% of the predictions on the
originals, or the accuracy on the originals is not significantly above the majority-class rate
(exact one-sided binomial test, p >= 0.05). Both need originals of more than one gold class.
Where at least 95% of the originals share one gold label (BECEL's negational sets), a constant
is right on them and neither test means anything; there the entry is judged where the tests can
tell: the cell is degenerate when the entry is flagged on at least half of its testable suites
of the same task (else of all its testable suites), so a random or constant predictor is flagged
there too; with no testable suite at all, when the ranked score is not significantly above
chance (one-sided z test against 0 with its binomial standard error, z < 1.645). A cell that is
not degenerate but not significantly above chance is *failing* (``Cell.failing``, e.g. "never
flips under negation (rte_negational)"): a real model failing a kind is ranked, last if need
be, with that reason (``Row.failing``), never turned into a reference row. An entry is flagged
degenerate in a view when at least half of its covered suites are. A cell is *contaminated*
when the entry's ``training_data`` (bench/contamination.py) names a file the suite draws from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from bench import families
from bench.contamination import contamination, parse_training_data
from bench.errors import BenchError
from bench.metrics.consistent import UNIT_STATISTICS, no_signal
from leaderboard.paired import (
    Z95,
    PairedResult,
    binom_tail_ge,
    ci_overlap_z,
    format_p,
    mcnemar_exact,
)

#: Per-unit outcomes: entry -> suite -> unit id -> success value (1 = consistent and right).
Outcomes = Mapping[str, Mapping[str, Mapping[str, float]]]

#: Display names and reading order of the tasks, the kinds and the families (others follow,
#: sorted): read from the family declarations (bench/families.py), family by family.
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
#: One-sided 95% normal quantile: the ranked score must be this many standard errors above 0.
Z_ABOVE_CHANCE = 1.6449
NEAR_CONSTANT = 0.95
N_BOOT_RANKS = 1000
#: Resamples of one cell's ranked-score interval (``Cell.goodness_ci95``).
N_BOOT_CELL = 1000


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


@dataclass(frozen=True)
class Leaderboard:
    """Everything the renderers need."""

    suites: dict[str, SuiteInfo]  # in display order: family, kind, task
    cells: dict[str, dict[str, Cell]]  # suite -> entry -> cell
    suite_order: dict[str, list[str]]  # suite -> entries, best first
    suite_tests: dict[str, list[PairedResult | None]]  # suite -> test of i vs i+1
    views: dict[str, View]  # in reading order (VIEW_ORDER)
    meta: dict[str, dict]

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
                    "rows": [
                        asdict(r) | {"complete": r.complete, "status": r.status,
                                     "flags": r.flags, "vs_next": _test_dict(r.vs_next)}
                        for r in v.rows
                    ],
                }
                for k, v in self.views.items()
            },
            "meta": self.meta,
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


def _order_key(value: str, order: Sequence[str]) -> tuple[int, str]:
    return (order.index(value), value) if value in order else (len(order), value)


def suite_sort_key(info: SuiteInfo) -> tuple:
    """Display order of suites: family, then kind, then task, then name."""
    return (_order_key(info.family, FAMILIES), _order_key(info.kind, KINDS),
            _order_key(info.task, tuple(TASKS)), info.name)


def view_title(key: str) -> str:
    """A view's tab title: ``SNLI``, ``kind: semantic``, ``family: becel``, ``all suites``."""
    if key == "all":
        return "all suites"
    if key == "lang:en":
        return "English suites"
    attr, _, value = key.partition(":")
    if attr == "task":
        return TASKS.get(value, value)
    return f"{attr}: {value}"


def degenerate_testable(metrics: Mapping) -> bool:
    """Whether the tests on the originals apply: labelled originals, not >= 95% one gold class."""
    rate = metrics.get("majority_rate")
    return bool(metrics.get("n_original")) and rate is not None and rate < NEAR_CONSTANT


def at_chance_reason(goodness: float | None, sd: float | None) -> str | None:
    """Why a ranked score is not significantly above chance, or ``None``.

    Args:
        goodness: Chance-corrected consistent accuracy (0 = chance).
        sd: Its standard error; ``None`` where unknown (then no verdict).

    """
    if goodness is None or sd is None:
        return None
    z = goodness / sd if sd > 0 else (np.inf if goodness > 0 else -np.inf)
    if z >= Z_ABOVE_CHANCE:
        return None
    shown = f"z = {z:.2f}" if abs(z) < 100 else "z < -100"
    return (f"score {100 * goodness:.1f}% not significantly above chance "
            f"({shown} < {Z_ABOVE_CHANCE:.3f})")


def failing_reason(info: SuiteInfo, cell: Cell) -> str | None:
    """A visible reason for a real entry's cell that is not significantly above chance.

    Names what the entry does wrong where the paper metric says it (negation: how often it
    flips; word salad: its agreement), and always the suite.
    """
    reason = at_chance_reason(cell.goodness, cell.sd_goodness)
    if reason is None:
        return None
    if info.kind == "negational" and cell.score is not None:
        flips = 1.0 - cell.score  # tau_neg is the share of pairs NOT flipped
        if flips <= 1e-12:
            return f"never flips under negation ({info.name})"
        return (f"flips under negation on only {100 * flips:.1f}% of pairs, "
                f"{reason} ({info.name})")
    if info.kind == "salad" and cell.score is not None:
        compared = ("the default label" if (info.ranked_units or {}).get("copy")
                    else "the original answer")
        return (f"salad answered with {compared} on {100 * cell.score:.1f}% of units, "
                f"{reason} ({info.name})")
    return f"{reason} ({info.name})"


def degenerate_reason(metrics: Mapping, goodness: float | None = None,
                      sd: float | None = None) -> str | None:
    """Why a cell is degenerate, or ``None``.

    Near-constant: one label takes at least 95% of the predictions on the originals. Not above
    majority: the exact one-sided binomial test of the correct count against the majority-class
    rate gives p >= 0.05. Neither applies where the originals are themselves >= 95% one class.
    Where the originals are >= 95% one class, at chance instead: the ranked score is not
    significantly above 0 (:func:`at_chance_reason`).
    """
    if not degenerate_testable(metrics):
        return at_chance_reason(goodness, sd)
    top = metrics.get("top_prediction_share")
    if top is not None and top >= NEAR_CONSTANT:
        return f"near-constant predictions on the originals ({100 * top:.0f}% one label)"
    n, k, rate = (metrics.get(x) for x in ("n_original", "n_original_correct", "majority_rate"))
    if k is not None:
        p = binom_tail_ge(int(k), int(n), float(rate))
        if p >= ALPHA:
            return (
                f"accuracy {100 * k / n:.1f}% not significantly above the majority rate "
                f"{100 * rate:.1f}% (exact binomial p {_p_phrase(p)})"
            )
    return None


def _p_phrase(p: float) -> str:
    text = format_p(p)
    return text if text.startswith("<") else f"= {text}"


def _dense_ranks(values: Sequence[float]) -> list[int]:
    """Competition ranks ("1224"), best (largest) first."""
    return [1 + sum(1 for w in values if w > v + 1e-12) for v in values]


def _beats(a: float, b: float) -> float:
    if abs(a - b) <= 1e-12:
        return 0.5
    return 1.0 if a > b else 0.0


def _suite_test(
    a: str, b: str, suite: str, cells: Mapping[str, Cell], tables: UnitTables | None,
    scorer: UnitScorer | None = None,
) -> PairedResult:
    """Neighbours on one suite: McNemar on binary units, paired bootstrap on the others.

    ``scorer`` recomputes the ranked score from resampled units where it is not a mean of the
    unit values (word salad); the bootstrap then resamples that score.
    """
    found = _patterns([a, b], suite, tables or {})
    if found is not None:
        patterns, counts = found
        if scorer is None and np.isin(patterns, (0.0, 1.0)).all():
            xa = np.repeat(patterns[:, 0], counts)
            xb = np.repeat(patterns[:, 1], counts)
            return mcnemar_exact(xa, xb)
        boot = _bootstrap_scores([a, b], [suite], tables, {suite: scorer or _mean_scorer(0.0)},
                                 0, 2000, f"suite:{suite}:{a}:{b}")
        if boot is not None:
            scores, n_units = boot
            d = scores[:, 0] - scores[:, 1]
            p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
            if scorer is None:
                diff = float((patterns[:, 0] - patterns[:, 1]) @ counts / counts.sum())
            else:
                diff = cells[a].goodness - cells[b].goodness
            return PairedResult("paired-bootstrap", n_units, diff, p, p < ALPHA)
    diff = cells[a].goodness - cells[b].goodness
    return ci_overlap_z(diff, cells[a].sd_goodness, cells[b].sd_goodness)


#: Per suite: entry -> row, and the (entries, shared units) outcome matrix.
UnitTables = Mapping[str, tuple[Mapping[str, int], np.ndarray]]
#: ``(patterns (P, entries), draws (resamples, P)) -> (resamples, entries)`` ranked scores.
UnitScorer = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _mean_scorer(chance: float) -> UnitScorer:
    """The chance-corrected mean of the unit values (consistent accuracy)."""
    def score(patterns: np.ndarray, draws: np.ndarray) -> np.ndarray:
        ca = draws @ patterns / draws.sum(axis=1, keepdims=True)
        return (ca - chance) / (1.0 - chance) if chance < 1.0 else ca

    return score


def _statistic_scorer(spec: Mapping) -> UnitScorer:
    """A score recomputed from the counts of each entry's unit codes (word salad)."""
    statistic = UNIT_STATISTICS[spec["statistic"]]
    n_labels, copy = int(spec["n_labels"]), bool(spec["copy"])

    def score(patterns: np.ndarray, draws: np.ndarray) -> np.ndarray:
        out = np.empty((draws.shape[0], patterns.shape[1]))
        for j in range(patterns.shape[1]):
            order = np.argsort(patterns[:, j], kind="stable")
            codes, starts = np.unique(patterns[order, j], return_index=True)
            counts = np.add.reduceat(draws[:, order], starts, axis=1)  # (boot, codes)
            out[:, j] = statistic(codes.astype(np.int64), counts, n_labels, copy)["score"]
        return out

    return score


def unit_scorer(info: SuiteInfo, chance: float) -> UnitScorer:
    """How a suite's ranked score is recomputed from a resample of its units."""
    if info.ranked_units is not None:
        return _statistic_scorer(info.ranked_units)
    return _mean_scorer(chance)


def unit_tables(outcomes: Outcomes | None) -> UnitTables:
    """Outcome matrices per suite over the units every entry with outcomes for it shares."""
    if not outcomes:
        return {}
    suites = sorted({s for per in outcomes.values() for s in per})
    tables = {}
    for suite in suites:
        names = sorted(n for n in outcomes if outcomes[n].get(suite))
        shared = sorted(set.intersection(*(set(outcomes[n][suite]) for n in names)))
        matrix = np.array([[outcomes[n][suite][k] for k in shared] for n in names], dtype=float)
        tables[suite] = ({n: i for i, n in enumerate(names)}, matrix.reshape(len(names), -1))
    return tables


def _patterns(
    names: Sequence[str], suite: str, tables: UnitTables
) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct outcome vectors over the units all ``names`` share, with their counts."""
    if suite not in tables:
        return None
    index, matrix = tables[suite]
    if not all(n in index for n in names) or matrix.shape[1] == 0:
        return None
    rows = matrix[[index[n] for n in names]]
    key = np.zeros(rows.shape[1], dtype=np.int64)
    for row in rows:  # mixed-radix code of each unit's outcome vector (1-d unique is fast)
        values, codes = np.unique(row, return_inverse=True)
        key = key * len(values) + codes
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return rows[:, first].T, counts


def _bootstrap_scores(
    names: Sequence[str], suites: Sequence[str], outcomes: UnitTables | None,
    scorers: Mapping[str, UnitScorer], seed: int, n_boot: int, key: str,
    weights: Mapping[str, float] | None = None,
) -> tuple[np.ndarray, int] | None:
    """``(n_boot, entries)`` resampled view scores: the weighted sum of the suites' scores.

    The same resample of each suite's shared units serves every entry (paired); each suite's
    ranked score is recomputed from its resample by ``scorers[suite]`` (a chance-corrected
    mean, or the word-salad statistic). ``weights`` (default: equal) are the view's kind
    weights. ``None`` when some entry lacks per-unit outcomes for some suite.
    """
    if outcomes is None or not names:
        return None
    from leaderboard.paired import _seed

    rng = np.random.default_rng(_seed(seed, key))
    total = np.zeros((n_boot, len(names)))
    n_units = 0
    for s in suites:
        found = _patterns(names, s, outcomes)
        if found is None:
            return None
        patterns, counts = found
        units = int(counts.sum())
        n_units += units
        draws = _draw(rng, counts, n_boot)  # (n_boot, patterns)
        w = 1.0 / len(suites) if weights is None else weights[s]
        total += w * scorers[s](patterns, draws)
    return total, n_units


#: Above this many distinct patterns, resampling draws unit indices (O(units) per resample)
#: rather than a multinomial over the patterns (O(patterns) binomial draws per resample).
MANY_PATTERNS = 256


def _draw(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """Resampled counts of each pattern: ``(n_boot, patterns)``, rows summing to the units.

    Both ways draw the same distribution (units with replacement, equally likely); word-salad
    codes make thousands of distinct patterns, where drawing indices is the faster one.
    """
    units = int(counts.sum())
    if len(counts) <= MANY_PATTERNS:
        return rng.multinomial(units, counts / units, size=n_boot)
    of_unit = np.repeat(np.arange(len(counts)), counts)
    out = np.empty((n_boot, len(counts)), dtype=np.int64)
    block = max(1, 4_000_000 // units)
    for lo in range(0, n_boot, block):
        rows = min(block, n_boot - lo)
        picked = of_unit[rng.integers(0, units, size=(rows, units))]
        flat = (picked + len(counts) * np.arange(rows)[:, None]).ravel()
        out[lo:lo + rows] = np.bincount(flat, minlength=rows * len(counts)).reshape(rows, -1)
    return out


def _rank_intervals(scores: np.ndarray) -> list[tuple[int, int]]:
    """95% interval of each column's competition rank over the bootstrap rows."""
    ranks = 1 + (scores[:, None, :] > scores[:, :, None] + 1e-12).sum(axis=2)  # (boot, entries)
    low = np.quantile(ranks, 0.025, axis=0, method="lower")
    high = np.quantile(ranks, 0.975, axis=0, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]


def _aggregate_test(a: Row, b: Row, suites: Sequence[str], outcomes: UnitTables | None,
                    scorers: Mapping[str, UnitScorer], weights: Mapping[str, float],
                    seed: int = 0) -> PairedResult:
    """Test neighbours on the view score: paired bootstrap over shared units, else intervals."""
    boot = _bootstrap_scores([a.name, b.name], suites, outcomes, scorers, seed, 2000,
                             f"pair:{a.name}:{b.name}:{','.join(suites)}", weights)
    if boot is None:
        return ci_overlap_z((a.mean or 0.0) - (b.mean or 0.0), a.sd_mean, b.sd_mean)
    scores, n_units = boot
    d = scores[:, 0] - scores[:, 1]
    observed = (a.mean or 0.0) - (b.mean or 0.0)
    p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return PairedResult("paired-bootstrap", n_units, observed, p, p < ALPHA)


def _flag(reasons: Sequence[str | None], what: str) -> str | None:
    """An entry-level flag when at least half of the covered suites are flagged."""
    hits = [r for r in reasons if r]
    if not reasons or 2 * len(hits) < len(reasons):
        return None
    return f"{what} on {len(hits)} of {len(reasons)} suites, e.g. {hits[0]}"


#: Suffix of a format variant: ``X_t2t`` holds the groups of ``X`` formatted for text-to-text
#: models (CALM's ``*_calm_t2t``); within a view the two are one slot, either covers it.
FORMAT_VARIANT = "_t2t"


def format_slots(suites: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """Fold format variants into their canonical configs.

    Returns:
        The view's slots (its suites without the variants whose canonical config is in the
        view), and the variant of each slot that has one.

    """
    variant = {s[: -len(FORMAT_VARIANT)]: s for s in suites
               if s.endswith(FORMAT_VARIANT) and s[: -len(FORMAT_VARIANT)] in suites}
    folded = set(variant.values())
    return [s for s in suites if s not in folded], variant


def kind_weights(slots: Sequence[str], kind_of: Mapping[str, str]) -> dict[str, float]:
    """Weight of each slot in a view score: ``1 / (kinds * slots of its kind)``.

    Every consistency kind weighs the same however many suites it has (MTEB's
    "Mean (TaskType)"): five word-salad transformations are one kind, as one negation suite is.
    """
    groups: dict[str, list[str]] = {}
    for s in slots:
        groups.setdefault(kind_of[s], []).append(s)
    return {s: 1.0 / (len(groups) * len(g)) for g in groups.values() for s in g}


def _kind_mean(values: Mapping[str, float | None], kind_of: Mapping[str, str]) -> float | None:
    """Kind-weighted mean of the slots' values that are not ``None``."""
    known = {s: v for s, v in values.items() if v is not None}
    if not known:
        return None
    weights = kind_weights(list(known), kind_of)
    return float(sum(weights[s] * v for s, v in known.items()))


def _failing(cells: Mapping[str, Cell], kind_of: Mapping[str, str]) -> str | None:
    """A row's failing reason: per kind, its cells' reasons."""
    per_kind: dict[str, list[str]] = {}
    for s, c in cells.items():
        if c.failing:
            per_kind.setdefault(kind_of[s], []).append(c.failing)
    if not per_kind:
        return None
    return "; ".join(f"fails {k}: " + "; ".join(r) for k, r in per_kind.items())


def _view(
    name: str,
    suites: Sequence[str],
    entries: Sequence[str],
    cells: Mapping[str, Mapping[str, Cell]],
    outcomes: UnitTables | None,
    unranked: Sequence[str] = (),
    infos: Mapping[str, SuiteInfo] | None = None,
) -> View:
    stats = {}
    ranked = {s: {e: c for e, c in cells[s].items() if c.goodness is not None} for s in suites}
    slots, variant = format_slots(suites)
    kind_of = {s: (infos[s].kind if infos and s in infos else "") for s in suites}
    kinds = tuple(sorted({kind_of[s] for s in slots}, key=lambda k: _order_key(k, KINDS)))

    def pick(e: str, slot: str) -> str | None:
        """The suite of ``slot`` that entry ``e`` is scored on: the canonical config first."""
        if e in ranked[slot]:
            return slot
        alt = variant.get(slot)
        return alt if alt is not None and e in ranked[alt] else None

    for e in entries:
        covered = [s for s in slots if pick(e, s)]
        borda = 0.0
        rates = []
        for s in covered:
            mine_s = cells[pick(e, s)][e].goodness
            others = [cells[pick(o, s)][o].goodness for o in entries if o != e and pick(o, s)]
            wins = sum(_beats(mine_s, g) for g in others)
            borda += wins
            if others:
                rates.append(wins / len(others))
        mine = {s: cells[pick(e, s)][e] for s in covered}
        weights = kind_weights(covered, kind_of)
        sds = [c.sd_goodness for c in mine.values()]
        kind_means = {}
        for k in kinds:
            values = [c.goodness for s, c in mine.items() if kind_of[s] == k]
            kind_means[k] = float(np.mean(values)) if values else None
        degenerate = _flag([c.degenerate for c in mine.values()], "degenerate")
        stats[e] = dict(
            covered=len(covered),
            mean=_kind_mean({s: c.goodness for s, c in mine.items()}, kind_of),
            kind_means=kind_means,
            borda=borda,
            win_rate=float(np.mean(rates)) if rates else None,
            sd_mean=(
                float(np.sqrt(sum((weights[s] * c.sd_goodness) ** 2 for s, c in mine.items())))
                if sds and all(x is not None for x in sds) else None
            ),
            accuracy=_kind_mean({s: c.accuracy for s, c in mine.items()}, kind_of),
            consistency=_kind_mean({s: c.consistency for s, c in mine.items()}, kind_of),
            degenerate=degenerate,
            contaminated=_flag_any([c.contaminated for c in mine.values()], covered),
            failing=None if degenerate else _failing(mine, kind_of),
        )
    complete = [e for e in entries if stats[e]["covered"] == len(slots) and slots]
    # Complete but degenerate: a reference row (constant, random), never ranked.
    reference = [e for e in complete if stats[e]["degenerate"]]
    complete = [e for e in complete if e not in reference]
    partial = [e for e in entries if e not in complete and e not in reference]

    def ranks(key: str) -> dict[str, int]:
        vals = [stats[e][key] if stats[e][key] is not None else -1e9 for e in complete]
        return dict(zip(complete, _dense_ranks(vals), strict=False))

    r_mean, r_borda, r_win = ranks("mean"), ranks("borda"), ranks("win_rate")
    complete.sort(key=lambda e: (r_mean[e], -stats[e]["borda"], e))
    reference.sort(key=lambda e: (-stats[e]["mean"], e))
    # partial rows: real entries before degenerate ones (a baseline covering more suites must
    # not head the block), then by coverage and score; entries covering nothing last
    partial.sort(key=lambda e: (stats[e]["covered"] == 0, stats[e]["degenerate"] is not None,
                                -stats[e]["covered"], -(stats[e]["mean"] or -1e9), e))
    scorers = {s: unit_scorer(infos[s], next(iter(ranked[s].values())).chance or 0.0)
               for s in slots if ranked[s] and infos and s in infos}
    weights = kind_weights(slots, kind_of)
    # Paired over the slots' canonical configs; an entry scored on a format variant has no
    # outcomes there, so the view then has no rank intervals (neighbours: interval test).
    boot = (_bootstrap_scores(complete, slots, outcomes, scorers, 0, N_BOOT_RANKS,
                              f"ranks:{name}", weights)
            if len(scorers) == len(slots) else None)
    intervals = dict(zip(complete, _rank_intervals(boot[0]), strict=True)) if boot else {}
    rows = []
    for e in complete + reference + partial:
        st = stats[e]
        low, high = intervals.get(e, (None, None))
        rows.append(
            Row(
                name=e,
                rank=r_mean.get(e),
                covered=st["covered"],
                total=len(slots),
                mean=st["mean"],
                borda=st["borda"],
                win_rate=st["win_rate"],
                rank_borda=r_borda.get(e),
                rank_win_rate=r_win.get(e),
                sd_mean=st["sd_mean"],
                rank_low=low,
                rank_high=high,
                accuracy=st["accuracy"],
                consistency=st["consistency"],
                degenerate=st["degenerate"],
                contaminated=st["contaminated"],
                kind_means=st["kind_means"],
                failing=st["failing"],
            )
        )
    for i in range(len(complete) - 1):  # neighbour tests among ranked rows only
        test = _aggregate_test(rows[i], rows[i + 1], slots,
                               outcomes if len(scorers) == len(slots) else None, scorers, weights)
        rows[i] = replace(rows[i], vs_next=test)
    return View(name, tuple(suites), tuple(rows), view_title(name), tuple(unranked), list(kinds))


def _flag_any(reasons: Sequence[str | None], covered: Sequence[str]) -> str | None:
    hits = [(s, r) for s, r in zip(covered, reasons, strict=True) if r]
    if not hits:
        return None
    return f"{len(hits)} of {len(covered)} suites: " + "; ".join(f"{s}: {r}" for s, r in hits)


def _cell(entry: Entry, suite: str, res: Mapping, info: SuiteInfo) -> Cell | None:
    """One cell from a results entry; ``None`` when the ranked score is undefined.

    ``degenerate`` here is the verdict of the tests on the originals only; suites where they
    cannot tell are judged in :func:`_judge_untestable`.
    """
    if "consistent_accuracy_cc" not in res:
        raise BenchError(
            f"entry {entry.name!r}: suite {suite!r} results lack 'consistent_accuracy_cc' "
            "(scored before consistent accuracy existed); run `consistency-bench rescore`"
        )
    cc = res["consistent_accuracy_cc"]
    if cc is None and (res.get("main_score") is None or res.get("consistent_accuracy") is None):
        # Undefined for this entry (e.g. ART coherence without probabilities): not covered.
        return None
    # cc None with a consistent accuracy: single-class originals, shown but not ranked
    metrics = res.get("metrics", {})
    ca, chance = res.get("consistent_accuracy"), res.get("consistent_accuracy_chance")
    n_units = metrics.get("consistent_accuracy_n")
    sd = None
    if n_units and ca is not None and chance is not None and chance < 1.0:
        sd = float(np.sqrt(max(ca * (1 - ca), 1e-12) / n_units) / (1.0 - chance))
    ci = res.get("ci95")
    accuracy = metrics.get("accuracy", metrics.get("accuracy_original"))
    declared = parse_training_data(entry.meta.get("training_data"), f"{entry.name}/meta.yaml")
    score = None if res.get("main_score") is None else float(res["main_score"])
    testable = degenerate_testable(metrics)
    goodness_ci = None
    if cc is not None and sd is not None and info.ranked_units is None:
        goodness_ci = (float(cc) - Z95 * sd, float(cc) + Z95 * sd)
    return Cell(
        score=score,
        goodness=None if cc is None else float(cc),
        ci95=(float(ci[0]), float(ci[1])) if ci and None not in ci else None,
        n=res.get("n"),
        sd_goodness=sd,
        consistency=None if score is None else consistency(score, info),
        consistent_accuracy=ca,
        chance=chance,
        accuracy=None if accuracy is None else float(accuracy),
        degenerate=degenerate_reason(metrics) if testable else None,
        degenerate_testable=testable,
        contaminated=contamination(declared, info.source_files),
        goodness_ci95=goodness_ci,
        goodness_n=None if n_units is None else int(n_units),
    )


def _judge_untestable(
    cells: dict[str, dict[str, Cell]], infos: Mapping[str, SuiteInfo], names: Sequence[str],
) -> None:
    """Degenerate or failing, per cell, judged once per entry and task (in place).

    Degenerate is a property of an entry on a task, not of one suite: the entry is degenerate
    on a task when it is flagged (near-constant, or not above the majority class) on at least
    half of its testable suites of that task (else, for a task without testable suites such
    as one whose originals are all one class, on at least half of all its testable suites).
    Every cell of the task takes that verdict, so a view never ranks an entry that another
    view of the same suites treats as a baseline (the kind view and the task views agree). A
    real entry's cell that is not significantly above chance is *failing* instead (ranked,
    with the reason). With no testable suite at all, the at-chance test decides degeneracy.
    """
    for e in names:
        mine = {s: cs[e] for s, cs in cells.items() if e in cs and cs[e].goodness is not None}
        testable = {s: c for s, c in mine.items() if c.degenerate_testable}
        verdicts: dict[str, tuple[str | None, str]] = {}  # task -> (verdict, where)
        for s, c in mine.items():
            task = infos[s].task
            if task not in verdicts:
                judges = [t for t in testable if infos[t].task == task] or list(testable)
                if not judges:
                    verdicts[task] = (None, "")
                else:
                    where = (f"{TASKS.get(task, task)} suites"
                             if infos[judges[0]].task == task else "suites")
                    verdicts[task] = (_flag([testable[t].degenerate for t in judges],
                                            "degenerate"), where)
            verdict, where = verdicts[task]
            if not where:  # no testable suite anywhere: the at-chance test decides
                if not c.degenerate_testable:
                    cells[s][e] = replace(c, degenerate=at_chance_reason(c.goodness,
                                                                         c.sd_goodness))
                continue
            if verdict:
                own = c.degenerate if c.degenerate_testable and c.degenerate else None
                cells[s][e] = replace(c, degenerate=own or (
                    f"judged on its testable {where}: {verdict}"))
            else:
                cells[s][e] = replace(c, degenerate=None,
                                      failing=failing_reason(infos[s], c))


def _cell_intervals(cells: dict[str, dict[str, Cell]], infos: Mapping[str, SuiteInfo],
                    tables: UnitTables) -> None:
    """``goodness_ci95`` from a bootstrap of each cell's own units (in place)."""
    for s, cs in cells.items():
        for e, c in cs.items():
            if c.goodness is None or _patterns([e], s, tables) is None:
                continue
            scorer = unit_scorer(infos[s], c.chance or 0.0)
            boot = _bootstrap_scores([e], [s], tables, {s: scorer}, 0, N_BOOT_CELL,
                                     f"cell:{s}:{e}")
            values = boot[0][:, 0]
            # widened to hold the estimate: near S = 1 the resampled |a - c| is biased upward,
            # so the word-salad percentiles can lie just below the observed score
            cs[e] = replace(c, goodness_ci95=(min(float(np.quantile(values, 0.025)), c.goodness),
                                              max(float(np.quantile(values, 0.975)), c.goodness)))


def _view_keys(infos: Mapping[str, SuiteInfo]) -> list[tuple[str, list[str]]]:
    """View keys with their suites, in reading order: tasks, kinds, families, English, all."""
    names = list(infos)
    out = []
    orders = {"task": tuple(TASKS), "kind": KINDS, "family": FAMILIES}
    for attr in VIEW_ORDER[:-2]:
        values = sorted({getattr(infos[s], attr) for s in names} - {""},
                        key=lambda v, a=attr: _order_key(v, orders[a]))
        for value in values:
            out.append((f"{attr}:{value}", [s for s in names if getattr(infos[s], attr) == value]))
    english = [s for s in names if infos[s].family in ENGLISH_FAMILIES
               and infos[s].task not in NON_ENGLISH_TASKS]
    if english:
        out.append(("lang:en", english))
    out.append(("all", names))
    return out


def rank(
    entries: Sequence[Entry],
    *,
    outcomes: Outcomes | None = None,
    best_near: Mapping[str, float] | None = None,
) -> Leaderboard:
    """Rank ``entries`` (pure).

    Args:
        entries: Entries with their results JSON (and meta, for ``training_data``).
        outcomes: Optional per-unit outcomes of the consistent accuracy, for paired tests and
            rank intervals; without them neighbours are compared from binomial intervals and
            no rank interval is given.
        best_near: Per-suite "best near" values of the main metric overriding the results.

    Raises:
        BenchError: Two entries disagree on a suite's direction or content hash, a results
            JSON lacks a field, or an entry's ``training_data`` is malformed.

    """
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise BenchError(f"duplicate entry names: {sorted(n for n in names if names.count(n) > 1)}")
    infos: dict[str, SuiteInfo] = {}
    hashes: dict[str, tuple[str, str]] = {}
    cells: dict[str, dict[str, Cell]] = {}
    for entry in entries:
        for suite, res in sorted(entry.results.get("suites", {}).items()):
            info = suite_info(suite, res, where=f"entry {entry.name!r}: ")
            if best_near and suite in best_near:
                info = replace(info, best_near=float(best_near[suite]))
            known = infos.setdefault(suite, info)
            if known.ranked_units != info.ranked_units:
                raise BenchError(
                    f"suite {suite!r}: entry {entry.name!r} was scored with ranked units "
                    f"{info.ranked_units}, others with {known.ranked_units}; rescore all "
                    "submissions (`consistency-bench rescore`)"
                )
            if (known.higher_is_better, known.best_near) != (info.higher_is_better, info.best_near):
                raise BenchError(
                    f"suite {suite!r}: entry {entry.name!r} has direction {info.direction}, "
                    f"others have {known.direction}; rescore all submissions"
                )
            digest = res.get("content_hash")
            if digest:
                seen = hashes.setdefault(suite, (digest, entry.name))
                if seen[0] != digest:
                    raise BenchError(
                        f"suite {suite!r}: entries {seen[1]!r} and {entry.name!r} were scored on "
                        "different suite versions (content_hash differs); run "
                        "`consistency-bench rescore`"
                    )
            cell = _cell(entry, suite, res, info)
            if cell is not None:
                cells.setdefault(suite, {})[entry.name] = cell
    ordered = sorted(cells, key=lambda s: suite_sort_key(infos[s]))
    _judge_untestable(cells, infos, names)
    suite_order: dict[str, list[str]] = {}
    suite_tests: dict[str, list[PairedResult | None]] = {}
    rankable = set()
    tables = unit_tables(outcomes) if outcomes is not None else None
    if tables:
        _cell_intervals(cells, infos, tables)
    for suite in ordered:
        cs = cells[suite]
        scored = sorted((e for e in cs if cs[e].goodness is not None),
                        key=lambda e: (-cs[e].goodness, e))
        good = [e for e in scored if not cs[e].degenerate]  # ranked
        reference = [e for e in scored if cs[e].degenerate]  # shown below, never ranked
        rest = sorted((e for e in cs if cs[e].goodness is None),
                      key=lambda e: (-(cs[e].consistency or 0.0), e))
        for e, r in zip(good, _dense_ranks([cs[e].goodness for e in good]), strict=True):
            cs[e] = replace(cs[e], rank=r)
        if scored:
            rankable.add(suite)
        suite_order[suite] = good + reference + rest
        scorer = (None if infos[suite].ranked_units is None
                  else _statistic_scorer(infos[suite].ranked_units))
        suite_tests[suite] = [
            _suite_test(good[i], good[i + 1], suite, cs, tables, scorer)
            for i in range(len(good) - 1)
        ]
    shown = {s: infos[s] for s in ordered}
    views = {
        key: _view(key, [s for s in subset if s in rankable], names, cells, tables,
                   [s for s in subset if s not in rankable], shown)
        for key, subset in _view_keys(shown)
    }
    return Leaderboard(
        suites=shown,
        cells={s: cells[s] for s in ordered},
        suite_order=suite_order,
        suite_tests=suite_tests,
        views=views,
        meta={e.name: dict(e.meta) for e in entries},
    )
