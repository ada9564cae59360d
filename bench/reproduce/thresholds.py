"""When a reproduction passes: thresholds by the precision of the two runs, each with its reason.

Which tier applies (:func:`tier_for`):

* ``exact``: a baseline's recipe (float64 code with no randomness but a per-row seed);
* ``float32``: both runs computed in float32 (on any device: CPU, or CUDA with ``--no-amp``);
* ``reduced``: either run computed in bfloat16 or float16 (``--dtype bfloat16``, or CUDA with
  autocast, ``predict``'s default there).

A reproduction passes when the label agreement over all checked rows and in every suite, the
largest probability difference, and the rows with probabilities on one side only are all
within the tier's limits (:func:`verdict`). docs/maintain.md, "Reproduction", gives the
measurements behind the numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from consistency_bench.bench.reproduce.compare import Comparison


@dataclass(frozen=True)
class Threshold:
    """The limits of one tier.

    Attributes:
        tier: ``exact``, ``float32`` or ``reduced``.
        min_agreement: Least label agreement over every checked row.
        min_suite_agreement: Least label agreement in any one suite (edits concentrated in a
            few suites, e.g. the word salads, do not hide in the overall figure).
        max_prob_diff: Largest absolute probability difference allowed on any row.
        reason: Why these limits (shown in ``reproduction.json`` and the docs).

    """

    tier: str
    min_agreement: float
    min_suite_agreement: float
    max_prob_diff: float
    reason: str


THRESHOLDS = {
    "exact": Threshold(
        "exact", 1.0, 1.0, 2e-6,
        "a baseline is deterministic code (float64, per-row seeds, no batching): the same "
        "labels, and probabilities equal up to the 6 decimals a prediction file keeps (one "
        "unit of the last digit for a value rounded the other way)"),
    "float32": Threshold(
        "float32", 0.99, 0.95, 1e-3,
        "float32 on both sides: batch composition, padding and another CPU or GPU kernel "
        "move probabilities by about 1e-6 (measured on a MiniLM SST-2 model, CPU: 1e-6 on a "
        "32-group sample run again, 2e-6 between a retrained model and the committed file); a "
        "label flips only on a near-tie, so 99% of rows (95% in one suite) and 1e-3 leave a "
        "wide margin, while an edited label or probability stands out"),
    "reduced": Threshold(
        "reduced", 0.97, 0.90, 0.08,
        "bfloat16 or float16 on either side (--dtype bfloat16, or CUDA autocast, predict's "
        "default there, against a float32 run): 8 bits of mantissa move probabilities by a "
        "hundredth and flip near-tied labels (measured on a MiniLM SST-2 model, CPU, 7,308 "
        "rows, bfloat16 against float32: 99.90% of labels agree, 99.83% in the worst suite, "
        "largest difference 0.014; a bfloat16 sample run again: 0.0036); the limits are 3 "
        "points, 10 points and about 6 times above those figures, for larger models"),
}

#: Precisions counted as float32 (float64: a baseline's numbers, never reduced).
FULL = ("float32", "float64")


def tier_for(recorded: dict, rerun: dict) -> Threshold:
    """The tier of a reproduction from the two runs' records (their ``device.precision``)."""
    if recorded.get("mode") == "baseline" and rerun.get("mode") == "baseline":
        return THRESHOLDS["exact"]
    precisions = [(r.get("device") or {}).get("precision") for r in (recorded, rerun)]
    if all(p in FULL for p in precisions):
        return THRESHOLDS["float32"]
    return THRESHOLDS["reduced"]


def verdict(comparison: Comparison, threshold: Threshold) -> tuple[bool, str]:
    """Whether the comparison passes, and the reason when it does not (else "")."""
    problems = []
    if comparison.label_agreement < threshold.min_agreement:
        problems.append(f"label agreement {comparison.label_agreement:.2%} < "
                        f"{threshold.min_agreement:.0%}")
    worst = comparison.worst_suite()
    if worst is not None and worst.agreement < threshold.min_suite_agreement:
        problems.append(f"{worst.suite}: label agreement {worst.agreement:.2%} < "
                        f"{threshold.min_suite_agreement:.0%} (first differing row "
                        f"{worst.first_disagreement})")
    diff = comparison.max_prob_diff
    if diff is not None and diff > threshold.max_prob_diff:
        problems.append(f"largest probability difference {diff:.3g} > "
                        f"{threshold.max_prob_diff:g}")
    if comparison.missing_probs:
        problems.append(f"{comparison.missing_probs} rows have probabilities on one side "
                        "only")
    return not problems, "; ".join(problems)


def threshold_dict(threshold: Threshold) -> dict:
    """JSON-ready limits."""
    return asdict(threshold)
