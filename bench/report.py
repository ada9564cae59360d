"""Plain-text tables of results for the terminal."""

from __future__ import annotations


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}"


def results_table(results: dict) -> str:
    """A fixed-width table of a results dict: one line per scored suite, then the skipped."""
    header = f"{'suite':<26} {'metric':<10} {'score':>6} {'95% CI':>13} {'n':>7} {'acc':>6}"
    lines = [header, "-" * len(header)]
    for name, entry in results["suites"].items():
        ci = entry.get("ci95")
        ci_text = f"[{_pct(ci[0])},{_pct(ci[1])}]" if ci else "-"
        accuracy = entry["metrics"].get("accuracy")
        lines.append(
            f"{name:<26} {entry['main_metric']:<10} {_pct(entry['main_score']):>6} "
            f"{ci_text:>13} {entry['n']:>7} {_pct(accuracy):>6}"
        )
    lines.append("scores in %; tau: lower is better")
    for name, why in results.get("skipped", {}).items():
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines)
