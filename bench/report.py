"""Plain-text tables of results for the terminal."""

from __future__ import annotations


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}"


def _best(entry: dict) -> str:
    if entry.get("best_near") is not None:
        return f"~{100 * entry['best_near']:.0f}"
    return "high" if entry["higher_is_better"] else "low"


def results_table(results: dict) -> str:
    """A fixed-width table of a results dict: one line per scored suite, then the skipped."""
    header = (
        f"{'suite':<26} {'metric':<17} {'best':>5} {'score':>6} {'95% CI':>13} {'n':>7} "
        f"{'acc':>6}"
    )
    lines = [header, "-" * len(header)]
    for name, entry in results["suites"].items():
        ci = entry.get("ci95")
        ci_text = f"[{_pct(ci[0])},{_pct(ci[1])}]" if ci else "-"
        metrics = entry["metrics"]
        accuracy = metrics.get("accuracy", metrics.get("accuracy_original"))
        lines.append(
            f"{name:<26} {entry['main_metric']:<17} {_best(entry):>5} "
            f"{_pct(entry['main_score']):>6} {ci_text:>13} {entry['n']:>7} {_pct(accuracy):>6}"
        )
    lines.append(
        "scores in %; best: low (tau), high (C_R, coherence), ~N (word salad: near chance N%)"
    )
    for name, why in results.get("skipped", {}).items():
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines)
