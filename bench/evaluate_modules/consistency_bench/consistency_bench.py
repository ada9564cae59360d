"""consistency-bench metrics as an ``evaluate`` module.

Config names select the metric; every metric takes ``predictions`` (the model's answers on the
perturbed / derived inputs) and ``references`` (its answers on the originals, or the gold label
for additive), as label indices, -1 for an invalid answer. They call the package's pure metric
functions (``bench.metrics``), so the numbers are the harness's.

- tau_sem: 1 - mean(pred_original == pred_paraphrase)
- tau_sym: 1 - mean(pred_original == pred_swapped)
- tau_neg: 1 - mean(pred_original != pred_negated)
- tau_add: 1 - mean over C of (pred_merged == gold), C = rows whose two parts are right
  (extra inputs: first_predictions, second_predictions)
- c_r: mean(pred_original == pred_reverse)
"""

import datasets
import evaluate
import numpy as np

from bench.families import FAMILIES
from bench.metrics import becel, calm

_DESCRIPTION = __doc__
#: The papers of the metrics (tau: BECEL; c_r: CALM), from the family declarations.
_CITATION = FAMILIES["becel"].citation + "\n" + FAMILIES["calm"].citation
_KWARGS = """
Args:
    predictions: label indices on the perturbed (or merged) inputs.
    references: label indices on the original inputs (gold labels for tau_add).
    first_predictions, second_predictions: tau_add only, predictions on the two parts.
Returns:
    {<config>: value in [0, 1]} and, for tau_add, {"n_conditioned": |C|}.
"""
CONFIGS = ("tau_sem", "tau_sym", "tau_neg", "tau_add", "c_r")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class ConsistencyBench(evaluate.Metric):
    """Inconsistency and consistency scores of consistency-bench."""

    def _info(self):
        if self.config_name not in CONFIGS:
            raise KeyError(f"Unknown config {self.config_name!r}; use one of {CONFIGS}")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS,
            features=datasets.Features(
                {"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}
            ),
        )

    def _compute(self, predictions, references, first_predictions=None, second_predictions=None):
        pred, ref = np.asarray(predictions), np.asarray(references)
        name = self.config_name
        if name in ("tau_sem", "tau_sym"):
            return {name: becel.tau_agreement(ref, pred)}
        if name == "tau_neg":
            return {name: becel.tau_negational(ref, pred)}
        if name == "c_r":
            return {name: calm.c_r(ref, pred)}
        if first_predictions is None or second_predictions is None:
            raise ValueError("tau_add needs first_predictions and second_predictions")
        first, second = np.asarray(first_predictions), np.asarray(second_predictions)
        antecedent_correct = np.stack([first == ref, second == ref], axis=1) & (ref >= 0)[:, None]
        derived_ok = (pred == ref) & (pred != becel.INVALID)
        tau, n = becel.tau_conditional(derived_ok, antecedent_correct)
        return {name: tau, "n_conditioned": n}
