"""The options of a served run and what it did (shared by ``run`` and ``flows``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from consistency_bench.bench.served.client import ClientOptions, Usage
from consistency_bench.bench.served.generate import GenerateOptions

#: ``--mode`` values.
MODES = ("loglikelihood", "generate")
#: Suites built for text-to-text models (T5 task prefixes), not run by default.
T2T_SUFFIX = "_t2t"


@dataclass(frozen=True)
class ServedRequest:
    """The options of one served run (``predict`` flags of the same names)."""

    model: str
    base_url: str
    out: str
    data: str | Path = "consistency-bench"
    mode: str = "loglikelihood"
    api: str = "openai"
    suites: list[str] | None = None
    tasks: list[str] | None = None
    label_map: str | None = None
    max_length: int | None = None
    length_norm: str | None = None
    num_fewshot: int = 0
    fewshot_seed: int = 0
    chat: bool = False
    tokenizer: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    allow_insecure: bool = False
    client: ClientOptions = field(default_factory=ClientOptions)
    generate: GenerateOptions = field(default_factory=GenerateOptions)
    cache: str | Path | None = None
    dry_run: bool = False
    progress: bool = True


@dataclass
class ServedOutcome:
    """What a served run did (or, with ``--dry-run``, would do)."""

    rows: int
    suites: int
    distinct: int
    estimate: dict | None = None
    usage: Usage | None = None
    usage_all: dict | None = None
    invalid: int = 0
    label_only: int = 0
    truncated_rows: int = 0
    seconds: float = 0.0
    request_seconds: float = 0.0  # from the first request sent to the last response


def default_cache() -> str:
    """``$XDG_CACHE_HOME/consistency-bench/requests`` (``~/.cache`` when unset)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "consistency-bench", "requests")
