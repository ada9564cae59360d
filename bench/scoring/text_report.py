"""Plain-text tables of results for the terminal (every score in %, as on the leaderboard)."""

from __future__ import annotations


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}"


def direction(entry: dict) -> str:
    """Which main-metric values are best: ``higher``, ``lower`` or ``near chance (33%)``."""
    if entry.get("best_near") is not None:
        return f"near chance ({100 * entry['best_near']:.0f}%)"
    return "higher" if entry["higher_is_better"] else "lower"


def results_table(results: dict) -> str:
    """A fixed-width table of a results dict: one line per scored suite, then the skipped."""
    header = (
        f"{'suite':<26} {'metric':<17} {'best':<18} {'score%':>6} {'95% CI':>13} {'n':>7} "
        f"{'acc%':>6} {'c.acc%':>6} {'chance':>6} {'ranked':>6}"
    )
    lines = [header, "-" * len(header)]
    for name, entry in results["suites"].items():
        ci = entry.get("ci95")
        ci_text = f"[{_pct(ci[0])},{_pct(ci[1])}]" if ci else "-"
        metrics = entry["metrics"]
        accuracy = metrics.get("accuracy", metrics.get("accuracy_original"))
        lines.append(
            f"{name:<26} {entry['main_metric']:<17} {direction(entry):<18} "
            f"{_pct(entry['main_score']):>6} {ci_text:>13} {entry['n']:>7} {_pct(accuracy):>6} "
            f"{_pct(entry.get('consistent_accuracy')):>6} "
            f"{_pct(entry.get('consistent_accuracy_chance')):>6} "
            f"{_pct(entry.get('consistent_accuracy_cc')):>6}"
        )
    lines.append(
        "all values in %. score: the paper's metric (best: lower for tau, higher for C_R and "
        "coherence, near chance for word-salad agreement); acc: accuracy on the originals; "
        "c.acc: consistent accuracy (right on the original and consistent); chance: its value "
        "for a uniform random predictor; ranked: chance-corrected consistent accuracy "
        "(0 = chance, 100 = perfect), what the leaderboard ranks on (docs/metrics.md)"
    )
    for name, why in results.get("skipped", {}).items():
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines)
