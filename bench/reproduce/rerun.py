"""Make the recorded run again on a sample of rows: the same model and settings, this machine.

``predict`` runs (classifier, text-to-text, log-likelihood) are run again with
:func:`consistency_bench.bench.runner.predict_run.predict` and the recorded settings; the model is
the recorded
one (a Hub
id at its recorded commit, a local folder at its recorded path) or ``--model``, a local copy
whose weights must hash to the recorded sha256. ``baseline`` runs are run again from their
recipe (the baseline's code, seed and pinned training files). Served models (``api``) are
not run again: their weights are not here.

The device is this machine's (``--device``); the dtype and autocast are the recorded ones,
so on another device type the precision may differ
(:mod:`consistency_bench.bench.reproduce.thresholds`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import BenchError, ConfigError

#: Modes ``reproduce`` can run again here.
LOCAL_MODES = ("classifier", "text-to-text", "loglikelihood", "baseline")


class NotReproducible(ConfigError):
    """The run cannot be made again here (no weights, no network, a served model).

    Nothing is written; the message says what is missing and what would help.
    """


@dataclass(frozen=True)
class Rerun:
    """The sample predicted again.

    Attributes:
        predictions: Row id -> record (``label``, ``probs``).
        record: The run record of the new run (its device, precision, model commit).
        model_check: How the model was matched to the recorded one: ``weights-sha256``,
            ``commit``, ``recipe`` (a baseline) or ``unverified`` (nothing to compare), with
            the model loaded and its commit.

    """

    predictions: dict[str, dict]
    record: dict
    model_check: dict


def _target(record: dict, model: str | None) -> tuple[str, str | None]:
    """The model to load and the revision to load it at."""
    recorded = record["model"]
    commit = recorded.get("commit")
    hub_commit = commit if recorded.get("commit_source") in ("config", "snapshot") else None
    if model is not None:
        same_hub = model == recorded.get("hub_id") and not Path(model).is_dir()
        return model, hub_commit if same_hub else None
    if recorded["source"] == "hub":
        return recorded.get("hub_id") or recorded["id"], hub_commit or recorded.get("revision")
    if Path(recorded["id"]).is_dir():
        return recorded["id"], None
    if recorded.get("hub_id") and hub_commit:  # a snapshot folder of another machine
        return recorded["hub_id"], hub_commit
    raise NotReproducible(
        f"the run record names the local model folder {recorded['id']!r}, which is not on "
        "this machine; pass --model PATH to a copy of the same weights (its weight files must "
        f"hash to {str(recorded.get('weights_sha256'))[:12]}...); nothing was changed")


def check_identity(record: dict, target: str, revision: str | None) -> tuple[object, dict]:
    """Inspect ``target`` and check it holds the recorded weights.

    Returns:
        The inspected model (``consistency_bench.bench.modeling.info.ModelInfo``) and the check's
        figures.

    Raises:
        NotReproducible: The model cannot be read here (no cache, no network, closed).
        ConfigError: It holds other weights than the record (sha256 or commit differ).

    """
    from consistency_bench.bench.modeling.loading import inspect_model
    from consistency_bench.bench.runrecord.identity import identify

    try:
        info = inspect_model(target, revision=revision)
    except ConfigError as exc:
        at = f" at {revision}" if revision else ""
        raise NotReproducible(
            f"cannot read model {target!r}{at} here (not in the local cache and no network, "
            f"or a closed model): {exc}; pass --model PATH to a local copy of the same "
            "weights; nothing was changed") from None
    found = identify(target, info.config, revision)
    recorded = record["model"]
    check = {"model": target, "revision": revision, "commit": found.get("commit"),
             "weights_sha256": found.get("weights_sha256"), "matched_by": "unverified"}
    for key, how in (("weights_sha256", "weights-sha256"), ("commit", "commit")):
        want, got = recorded.get(key), found.get(key)
        if want and got:
            if want != got:
                raise ConfigError(
                    f"model {target!r} is not the recorded model: its {key.replace('_', ' ')} "
                    f"is {got[:12]}..., the run record's {want[:12]}...; pass --model with a "
                    "copy of the weights that made the predictions; nothing was changed")
            check["matched_by"] = how
            break
    return info, check


def _overrides(label_map: object) -> dict:
    """The recorded ``label_map`` (task -> label -> [model labels]) as ``LabelOverrides``."""
    if not isinstance(label_map, dict):
        return {}
    return {str(task): {str(k): tuple(str(x) for x in v) for k, v in mapping.items()}
            for task, mapping in label_map.items() if isinstance(mapping, dict)}


def _predict_again(record: dict, data_dir, rows, out: Path, model: str | None,
                   device: str | None) -> dict:
    """Run ``predict`` on the sampled rows with the recorded settings; the model check."""
    from consistency_bench.bench.runner.options import RunnerOptions
    from consistency_bench.bench.runner.predict_run import PredictRequest, predict

    settings = record["settings"]
    recorded_new = settings.get("max_new_tokens")
    if recorded_new is not None and recorded_new != RunnerOptions().max_new_tokens:
        raise NotReproducible(
            f"the run generated up to {recorded_new} new tokens; this harness generates "
            f"{RunnerOptions().max_new_tokens}: use the harness version of the record "
            f"({record.get('harness_version')}); nothing was changed")
    target, revision = _target(record, model)
    _, check = check_identity(record, target, revision)
    device_map = (record.get("device") or {}).get("device_map") if device is None else None
    predict(PredictRequest(
        model=target, out=str(out), data=data_dir, suites=sorted(rows), device=device,
        dtype=settings.get("dtype"), label_map=_overrides(settings.get("label_map")),
        wic_format=settings.get("wic_format", "word-prefix"),
        max_length=settings.get("max_length"), length_norm=settings.get("length_norm"),
        chat=bool(settings.get("chat")), num_fewshot=int(settings.get("num_fewshot") or 0),
        fewshot_seed=int(settings.get("fewshot_seed") or 0), amp=bool(settings.get("amp", True)),
        progress=False, revision=revision, rows=rows, device_map=device_map,
    ))
    return check


def _baseline_again(record: dict, data_dir, rows, out: Path,
                    sources: str | os.PathLike | None) -> dict:
    """Run the recorded baseline on the sampled rows; the recipe check."""
    from consistency_bench.bench.baselines import BASELINES, Context, run_baseline
    from consistency_bench.bench.errors import SourceError
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.bench.runrecord.baseline_record import code_sha256

    settings = record["settings"]
    name = settings.get("baseline")
    if name not in BASELINES:
        raise NotReproducible(f"the run record names baseline {name!r}, which this harness "
                              f"does not have (it has {', '.join(BASELINES)})")
    try:
        resolver = SourceResolver(sources, download=sources is None)
        run_baseline(name, data_dir, out, Context(resolver, seed=int(settings.get("seed", 0))),
                     sorted(rows), only=rows, record=True)
    except SourceError as exc:
        raise NotReproducible(f"baseline {name}: its training data is not here: {exc}; "
                              "nothing was changed") from None
    return {"model": f"baseline:{name}", "revision": None, "commit": code_sha256(),
            "weights_sha256": None, "matched_by": "recipe",
            "code_matches": code_sha256() == record["model"].get("commit")}


def rerun(record: dict, data_dir: str | os.PathLike, rows, workdir: Path, *,
          model: str | None = None, device: str | None = None,
          sources: str | os.PathLike | None = None) -> Rerun:
    """Make the recorded run again on ``rows`` (suite -> row ids) in ``workdir``.

    Raises:
        NotReproducible: A served model, a model or training data that is not here.
        ConfigError: ``model`` holds other weights than the record.
        BenchError: The run itself failed (the message says why).

    """
    from consistency_bench.bench.runrecord.schema import read_record, record_path

    mode = record["mode"]
    if record.get("api") is not None or mode not in LOCAL_MODES:
        raise NotReproducible(
            f"the predictions were made by a served model ({mode}, endpoint "
            f"{(record.get('api') or {}).get('host', '?')}): reproduce runs local weights "
            "only; nothing was changed")
    out = workdir / "rerun.jsonl"
    if mode == "baseline":
        if model is not None:
            raise ConfigError("--model: the entry was made by a baseline, which has no "
                              "weights; leave --model out")
        check = _baseline_again(record, data_dir, rows, out, sources)
    else:
        check = _predict_again(record, data_dir, rows, out, model, device)
    predictions = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        predictions[item["id"]] = item
    if not predictions:
        raise BenchError(f"the run made again wrote no rows to {out}")
    return Rerun(predictions, read_record(record_path(out)), check)
