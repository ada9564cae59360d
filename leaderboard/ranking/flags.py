"""Cell and entry flags: degenerate, failing and contaminated judgements (pure).

A cell is built from one suite's results (:func:`_cell`) with the verdict of the tests on the
originals; :func:`_judge_untestable` then judges, per entry and task, the suites where those
tests cannot tell. :func:`_flag` and :func:`_flag_any` lift cell flags to an entry in a view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from bench.contamination import contamination, parse_training_data
from bench.errors import BenchError
from leaderboard.paired import Z95, binom_tail_ge, format_p
from leaderboard.ranking.model import ALPHA, TASKS, Cell, Entry, SuiteInfo, consistency

#: One-sided 95% normal quantile: the ranked score must be this many standard errors above 0.
Z_ABOVE_CHANCE = 1.6449
NEAR_CONSTANT = 0.95


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
    # set on a testable suite (degenerate_testable): the count and the majority rate
    n, k, rate = metrics["n_original"], metrics.get("n_original_correct"), metrics["majority_rate"]
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


def _flag(reasons: Sequence[str | None], what: str) -> str | None:
    """An entry-level flag when at least half of the covered suites are flagged."""
    hits = [r for r in reasons if r]
    if not reasons or 2 * len(hits) < len(reasons):
        return None
    return f"{what} on {len(hits)} of {len(reasons)} suites, e.g. {hits[0]}"


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
