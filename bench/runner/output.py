"""The output of a run: one record per suite row, as a prediction file or a ``--shard`` part."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from consistency_bench.bench.errors import BenchError
from consistency_bench.bench.io.write import atomic_path
from consistency_bench.bench.modeling.label_map import map_probs, match_generated
from consistency_bench.bench.runner.distributed import Shard
from consistency_bench.bench.runner.options import RunnerOptions
from consistency_bench.bench.runner.prepare import Prepared
from consistency_bench.bench.runner.shards import PART_FORMAT, PART_VERSION
from consistency_bench.bench.runner.unique_inputs import CollectedInputs


def _records(collected: CollectedInputs, keys: Sequence[str], done: dict[str, object],
             mappings: dict, seq2seq: bool, options: RunnerOptions, causal: bool,
             wanted: set[int] | None = None):
    """``(row position, record)`` of every row (or of the rows whose input is ``wanted``)."""
    from consistency_bench.bench.runner.causal import choice_probs

    pos = -1
    for suite in collected.suites:
        for row_id, i in zip(suite.ids, suite.inputs, strict=True):
            pos += 1
            if wanted is not None and i not in wanted:
                continue
            value = done[keys[i]]
            if seq2seq:
                yield pos, {"id": row_id, "label": match_generated(value, suite.task_spec,
                                                                     options.label_map)}
                continue
            if causal:
                lls, ntokens = value
                probs = choice_probs(lls, ntokens, suite.choices, options.length_norm)
            else:
                probs = map_probs(value, mappings[suite.task])
            label = max(range(len(probs)), key=probs.__getitem__)
            yield pos, {"id": row_id, "label": label, "probs": [round(p, 6) for p in probs]}


def write_predictions(
    out: Path,
    collected: CollectedInputs,
    keys: Sequence[str],
    done: dict[str, object],
    mappings: dict,
    seq2seq: bool,
    options: RunnerOptions,
    *,
    causal: bool = False,
) -> None:
    """Write one JSONL record per suite row (``id``, ``label``, ``probs``), atomically."""
    missing = sum(1 for k in keys if k not in done)
    if missing:
        raise BenchError(f"{missing} inputs have no result; rerun to resume")
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for _, record in _records(collected, keys, done, mappings, seq2seq, options, causal):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_part(out: Path, prepared: Prepared, done: dict[str, object], options: RunnerOptions,
               shard: Shard, wanted: set[int], device_type: str = "cpu",
               dtype: str | None = None) -> None:
    """Write the part file of ``shard``: a header line, then ``[row position, record]`` lines.

    The header carries the shard, the total row count and the run's settings (model, config
    hash, options, the few-shot seed and the sha256 of the pools drawn from, suites with their
    sha256, the weights' dtype, and the device type, which sets the automatic batch plan),
    which :func:`merge_parts` compares.
    """
    keys = prepared.keys
    missing = sum(1 for i in wanted if keys[i] not in done)
    if missing:
        raise BenchError(f"{missing} inputs have no result; rerun to resume")
    header = {"format": PART_FORMAT, "version": PART_VERSION, "shard": [shard.index, shard.count],
              "rows": prepared.collected.rows,
              "run": {**prepared.settings, "batch_plan_device": device_type, "dtype": dtype}}
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(header, ensure_ascii=False, sort_keys=True) + "\n")
        for pos, record in _records(prepared.collected, keys, done, prepared.mappings,
                                    prepared.seq2seq, options, prepared.causal, wanted):
            handle.write(json.dumps([pos, record], ensure_ascii=False) + "\n")
