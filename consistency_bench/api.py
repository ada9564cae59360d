"""The Python API: ``import consistency_bench as cb`` (docs/api.md).

Each function calls the same layer functions as the command of the same name, so a result is
the one the CLI gives for the same inputs: :func:`load_suite` (a built suite as a
``datasets.Dataset``), :func:`score` (``consistency-bench score``), :func:`predict`
(``predict``), :func:`evaluate` (predict, then score) and :func:`leaderboard` (the ranking
``consistency-bench leaderboard`` renders). Every input is checked before any expensive work,
with the errors of the CLI (:class:`consistency_bench.bench.errors.BenchError` and its subclasses),
which name
the file or record, the field and the value.

Like the commands, this module sits on the roof of the layers and imports the layers inside
its functions, so ``import consistency_bench`` stays light (``consistency_bench.__getattr__``
loads this module on the first use of one of its names).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from consistency_bench.arguments import DEFAULT_DATA, DEFAULT_SUBMISSIONS

if TYPE_CHECKING:
    import datasets

    from consistency_bench.leaderboard.ranking.model import Leaderboard

PathLike = str | os.PathLike
#: The keyword options of :func:`predict` (the ``predict`` flags, as ``PredictRequest`` holds
#: them; ``batch_size`` may be an int).
PREDICT_OPTIONS = ("tasks", "batch_size", "device", "dtype", "label_map", "wic_format",
                   "max_length", "length_norm", "chat", "num_fewshot", "fewshot_seed", "shard",
                   "device_map", "max_memory", "amp", "progress")


def load_suite(name: str, *, data: PathLike = DEFAULT_DATA) -> datasets.Dataset:
    """One built suite as a ``datasets.Dataset`` (every column, the suite's features).

    The Parquet file is checked against the sha256 that ``suites.json`` records before it is
    read, as ``score`` checks it.

    Args:
        name: Suite (config) name, e.g. ``"rte_symmetric"``.
        data: Built suite folder (what ``consistency-bench build`` writes).

    Raises:
        DataError: ``data`` is not a built folder, or the suite's file is missing or changed.
        UnknownNameError: ``name`` is not a suite of the folder (with the closest names).

    """
    import datasets

    from consistency_bench.bench.scoring.engine import SuiteFolder

    table = SuiteFolder(data).load(name).table
    return datasets.Dataset(table)  # features from the file's Hugging Face schema metadata


# One piece (over 60 lines): the file and in-memory routes share their checks and output.
def score(predictions: PathLike | Iterable[Mapping[str, Any]] | Any, *,
          data: PathLike = DEFAULT_DATA, suites: list[str] | None = None, seed: int = 0,
          n_boot: int = 10_000, params: Mapping[str, object] | Iterable[str] | None = None,
          out: PathLike | None = None) -> dict:
    """Validate predictions and score every suite they cover completely; the results.

    Args:
        predictions: A prediction file (``.jsonl``, ``.jsonl.gz``, ``.csv``, ``.parquet``);
            or the records themselves: an iterable of mappings with ``id``, ``label`` (index
            or name) and optional ``probs``, a pandas ``DataFrame`` or a pyarrow ``Table``
            with those columns (a ``datasets.Dataset`` is an iterable of such mappings).
        data: Built suite folder.
        suites: Score only these suites; each must be covered completely.
        seed: Bootstrap seed (>= 0).
        n_boot: Bootstrap resamples (1 to 1,000,000).
        params: Family parameters, ``{"calm_theta": 0.8}`` or ``["calm_theta=0.8"]``
            (``consistency-bench score --param``).
        out: Also write the results JSON here (atomically).

    Returns:
        The results JSON as a dict (docs/contracts.md): ``suites`` (each scored suite's
        entry), ``skipped``, ``predictions`` (path, sha256, rows, invalid answers), ...

    Raises:
        PredictionFileError: A malformed file or record, naming the line or record, the
            field and the value; nothing scored, or a requested suite not covered.
        ConfigError: A bad ``seed``, ``n_boot``, ``params`` or ``out``.
        DataError: ``data`` is not a built folder, or a suite file changed.

    """
    import json

    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.io.write import write_text
    from consistency_bench.bench.predictions.memory import SOURCE, read_records
    from consistency_bench.bench.scorers.params import check_bootstrap, param_items, parse_params
    from consistency_bench.bench.scoring.engine import (
        ScoreOptions,
        SuiteFolder,
        score_cache,
        score_file,
        score_predictions,
    )
    from consistency_bench.bench.scoring.results_json import require_coverage

    check_bootstrap(seed, n_boot)
    options = ScoreOptions(seed=seed, n_boot=n_boot, params=parse_params(param_items(params)))
    is_file = isinstance(predictions, (str, os.PathLike))
    if out is not None:
        check_output_file(out, inputs=(predictions,) if is_file else ())
    if is_file:
        results = score_file(predictions, data, options=options, suites=suites,
                             derived=score_cache())
        where = os.fspath(predictions)
    else:
        folder = SuiteFolder(data)
        unknown = [n for n in suites or () if n not in folder.manifest]
        if unknown:  # before the records are read
            from consistency_bench.bench.errors import UnknownNameError

            raise UnknownNameError("suite", unknown[0], folder.manifest)
        read = read_records(predictions, folder.manifest, folder.ids)
        results = score_predictions(read, folder, options, suites)
        where = SOURCE
    require_coverage(results, where, suites)
    if out is not None:
        write_text(out, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return results


def predict(model: str, *, data: PathLike = DEFAULT_DATA, suites: list[str] | None = None,
            out: PathLike | None = None, **options: Any) -> Path:
    """Run a Hugging Face model over built suites; the prediction file written.

    What ``consistency-bench predict`` does (docs/runner.md): a classifier, text-to-text
    model or causal LM (by the log-likelihood of each verbalised label); an interrupted run
    resumes from ``out``.

    Args:
        model: Hub model id or local model folder.
        data: Built suite folder.
        suites: Suites to predict (default: every built suite the model's labels cover).
        out: Prediction file (JSONL) to write; default ``predictions.jsonl`` in a new
            temporary folder (its path is returned; delete it when done).
        **options: The ``predict`` options, by their names in
        ``consistency_bench.bench.runner.predict_run.PredictRequest``
            (:data:`PREDICT_OPTIONS`): ``batch_size`` (``"auto"`` or an int), ``device``,
            ``dtype``, ``label_map``, ``max_length``, ``chat``, ``num_fewshot``, ...

    Raises:
        ConfigError: An unknown or bad option, suite, label mapping or device, before the
            weights load.

    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.runner.predict_run import PredictRequest
    from consistency_bench.bench.runner.predict_run import predict as run_predict

    unknown = sorted(set(options) - set(PREDICT_OPTIONS))
    if unknown:
        raise ConfigError(f"predict: unknown option(s) {', '.join(unknown)}; known: "
                          f"{', '.join(PREDICT_OPTIONS)}")
    if "batch_size" in options:
        options["batch_size"] = str(options["batch_size"])
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="consistency-bench-")) / "predictions.jsonl"
    run_predict(PredictRequest(model=model, out=os.fspath(out), data=data, suites=suites,
                               **options))
    return Path(out)


