"""Seeded synthetic entries whose right order anyone knows (issue 9, item 6).

- ``gold-5``: the ideal answers with 5% of the rows replaced by a uniform random label;
- ``gold-25``: the same with 25%;
- ``random``: a uniform random label on every row;
- ``constant``: the majority gold label of the suite's originals on every row;
- ``orig-only``: the ideal answer on the original rows, a random label on every perturbation.

The *ideal answer* of a row is its gold label; rows without one get what the consistency
relation asks for: the constraint's label on a derived row (``is:`` label, or the first label
``not:`` allows); on a word salad no signal of the compared label: a label that does not depend
on it (the group index modulo the label count) with a uniform probability, which the paper's
confidence threshold rejects (word-salad paper l. 158 and 313-315); and on an ART span whose
gold is "no confident choice" a uniform probability (no confident choice). Every other answer
carries a confident probability (0.9 on the answer). Randomness is seeded per entry and
suite, so the entries are the same on every run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from consistency_bench.bench.scoring.engine import (
    Aligned,
    ScoreOptions,
    SuiteData,
    SuiteFolder,
    score_with_originals,
    task_stats,
)
from consistency_bench.leaderboard.ranking.model import Entry, Outcomes

ENTRIES = ("gold-5", "gold-25", "random", "constant", "orig-only")
#: Pairs (better, worse) that every view must order so. In views of word-salad suites only too:
#: ``orig-only`` answers every salad with a random label but with confidence (0.9), which is
#: half of the paper's ideal (word-salad paper l. 158: "at random and ... with low
#: confidence"; issue 27), so ``gold-5``, unsure on 95% of the salads, ranks above it there.
ORDER = (("gold-5", "gold-25"), ("gold-25", "random"), ("gold-25", "constant"),
         ("gold-5", "orig-only"))


def order(kinds) -> tuple[tuple[str, str], ...]:
    """The pairs a view of these consistency kinds must order so (the same in every view)."""
    del kinds
    return ORDER


#: Row variants that are originals (the rest are perturbations or derived rows).
ORIGINAL_VARIANTS = ("original", "source", "first", "second")


def _rng(entry: str, suite: str) -> np.random.Generator:
    digest = hashlib.sha256(f"synthetic:{entry}:{suite}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def ideal(data: SuiteData) -> tuple[np.ndarray, np.ndarray]:
    """Ideal label per row, and whether the row's ideal answer is "no confident choice"."""
    n_labels = len(data.label_names)
    label = data.gold.copy()
    unsure = np.zeros(len(label), dtype=bool)
    names = data.table.column_names
    missing = label < 0
    if "constraint" in names:
        for row in np.flatnonzero(missing):
            op, _, name = str(data.column("constraint")[row]).partition(":")
            if op in ("is", "not"):
                index = data.label_names.index(name)
                label[row] = index if op == "is" else (index + 1) % n_labels
    if "agreement_with" in names:  # word salad: no signal, and unsure (rejected by θ)
        salad = np.flatnonzero(label < 0)
        label[salad] = data.group[salad] % n_labels
        unsure[salad] = True
    if data.info["kind"] == "coherence_theta":
        unsure = label < 0
    label[label < 0] = 0
    return label, unsure


def predictions(entry: str, data: SuiteData) -> Aligned:
    """The synthetic entry's labels and probabilities on one suite."""
    n_labels = len(data.label_names)
    rng = _rng(entry, data.name)
    label, unsure = ideal(data)
    noise = rng.integers(0, n_labels, size=len(label))
    if entry in ("gold-5", "gold-25"):
        swap = rng.random(len(label)) < (0.05 if entry == "gold-5" else 0.25)
    elif entry == "random":
        swap = np.ones(len(label), dtype=bool)
    elif entry == "orig-only":
        swap = ~np.isin(data.variant, ORIGINAL_VARIANTS)
    elif entry == "constant":
        originals = data.gold[np.isin(data.variant, ORIGINAL_VARIANTS) & (data.gold >= 0)]
        noise = np.full(len(label), np.bincount(originals, minlength=n_labels).argmax())
        swap = np.ones(len(label), dtype=bool)
    else:
        raise ValueError(entry)
    pred = np.where(swap, noise, label)
    unsure = unsure & ~swap
    probs = np.full((len(pred), n_labels), 0.1 / (n_labels - 1))
    probs[np.arange(len(pred)), pred] = 0.9
    probs[unsure] = 1.0 / n_labels
    return Aligned(pred=pred.astype(np.int64), probs=probs)


