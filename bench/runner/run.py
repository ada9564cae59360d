"""A prediction run end to end: :func:`prepare`, then :func:`execute` over planned batches."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from consistency_bench.bench.modeling.info import LoadedModel
from consistency_bench.bench.runner.batching import plan_batches, run_planned
from consistency_bench.bench.runner.distributed import Processes, Shard
from consistency_bench.bench.runner.forward import make_forward, weights_dtype
from consistency_bench.bench.runner.options import (
    AUTO_MAX_ROWS,
    AUTO_TOKENS,
    RunnerOptions,
    RunStats,
)
from consistency_bench.bench.runner.output import write_part, write_predictions
from consistency_bench.bench.runner.prepare import Prepared, prepare
from consistency_bench.bench.runner.shards import PARTS_SUFFIX, ShardStore


def predict(
    loaded: LoadedModel,
    model_name: str,
    data_dir: str | os.PathLike,
    suites: Sequence[str],
    out: str | os.PathLike,
    options: RunnerOptions | None = None,
    *,
    forward_factory=make_forward,
    shard: Shard | None = None,
    procs: Processes | None = None,
) -> RunStats:
    """Predict every row of ``suites`` and write the prediction file ``out``.

    :func:`prepare` then :func:`execute`.

    Args:
        loaded: The model (``consistency_bench.bench.modeling.loading.load_classifier``).
        model_name: Its name or path (recorded in the resume fingerprint).
        data_dir: Built suite folder.
        suites: Suite names to predict.
        out: Prediction file (JSONL), or the part file with ``shard``.
        options: Runner settings.
        forward_factory: Builds the batch function (tests swap in fakes).
        shard: Run only part ``shard`` of the batches and write a part file.
        procs: The launched processes this one belongs to
        (``consistency_bench.bench.runner.distributed``).

    Returns:
        Counts and timing of the run.

    Raises:
        ConfigError: A suite's task labels cannot be mapped to the model's labels.
        OutOfMemory: One input alone does not fit on the device.

    """
    options = options or RunnerOptions()
    start = time.perf_counter()
    prepared = prepare(loaded, model_name, data_dir, suites, options)
    return execute(prepared, loaded, out, options, forward_factory=forward_factory,
                   shard=shard, procs=procs, start=start)


# One piece (over 60 lines): plan, resume, run and write, the stages of one run in order.
def execute(
    prepared: Prepared,
    loaded: LoadedModel,
    out: str | os.PathLike,
    options: RunnerOptions,
    *,
    forward_factory=make_forward,
    shard: Shard | None = None,
    procs: Processes | None = None,
    start: float | None = None,
) -> RunStats:
    """Run the model over the prepared inputs and write ``out`` (see :func:`predict`).

    The batches are planned over every distinct input; shard ``i/N`` takes batches
    ``i, i+N, ...`` and launched process ``r`` of ``W`` every ``W``-th of those. A batch
    whose inputs are all in the resume files is skipped; any other is computed whole, so a
    batch's inputs always share one forward pass and the output does not depend on how the
    run was split or resumed.
    """
    from consistency_bench.bench.runner import distributed

    start = time.perf_counter() if start is None else start
    keys, lengths = prepared.keys, prepared.lengths
    device_type = loaded.device.type if hasattr(loaded, "device") else "cpu"
    batches = _plan(prepared, options, device_type)
    shard = shard or Shard()
    share = batches[shard.index::shard.count]
    mine = share[procs.rank::procs.world] if procs else share
    out = Path(out)
    parts = out.with_name(out.name + PARTS_SUFFIX)
    rank = procs.rank if procs else 0
    # the weights' dtype and autocast change the numbers: a resume must not mix them
    fingerprint = {**prepared.fingerprint, "dtype": weights_dtype(loaded), "amp": options.amp}
    store = ShardStore(parts, fingerprint, rank)
    done_keys = set(store.done)
    if procs is not None:  # ranks on other disks may hold other finished results
        done_keys = set().union(*distributed.all_gather(done_keys))
    todo = [b for b in mine if not all(keys[i] in done_keys for i in b)]
    computed = sum(len(b) for b in todo)
    resumed = sum(len(b) for b in mine) - computed
    forward = forward_factory(loaded, prepared.encoded, options)
    uses = _row_uses(prepared)  # suite rows per distinct input: the bar counts rows
    bar = _progress_bar(sum(uses[i] for b in todo for i in b), options.progress and rank == 0)
    pending = [0]

    def emit(batch: list[int], results: list) -> None:
        for i, value in zip(batch, results, strict=True):
            store.add(keys[i], value)
        bar.update(sum(uses[i] for i in batch))
        pending[0] += len(batch)
        if pending[0] >= options.chunk_size:
            store.flush()
            pending[0] = 0

    try:
        retries = run_planned(todo, lengths, forward, emit, on_oom=_empty_cuda_cache)
    finally:
        store.flush()  # keep what is done for a restart, also on errors and Ctrl-C
        bar.close()
    _write_output(out, prepared, store, options, shard, share, procs, device_type,
                  weights_dtype(loaded))
    shutil.rmtree(parts, ignore_errors=procs is not None)
    return RunStats(prepared.collected.rows, len(keys), resumed, computed,
                    time.perf_counter() - start, retries, len(prepared.collected.suites))


def _plan(prepared: Prepared, options: RunnerOptions, device_type: str) -> list[list[int]]:
    """The batches over every distinct input, sized for ``device_type``."""
    return plan_batches(
        prepared.order(), prepared.lengths, batch_size=options.batch_size,
        token_budget=AUTO_TOKENS.get(device_type, AUTO_TOKENS["cpu"]),
        max_rows=AUTO_MAX_ROWS.get(device_type, AUTO_MAX_ROWS["cpu"]),
    )


def _row_uses(prepared: Prepared) -> list[int]:
    """Per distinct input, the number of suite rows that use it."""
    uses = [0] * len(prepared.keys)
    for suite_inputs in prepared.collected.suites:
        for i in suite_inputs.inputs:
            uses[i] += 1
    return uses


def _empty_cuda_cache() -> None:
    """Free the CUDA cache after an out-of-memory error (before the batch is split)."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _write_output(out: Path, prepared: Prepared, store: ShardStore, options: RunnerOptions,
                  shard: Shard, share: list[list[int]], procs: Processes | None,
                  device_type: str, dtype) -> None:
    """Write the prediction file (or this shard's part) from the results of every rank.

    Args:
        out: The prediction file.
        prepared: The prepared inputs.
        store: This rank's results (and resume files).
        options: The runner's options.
        shard: The shard this run computes.
        share: The shard's batches.
        procs: The launched processes, or ``None`` for one process.
        device_type: The device's type, recorded in a part.
        dtype: The weights' dtype, recorded in a part.

    """
    from consistency_bench.bench.runner import distributed

    done = store.done
    if procs is not None:
        gathered = distributed.gather(done)
        if procs.is_main:
            done = {}
            for part in gathered:
                done.update(part)
    if procs is None or procs.is_main:
        if shard.count > 1:
            wanted = {i for b in share for i in b}
            write_part(out, prepared, done, options, shard, wanted, device_type, dtype)
        else:
            write_predictions(out, prepared.collected, prepared.keys, done, prepared.mappings,
                              prepared.seq2seq, options, causal=prepared.causal)
    if procs is not None:
        distributed.barrier()  # the output is written: every rank drops its resume files
        store.remove_own()
        distributed.barrier()


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="row", desc="predict", dynamic_ncols=True, smoothing=0.1)
