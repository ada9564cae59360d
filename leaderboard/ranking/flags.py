"""Cell and entry flags: degenerate, failing and contaminated judgements (pure).

A cell is built from one suite's results (:func:`_cell`); :func:`_judge_tasks` then gives
every cell of a task the entry's one verdict on that task (degenerate or not), and the failing
reason where it is not degenerate. :func:`_flag_any` lifts contamination to an entry in a view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from consistency_bench.bench.errors import BenchError
from consistency_bench.bench.metrics.consistent.originals import NEAR_CONSTANT
from consistency_bench.bench.scoring.contamination import contamination, parse_training_data
from consistency_bench.leaderboard.paired import Z95, binom_tail_ge, format_p
from consistency_bench.leaderboard.ranking.model import (
    ALPHA,
    TASKS,
    Cell,
    Entry,
    SuiteInfo,
    consistency,
    kind_weights,
)

#: A word-salad cell of a file without probabilities (``Cell.unjudged``).
UNJUDGED = ("confidence could not be judged (no probabilities): judged on agreement alone "
            "(word-salad paper l. 158 asks for both)")
#: One-sided 95% normal quantile: the ranked score must be this many standard errors above 0.
Z_ABOVE_CHANCE = 1.6449


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


def _flag_any(reasons: Sequence[str | None], covered: Sequence[str]) -> str | None:
    hits = [(s, r) for s, r in zip(covered, reasons, strict=True) if r]
    if not hits:
        return None
    return f"{len(hits)} of {len(covered)} suites: " + "; ".join(f"{s}: {r}" for s, r in hits)


def _cell(entry: Entry, suite: str, res: Mapping, info: SuiteInfo) -> Cell | None:
    """One cell from a results entry; ``None`` when the ranked score is undefined.

    ``degenerate`` and ``failing`` are set afterwards, once per entry and task
    (:func:`_judge_tasks`).
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
        degenerate_testable=testable,
        contaminated=contamination(declared, info.source_files),
        goodness_ci95=goodness_ci,
        goodness_n=None if n_units is None else int(n_units),
        unjudged=UNJUDGED if info.kind == "salad" and (metrics.get("salad_score") or {}).get(
            "confidence_judged") == 0.0 and metrics.get("confidence") is None else None,
    )


def task_statistics(entry: Entry, task: str, suites: Sequence[str]) -> Mapping | None:
    """The statistics an entry's task is judged on (degenerate or not).

    The results' ``tasks[task]``: the distinct originals of the task's suites where the tests
    can tell, pooled (:func:`consistency_bench.bench.scoring.engine.task_stats`). Results scored
    before it
    existed
    (issue 27) fall back to the metrics of the entry's testable suite of the task with the
    most originals: one test per task still, but not deduplicated (`rescore` adds ``tasks``).
    """
    tasks = entry.results.get("tasks")
    if isinstance(tasks, Mapping) and isinstance(tasks.get(task), Mapping):
        return tasks[task]
    best: Mapping | None = None
    for suite in sorted(suites):
        metrics = (entry.results.get("suites", {}).get(suite) or {}).get("metrics") or {}
        if degenerate_testable(metrics) and (
                best is None or metrics["n_original"] > best["n_original"]):
            best = metrics
    return best


def _task_verdict(entry: Entry, task: str, mine: Mapping[str, Cell],
                  infos: Mapping[str, SuiteInfo]) -> str | None:
    """Why the entry is degenerate on ``task`` (its covered cells ``mine``), or ``None``."""
    name = TASKS.get(task, task)
    stats = task_statistics(entry, task, list(mine))
    if stats is not None and degenerate_testable(stats):
        reason = degenerate_reason(stats)
        if reason is None:
            return None
        pooled = stats.get("suites")
        where = (f"{int(stats['n_original']):,} distinct originals of {len(pooled)} suite"
                 f"{'s' if len(pooled) != 1 else ''}" if isinstance(pooled, list)
                 else f"{int(stats['n_original']):,} originals of one suite")
        return f"{name} ({where}): {reason}"
    # no suite of the task can test accuracy (every one >= 95% one gold class): at chance?
    weights = kind_weights(list(mine), {s: infos[s].kind for s in mine})
    sds = {s: c.sd_goodness for s, c in mine.items() if c.sd_goodness is not None}
    sd = (float(np.sqrt(sum((weights[s] * v) ** 2 for s, v in sds.items())))
          if len(sds) == len(mine) else None)
    mean = float(sum(weights[s] * (c.goodness or 0.0) for s, c in mine.items()))
    reason = at_chance_reason(mean, sd)
    return reason and (f"{name} (no suite of the task can test accuracy: each one's originals "
                       f"are >= 95% one gold label): {reason}")


def _judge_tasks(
    cells: dict[str, dict[str, Cell]], infos: Mapping[str, SuiteInfo], entries: Sequence[Entry],
) -> None:
    """Degenerate or failing, per cell: judged once per entry and task (in place).

    Degenerate is a property of an entry on a task, not of one suite (:func:`_task_verdict`):
    near-constant predictions on the task's distinct originals, or accuracy there not
    significantly above the majority rate (one exact binomial test per task); for a task
    none of whose suites can test accuracy, its score not significantly above chance. Every
    cell of the task takes that verdict, so a view never ranks an entry that another view of
    the same suites treats as a baseline. A real entry's cell that is not significantly above
    chance is *failing* instead (ranked, with the reason).
    """
    for entry in entries:
        e = entry.name
        mine = {s: cs[e] for s, cs in cells.items() if e in cs and cs[e].goodness is not None}
        by_task: dict[str, dict[str, Cell]] = {}
        for s, c in sorted(mine.items()):
            by_task.setdefault(infos[s].task, {})[s] = c
        for task, task_cells in by_task.items():
            verdict = _task_verdict(entry, task, task_cells, infos)
            for s, c in task_cells.items():
                cells[s][e] = replace(c, degenerate=verdict,
                                      failing=None if verdict else failing_reason(infos[s], c))
