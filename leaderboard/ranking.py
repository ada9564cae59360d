"""Pure ranking over a table of results: per-suite tables, aggregates, coverage, paired tests.

Input is one results JSON (docs/contracts.md) per entry; nothing here reads files.

Direction normalisation (``goodness``, higher is better, in [0, 1]):

- ``higher_is_better: true``  -> ``g = s``
- ``higher_is_better: false`` -> ``g = 1 - s``  (BECEL's tau)
- ``best_near: c``            -> ``g = 1 - |s - c| / max(c, 1 - c)`` (word-salad agreement,
  best near chance)

Aggregates over the suites of a view that an entry covers:

- ``mean``: mean goodness.
- ``borda`` (as MTEB): per suite, an entry gets one point per other entry it beats (half a
  point per tie); points are summed.
- ``win_rate`` (as HELM): per suite, the share of other entries it beats (ties half); averaged
  over covered suites that have at least one other entry.

Only entries that cover every suite of the view are ranked; partial entries are listed with
their coverage and ``rank = None``, never placed among complete ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from bench.errors import BenchError
from leaderboard.paired import (
    PairedResult,
    ci_overlap_z,
    ci_sd,
    mcnemar_exact,
    paired_bootstrap,
)

#: Per-unit outcomes: entry -> suite -> unit id -> success value (1 = consistent / good).
Outcomes = Mapping[str, Mapping[str, Mapping[str, float]]]


@dataclass(frozen=True)
class Entry:
    """One leaderboard entry: a slug, its results JSON and its metadata."""

    name: str
    results: Mapping
    meta: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """One entry's score on one suite."""

    score: float
    goodness: float
    ci95: tuple[float, float] | None
    n: int | None
    rank: int = 0
    sd_goodness: float | None = None


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

    @property
    def direction(self) -> str:
        """Human-readable direction: ``higher``, ``lower`` or ``near <c>``."""
        if self.best_near is not None:
            return f"near {self.best_near:g}"
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

    @property
    def complete(self) -> bool:
        """Whether the entry covers every suite of the view."""
        return self.covered == self.total


@dataclass(frozen=True)
class View:
    """Overall ranking over a subset of suites (all, one family, one kind, one task)."""

    name: str
    suites: tuple[str, ...]
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Leaderboard:
    """Everything the renderers need."""

    suites: dict[str, SuiteInfo]
    cells: dict[str, dict[str, Cell]]  # suite -> entry -> cell
    suite_order: dict[str, list[str]]  # suite -> entries, best first
    suite_tests: dict[str, list[PairedResult | None]]  # suite -> test of i vs i+1
    views: dict[str, View]
    meta: dict[str, dict]

    def to_dict(self) -> dict:
        """JSON-ready dict of everything."""
        return {
            "schema_version": 1,
            "suites": {k: asdict(v) | {"direction": v.direction} for k, v in self.suites.items()},
            "cells": {s: {e: asdict(c) for e, c in cs.items()} for s, cs in self.cells.items()},
            "suite_order": self.suite_order,
            "suite_tests": {
                s: [asdict(t) if t else None for t in ts] for s, ts in self.suite_tests.items()
            },
            "views": {
                k: {
                    "suites": list(v.suites),
                    "rows": [asdict(r) | {"complete": r.complete} for r in v.rows],
                }
                for k, v in self.views.items()
            },
            "meta": self.meta,
        }


def goodness(score: float, info: SuiteInfo) -> float:
    """Direction-normalised score in [0, 1], higher is better (see module docstring)."""
    if info.best_near is not None:
        c = info.best_near
        return 1.0 - abs(score - c) / max(c, 1.0 - c)
    return score if info.higher_is_better else 1.0 - score


def goodness_scale(info: SuiteInfo) -> float:
    """|d goodness / d score| (used to carry a score's spread into goodness units)."""
    if info.best_near is not None:
        return 1.0 / max(info.best_near, 1.0 - info.best_near)
    return 1.0


