"""The settings of a prediction run, its summary, and the lengths a model is run at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.modeling.label_map import LabelOverrides

#: Token budget per batch for ``--batch-size auto`` and the row cap, per device type.
AUTO_TOKENS = {"cuda": 262_144, "cpu": 8_192}
AUTO_MAX_ROWS = {"cuda": 2_048, "cpu": 64}


@dataclass(frozen=True)
class RunnerOptions:
    """Settings of one prediction run.

    Attributes:
        batch_size: Inputs per batch, or None for automatic (token budget, OOM fallback).
        max_length: Truncation length in tokens; None: 512 for classifiers and text-to-text
            models, the model's own context length for causal LMs (as lm-eval).
        wic_format: How WiC rows become inputs
        (``consistency_bench.bench.prompting.row_inputs.WIC_FORMATS``).
        label_map: Parsed ``--label-map`` overrides.
        chunk_size: Finished inputs per shard file (the resume granularity).
        max_new_tokens: Generation length of text-to-text models.
        progress: Show a progress bar.
        amp: Use autocast on CUDA.
        length_norm: Causal LMs: divide each choice's log-likelihood by its length
            (``"chars"`` as lm-eval's ``acc_norm``, or ``"tokens"``); None for raw sums.
        chat: Causal LMs: wrap the prompt in the tokenizer's chat template.
        num_fewshot: Causal LMs: demonstrations from the suite's few-shot pool.
        seed: Seed that orders each few-shot pool
        (``consistency_bench.bench.prompting.demonstrations.seed_order``).
        rows: Only these row ids per suite (``reproduce``'s sample of groups); None: every
            row. A suite's prompt and pair form are decided on all its rows, so a sampled
            row gets exactly the input it gets in a full run.

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
    rows: Mapping[str, frozenset[str]] | None = None

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


def config_of(model):
    """The ``transformers`` config of ``model``, or of ``model.model`` (a loaded model)."""
    config = getattr(model, "config", None)
    if config is None and hasattr(model, "model"):
        config = getattr(model.model, "config", None)
    return config


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
    config = config_of(model)
    for cfg in (config, getattr(config, "text_config", None)):
        for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
            value = getattr(cfg, attr, None)
            if isinstance(value, int) and value > 0:
                return value
    limit = getattr(model.tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000_000:
        return limit
    return 2048
