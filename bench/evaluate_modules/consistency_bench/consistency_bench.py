"""consistency-bench metrics as an ``evaluate`` module (metric card: README.md beside this file).

The config name selects the metric. Every number is computed by the consistency-bench
package's own functions (``bench.metrics`` and, for ``default``, the suite scorers of
``bench.scorers``), so the numbers are the harness's; label indices are ints, -1 marks an
invalid answer (never consistent, never correct).

- ``default`` (alias ``suite``): one suite's rows scored by the harness's scorer: the paper's
  main metric and the ranked, chance-corrected consistent accuracy (any kind: semantic,
  negational, symmetric, transitive, additive, calm, salad, coherence, coherence_theta).
- ``tau_sem``, ``tau_sym``: 1 - mean(pred_original == pred_perturbed) (BECEL l. 157)
- ``tau_neg``: 1 - mean(pred_original != pred_negated) (BECEL l. 171)
- ``tau_add``: 1 - mean over C of (pred_merged == gold), C = rows whose two parts are right
  (BECEL l. 175-179; extra inputs ``first_predictions``, ``second_predictions``)
- ``c_r``: mean(pred_original == pred_reverse) (CALM l. 56-58)
- ``c_s``: mean(p_t >= theta), p_t the share of the k SIGNAL answers equal to the original
  answer (CALM l. 64-76, theta = 1 by default)
- ``word_salad``: agreement of the salad answers with the original answers, chance 1/N and
  the mean confidence of the predicted label (word salad l. 158, l. 164)
- ``coherence``: strict and lenient coherence and accuracy per example (coherence l. 60, 128)

The package is imported when a metric is computed, not when this file is read: the file is
loadable with ``evaluate.load`` alone, and computing needs ``pip install consistency-bench``.
"""

import importlib

import datasets
import evaluate
import numpy as np

_DESCRIPTION = __doc__
#: The four papers, as their family declarations cite them (bench/registries/families.py; a
#: test checks).
_CITATION = r"""
@inproceedings{jang-etal-2022-becel,
    title = "{BECEL}: Benchmark for Consistency Evaluation of Language Models",
    author = "Jang, Myeongjun and Kwon, Deuk Sin and Lukasiewicz, Thomas",
    booktitle = "Proceedings of the 29th International Conference on Computational Linguistics",
    year = "2022",
    address = "Gyeongju, Republic of Korea",
    url = "https://aclanthology.org/2022.coling-1.324",
    pages = "3680--3696",
}
@article{jang-etal-2021-calm,
    title = "Accurate, yet Inconsistent? Consistency Analysis on Language Understanding Models",
    author = "Jang, Myeongjun and Kwon, Deuk Sin and Lukasiewicz, Thomas",
    journal = "arXiv preprint arXiv:2108.06665",
    year = "2021",
    url = "https://arxiv.org/abs/2108.06665",
}
@inproceedings{gupta-etal-2021-bert,
    title = "{BERT} {\&} Family Eat Word Salad: Experiments with Text Understanding",
    author = "Gupta, Ashim and Kvernadze, Giorgi and Srikumar, Vivek",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "35",
    number = "14",
    pages = "12946--12954",
    year = "2021",
}
@inproceedings{storks-chai-2021-beyond,
    title = "Beyond the Tip of the Iceberg: Assessing Coherence of Text Classifiers",
    author = "Storks, Shane and Chai, Joyce",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2021",
    year = "2021",
    address = "Punta Cana, Dominican Republic",
    url = "https://aclanthology.org/2021.findings-emnlp.272",
}
"""
_KWARGS = """
Args:
    predictions: label indices on the perturbed (derived, salad) inputs; ``c_s``: per example
        the k SIGNAL answers; ``coherence``: per example the answers of its rows, the end-task
        (full span) row first; ``default``: the answer on every row of the suite.
    references: label indices on the original inputs (gold labels for ``tau_add``; the
        default label for CopySort / CopyOne salads); ``coherence``: the gold labels of the
        rows; ``default``: the gold label of every row, -1 where a row has none.
    groups, variants: ``default`` only, the suite's ``group`` and ``variant`` per row.
    kind, label_names: ``default`` only, the suite's metric kind and label names.
    first_predictions, second_predictions: ``tau_add`` only, predictions on the two parts.
    theta: ``c_s`` only, the pass-rate threshold (default 1.0, the paper's).
    n_labels: ``word_salad`` only, the number of labels N.
    probs: ``word_salad`` and ``default``, optional, per row the label probabilities.
    ids, antecedent_ids, constraints, agreement_with, params, seed, n_boot: ``default``,
        optional, the suite columns of the same names and the scoring parameters.
Returns:
    A dict of floats named as the results JSON of ``consistency-bench score`` names them.
"""
#: Message when the package that computes the metrics is missing.
NEEDS_PACKAGE = ("the consistency_bench metric computes with the consistency-bench package: "
                 "pip install consistency-bench (the PyPI package named `bench` is another one)")
