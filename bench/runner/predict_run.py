"""One ``predict`` run: check every option, choose the suites, load the model, predict.

What ``consistency-bench predict`` does (docs/runner.md). Every check that needs no weights
(options, suites, prompts, few-shot pools, lengths, label mapping) runs before the weights
load, so a refused run costs seconds and leaves nothing behind. Under torchrun / accelerate
each process runs this; rank 0 lists the skipped suites and writes the file
(:mod:`consistency_bench.bench.runner.distributed`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from consistency_bench.bench.modeling.label_map import LabelOverrides
    from consistency_bench.bench.runner.distributed import Shard
    from consistency_bench.bench.runner.options import RunStats


def parse_batch_size(text: str) -> int | None:
    """``auto`` -> None, else a positive int."""
    from consistency_bench.bench.errors import ConfigError

    if text == "auto":
        return None
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"--batch-size {text!r}: use auto or a positive integer")
    return int(text)


def default_suites(data_dir, loaded, label_map, tasks=None) -> list[str]:
    """Built suites the model can answer; the others are listed on stderr as skipped.

    Classifiers: suites whose task labels map to the model's labels. Text-to-text models:
    tasks with a T5 prompt. Causal LMs: every suite but the ``*_t2t`` ones, which carry T5
    task prefixes (name them in ``--suites`` to run them anyway).
    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.bench.modeling.label_map import resolve_label_mapping
    from consistency_bench.bench.prompting.row_inputs import T5_PROMPTS
    from consistency_bench.bench.runner.unique_inputs import suite_task

    chosen, skipped, t2t = [], [], []
    for suite, entry in read_manifest(data_dir).items():
        task = entry["task"]
        if tasks and task not in tasks:
            continue
        if getattr(loaded, "is_causal", False):
            if suite.endswith(T2T_SUFFIX):
                t2t.append(suite)
                continue
            ok = True
        elif loaded.is_seq2seq:
            ok = task in T5_PROMPTS
        else:
            try:
                resolve_label_mapping(loaded.id2label, suite_task(entry), label_map)
                ok = True
            except ConfigError:
                ok = False
        (chosen if ok else skipped).append(suite)
    if skipped:
        print(f"skipping {len(skipped)} suites whose labels the model does not cover: "
              f"{', '.join(skipped)}", file=sys.stderr)
    if t2t:
        print(f"skipping {len(t2t)} text-to-text suites (T5 task prefixes; name them in "
              f"--suites to run them): {', '.join(t2t)}", file=sys.stderr)
    if not chosen:
        what = "text-to-text prompts" if loaded.is_seq2seq else f"labels {loaded.id2label}"
        if getattr(loaded, "is_causal", False):
            what = "prompts"
        raise ConfigError(
            f"the model's {what} cover no built suite in {data_dir}"
            + (f" of tasks {', '.join(tasks)}" if tasks else "")
            + "; pass --suites and --label-map"
        )
    return chosen


#: Suites built for text-to-text models (T5 task prefixes in the text).
T2T_SUFFIX = "_t2t"


def quiet_progress() -> None:
    """Silence transformers' and huggingface_hub's progress bars (``--no-progress``)."""
    import transformers

    transformers.utils.logging.disable_progress_bar()
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:  # pragma: no cover - every supported huggingface_hub has it
        return
    disable_progress_bars()


@dataclass(frozen=True)
class PredictRequest:
    """The options of one run (the ``predict`` flags of the same names).

    Attributes:
        model: Hub model id or local model folder.
        data: Built suite folder.
        out: Prediction file (JSONL) to write.
        suites: Suites to predict (None: every built suite the model covers).
        tasks: With no ``suites``: only the built suites of these tasks.
        batch_size: ``auto`` or a positive integer, as text.
        device: cpu, cuda, cuda:1 (None: auto).
        dtype: Weight dtype (None: the checkpoint's).
        label_map: ``task:label=model_label,...`` or a JSON file.
        wic_format: ``word-prefix`` or ``pair``.
        max_length: Truncation in tokens (None: the default).
        length_norm: Causal LMs: ``chars`` or ``tokens`` (None: none).
        chat: Causal LMs: apply the chat template.
        num_fewshot: Causal LMs: demonstrations per prompt.
        fewshot_seed: Seed of the few-shot draws.
        shard: ``I/N``: run part I of N.
        device_map: ``auto``: spread the model over the devices.
        max_memory: With ``device_map``: ``DEV=SIZE,...``.
        amp: Autocast on CUDA.
        progress: Progress bars.
        revision: Hub revision (branch, tag or commit) of ``model``.
        rows: Only these row ids per suite (``reproduce``'s sample); None: every row.
        record: Write the run record ``<out>.run.json`` (consistency_bench.bench.runrecord).

    """

    model: str
    out: str
    data: str | os.PathLike = "consistency-bench"
    suites: list[str] | None = None
    tasks: list[str] | None = None
    batch_size: str = "auto"
    device: str | None = None
    dtype: str | None = None
    label_map: str | LabelOverrides | None = None
    wic_format: str = "word-prefix"
    max_length: int | None = None
    length_norm: str | None = None
    chat: bool = False
    num_fewshot: int = 0
    fewshot_seed: int = 0
    shard: str | None = None
    device_map: str | None = None
    max_memory: str | None = None
    amp: bool = True
    progress: bool = True
    revision: str | None = None
    rows: Mapping[str, frozenset[str]] | None = None
    record: bool = True


