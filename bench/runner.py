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
   skips done batches. At the end the per-row records (``id``, ``label``, ``probs``) are
   written to ``<out>`` atomically and the shards removed.

Everything that needs no weights (steps 1-3, the label mapping, the few-shot pools) is
:func:`prepare`, which the CLI runs before the model loads; :func:`execute` is the rest.

The batches are planned once over every distinct input, so a batch holds the same inputs
whoever runs it: launched processes (``torchrun``, ``accelerate launch``) and ``--shard i/N``
take every N-th batch and produce byte-identical results to a single process
(``bench.distributed``; part files are joined by :func:`merge_parts`).
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
from bench.distributed import Processes, Shard
from bench.errors import BenchError, ConfigError, DataError, shorten
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


def plan_batches(
    order: Sequence[int],
    lengths: Sequence[int],
    *,
    batch_size: int | None,
    token_budget: int,
    max_rows: int,
) -> list[list[int]]:
    """Cut ``order`` (longest first) into batches: fixed size, or filling a token budget."""
    batches, pos = [], 0
    while pos < len(order):
        if batch_size is not None:
            rows = batch_size
        else:
            rows = plan_rows(lengths[order[pos]], token_budget, max_rows)
        batches.append(list(order[pos : pos + rows]))
        pos += rows
    return batches


