"""``consistency-bench inspect``: the inconsistent groups of a prediction file or stored entry.

:func:`inspect_predictions` reads and validates the predictions (a file, or an entry folder of
the leaderboard holding ``predictions.jsonl.gz``), scores each chosen suite with its own
scorer, judges every unit (:mod:`consistency_bench.bench.inconsistent.verdicts`) and lists, per
suite, the
inconsistent groups sorted by the confidence of the contradiction (with ``include_wrong``,
then the consistent but wrong ones). :func:`inspect_suite` does one loaded suite: the Python
API for a caller that has its own predictions in memory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from consistency_bench.bench.errors import ConfigError, UnknownNameError, shorten
from consistency_bench.bench.inconsistent.groups import Group, build_groups, select_units
from consistency_bench.bench.inconsistent.verdicts import INCONSISTENT, VERDICTS, WRONG, Verdicts
from consistency_bench.bench.scorers.contract import Aligned, ScoreOptions, SuiteData, SuiteScore

#: Groups listed per suite unless ``limit`` says otherwise.
DEFAULT_LIMIT = 20
#: The prediction file inside a stored entry folder (leaderboard/submissions/meta.py).
ENTRY_PREDICTIONS = "predictions.jsonl.gz"


@dataclass(frozen=True)
class InspectRequest:
    """What to inspect.

    Attributes:
        source: A prediction file, or a stored entry's folder (``submissions/NAME``).
        data: The built suite folder.
        suites: Only these suites (default: every suite the predictions cover completely).
        kinds: Only suites of these metric kinds.
        labels: Only groups whose gold label is one of these names.
        limit: Groups listed per suite (``None``: all).
        include_wrong: Also list the consistent but wrong groups (after the inconsistent).
        params: Scoring parameters, as ``score --param`` (they move thresholds).

    """

    source: str | os.PathLike
    data: str | os.PathLike = "consistency-bench"
    suites: Sequence[str] = ()
    kinds: Sequence[str] = ()
    labels: Sequence[str] = ()
    limit: int | None = DEFAULT_LIMIT
    include_wrong: bool = False
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteSummary:
    """One suite of a report: the scorer's figures and what was found.

    Attributes:
        suite: Suite name.
        kind: Metric kind.
        task: Task.
        main_metric: The suite's main metric (``tau_neg``, ``c_r``, ...).
        main_score: Its value, as ``score`` reports it.
        units: Units (groups, derived rows, examples).
        judged: Units whose consistency could be judged.
        inconsistent: Inconsistent units (the scorer's count of failures).
        wrong: Consistent (or not judged) units with a labelled row answered wrongly.
        matching: Units that pass the filters (status and gold label).
        shown: Groups listed.
        relation: What an inconsistent unit of this kind did.
        note: Why nothing could be judged (e.g. ART without probabilities), or ``None``.

    """

    suite: str
    kind: str
    task: str
    main_metric: str
    main_score: float | None
    units: int
    judged: int
    inconsistent: int
    wrong: int
    matching: int
    shown: int
    relation: str
    note: str | None = None


@dataclass(frozen=True)
class Report:
    """What :func:`inspect_predictions` found.

    Attributes:
        predictions: The prediction file read.
        sha256: Its content hash (as results record it).
        data: The built suite folder.
        suites: One summary per suite inspected, in suite order.
        groups: The listed groups, suite by suite, each suite's in order.

    """

    predictions: str
    sha256: str
    data: str
    suites: tuple[SuiteSummary, ...]
    groups: tuple[Group, ...]

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def judge(data: SuiteData, aligned: Aligned,
          options: ScoreOptions) -> tuple[SuiteScore, Verdicts | None]:
    """Score one suite with its own scorer and judge every unit (``None``: cannot judge)."""
    from consistency_bench.bench.scoring.engine import get_scorer

    score = get_scorer(data.info["kind"])(data, aligned, options)
    return score, VERDICTS[data.info["kind"]](data, aligned, score, options)


def inspect_suite(data: SuiteData, aligned: Aligned, options: ScoreOptions | None = None, *,
                  labels: Sequence[str] = (), limit: int | None = DEFAULT_LIMIT,
                  include_wrong: bool = False) -> tuple[SuiteSummary, list[Group]]:
    """The summary and the listed groups of one suite (predictions aligned with its rows).

    Args:
        data: The suite.
        aligned: Its predictions, one per row in the suite's order.
        options: Scoring options (thresholds); default as ``score``.
        labels: Only groups with one of these gold label names (unknown names match nothing).
        limit: Groups listed (``None``: all).
        include_wrong: Also list consistent but wrong groups.

    """
    options = options or ScoreOptions()
    score, verdicts = judge(data, aligned, options)
    info = data.info
    main = info["main_metric"]
    value = score.metrics.get(main, score.main_score)
    main_value = float(value) if isinstance(value, (int, float)) and np.isfinite(value) else None
    base = dict(suite=data.name, kind=info["kind"], task=info["task"], main_metric=main,
                main_score=main_value)
    if verdicts is None:
        note = str(score.metrics.get("missing") or "this suite cannot be judged")
        return SuiteSummary(**base, units=score.n, judged=0, inconsistent=0, wrong=0,
                            matching=0, shown=0, relation="", note=note), []
    codes = [data.label_names.index(x) for x in labels if x in data.label_names]
    if labels and not codes:
        units = np.zeros(0, dtype=np.int64)
    else:
        units = select_units(verdicts, include_wrong=include_wrong, labels=codes)
    shown = units if limit is None else units[:limit]
    summary = SuiteSummary(
        **base, units=len(verdicts.status), judged=int(verdicts.judged.sum()),
        inconsistent=int((verdicts.status == INCONSISTENT).sum()),
        wrong=int((verdicts.status == WRONG).sum()), matching=len(units), shown=len(shown),
        relation=verdicts.relation)
    return summary, build_groups(data, aligned, verdicts, shown)


def prediction_path(source: str | os.PathLike) -> Path:
    """The prediction file of ``source``: itself, or an entry folder's ``predictions.jsonl.gz``.

    Raises:
        ConfigError: ``source`` does not exist, is a symbolic link to a folder, or is a
            folder without a stored prediction file.

    """
    path = Path(source)
    if path.is_dir():
        if path.is_symlink():
            raise ConfigError(f"{path}: is a symbolic link; name the entry folder itself")
        inner = path / ENTRY_PREDICTIONS
        if inner.is_symlink() or not inner.is_file():
            raise ConfigError(f"{path}: a folder without {ENTRY_PREDICTIONS}; expected a "
                              "prediction file or a stored entry (submissions/NAME)")
        return inner
    if not path.exists():
        raise ConfigError(f"{path}: no such prediction file or entry folder")
    return path


def _check(request: InspectRequest, manifest: Mapping[str, Mapping]) -> None:
    """Refuse bad options before the prediction file is read."""
    from consistency_bench.bench.registries.families import kinds

    if request.limit is not None and request.limit < 1:
        raise ConfigError(f"--limit {request.limit}: must be >= 1 (0 on the command line: all)")
    for name in request.suites:
        if name not in manifest:
            raise UnknownNameError("suite", name, manifest)
    for kind in request.kinds:
        if kind not in kinds():
            raise UnknownNameError("kind", kind, kinds())
    if request.labels:
        known = {x for info in manifest.values() for x in info.get("label_names", ())}
        for label in request.labels:
            if label not in known:
                raise ConfigError(f"--label {shorten(label)}: not a label of any suite; "
                                  f"known: {', '.join(sorted(known))}")


def _chosen(request: InspectRequest, covered: Sequence[str],
            manifest: Mapping[str, Mapping], path: Path) -> list[str]:
    names = [n for n in manifest if n in covered]
    if request.suites:
        missing = [n for n in request.suites if n not in covered]
        if missing:
            raise ConfigError(f"{path}: no predictions for suite {missing[0]!r}")
        names = [n for n in names if n in request.suites]
    if request.kinds:
        names = [n for n in names if manifest[n]["kind"] in request.kinds]
    if request.labels:
        names = [n for n in names
                 if set(request.labels) & set(manifest[n].get("label_names", ()))]
    if not names:
        raise ConfigError(f"{path}: no suite it covers matches --suite/--kind/--label")
    return names


def inspect_predictions(request: InspectRequest) -> Report:
    """Read the predictions of ``request.source`` and list each chosen suite's groups.

    Raises:
        ConfigError: A bad option, a missing file, no suite matching.
        PredictionFileError: A malformed prediction file (nothing is inspected).
        DataError: A built suite that does not match its manifest.

    """
    from consistency_bench.bench.predictions.read import read_predictions
    from consistency_bench.bench.scoring.engine import SuiteFolder, align

    folder = SuiteFolder(Path(request.data))
    _check(request, folder.manifest)
    path = prediction_path(request.source)
    predictions = read_predictions(path, folder.manifest, folder.ids)
    options = ScoreOptions(params=dict(request.params))
    summaries, groups = [], []
    for name in _chosen(request, list(predictions.suites), folder.manifest, path):
        data = folder.load(name)
        aligned = align(data, predictions.suites[name])
        if isinstance(aligned, str):  # a suite the file covers only partly
            info = data.info
            summaries.append(SuiteSummary(name, info["kind"], info["task"],
                                          info["main_metric"], None, 0, 0, 0, 0, 0, 0, "",
                                          aligned))
            continue
        summary, found = inspect_suite(data, aligned, options, labels=request.labels,
                                       limit=request.limit, include_wrong=request.include_wrong)
        summaries.append(summary)
        groups += found
    return Report(str(path), predictions.sha256, str(request.data), tuple(summaries),
                  tuple(groups))