def suite_info(name: str, result: Mapping, where: str = "") -> SuiteInfo:
    """Build a ``SuiteInfo`` from one suite's entry in a results JSON; validates what it reads."""
    try:
        best = result.get("best_near")
        return SuiteInfo(
            name=name,
            family=str(result.get("family", "")),
            task=str(result.get("task", "")),
            kind=str(result.get("kind", "")),
            main_metric=str(result["main_metric"]),
            higher_is_better=bool(result["higher_is_better"]),
            best_near=None if best is None else float(best),
        )
    except KeyError as exc:
        raise BenchError(f"{where}suite {name!r}: results lack field {exc.args[0]!r}") from None


def _dense_ranks(values: Sequence[float]) -> list[int]:
    """Competition ranks ("1224"), best (largest) first."""
    return [1 + sum(1 for w in values if w > v + 1e-12) for v in values]


def _beats(a: float, b: float) -> float:
    if abs(a - b) <= 1e-12:
        return 0.5
    return 1.0 if a > b else 0.0


def _suite_test(
    a: str, b: str, suite: str, cells: Mapping[str, Cell], outcomes: Outcomes | None
) -> PairedResult:
    oa = (outcomes or {}).get(a, {}).get(suite)
    ob = (outcomes or {}).get(b, {}).get(suite)
    if oa and ob:
        shared = sorted(set(oa) & set(ob))
        xa = [oa[k] for k in shared]
        xb = [ob[k] for k in shared]
        if all(v in (0, 1) for v in xa + xb):
            return mcnemar_exact(xa, xb)
        return paired_bootstrap(xa, xb, key=f"{suite}:{a}:{b}")
    diff = cells[a].goodness - cells[b].goodness
    return ci_overlap_z(diff, cells[a].sd_goodness, cells[b].sd_goodness)


def _aggregate_test(a: Row, b: Row, suites: Sequence[str], outcomes: Outcomes | None,
                    infos: Mapping[str, SuiteInfo], seed: int = 0) -> PairedResult:
    """Test neighbours on the mean of goodness.

    Stratified paired bootstrap when every suite has per-unit outcomes for both entries, else
    the interval-based fallback.
    """
    have = outcomes is not None and all(
        outcomes.get(a.name, {}).get(s) and outcomes.get(b.name, {}).get(s) for s in suites
    )
    if not have:
        return ci_overlap_z((a.mean or 0.0) - (b.mean or 0.0), a.sd_mean, b.sd_mean)
    rng = np.random.default_rng(seed)
    n_boot = 2000
    total = np.zeros(n_boot)
    observed = 0.0
    n_units = 0
    for s in suites:
        oa, ob = outcomes[a.name][s], outcomes[b.name][s]
        shared = sorted(set(oa) & set(ob))
        d = np.array([oa[k] - ob[k] for k in shared], dtype=float) * goodness_scale(infos[s])
        n_units += d.size
        if d.size == 0:
            continue
        observed += float(d.mean())
        total += d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    observed /= len(suites)
    total /= len(suites)
    p = min(1.0, 2.0 * min(float(np.mean(total <= 0)), float(np.mean(total >= 0))))
    return PairedResult("paired-bootstrap", n_units, observed, p, p < 0.05)