def run_planned(
    batches: Sequence[Sequence[int]],
    lengths: Sequence[int],
    forward: Callable[[list[int]], list],
    emit: Callable[[list[int], list], None],
    *,
    on_oom: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda n: None,
) -> int:
    """Run ``forward`` over planned batches, halving a batch on out-of-memory.

    After an out-of-memory error on a batch of n inputs, that batch and every later one run
    in pieces of at most n // 2 inputs.

    Returns:
        The number of out-of-memory retries.

    Raises:
        OutOfMemory: A single input does not fit.

    """
    retries, cap = 0, None
    for planned in batches:
        queue = [list(planned)]
        while queue:
            batch = queue.pop(0)
            if cap is not None and len(batch) > cap:
                queue[:0] = [batch[i : i + cap] for i in range(0, len(batch), cap)]
                continue
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
                cap = max(1, len(batch) // 2)
                print(f"out of memory on a batch of {len(batch)}; retrying with {cap}",
                      file=sys.stderr)
                queue.insert(0, batch)
                continue
            emit(batch, results)
            progress(len(batch))
    return retries


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
    """:func:`plan_batches` then :func:`run_planned`.

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
    batches = plan_batches(order, lengths, batch_size=batch_size, token_budget=token_budget,
                           max_rows=max_rows)
    return run_planned(batches, lengths, forward, emit, on_oom=on_oom, progress=progress)


class ShardStore:
    """Finished results on disk: ``<out>.parts/shard-<rank>-<n>.jsonl``, written atomically.

    A parts folder whose ``run.json`` names other settings is refused when it holds results;
    one that holds none (left by a run refused before its first batch) is taken over.
    """

    def __init__(self, parts: Path, fingerprint: dict, rank: int = 0, *, create: bool = True):
        self.parts, self.rank = parts, rank
        run_file = parts / RUN_FILE
        has_results = parts.is_dir() and any(parts.glob("shard-*.jsonl"))
        if run_file.is_file() and has_results:
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

    def remove_own(self) -> None:
        """Delete this rank's shard files (after the output is written)."""
        for shard in self.parts.glob(f"shard-{self.rank}-*.jsonl"):
            shard.unlink(missing_ok=True)


def _config_of(model):
    config = getattr(model, "config", None)
    if config is None and hasattr(model, "model"):
        config = getattr(model.model, "config", None)
    return config


def _fingerprint(model_name: str, model, options: RunnerOptions) -> dict:
    config = _config_of(model)
    config_text = config.to_json_string() if config is not None else ""
    return {
        "model": str(model_name),
        "config_sha1": hashlib.sha1(config_text.encode("utf-8")).hexdigest(),
        "seq2seq": model.is_seq2seq,
        "causal": getattr(model, "is_causal", False),
        "max_length": max_length_of(model, options),
        "wic_format": options.wic_format,
        "max_new_tokens": options.max_new_tokens if model.is_seq2seq else None,
    }


#: Truncation of classifiers and text-to-text models when ``--max-length`` is not given.
DEFAULT_MAX_LENGTH = 512


def max_length_of(model, options: RunnerOptions) -> int:
    """The truncation length: ``--max-length``, else 512, else a causal LM's context length.

    A causal LM's length is read as lm-eval reads it: ``n_positions``,
    ``max_position_embeddings`` or ``n_ctx`` of the config (of its ``text_config`` for a
    multimodal checkpoint), else the tokenizer's ``model_max_length`` when set, else 2048.
    """
    if options.max_length is not None:
        return options.max_length
    if not getattr(model, "is_causal", False):
        return DEFAULT_MAX_LENGTH
    config = _config_of(model)
    for cfg in (config, getattr(config, "text_config", None)):
        for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
            value = getattr(cfg, attr, None)
            if isinstance(value, int) and value > 0:
                return value
    limit = getattr(model.tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000_000:
        return limit
    return 2048


def _tokenize(tokenizer, unique: Sequence[tuple[str, str | None]], max_length: int
              ) -> tuple[list[dict], set[int]]:
    """Token ids of every input (no padding), and the inputs truncation cut.

    Singles and pairs are tokenised in two calls; an input is cut when it is ``max_length``
    tokens long after truncation and longer without it.
    """
    encoded: list[dict | None] = [None] * len(unique)
    cut: set[int] = set()
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
        full = [j for j, i in enumerate(idx) if len(enc["input_ids"][j]) >= max_length]
        if full:
            whole = tokenizer([texts[j] for j in full],
                              [pairs[j] for j in full] if pairs is not None else None)
            cut.update(idx[j] for j, ids in zip(full, whole["input_ids"], strict=True)
                       if len(ids) > max_length)
    return encoded, cut  # type: ignore[return-value]


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


@dataclass
class Prepared:
    """Everything a run needs before the model's weights load (:func:`prepare`).

    Attributes:
        collected: The suites' rows and their distinct inputs.
        keys: Stable key of each distinct input (resume files).
        encoded: Token ids of each distinct input.
        lengths: Token length of each distinct input.
        mappings: Task -> label mapping (classifiers).
        fingerprint: Settings the resume files must share.
        settings: Settings a part file records (fingerprint, output options, suite hashes).
        seq2seq: Whether answers are generated text.
        causal: Whether the model is a causal LM.
        truncated: Distinct inputs that truncation cut.

    """

    collected: CollectedInputs
    keys: list[str]
    encoded: list
    lengths: list[int]
    mappings: dict
    fingerprint: dict
    settings: dict
    seq2seq: bool
    causal: bool
    truncated: set[int]

    @property
    def truncated_rows(self) -> int:
        """Suite rows whose input was cut."""
        return sum(1 for s in self.collected.suites for i in s.inputs if i in self.truncated)

    def order(self) -> list[int]:
        """Distinct inputs, longest first (ties by first appearance)."""
        return sorted(range(len(self.keys)), key=lambda i: (-self.lengths[i], i))


def prepare(
    model,
    model_name: str,
    data_dir: str | os.PathLike,
    suites: Sequence[str],
    options: RunnerOptions | None = None,
) -> Prepared:
    """Read the suites, build, deduplicate and tokenise the inputs, resolve the labels.

    Needs only the config and tokenizer (``bench.modeling.ModelInfo``, or a loaded model),
    so every error about suites, prompts, few-shot pools, lengths or labels comes before the
    weights load.

    Raises:
        DataError: A suite is not in the folder or its file is missing.
        ConfigError: Labels that cannot be mapped, a few-shot pool too small, a verbaliser
            longer than ``--max-length``.

    """
    options = options or RunnerOptions()
    causal = getattr(model, "is_causal", False)
    if causal:
        collected = collect_causal_inputs(data_dir, suites, options, model.tokenizer)
    else:
        collected = collect_inputs(
            data_dir, suites, seq2seq=model.is_seq2seq, wic_format=options.wic_format
        )
    mappings = {}
    if not model.is_seq2seq and not causal:
        for suite in collected.suites:
            if suite.task not in mappings:
                mappings[suite.task] = resolve_label_mapping(
                    model.id2label, suite.task_spec, options.label_map
                )
    keys = [input_key(t, p) for t, p in collected.unique]
    max_length = max_length_of(model, options)
    if causal:
        from bench.causal import encode, split_key

        encoded = encode(model.tokenizer, [split_key(*u) for u in collected.unique], max_length)
        lengths = [e.length for e in encoded]
        truncated = {i for i, e in enumerate(encoded) if e.truncated}
    else:
        encoded, truncated = _tokenize(model.tokenizer, collected.unique, max_length)
        lengths = [len(e["input_ids"]) for e in encoded]
    fingerprint = _fingerprint(model_name, model, options)
    from bench.manifest import read_manifest

    manifest = read_manifest(data_dir)
    settings = {
        **fingerprint,
        "label_map": {t: {k: list(v) for k, v in m.items()}
                      for t, m in sorted(options.label_map.items())},
        "length_norm": options.length_norm, "chat": options.chat,
        "num_fewshot": options.num_fewshot, "fewshot_seed": options.seed,
        "fewshot_pools": _pools_used(data_dir, collected, manifest, options),
        "batch_size": options.batch_size, "amp": options.amp,
        "revision": getattr(_config_of(model), "_commit_hash", None),
        "suites": [[s.suite, manifest[s.suite].get("sha256"), len(s.ids)]
                   for s in collected.suites],
        # every distinct input as text and its token length: prompts, chat template,
        # demonstrations and tokenizer of the machine that made the part
        "inputs_sha1": hashlib.sha1(json.dumps([keys, lengths]).encode()).hexdigest(),
    }
    return Prepared(collected, keys, encoded, lengths, mappings, fingerprint, settings,
                    model.is_seq2seq, causal, truncated)


def _pools_used(data_dir, collected: CollectedInputs, manifest: dict,
                options: RunnerOptions) -> dict[str, str]:
    """Pool name -> sha256 of the few-shot pools the run's suites draw from (empty at 0 shots)."""
    if not options.num_fewshot:
        return {}
    from bench.fewshot import read_pools, suite_pool

    pools = read_pools(data_dir)
    used = {}
    for suite in collected.suites:
        name = suite_pool(pools, manifest[suite.suite])
        if name is not None:
            used[name] = pools[name]["sha256"]
    return dict(sorted(used.items()))


def truncation_warning(prepared: Prepared, max_length: int) -> str | None:
    """One line on how many rows truncation cut, or None when none were."""
    if not prepared.truncated:
        return None
    how = "contexts cut from the left" if prepared.causal else "inputs truncated"
    return (
        f"warning: --max-length {max_length}: {prepared.truncated_rows} of "
        f"{prepared.collected.rows} rows ({len(prepared.truncated)} of {len(prepared.keys)} "
        f"distinct inputs) are longer and were cut ({how}); raise --max-length to keep them "
        "whole"
    )


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
        loaded: The model (``bench.modeling.load_classifier``).
        model_name: Its name or path (recorded in the resume fingerprint).
        data_dir: Built suite folder.
        suites: Suite names to predict.
        out: Prediction file (JSONL), or the part file with ``shard``.
        options: Runner settings.
        forward_factory: Builds the batch function (tests swap in fakes).
        shard: Run only part ``shard`` of the batches and write a part file.
        procs: The launched processes this one belongs to (``bench.distributed``).

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
    from bench import distributed

    start = time.perf_counter() if start is None else start
    keys, lengths = prepared.keys, prepared.lengths
    device_type = loaded.device.type if hasattr(loaded, "device") else "cpu"
    batches = plan_batches(
        prepared.order(), lengths, batch_size=options.batch_size,
        token_budget=AUTO_TOKENS.get(device_type, AUTO_TOKENS["cpu"]),
        max_rows=AUTO_MAX_ROWS.get(device_type, AUTO_MAX_ROWS["cpu"]),
    )
    shard = shard or Shard()
    share = batches[shard.index::shard.count]
    mine = share[procs.rank::procs.world] if procs else share
    out = Path(out)
    parts = out.with_name(out.name + PARTS_SUFFIX)
    rank = procs.rank if procs else 0
    # the weights' dtype and autocast change the numbers: a resume must not mix them
    fingerprint = {**prepared.fingerprint, "dtype": _weights_dtype(loaded), "amp": options.amp}
    store = ShardStore(parts, fingerprint, rank)
    done_keys = set(store.done)
    if procs is not None:  # ranks on other disks may hold other finished results
        done_keys = set().union(*distributed.all_gather(done_keys))
    todo = [b for b in mine if not all(keys[i] in done_keys for i in b)]
    computed = sum(len(b) for b in todo)
    resumed = sum(len(b) for b in mine) - computed
    forward = forward_factory(loaded, prepared.encoded, options)
    uses = [0] * len(keys)  # suite rows per distinct input: the bar counts rows
    for suite_inputs in prepared.collected.suites:
        for i in suite_inputs.inputs:
            uses[i] += 1
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

    def on_oom() -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    try:
        retries = run_planned(todo, lengths, forward, emit, on_oom=on_oom)
    finally:
        store.flush()  # keep what is done for a restart, also on errors and Ctrl-C
        bar.close()
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
            write_part(out, prepared, done, options, shard, wanted, device_type,
                       _weights_dtype(loaded))
        else:
            write_predictions(out, prepared.collected, keys, done, prepared.mappings,
                              prepared.seq2seq, options, causal=prepared.causal)
    if procs is not None:
        distributed.barrier()  # the output is written: every rank drops its resume files
        store.remove_own()
        distributed.barrier()
    shutil.rmtree(parts, ignore_errors=procs is not None)
    return RunStats(prepared.collected.rows, len(keys), resumed, computed,
                    time.perf_counter() - start, retries, len(prepared.collected.suites))


def _records(collected: CollectedInputs, keys: Sequence[str], done: dict[str, object],
             mappings: dict, seq2seq: bool, options: RunnerOptions, causal: bool,
             wanted: set[int] | None = None):
    """``(row position, record)`` of every row (or of the rows whose input is ``wanted``)."""
    from bench.causal import choice_probs

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


#: First-line marker and version of a part file (``--shard``).
PART_FORMAT = "consistency-bench-part"
PART_VERSION = 1


def _weights_dtype(loaded) -> str | None:
    """The dtype of the model's weights (``--dtype``, or bf16 for causal LMs on CUDA)."""
    try:
        return str(next(loaded.model.parameters()).dtype).removeprefix("torch.")
    except (AttributeError, StopIteration, TypeError):
        return None


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


def _part_line(path: Path, number: int, line: str) -> object:
    """One JSON line of a part file: depth bounded before parsing, keys unique, valid Unicode.

    Raises:
        DataError: Nested more than :data:`bench.json_input.MAX_DEPTH` deep (``json.loads``
            would raise ``RecursionError``), a key given twice (which value is meant?), a lone
            surrogate (the merged file could not be written as UTF-8), or not JSON.

    """
    from bench.json_input import DuplicateKeyError, depth_above, too_deep_message, unique_object

    depth = depth_above(line)
    if depth is not None:
        raise DataError(f"{path}:{number}: {too_deep_message(depth)}")
    try:
        value = json.loads(line, object_pairs_hook=unique_object)
    except DuplicateKeyError as exc:
        raise DataError(f"{path}:{number}: key {shorten(exc.key)} given twice in one object "
                        "(which value is meant?)") from None
    except ValueError:  # not JSON, an integer of more than 4,300 digits
        raise DataError(f"{path}:{number}: expected [row position, record], got "
                        f"{shorten(line)}") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DataError(f"{path}:{number}: not valid Unicode (a lone surrogate "
                        f"{exc.object[exc.start]!r}); write the text as UTF-8") from None
    return value


def _check_header(path: Path, header: object) -> dict:
    """The header line of a part: format, version, ``shard [i, n]``, ``rows``, ``run``."""
    if not isinstance(header, dict) or header.get("format") != PART_FORMAT:
        raise DataError(f"{path}:1: not a part file of `predict --shard` (no {PART_FORMAT} "
                        "header); pass the files written with --shard i/N")
    if header.get("version") != PART_VERSION:
        raise DataError(f"{path}:1: part format version {shorten(header.get('version'))}; "
                        f"this version reads {PART_VERSION}")
    shard, rows = header.get("shard"), header.get("rows")

    def count(x: object) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    if not (isinstance(shard, list) and len(shard) == 2 and all(count(x) for x in shard)
            and shard[0] < shard[1]):
        raise DataError(f"{path}:1: field 'shard' value {shorten(shard)}: expected [i, n] "
                        "with 0 <= i < n; the file was edited")
    if not count(rows):
        raise DataError(f"{path}:1: field 'rows' value {shorten(rows)}: expected a count; the "
                        "file was edited")
    if not isinstance(header.get("run"), dict):
        raise DataError(f"{path}:1: field 'run' value {shorten(header.get('run'))}: expected "
                        "an object; the file was edited")
    return header


def _read_part(path: Path) -> tuple[dict, list[tuple[int, dict]]]:
    """Header and ``(position, record)`` rows of a part file, checked for order."""
    from bench.predictions import check_input_file

    check_input_file(path)  # a folder, FIFO (which would block), device or ``-``
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a part file (not UTF-8: {exc})") from None
    try:
        header = _part_line(path, 1, lines[0]) if lines else None
    except DataError:
        header = None
    header = _check_header(path, header)
    rows, last = [], -1
    for number, line in enumerate(lines[1:], start=2):
        item = _part_line(path, number, line)
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)):
            raise DataError(f"{path}:{number}: expected [row position, record], got "
                            f"{shorten(line)}")
        pos, record = item
        if (not isinstance(pos, int) or isinstance(pos, bool) or not 0 <= pos < header["rows"]
                or pos <= last):
            raise DataError(f"{path}:{number}: row position {shorten(pos)} after {last}: a "
                            f"part lists its rows in increasing order below {header['rows']}; "
                            "the file was edited or cut")
        rows.append((pos, record))
        last = pos
    return header, rows


