"""The ranking's entry point: :func:`rank` puts cells, flags, intervals and views together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from consistency_bench.bench.errors import BenchError
from consistency_bench.leaderboard.paired import PairedResult
from consistency_bench.leaderboard.ranking.flags import _cell, _judge_tasks
from consistency_bench.leaderboard.ranking.intervals import (
    _cell_intervals,
    _suite_tests,
    outcome_samples,
)
from consistency_bench.leaderboard.ranking.model import (
    Cell,
    Entry,
    Leaderboard,
    Outcomes,
    SuiteInfo,
    suite_info,
    suite_sort_key,
)
from consistency_bench.leaderboard.ranking.resample import Samples
from consistency_bench.leaderboard.ranking.views import _dense_ranks, _view, _view_keys


def rank(
    entries: Sequence[Entry],
    *,
    outcomes: Outcomes | None = None,
    best_near: Mapping[str, float] | None = None,
    samples: Samples | None = None,
) -> Leaderboard:
    """Rank ``entries`` (pure).

    Args:
        entries: Entries with their results JSON (and meta, for ``training_data``).
        outcomes: Optional per-unit outcomes of the consistent accuracy, for paired tests and
            rank intervals; without them (and without ``samples``) neighbours are compared
            from binomial intervals and no rank interval is given.
        best_near: Per-suite "best near" values of the main metric overriding the results.
        samples: The cells' ranked scores on their suites' shared resamples, made when the
            entries were verified (``leaderboard --data``); instead of ``outcomes``.

    Raises:
        BenchError: Two entries disagree on a suite's direction or content hash, a results
            JSON lacks a field, or an entry's ``training_data`` is malformed.

    """
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise BenchError(f"duplicate entry names: {sorted(n for n in names if names.count(n) > 1)}")
    infos, cells = _collect_cells(entries, best_near)
    ordered = sorted(cells, key=lambda s: suite_sort_key(infos[s]))
    _judge_tasks(cells, infos, entries)
    suite_order: dict[str, list[str]] = {}
    suite_tests: dict[str, list[PairedResult | None]] = {}
    rankable = set()
    if samples is None and outcomes is not None:
        samples = outcome_samples(outcomes, cells, infos)
    if samples:
        _cell_intervals(cells, samples)
    for suite in ordered:
        suite_order[suite], good = _rank_suite(cells[suite])
        if any(c.goodness is not None for c in cells[suite].values()):
            rankable.add(suite)
        suite_tests[suite] = _suite_tests(good, suite, cells[suite], samples)
    shown = {s: infos[s] for s in ordered}
    # A view with no rankable suite (every one single-class) is not published; "all" always is.
    views = {
        key: _view(key, [s for s in subset if s in rankable], names, cells, samples,
                   [s for s in subset if s not in rankable], shown)
        for key, subset in _view_keys(shown) if key == "all" or rankable.intersection(subset)
    }
    return Leaderboard(
        suites=shown,
        cells={s: cells[s] for s in ordered},
        suite_order=suite_order,
        suite_tests=suite_tests,
        views=views,
        meta={e.name: _meta(e.meta) for e in entries},
        predictions_sha256={e.name: _sha256(e.results) for e in entries},
    )


def _collect_cells(
    entries: Sequence[Entry], best_near: Mapping[str, float] | None,
) -> tuple[dict[str, SuiteInfo], dict[str, dict[str, Cell]]]:
    """Every suite's information and cells, checked to agree across entries.

    Args:
        entries: The entries to rank.
        best_near: Per-suite "best near" values overriding the results.

    Returns:
        ``(infos, cells)``: suite -> its information; suite -> entry -> its cell.

    Raises:
        BenchError: Two entries disagree on a suite's ranked units, direction or content
            hash.

    """
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
    return infos, cells


def _rank_suite(cs: dict[str, Cell]) -> tuple[list[str], list[str]]:
    """Rank one suite's cells in place (dense ranks of goodness; degenerate cells unranked).

    Returns:
        ``(order, ranked)``: every entry in display order (ranked, then degenerate, then
        unscored), and the ranked entries best first.

    """
    ranked = {e: c.goodness for e, c in cs.items() if c.goodness is not None}
    scored = sorted(ranked, key=lambda e: (-ranked[e], e))
    good = [e for e in scored if not cs[e].degenerate]  # ranked
    reference = [e for e in scored if cs[e].degenerate]  # shown below, never ranked
    rest = sorted((e for e in cs if cs[e].goodness is None),
                  key=lambda e: (-(cs[e].consistency or 0.0), e))
    for e, r in zip(good, _dense_ranks([ranked[e] for e in good]), strict=True):
        cs[e] = replace(cs[e], rank=r)
    return good + reference + rest, good


def _meta(meta: Mapping) -> dict:
    """An entry's ``meta.yaml`` for the site, ``parameters`` and ``variant`` always present.

    ``parameters`` is an integer count or null (a text one, from before issue 27 made it a
    count, is null); ``variant`` is text or null.
    """
    out = dict(meta)
    value = out.get("parameters")
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    out["parameters"] = value if ok else None
    out["variant"] = out.get("variant") if isinstance(out.get("variant"), str) else None
    return out


def _sha256(results: Mapping) -> str | None:
    found = (results.get("predictions") or {}).get("sha256") if isinstance(
        results.get("predictions"), Mapping) else None
    return found if isinstance(found, str) else None
