"""The run record of a ``predict`` run (:func:`predict_record`) and the prompts' version."""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache

#: ``predict``'s model kinds as run-record modes.
MODE_OF_KIND = {"classifier": "classifier", "seq2seq": "text-to-text", "causal": "loglikelihood"}


@cache
def prompts_sha256() -> str:
    """Version of every prompt ``predict`` can use: sha256 of the prompt tables.

    The causal-LM templates and verbalisers (``consistency_bench.bench.prompting.prompts.PROMPTS``,
    the
    CALM
    input, the
    delimiters) and the text-to-text prefixes
    (``consistency_bench.bench.prompting.row_inputs.T5_PROMPTS``), as
    canonical
    JSON. A change of any prompt changes it; the run's own ``inputs_sha1`` (every distinct
    input as text and its token length) pins what the run actually fed the model.
    """
    from consistency_bench.bench.prompting import prompts
    from consistency_bench.bench.prompting.row_inputs import T5_PROMPTS, WIC_FORMATS

    table = {
        "causal": sorted([family or "", task, spec.template, list(spec.choices)]
                         for (family, task), spec in prompts.PROMPTS.items()),
        "calm_input": prompts.CALM_INPUT,
        "delimiters": [prompts.FEWSHOT_DELIMITER, prompts.TARGET_DELIMITER],
        "t5": sorted([task, *value] for task, value in T5_PROMPTS.items()),
        "wic_formats": list(WIC_FORMATS),
    }
    text = json.dumps(table, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _settings(request, prepared, weights_dtype: str | None) -> dict:
    """What changes the numbers, from the request and the prepared run (resolved values)."""
    resolved = prepared.settings
    return {
        "dtype": request.dtype,  # as asked; None: the checkpoint's
        "weights_dtype": weights_dtype,
        "amp": request.amp,
        "max_length": resolved["max_length"],  # resolved: --max-length, else the default
        "max_length_asked": request.max_length,
        "wic_format": request.wic_format,
        "label_map": resolved["label_map"],
        "length_norm": request.length_norm,
        "chat": request.chat,
        "num_fewshot": request.num_fewshot,
        "fewshot_seed": request.fewshot_seed,
        "fewshot_pools": resolved["fewshot_pools"],
        "max_new_tokens": resolved["max_new_tokens"],
        "prompts_sha256": prompts_sha256(),
        "inputs_sha1": resolved["inputs_sha1"],
        "config_sha1": resolved["config_sha1"],
    }


def predict_record(request, info, loaded, prepared, *, predictions: str | os.PathLike,
                   shard=None, procs=None, seconds: float | None = None) -> dict:
    """The run record of one ``predict`` run (or of one ``--shard`` part).

    Args:
        request: The :class:`consistency_bench.bench.runner.predict_run.PredictRequest`.
        info: The inspected model (config and tokenizer).
        loaded: The loaded model (weights dtype, device).
        prepared: The prepared run (resolved settings, suites with their sha256).
        predictions: The file written (its sha256 and rows are recorded).
        shard: The part run (``--shard i/N``), or None.
        procs: The launched processes, or None for one.
        seconds: Wall time of the run.

    """
    from consistency_bench.bench.runner.forward import weights_dtype
    from consistency_bench.bench.runrecord.environment import device_info, package_versions
    from consistency_bench.bench.runrecord.identity import identify
    from consistency_bench.bench.runrecord.schema import new_record

    dtype = weights_dtype(loaded)
    model = identify(request.model, info.config, getattr(request, "revision", None))
    model["config_sha1"] = prepared.settings["config_sha1"]
    rows = sum(len(s.ids) for s in prepared.collected.suites)
    record = new_record(
        mode=MODE_OF_KIND[info.kind], model=model, settings=_settings(request, prepared, dtype),
        suites=[{"name": name, "sha256": sha, "rows": n}
                for name, sha, n in prepared.settings["suites"]],
        predictions=predictions,
        rows=rows if shard is None or shard.count == 1 else _part_rows(predictions),
        device=device_info(loaded.device, dtype, request.amp, request.device_map),
        packages=package_versions(),
        run={"shard": [shard.index, shard.count] if shard is not None else None,
             "processes": procs.world if procs is not None else 1,
             "batch_size": request.batch_size,
             "seconds": None if seconds is None else round(seconds, 1)},
    )
    record["predictions"]["sampled"] = getattr(request, "rows", None) is not None
    return record


def _part_rows(path: str | os.PathLike) -> int:
    """Rows of a ``--shard`` part file: its lines after the header."""
    with open(path, "rb") as handle:
        return max(0, sum(1 for _ in handle) - 1)