def merge_parts(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> int:
    """Join the part files of ``predict --shard i/N`` into one prediction file.

    Checks that the parts are parts ``0 .. N-1`` of one run, each given once, with the same
    settings and suites (sha256), and that together they hold every row exactly once; writes
    the rows in the order of a single-process run (the file is byte-identical to it).

    Returns:
        The number of rows written.

    Raises:
        DataError: A file that is not a part, a missing or repeated part, parts of different
            runs, a row missing or in two parts (names the files and what differs).

    """
    parsed = [(Path(p), *_read_part(Path(p))) for p in paths]
    if not parsed:
        raise ConfigError("merge-predictions: no part files given")
    first_path, first, _ = parsed[0]
    count = first["shard"][1]
    by_index: dict[int, Path] = {}
    for path, header, _ in parsed:
        index, n = header["shard"]
        if n != count:
            raise DataError(f"{path}: part {index}/{n}, but {first_path} is part of {count}")
        if index in by_index:
            raise DataError(f"part {index}/{count} given twice: {by_index[index]} and {path}")
        by_index[index] = path
        for field_name in ("rows", "run"):
            if header[field_name] != first[field_name]:
                diff = _first_difference(first[field_name], header[field_name])
                raise DataError(f"{path}: not a part of the same run as {first_path} "
                                f"({field_name}: {diff})")
    missing = [f"{i}/{count}" for i in range(count) if i not in by_index]
    if missing:
        raise DataError(f"missing part(s) {', '.join(missing)} (given: "
                        f"{', '.join(f'{i}/{count}' for i in sorted(by_index))})")
    owner: dict[int, Path] = {}
    records: list[tuple[int, dict]] = []
    for path, _, rows in parsed:
        for pos, record in rows:
            if pos in owner:
                raise DataError(f"row {pos} is in {owner[pos]} and in {path}: the parts were "
                                "not made with the same batch plan")
            owner[pos] = path
            records.append((pos, record))
    if len(owner) != first["rows"]:
        gap = next(i for i in range(first["rows"]) if i not in owner)
        raise DataError(f"the parts hold {len(owner)} of {first['rows']} rows (row {gap} is "
                        "in none): a part was cut or made with another batch plan")
    records.sort(key=lambda r: r[0])
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for _, record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(records)


def _first_difference(a, b) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return f"{key} {a.get(key)!r} vs {b.get(key)!r}"
    return f"{a!r} vs {b!r}"


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