_INT = datasets.Value("int64")
_INTS = datasets.Sequence(datasets.Value("int64"))
_PAIR = {"predictions": _INT, "references": _INT}
#: Config -> the features of its inputs.
FEATURES = {
    "default": {**_PAIR, "groups": datasets.Value("string"), "variants": datasets.Value("string")},
    "tau_sem": _PAIR, "tau_sym": _PAIR, "tau_neg": _PAIR, "tau_add": _PAIR, "c_r": _PAIR,
    "c_s": {"predictions": _INTS, "references": _INT},
    "word_salad": _PAIR,
    "coherence": {"predictions": _INTS, "references": _INTS},
}
ALIASES = {"suite": "default"}
CONFIGS = (*FEATURES, *ALIASES)
#: The main metric of each kind, as the suite builders name it (``suites.json``).
MAIN_METRIC = {
    "semantic": "tau_sem", "negational": "tau_neg", "symmetric": "tau_sym",
    "transitive": "tau_trn", "additive": "tau_add", "calm": "c_r", "salad": "agreement",
    "coherence": "strict_coherence", "coherence_theta": "strict_coherence",
}


def package(module: str):
    """``module`` of the package: ``consistency_bench.bench.<module>`` or ``bench.<module>``.

    The installed layout of issue 29 first, then today's; the import is done here, at compute
    time, so that ``evaluate.load`` does not ask to install a PyPI package named ``bench``.

    Raises:
        ImportError: The consistency-bench package is not installed.

    """
    for prefix in ("consistency_bench.bench.", "bench."):
        try:
            return importlib.import_module(prefix + module)
        except ModuleNotFoundError as error:
            if not (prefix + module).startswith(str(error.name)):
                raise  # a dependency of the package is missing: say which
    raise ImportError(NEEDS_PACKAGE)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class ConsistencyBench(evaluate.Metric):
    """Consistency scores of consistency-bench (BECEL, CALM, word salad, coherence)."""

    def _info(self):
        if self.config_name not in CONFIGS:
            raise KeyError(f"Unknown config {self.config_name!r}; use one of {CONFIGS}")
        features = FEATURES[ALIASES.get(self.config_name, self.config_name)]
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS,
            features=datasets.Features(features),
            reference_urls=["https://aclanthology.org/2022.coling-1.324",
                            "https://arxiv.org/abs/2108.06665",
                            "https://aclanthology.org/2021.findings-emnlp.272"],
        )

    def _compute(self, predictions, references, **kwargs):
        name = ALIASES.get(self.config_name, self.config_name)
        return COMPUTE[name](name, predictions, references, **kwargs)


def _tau_pair(name, predictions, references):
    becel = package("metrics.becel")
    pred, ref = np.asarray(predictions), np.asarray(references)
    if name == "tau_neg":
        return {name: becel.tau_negational(ref, pred)}
    return {name: becel.tau_agreement(ref, pred)}


def _tau_add(name, predictions, references, first_predictions=None, second_predictions=None):
    becel = package("metrics.becel")
    if first_predictions is None or second_predictions is None:
        raise ValueError("tau_add needs first_predictions and second_predictions")
    pred, ref = np.asarray(predictions), np.asarray(references)
    first, second = np.asarray(first_predictions), np.asarray(second_predictions)
    antecedent_correct = np.stack([first == ref, second == ref], axis=1) & (ref >= 0)[:, None]
    derived_ok = (pred == ref) & (pred != becel.INVALID)
    tau, n = becel.tau_conditional(derived_ok, antecedent_correct)
    return {name: tau, "n_conditioned": n}


def _c_r(name, predictions, references):
    return {name: package("metrics.calm").c_r(np.asarray(references), np.asarray(predictions))}


def _c_s(name, predictions, references, theta=1.0):
    calm = package("metrics.calm")
    signals = _matrix(predictions, "c_s predictions (the k SIGNAL answers of each example)")
    original = np.asarray(references)
    return {name: calm.c_s(original, signals, theta),
            "mean_pass_rate": float(calm.pass_rates(original, signals).mean())}


def _matrix(rows, what: str) -> np.ndarray:
    """Equal-length integer rows as an ``(N, k)`` array."""
    lengths = {len(row) for row in rows}
    if len(lengths) > 1:
        raise ValueError(f"{what}: every example needs the same number k; got {sorted(lengths)}")
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), -1)