def score_entries(folder: str | Path, entries=ENTRIES) -> tuple[list[Entry], Outcomes]:
    """Results and per-unit outcomes of every synthetic entry on every suite of ``folder``."""
    built = SuiteFolder(folder)
    options = ScoreOptions(n_boot=50)
    results: dict[str, dict] = {e: {} for e in entries}
    outcomes: dict[str, dict] = {e: {} for e in entries}
    originals: dict[str, dict] = {e: {} for e in entries}
    for suite in sorted(built.manifest):
        data = built.load(suite)
        for e in entries:
            aligned = predictions(e, data)
            results[e][suite], units, found = score_with_originals(data, aligned, options)
            outcomes[e][suite] = dict(units or {})
            if found is not None:
                originals[e][suite] = found
    return [Entry(e, {"suites": results[e], "tasks": task_stats(originals[e])})
            for e in entries], outcomes


#: Setups and reproduction records the synthetic boards give some entries (TEAM contracts).
SETUPS = (None, {"mode": "loglikelihood", "chat": False, "num_fewshot": 0, "dtype": "float32"},
          {"mode": "generate", "chat": True, "num_fewshot": 5, "dtype": "bfloat16"},
          {"mode": "classifier", "dtype": "float32"})
REPRODUCED = (None, {"status": "passed", "label_agreement": 0.997, "max_prob_diff": 0.0021,
                     "groups": 320, "rows": 1440, "date": "2026-12-01"},
              {"status": "failed", "label_agreement": 0.712, "max_prob_diff": 0.41,
               "groups": 320, "rows": 1440, "reason": "salad rows differ",
               "date": "2026-12-01"},
              {"status": "not-reproducible", "reason": "closed model"})


def many_entries(base: list[Entry], n: int) -> list[Entry]:
    """``n`` entries made of the scored ``base`` entries: a real board of any size, fast.

    Entry ``i`` takes, per suite, the results of one base entry (seeded per entry and suite),
    leaves out every suite of one task for a fifth of the entries (partial rows), and gets a
    parameter count, and in turn each of :data:`SETUPS` and :data:`REPRODUCED`. The results
    are real scorer outputs, so ``rank`` treats the entries as it treats submissions.
    """
    suites = sorted({s for e in base for s in e.results["suites"]})
    tasks = sorted({e.results["suites"][s]["task"] for e in base for s in e.results["suites"]})
    out = []
    for i in range(n):
        rng = _rng(f"many-{i}", "board")
        dropped = tasks[int(rng.integers(len(tasks)))] if i % 5 == 4 else None
        results = {}
        for s in suites:
            pick = base[int(rng.integers(len(base)))].results["suites"]
            if s in pick and pick[s]["task"] != dropped:
                results[s] = pick[s]
        meta = {"model": f"org/synthetic-{i:04d}", "parameters": int(10 ** rng.uniform(6, 10)),
                "date": "2026-11-30", "setup": SETUPS[i % len(SETUPS)],
                "reproduced": REPRODUCED[i % len(REPRODUCED)]}
        out.append(Entry(f"synthetic-{i:04d}", {"suites": results}, meta))
    return out


def main(argv: list[str] | None = None) -> None:
    """Print the synthetic entries' per-task summary: ``python -m tests.synthetic_entries DIR``."""
    import sys

    from consistency_bench.leaderboard.ranking.board import rank
    from consistency_bench.leaderboard.webpage.render import render_markdown

    args = sys.argv[1:] if argv is None else argv
    entries, outcomes = score_entries(args[0] if args else "consistency-bench")
    print(render_markdown(rank(entries, outcomes=outcomes)), end="")


if __name__ == "__main__":
    main()