def evaluate(model: str, *, data: PathLike = DEFAULT_DATA, suites: list[str] | None = None,
             out: PathLike | None = None, seed: int = 0, n_boot: int = 10_000,
             params: Mapping[str, object] | Iterable[str] | None = None,
             **options: Any) -> dict:
    """:func:`predict`, then :func:`score` the predictions: the results.

    Args:
        model: Hub model id or local model folder.
        data: Built suite folder.
        suites: Suites to predict and score (default: every built suite the model covers).
        out: Keep the prediction file here; by default it is written to a temporary folder
            that is removed after scoring (the results' ``predictions.path`` then names a
            file that no longer exists).
        seed: As in :func:`score`.
        n_boot: As in :func:`score`.
        params: As in :func:`score`.
        **options: As in :func:`predict`.

    Raises:
        ConfigError: A bad option of either step, before the weights load.

    """
    from consistency_bench.bench.scorers.params import check_bootstrap, param_items, parse_params

    check_bootstrap(seed, n_boot)  # before the weights load
    parse_params(param_items(params))
    if out is not None:
        written = predict(model, data=data, suites=suites, out=out, **options)
        return score(written, data=data, suites=suites, seed=seed, n_boot=n_boot,
                     params=params)
    with tempfile.TemporaryDirectory(prefix="consistency-bench-") as folder:
        written = predict(model, data=data, suites=suites,
                          out=Path(folder) / "predictions.jsonl", **options)
        return score(written, data=data, suites=suites, seed=seed, n_boot=n_boot,
                     params=params)


def leaderboard(*, submissions: PathLike = DEFAULT_SUBMISSIONS, data: PathLike | None = None,
                warn: Callable[[str], None] | None = None) -> Leaderboard:
    """Rank the stored submissions: the board ``consistency-bench leaderboard`` renders.

    Args:
        submissions: Folder of stored entries (what ``consistency-bench submit`` writes).
        data: Built suite folder: when given, every entry is scored again from its stored
            predictions and left out (named through ``warn``) when its hash or any stored
            score differs; the per-unit outcomes then give paired tests and rank intervals.
        warn: Called with one line per entry left out (default: a ``UserWarning``).

    Returns:
        A ``consistency_bench.leaderboard.ranking.model.Leaderboard``: ``views`` (each a ranked
        ``View`` with
        ``rows``), ``cells`` (suite -> entry -> cell), ``suites``, ``meta``; ``to_dict()``
        is the site's ``leaderboard.json``.

    Raises:
        DataError: ``data`` is not a built folder.
        BenchError: Two entries disagree on a suite's content hash or direction.

    """
    from consistency_bench.leaderboard.webpage.build_site import stored_board

    return stored_board(submissions, data, warn=warn)