def _word_salad(name, predictions, references, n_labels=None, probs=None):
    salad = package("metrics.salad")
    if n_labels is None:
        raise ValueError("word_salad needs n_labels, the number of labels N (chance is 1/N)")
    pred = np.asarray(predictions, dtype=np.int64)
    out = {"agreement": float(salad.agreement(np.asarray(references, dtype=np.int64),
                                              pred).mean()),
           "chance": salad.chance(int(n_labels)),
           "invalid_answer_share": float((pred == salad.INVALID).mean()),
           "confidence": None}
    if probs is not None:
        values = salad.confidence(np.asarray(probs, dtype=np.float64), pred)
        values = values[~np.isnan(values)]
        out["confidence"] = float(values.mean()) if len(values) else None
    return out


def _coherence(name, predictions, references):
    metrics, invalid = package("metrics.coherence"), package("metrics.becel").INVALID
    if len(predictions) != len(references) or any(
            len(p) != len(r) or not len(p) for p, r in zip(predictions, references, strict=True)):
        raise ValueError("coherence: every example needs one gold label per answer, and rows")
    example = np.repeat(np.arange(len(predictions)), [len(p) for p in predictions])
    pred = np.concatenate([np.asarray(p, dtype=np.int64) for p in predictions])
    gold = np.concatenate([np.asarray(r, dtype=np.int64) for r in references])
    span_correct = (pred == gold) & (pred != invalid)
    end = np.concatenate([[0], np.cumsum([len(p) for p in predictions])[:-1]])
    result = metrics.coherence(example, span_correct, span_correct[end])
    return {"strict_coherence": result.strict, "lenient_coherence": result.lenient,
            "accuracy": result.accuracy, "span_accuracy": result.span_accuracy}


#: Suite columns ``default`` takes as keyword arguments (one value per row).
COLUMNS = {"ids": "id", "antecedent_ids": "antecedent_ids", "constraints": "constraint",
           "agreement_with": "agreement_with"}


def _suite(name, predictions, references, groups, variants, kind=None, label_names=None,
           probs=None, params=None, seed=0, n_boot=1000, **columns):
    """One suite scored by the harness (``bench.scoring.engine.score_suite``), from its rows."""
    scoring, contract = package("scoring.engine"), package("scorers.contract")
    if kind not in MAIN_METRIC or not label_names:
        raise ValueError(f"default: give kind (one of {sorted(MAIN_METRIC)}) and label_names")
    unknown = sorted(set(columns) - set(COLUMNS))
    if unknown:
        raise TypeError(f"default: unknown arguments {unknown}; suite columns: {sorted(COLUMNS)}")
    data = contract.SuiteData(f"evaluate_{kind}", _info_of(kind, label_names),
                              _parquet(references, groups, variants, columns))
    pred = np.asarray(predictions, dtype=np.int64)
    aligned = contract.Aligned(pred, None if probs is None else np.asarray(probs, np.float64))
    checks = package("scorers.params")  # the checks of `score --param` and of the bootstrap
    checks.check_bootstrap(seed, n_boot)
    options = contract.ScoreOptions(seed=seed, n_boot=n_boot,
                                    params=checks.parse_params(checks.param_items(params)))
    entry = scoring.score_suite(data, aligned, options)
    keys = ("main_metric", "main_score", "n", "ci95", "consistent_accuracy",
            "consistent_accuracy_chance", "consistent_accuracy_cc")
    return {**{key: entry[key] for key in keys}, "metrics": entry["metrics"]}


def _info_of(kind, label_names) -> dict:
    """The ``suites.json`` entry the scorers read, for an unnamed suite of ``kind``."""
    return {"family": "evaluate", "task": "evaluate", "kind": kind, "version": "evaluate",
            "sha256": None, "main_metric": MAIN_METRIC[kind], "label_names": list(label_names),
            "higher_is_better": kind in ("calm", "coherence", "coherence_theta")}


def _parquet(references, groups, variants, columns):
    """The rows as the Parquet file a built suite folder holds (read back in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(groups)
    labels = [None if r is None or r < 0 else int(r) for r in references]
    table = {"id": [f"row-{i}" for i in range(n)], "group": list(groups),
             "variant": list(variants), "label": pa.array(labels, pa.int64()),
             "text": [""] * n, "source_file": [""] * n}
    for argument, column in COLUMNS.items():
        if argument in columns:
            table[column] = list(columns[argument])
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(table), sink)
    return pq.ParquetFile(pa.BufferReader(sink.getvalue()))


#: Config -> the function computing it.
COMPUTE = {"default": _suite, "tau_sem": _tau_pair, "tau_sym": _tau_pair, "tau_neg": _tau_pair,
           "tau_add": _tau_add, "c_r": _c_r, "c_s": _c_s, "word_salad": _word_salad,
           "coherence": _coherence}