def _view(
    name: str,
    suites: Sequence[str],
    entries: Sequence[str],
    cells: Mapping[str, Mapping[str, Cell]],
    infos: Mapping[str, SuiteInfo],
    outcomes: Outcomes | None,
) -> View:
    stats = {}
    for e in entries:
        covered = [s for s in suites if e in cells[s]]
        borda = 0.0
        rates = []
        for s in covered:
            others = [o for o in cells[s] if o != e]
            wins = sum(_beats(cells[s][e].goodness, cells[s][o].goodness) for o in others)
            borda += wins
            if others:
                rates.append(wins / len(others))
        goods = [cells[s][e].goodness for s in covered]
        sds = [cells[s][e].sd_goodness for s in covered]
        sd_mean = (
            float(np.sqrt(sum(x * x for x in sds)) / len(sds))
            if sds and all(x is not None for x in sds)
            else None
        )
        stats[e] = dict(
            covered=len(covered),
            mean=float(np.mean(goods)) if goods else None,
            borda=borda,
            win_rate=float(np.mean(rates)) if rates else None,
            sd_mean=sd_mean,
        )
    complete = [e for e in entries if stats[e]["covered"] == len(suites) and suites]
    partial = [e for e in entries if e not in complete]

    def ranks(key: str) -> dict[str, int]:
        vals = [stats[e][key] if stats[e][key] is not None else -1.0 for e in complete]
        return dict(zip(complete, _dense_ranks(vals), strict=False))

    r_mean, r_borda, r_win = ranks("mean"), ranks("borda"), ranks("win_rate")
    complete.sort(key=lambda e: (r_mean[e], -stats[e]["borda"], e))
    partial.sort(key=lambda e: (-stats[e]["covered"], -(stats[e]["mean"] or -1.0), e))
    rows = []
    for e in complete + partial:
        st = stats[e]
        rows.append(
            Row(
                name=e,
                rank=r_mean.get(e),
                covered=st["covered"],
                total=len(suites),
                mean=st["mean"],
                borda=st["borda"],
                win_rate=st["win_rate"],
                rank_borda=r_borda.get(e),
                rank_win_rate=r_win.get(e),
                sd_mean=st["sd_mean"],
            )
        )
    # neighbour tests among ranked (complete) rows only
    k = len(complete)
    for i in range(k - 1):
        test = _aggregate_test(rows[i], rows[i + 1], suites, outcomes, infos)
        rows[i] = replace(rows[i], vs_next=test)
    return View(name, tuple(suites), tuple(rows))


def rank(
    entries: Sequence[Entry],
    *,
    outcomes: Outcomes | None = None,
    best_near: Mapping[str, float] | None = None,
) -> Leaderboard:
    """Rank ``entries`` (pure).

    Args:
        entries: Entries with their results JSON.
        outcomes: Optional per-unit success values for paired tests (McNemar / paired
            bootstrap); without them neighbours are compared from their intervals.
        best_near: Per-suite "best near" values overriding the results (e.g. chance level).

    Raises:
        BenchError: Two entries disagree on a suite's direction or content hash, or a
            results JSON lacks a field.

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
            if res.get("main_score") is None:
                # Undefined for this entry (e.g. an empty conditioning set, or ART coherence
                # without probabilities): the suite counts as not covered, never as a score.
                continue
            score = float(res["main_score"])
            ci = res.get("ci95")
            ci_t = (float(ci[0]), float(ci[1])) if ci and None not in ci else None
            sd = ci_sd(ci_t)
            cells.setdefault(suite, {})[entry.name] = Cell(
                score=score,
                goodness=goodness(score, info),
                ci95=ci_t,
                n=res.get("n"),
                sd_goodness=None if sd is None else sd * goodness_scale(info),
            )
    suite_order: dict[str, list[str]] = {}
    suite_tests: dict[str, list[PairedResult | None]] = {}
    for suite in sorted(cells):
        cs = cells[suite]
        order = sorted(cs, key=lambda e: (-cs[e].goodness, e))
        ranks_ = _dense_ranks([cs[e].goodness for e in order])
        for e, r in zip(order, ranks_, strict=False):
            cs[e] = replace(cs[e], rank=r)
        suite_order[suite] = order
        suite_tests[suite] = [
            _suite_test(order[i], order[i + 1], suite, cs, outcomes) for i in range(len(order) - 1)
        ]
    all_suites = sorted(cells)
    views = {"all": _view("all", all_suites, names, cells, infos, outcomes)}
    for attr in ("family", "kind", "task"):
        for value in sorted({getattr(infos[s], attr) for s in all_suites} - {""}):
            subset = [s for s in all_suites if getattr(infos[s], attr) == value]
            key = f"{attr}:{value}"
            views[key] = _view(key, subset, names, cells, infos, outcomes)
    return Leaderboard(
        suites={s: infos[s] for s in all_suites},
        cells=cells,
        suite_order=suite_order,
        suite_tests=suite_tests,
        views=views,
        meta={e.name: dict(e.meta) for e in entries},
    )
