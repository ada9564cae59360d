"""Run a Hugging Face model over built suites and write a prediction file, fast and resumably.

Pipeline (docs/runner.md):

1. Read the suites' Parquet files; turn every row into its model input (``bench.inputs``).
2. Deduplicate: rows with the same model input, in any suite, are run once (BECEL suites reuse
   the same original rows many times).
3. Tokenise once, sort by length (longest first) and batch with dynamic padding: a batch is
   padded to its own longest input, and with ``--batch-size auto`` holds as many inputs as fit
   a token budget.
4. Forward under ``torch.inference_mode``; on CUDA under bf16 (fp16 where bf16 is missing)
   autocast with SDPA attention. An out-of-memory error halves the batch and retries it.
5. Results are appended in shard files under ``<out>.parts/``; a restarted run reads them and
   skips done inputs. At the end the per-row records (``id``, ``label``, ``probs``) are written
   to ``<out>`` atomically and the shards removed.

Several GPUs: launch with ``accelerate launch -m bench.cli predict ...``; each process takes
an interleaved share of the batches on its own device (accelerate ``PartialState``), writes
its own shards, and the main process merges after a barrier.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.atomic import atomic_path, write_text
from bench.errors import BenchError, ConfigError, DataError
from bench.inputs import WIC_FORMATS, model_input
from bench.modeling import (
    LabelOverrides,
    LoadedModel,
    map_probs,
    match_generated,
    resolve_label_mapping,
)
from bench.tasks import TASKS, TaskSpec

PARTS_SUFFIX = ".parts"
RUN_FILE = "run.json"
#: Token budget per batch for ``--batch-size auto`` and the row cap, per device type.
AUTO_TOKENS = {"cuda": 262_144, "cpu": 8_192}
AUTO_MAX_ROWS = {"cuda": 2_048, "cpu": 64}


class OutOfMemory(BenchError):
    """A batch of one input still does not fit in memory."""


@dataclass(frozen=True)
class RunnerOptions:
    """Settings of one prediction run.

    Attributes:
        batch_size: Inputs per batch, or None for automatic (token budget, OOM fallback).
        max_length: Truncation length in tokens; None: 512 for classifiers and text-to-text
            models, the model's own context length for causal LMs (as lm-eval).
        wic_format: How WiC rows become inputs (``bench.inputs.WIC_FORMATS``).
        label_map: Parsed ``--label-map`` overrides.
        chunk_size: Finished inputs per shard file (the resume granularity).
        max_new_tokens: Generation length of text-to-text models.
        progress: Show a progress bar.
        amp: Use autocast on CUDA.
        length_norm: Causal LMs: divide each choice's log-likelihood by its length
            (``"chars"`` as lm-eval's ``acc_norm``, or ``"tokens"``); None for raw sums.
        chat: Causal LMs: wrap the prompt in the tokenizer's chat template.
        num_fewshot: Causal LMs: demonstrations from the suite's few-shot pool.
        seed: Seed that orders each few-shot pool (``bench.fewshot.seed_order``).

    """

    batch_size: int | None = None
    max_length: int | None = None
    wic_format: str = "word-prefix"
    label_map: LabelOverrides = field(default_factory=dict)
    chunk_size: int = 4_096
    max_new_tokens: int = 8
    progress: bool = True
    amp: bool = True
    length_norm: str | None = None
    chat: bool = False
    num_fewshot: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_length is not None and self.max_length < 1:
            raise ConfigError(f"--max-length {self.max_length}: use a positive number of tokens")
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"--batch-size {self.batch_size}: use auto or a positive integer")
        if self.num_fewshot < 0:
            raise ConfigError(f"--num-fewshot {self.num_fewshot}: use 0 or more")
        if self.length_norm not in (None, "chars", "tokens"):
            raise ConfigError(f"--length-norm {self.length_norm!r}: use chars or tokens")


@dataclass
class SuiteInputs:
    """The rows of one suite and the unique input each row uses.

    ``choices`` are the verbalisers of a causal LM (empty for other models).
    """

    suite: str
    task: str
    ids: list[str]
    inputs: list[int]
    task_spec: TaskSpec | None = None
    choices: tuple[str, ...] = ()


@dataclass
class CollectedInputs:
    """All unique model inputs of a run and the suites that use them."""

    unique: list[tuple[str, str | None]]
    suites: list[SuiteInputs]

    @property
    def rows(self) -> int:
        """Total suite rows."""
        return sum(len(s.ids) for s in self.suites)


@dataclass
class RunStats:
    """What a run did, for the summary line and the benchmark."""

    rows: int
    unique: int
    resumed: int
    computed: int
    seconds: float
    oom_retries: int = 0
    suites: int = 0  # suites written (``--num-fewshot`` skips suites without a pool)

    @property
    def rows_per_second(self) -> float:
        """Suite rows per second of wall time (dedup included)."""
        return self.rows / self.seconds if self.seconds > 0 else float("inf")


def input_key(text: str, text_pair: str | None) -> str:
    """Stable key of a model input (used by shard files)."""
    payload = json.dumps([text, text_pair], ensure_ascii=False)
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()


def suite_task(entry: dict) -> TaskSpec:
    """The task of a built suite: the registered one, or one made from ``suites.json``.

    Suites made by ``generate`` (and tasks whose family module is not imported) have their
    label names in the manifest; those are the truth for the folder.
    """
    names = tuple(entry["label_names"])
    task = TASKS.get(entry["task"])
    if task is not None and task.label_names == names:
        return task
    return TaskSpec(entry["task"], names, text="text", text_pair="text_pair")


def _read_suites(data_dir, suites: Sequence[str]):
    """``(suite, manifest entry, rows)`` of each suite, with clean errors."""
    import pyarrow.parquet as pq

    from bench.manifest import parquet_path, read_manifest

    root = Path(data_dir)
    manifest = read_manifest(root)
    for suite in suites:
        if suite not in manifest:
            raise DataError(
                f"suite {suite!r} is not in {root / 'suites.json'} (built: "
                f"{', '.join(sorted(manifest))})"
            )
        path = parquet_path(root, suite)
        if not path.is_file():
            raise DataError(f"{path} is missing; rebuild the folder")
        yield suite, manifest[suite], pq.read_table(path).to_pylist()


def collect_inputs(
    data_dir: str | os.PathLike, suites: Sequence[str], *, seq2seq: bool, wic_format: str
) -> CollectedInputs:
    """Read the suites from a built folder and deduplicate their model inputs.

    Raises:
        DataError: A suite is not in the folder's manifest or its Parquet file is missing.

    """
    if wic_format not in WIC_FORMATS:
        raise ConfigError(f"unknown --wic-format {wic_format!r}; use {', '.join(WIC_FORMATS)}")
    index: dict[tuple[str, str | None], int] = {}
    unique: list[tuple[str, str | None]] = []
    out: list[SuiteInputs] = []
    for suite, entry, rows in _read_suites(data_dir, suites):
        task = entry["task"]
        ids, used = [], []
        for row in rows:
            key = model_input(row, task, seq2seq=seq2seq, wic_format=wic_format)
            if key not in index:
                index[key] = len(unique)
                unique.append(key)
            ids.append(row["id"])
            used.append(index[key])
        out.append(SuiteInputs(suite, task, ids, used, suite_task(entry)))
    return CollectedInputs(unique, out)


def collect_causal_inputs(
    data_dir: str | os.PathLike, suites: Sequence[str], options: RunnerOptions, tokenizer=None
) -> CollectedInputs:
    """Causal-LM inputs: ``(context, verbalisers joined by U+001F)``, deduplicated.

    The prompt and verbalisers come from ``bench.prompts`` (``--label-map`` replaces
    verbalisers); ``--num-fewshot K`` prepends the first K demonstrations of the suite's
    few-shot pool in the seed's order (``bench.fewshot``; the same for every row, as lm-eval's
    ``first_n`` sampler over the exported pool); a suite without a pool is skipped with a
    message; ``--chat`` renders the turns with ``tokenizer``'s chat template.

    Raises:
        ConfigError: No chat template with ``chat``; no suite asked for has a pool.
        DataError: The folder has no pools, a pool file is corrupt or too small.

    """
    from bench.causal import CHOICE_SEP
    from bench.fewshot import demonstrations, load_pool, no_pool_reason, read_pools, suite_pool
    from bench.prompts import TARGET_DELIMITER, build_context, lookup, render, with_verbalisers

    chat = None
    if options.chat:
        if tokenizer is None or not getattr(tokenizer, "chat_template", None):
            raise ConfigError("--chat: the model's tokenizer has no chat template")
        chat = tokenizer
    delimiter = "" if chat is not None else TARGET_DELIMITER
    pools = read_pools(data_dir) if options.num_fewshot else {}
    if options.num_fewshot and not pools:
        raise DataError(f"--num-fewshot {options.num_fewshot}: {data_dir} has no few-shot pools "
                        "(suites.json has no 'fewshot' entry: built before pools existed, "
                        "rebuild it; suites made by generate have none, run them with "
                        "--num-fewshot 0)")
    loaded_pools: dict[str, list[dict]] = {}
    skipped: dict[str, str] = {}
    index: dict[tuple[str, str | None], int] = {}
    unique: list[tuple[str, str | None]] = []
    out: list[SuiteInputs] = []
    for suite, entry, rows in _read_suites(data_dir, suites):
        task = suite_task(entry)
        is_pair = any(r.get("text_pair") is not None for r in rows[:50])
        spec = lookup(entry.get("family"), task.name, task.label_names, is_pair)
        spec = with_verbalisers(spec, task.name, task.label_names,
                                options.label_map.get(task.name))
        if not is_pair and "text_pair" in spec.template:
            raise ConfigError(f"prompt of suite {suite} uses text_pair, which its rows do not "
                              "have; add a family entry in bench/prompts.py")
        demos: list[tuple[str, str]] = []
        if options.num_fewshot:
            name = suite_pool(pools, entry)
            if name is None:
                skipped[suite] = no_pool_reason(entry)
                continue
            if name not in loaded_pools:
                loaded_pools[name] = load_pool(data_dir, name, pools[name])
            chosen = demonstrations(loaded_pools[name], options.num_fewshot, options.seed,
                                    f"few-shot pool {name} (suite {suite})")
            demos = [(render(spec.template, d), spec.choices[int(d["label"])]) for d in chosen]
        conts = CHOICE_SEP.join(delimiter + c for c in spec.choices)
        ids, used = [], []
        for row in rows:
            key = (build_context(render(spec.template, row), demos, chat_template=chat), conts)
            if key not in index:
                index[key] = len(unique)
                unique.append(key)
            ids.append(row["id"])
            used.append(index[key])
        out.append(SuiteInputs(suite, task.name, ids, used, task, spec.choices))
    for suite, reason in skipped.items():
        print(f"skipping suite {suite} with --num-fewshot {options.num_fewshot}: {reason}; "
              "run it with --num-fewshot 0", file=sys.stderr)
    if not out:
        raise ConfigError(f"--num-fewshot {options.num_fewshot}: no suite asked for has a "
                          f"few-shot pool ({', '.join(skipped)})")
    return CollectedInputs(unique, out)


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is a (CUDA) out-of-memory error."""
    import torch

    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def plan_rows(length: int, budget: int, max_rows: int) -> int:
    """Inputs in the next batch under a token budget (at least one)."""
    return max(1, min(max_rows, budget // max(1, length)))


def run_batches(
    order: Sequence[int],
    lengths: Sequence[int],
    forward: Callable[[list[int]], list],
    emit: Callable[[list[int], list], None],
    *,
    batch_size: int | None,
    token_budget: int,
    max_rows: int,
    on_oom: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda n: None,
) -> int:
    """Run ``forward`` over ``order`` in batches, halving the batch on out-of-memory.

    Args:
        order: Input indices, longest first.
        lengths: Token length of every input (indexed by input index).
        forward: Batch of input indices -> one result per input.
        emit: Receives each finished batch and its results.
        batch_size: Fixed inputs per batch, or None to fill ``token_budget``.
        token_budget: Padded tokens per batch in automatic mode.
        max_rows: Cap on inputs per batch in automatic mode.
        on_oom: Called after an out-of-memory error (e.g. to empty the CUDA cache).
        progress: Called with the number of inputs finished by each batch.

    Returns:
        The number of out-of-memory retries.

    Raises:
        OutOfMemory: A single input does not fit.

    """
    retries, pos = 0, 0
    while pos < len(order):
        if batch_size is not None:
            rows = batch_size
        else:
            rows = plan_rows(lengths[order[pos]], token_budget, max_rows)
        batch = list(order[pos : pos + rows])
        try:
            results = forward(batch)
        except Exception as exc:  # noqa: BLE001 - only OOM is handled, the rest re-raised
            if not is_oom(exc):
                raise
            on_oom()
            retries += 1
            if len(batch) == 1:
                raise OutOfMemory(
                    f"out of memory on a single input of {lengths[batch[0]]} tokens; "
                    "lower --max-length or use a larger device"
                ) from exc
            half = max(1, len(batch) // 2)
            if batch_size is not None:
                batch_size = half
            else:
                token_budget = max(1, half * max(1, lengths[order[pos]]))
                max_rows = min(max_rows, half)
            print(f"out of memory on a batch of {len(batch)}; retrying with {half}",
                  file=sys.stderr)
            continue
        emit(batch, results)
        progress(len(batch))
        pos += len(batch)
    return retries


class ShardStore:
    """Finished results on disk: ``<out>.parts/shard-<rank>-<n>.jsonl``, written atomically."""

    def __init__(self, parts: Path, fingerprint: dict, rank: int = 0, *, create: bool = True):
        self.parts, self.rank = parts, rank
        run_file = parts / RUN_FILE
        if run_file.is_file():
            old = json.loads(run_file.read_text(encoding="utf-8"))
            if old != fingerprint:
                raise ConfigError(
                    f"{parts} holds partial results of a different run ({old}); delete it or "
                    "use the same model and options to resume"
                )
        elif create:
            parts.mkdir(parents=True, exist_ok=True)
            write_text(run_file, json.dumps(fingerprint, sort_keys=True))
        self.done: dict[str, object] = {}
        for shard in sorted(parts.glob("shard-*.jsonl")) if parts.is_dir() else []:
            for line in shard.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                self.done[record["k"]] = record["v"]
        self._next = len(list(parts.glob(f"shard-{rank}-*.jsonl"))) if parts.is_dir() else 0
        self._buffer: list[tuple[str, object]] = []

    def add(self, key: str, value: object) -> None:
        """Buffer one finished result."""
        self._buffer.append((key, value))
        self.done[key] = value

    def flush(self) -> None:
        """Write buffered results as a new shard file."""
        if not self._buffer:
            return
        lines = [json.dumps({"k": k, "v": v}, ensure_ascii=False) for k, v in self._buffer]
        target = self.parts / f"shard-{self.rank}-{self._next:06d}.jsonl"
        write_text(target, "\n".join(lines) + "\n")
        self._next += 1
        self._buffer = []


def _fingerprint(model_name: str, loaded: LoadedModel, options: RunnerOptions) -> dict:
    config = getattr(loaded.model, "config", None)
    config_text = config.to_json_string() if config is not None else ""
    return {
        "model": str(model_name),
        "config_sha1": hashlib.sha1(config_text.encode("utf-8")).hexdigest(),
        "seq2seq": loaded.is_seq2seq,
        "causal": getattr(loaded, "is_causal", False),
        "max_length": max_length_of(loaded, options),
        "wic_format": options.wic_format,
        "max_new_tokens": options.max_new_tokens if loaded.is_seq2seq else None,
    }


#: Truncation of classifiers and text-to-text models when ``--max-length`` is not given.
DEFAULT_MAX_LENGTH = 512


def max_length_of(loaded: LoadedModel, options: RunnerOptions) -> int:
    """The truncation length: ``--max-length``, else 512, else a causal LM's context length.

    A causal LM's length is read as lm-eval reads it: ``n_positions``,
    ``max_position_embeddings`` or ``n_ctx`` of the config, else the tokenizer's
    ``model_max_length`` when set, else 2048.
    """
    if options.max_length is not None:
        return options.max_length
    if not getattr(loaded, "is_causal", False):
        return DEFAULT_MAX_LENGTH
    config = getattr(loaded.model, "config", None)
    for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(loaded.tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000_000:
        return limit
    return 2048


def _tokenize(tokenizer, unique: Sequence[tuple[str, str | None]], max_length: int) -> list[dict]:
    """Token ids of every input (no padding), singles and pairs tokenised in two calls."""
    encoded: list[dict | None] = [None] * len(unique)
    for has_pair in (False, True):
        idx = [i for i, (_, p) in enumerate(unique) if (p is not None) == has_pair]
        if not idx:
            continue
        texts = [unique[i][0] for i in idx]
        pairs = [unique[i][1] for i in idx] if has_pair else None
        enc = tokenizer(texts, pairs, truncation=True, max_length=max_length)
        keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
        for j, i in enumerate(idx):
            encoded[i] = {k: enc[k][j] for k in keys}
    return encoded  # type: ignore[return-value]


def make_forward(loaded: LoadedModel, encoded: Sequence[dict], options: RunnerOptions):
    """Batch of input indices -> results.

    Model-label probabilities (classifiers), answers (seq2seq) or per-choice
    ``[log-likelihoods, token counts]`` (causal LMs, ``bench.causal``).
    """
    import torch

    if getattr(loaded, "is_causal", False):
        from bench.causal import make_causal_forward

        return make_causal_forward(loaded, encoded, options)

    model, tokenizer = loaded.model, loaded.tokenizer
    device = loaded.device
    amp = contextlib.nullcontext()
    if device.type == "cuda" and options.amp:
        param_dtype = next(model.parameters()).dtype
        if param_dtype == torch.float32:
            amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            amp = torch.autocast("cuda", dtype=amp_dtype)

    def collate(batch: list[int]) -> dict:
        features = [encoded[i] for i in batch]
        tensors = tokenizer.pad(features, padding="longest", return_tensors="pt")
        return {k: v.to(device, non_blocking=True) for k, v in tensors.items()}

    def forward(batch: list[int]) -> list:
        inputs = collate(batch)
        with torch.inference_mode(), amp:
            if loaded.is_seq2seq:
                generated = model.generate(
                    **inputs, max_new_tokens=options.max_new_tokens, do_sample=False, num_beams=1
                )
                texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
                return [t.strip() for t in texts]
            logits = model(**inputs).logits
            probs = torch.softmax(logits.float(), dim=-1).cpu().tolist()
        return [[round(p, 7) for p in row] for row in probs]

    return forward


def _distributed_state():
    """Accelerate's ``PartialState`` when launched with several processes, else None."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    from accelerate import PartialState

    return PartialState()


def predict(
    loaded: LoadedModel,
    model_name: str,
    data_dir: str | os.PathLike,
    suites: Sequence[str],
    out: str | os.PathLike,
    options: RunnerOptions | None = None,
    *,
    forward_factory=make_forward,
) -> RunStats:
    """Predict every row of ``suites`` and write the prediction file ``out``.

    Args:
        loaded: The model (``bench.modeling.load_classifier``).
        model_name: Its name or path (recorded in the resume fingerprint).
        data_dir: Built suite folder.
        suites: Suite names to predict.
        out: Prediction file (JSONL).
        options: Runner settings.
        forward_factory: Builds the batch function (tests swap in fakes).

    Returns:
        Counts and timing of the run.

    Raises:
        ConfigError: A suite's task labels cannot be mapped to the model's labels.
        OutOfMemory: One input alone does not fit on the device.

    """
    options = options or RunnerOptions()
    start = time.perf_counter()
    causal = getattr(loaded, "is_causal", False)
    if causal:
        collected = collect_causal_inputs(data_dir, suites, options, loaded.tokenizer)
    else:
        collected = collect_inputs(
            data_dir, suites, seq2seq=loaded.is_seq2seq, wic_format=options.wic_format
        )
    mappings = {}
    if not loaded.is_seq2seq and not causal:
        for suite in collected.suites:
            if suite.task not in mappings:
                mappings[suite.task] = resolve_label_mapping(
                    loaded.id2label, suite.task_spec, options.label_map
                )
    keys = [input_key(t, p) for t, p in collected.unique]
    out = Path(out)
    parts = out.with_name(out.name + PARTS_SUFFIX)
    state = _distributed_state()
    rank = state.process_index if state else 0
    world = state.num_processes if state else 1
    store = ShardStore(parts, _fingerprint(model_name, loaded, options), rank)
    if state is not None:  # every rank must see the same finished set before splitting work
        state.wait_for_everyone()
    resumed = sum(1 for k in keys if k in store.done)
    todo = [i for i, k in enumerate(keys) if k not in store.done]
    if causal:
        from bench.causal import encode, split_key

        encoded = encode(loaded.tokenizer, [split_key(*collected.unique[i]) for i in todo],
                         max_length_of(loaded, options))
        local = {i: e for i, e in zip(todo, encoded, strict=True)}
        lengths = {i: e.length for i, e in local.items()}
    else:
        encoded = _tokenize(loaded.tokenizer, [collected.unique[i] for i in todo],
                            max_length_of(loaded, options))
        local = {i: e for i, e in zip(todo, encoded, strict=True)}
        lengths = {i: len(e["input_ids"]) for i, e in local.items()}
    order = sorted(todo, key=lambda i: (-lengths[i], i))[rank::world]
    forward = forward_factory(loaded, local, options)
    device_type = loaded.device.type if hasattr(loaded, "device") else "cpu"
    uses = [0] * len(keys)  # suite rows per distinct input: the bar counts rows
    for suite_inputs in collected.suites:
        for i in suite_inputs.inputs:
            uses[i] += 1
    bar = _progress_bar(sum(uses[i] for i in order), options.progress and rank == 0)
    pending = [0]

    def emit(batch: list[int], results: list) -> None:
        for i, value in zip(batch, results, strict=True):
            store.add(keys[i], value)
        bar.update(sum(uses[i] for i in batch))
        pending[0] += len(batch)
        if pending[0] >= options.chunk_size:
            store.flush()
            pending[0] = 0

    def on_oom() -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    try:
        retries = run_batches(
            order, lengths, forward, emit,
            batch_size=options.batch_size,
            token_budget=AUTO_TOKENS.get(device_type, AUTO_TOKENS["cpu"]),
            max_rows=AUTO_MAX_ROWS.get(device_type, AUTO_MAX_ROWS["cpu"]),
            on_oom=on_oom,
        )
    finally:
        store.flush()  # keep what is done for a restart, also on errors and Ctrl-C
        bar.close()
    if state is not None:
        state.wait_for_everyone()
        if not state.is_main_process:
            return RunStats(collected.rows, len(keys), resumed, len(order),
                            time.perf_counter() - start, retries, len(collected.suites))
        store = ShardStore(parts, _fingerprint(model_name, loaded, options), create=False)
    write_predictions(out, collected, keys, store.done, mappings, loaded.is_seq2seq, options,
                      causal=causal)
    shutil.rmtree(parts)
    return RunStats(collected.rows, len(keys), resumed, len(order),
                    time.perf_counter() - start, retries, len(collected.suites))


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
    from bench.causal import choice_probs

    missing = sum(1 for k in keys if k not in done)
    if missing:
        raise BenchError(f"{missing} inputs have no result; rerun to resume")
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for suite in collected.suites:
            for row_id, i in zip(suite.ids, suite.inputs, strict=True):
                value = done[keys[i]]
                if seq2seq:
                    record = {"id": row_id, "label": match_generated(value, suite.task_spec,
                                                                       options.label_map)}
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                    continue
                if causal:
                    lls, ntokens = value
                    probs = choice_probs(lls, ntokens, suite.choices, options.length_norm)
                else:
                    probs = map_probs(value, mappings[suite.task])
                label = max(range(len(probs)), key=probs.__getitem__)
                record = {"id": row_id, "label": label, "probs": [round(p, 6) for p in probs]}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")


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