@dataclass(frozen=True)
class PredictOutcome:
    """What a run did: the runner's statistics, the part run, the processes, whether main.

    Attributes:
        stats: The runner's counts (rows, suites, unique, resumed, computed, seconds,
            rows_per_second).
        shard: The part ``I/N`` run, or None.
        world: Number of processes (torchrun / accelerate), or None for one.
        main: Whether this process is rank 0 (the one that reports).

    """

    stats: RunStats
    shard: Shard | None
    world: int | None
    main: bool


# One piece (over 60 lines): every check before the model loads, then load, run, record.
def predict(request: PredictRequest) -> PredictOutcome:
    """Check everything, load the model, predict, write ``request.out`` and its run record.

    Raises:
        ConfigError: A bad option, suite, label mapping or device, before the weights load.

    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.bench.modeling.devices import parse_max_memory, resolve_device
    from consistency_bench.bench.modeling.loading import inspect_model, load_model
    from consistency_bench.bench.runner import distributed
    from consistency_bench.bench.runner.options import max_length_of
    from consistency_bench.bench.runner.prepare import prepare, truncation_warning
    from consistency_bench.bench.runner.run import execute

    start = time.perf_counter()
    options = _options(request)
    shard = distributed.parse_shard(request.shard)
    max_memory = parse_max_memory(request.max_memory)
    if max_memory and request.device_map is None:
        raise ConfigError("--max-memory applies with --device-map auto only")
    if request.device_map is not None and request.device not in (None, "auto"):
        raise ConfigError(f"--device {request.device} with --device-map {request.device_map}: "
                          "the device map places the model; drop --device (or use --max-memory)")
    procs = distributed.from_env()
    device = distributed.process_device(request.device, procs, request.device_map)
    if request.device_map is None:
        resolve_device(device)  # --device tpu, or cuda without CUDA, before anything is read
    read_manifest(request.data)  # a bad --data or --out fails before the model loads
    _check_outputs(request)
    if not request.progress:
        quiet_progress()
    info = inspect_model(request.model, revision=request.revision)
    if not info.is_causal and (request.chat or request.num_fewshot or request.length_norm):
        raise ConfigError("--chat, --num-fewshot and --length-norm apply to causal LMs only; "
                          f"{request.model} is not one")
    main = procs is None or procs.is_main
    if request.suites:
        suites = request.suites
    elif main:
        suites = default_suites(request.data, info, options.label_map, request.tasks)
    else:
        with contextlib.redirect_stderr(io.StringIO()):  # rank 0 lists the skipped suites
            suites = default_suites(request.data, info, options.label_map, request.tasks)
    prepared = prepare(info, request.model, request.data, suites, options)
    warning = truncation_warning(prepared, max_length_of(info, options))
    if warning and main:
        print(warning, file=sys.stderr)
    if procs is not None:
        distributed.init(procs)
    try:
        loaded = load_model(info, device=device, dtype=request.dtype,
                            device_map=request.device_map, max_memory=max_memory)
        stats = execute(prepared, loaded, request.out, options, shard=shard, procs=procs,
                        start=start)
        if main and request.record:
            _write_record(request, info, loaded, prepared, shard, procs, stats)
    finally:
        if procs is not None:
            distributed.finish()
    return PredictOutcome(stats, shard, procs.world if procs is not None else None, main)


def _options(request: PredictRequest):
    """The runner's settings from the request (``--label-map`` parsed unless already)."""
    from consistency_bench.bench.modeling.label_map import parse_label_map
    from consistency_bench.bench.runner.options import RunnerOptions

    label_map = (request.label_map if isinstance(request.label_map, dict)
                 else parse_label_map(request.label_map))
    return RunnerOptions(
        batch_size=parse_batch_size(request.batch_size), max_length=request.max_length,
        wic_format=request.wic_format, label_map=label_map, progress=request.progress,
        amp=request.amp, length_norm=request.length_norm, chat=request.chat,
        num_fewshot=request.num_fewshot, seed=request.fewshot_seed, rows=request.rows,
    )


def _check_outputs(request: PredictRequest) -> None:
    """Refuse an ``--out`` (or its run record's path) that could lose data, before any work."""
    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.runrecord.schema import record_path

    # a local model folder and a --label-map file are inputs: never written over (the API
    # may pass the label map as a mapping, which names no file)
    label_file = request.label_map if isinstance(request.label_map, str) else None
    inputs = (request.model, label_file)
    check_output_file(request.out, inputs=inputs)
    if request.record:
        check_output_file(record_path(request.out), inputs=inputs, flag="run record")


def _write_record(request: PredictRequest, info, loaded, prepared, shard, procs,
                  stats: RunStats) -> None:
    """Write ``<out>.run.json``, the run record of the file just written (consistency_bench.bench.runrecord)."""  # noqa: E501
    from consistency_bench.bench.runrecord.predict_record import predict_record
    from consistency_bench.bench.runrecord.schema import record_path, write_record

    record = predict_record(request, info, loaded, prepared, predictions=request.out,
                            shard=shard, procs=procs, seconds=stats.seconds)
    write_record(record_path(request.out), record)
