"""The model inputs of a run: each suite row turned into its input, deduplicated across suites.

Classifiers and text-to-text models get
``consistency_bench.bench.prompting.row_inputs.model_input``;
causal LMs a
prompt and
their verbalisers (``consistency_bench.bench.prompting.prompts``), with few-shot demonstrations and
the
chat
template.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, DataError
from consistency_bench.bench.prompting.row_inputs import WIC_FORMATS, model_input
from consistency_bench.bench.registries.tasks import TASKS, TaskSpec
from consistency_bench.bench.runner.options import RunnerOptions


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


def _kept(suite: str, rows: list[dict], only: Mapping[str, frozenset[str]] | None
          ) -> list[dict]:
    """The rows of ``suite`` a run predicts: all, or those ``only`` names (a sample)."""
    if only is None:
        return rows
    wanted = only.get(suite, frozenset())
    return [r for r in rows if r["id"] in wanted]


def _read_suites(data_dir, suites: Sequence[str]):
    """``(suite, manifest entry, rows)`` of each suite, with clean errors."""
    import pyarrow.parquet as pq

    from consistency_bench.bench.io.manifest import parquet_path, read_manifest

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
    data_dir: str | os.PathLike, suites: Sequence[str], *, seq2seq: bool, wic_format: str,
    only: Mapping[str, frozenset[str]] | None = None,
) -> CollectedInputs:
    """Read the suites from a built folder and deduplicate their model inputs.

    ``only``: predict just these row ids per suite (:attr:`RunnerOptions.rows`).

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
        for row in _kept(suite, rows, only):
            key = model_input(row, task, seq2seq=seq2seq, wic_format=wic_format)
            if key not in index:
                index[key] = len(unique)
                unique.append(key)
            ids.append(row["id"])
            used.append(index[key])
        out.append(SuiteInputs(suite, task, ids, used, suite_task(entry)))
    return CollectedInputs(unique, out)


def _suite_prompt(suite: str, entry: dict, task: TaskSpec, rows: list[dict],
                  options: RunnerOptions, messages: bool):
    """The prompt of a suite: the table's (``--label-map`` verbalisers), generative or not.

    Raises:
        ConfigError: The template uses ``text_pair`` and the rows have none.

    """
    from consistency_bench.bench.prompting.prompts import (
        PromptSpec,
        generative_template,
        lookup,
        with_verbalisers,
    )

    is_pair = any(r.get("text_pair") is not None for r in rows[:50])
    spec = lookup(entry.get("family"), task.name, task.label_names, is_pair)
    spec = with_verbalisers(spec, task.name, task.label_names, options.label_map.get(task.name))
    if messages:
        spec = PromptSpec(generative_template(spec), spec.choices)
    if not is_pair and "text_pair" in spec.template:
        raise ConfigError(f"prompt of suite {suite} uses text_pair, which its rows do not "
                          "have; add a family entry in bench/prompting/prompts.py")
    return spec


class _MessagesAsJson:
    """A chat "template" that renders the turns as their JSON (``messages=True``)."""

    chat_template = "json"

    @staticmethod
    def apply_chat_template(messages, tokenize=False, add_generation_prompt=True) -> str:
        return json.dumps(messages, ensure_ascii=False)


def _chat_renderer(options: RunnerOptions, tokenizer, messages: bool):
    """What renders the turns: JSON messages, the tokenizer's chat template, or ``None``.

    Raises:
        ConfigError: ``--chat`` and the tokenizer has no chat template.

    """
    if messages:
        return _MessagesAsJson()
    elif options.chat:
        if tokenizer is None or not getattr(tokenizer, "chat_template", None):
            raise ConfigError("--chat: the model's tokenizer has no chat template")
        return tokenizer
    return None


# One piece (over 60 lines): one pass over the suites that dedups contexts as it renders.
def collect_causal_inputs(
    data_dir: str | os.PathLike, suites: Sequence[str], options: RunnerOptions, tokenizer=None,
    *, messages: bool = False,
) -> CollectedInputs:
    """Causal-LM inputs: ``(context, verbalisers joined by U+001F)``, deduplicated.

    The prompt and verbalisers come from ``consistency_bench.bench.prompting.prompts``
    (``--label-map`` replaces verbalisers); ``--num-fewshot K`` prepends the first K
    demonstrations of the suite's few-shot pool in the seed's order
    (``consistency_bench.bench.prompting.demonstrations``; the same for every row, as
    lm-eval's ``first_n`` sampler over the exported pool); a suite without a pool is skipped
    with a message; ``--chat`` renders the turns with ``tokenizer``'s chat template.

    With ``messages`` (``predict --api openai --mode generate``) the prompt is
    ``consistency_bench.bench.prompting.prompts.generative_template`` and each context is the
    JSON list of chat turns (demonstrations as user / assistant turns, then the row as a user
    turn); the continuations are the bare verbalisers.

    Raises:
        ConfigError: No chat template with ``chat``; no suite asked for has a pool.
        DataError: The folder has no pools, a pool file is corrupt or too small.

    """
    from consistency_bench.bench.prompting.demonstrations import (
        demonstrations,
        load_pool,
        no_pool_reason,
        read_pools,
        suite_pool,
    )
    from consistency_bench.bench.prompting.prompts import TARGET_DELIMITER, build_context, render
    from consistency_bench.bench.runner.causal import CHOICE_SEP

    chat = _chat_renderer(options, tokenizer, messages)
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
        spec = _suite_prompt(suite, entry, task, rows, options, messages)
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
        for row in _kept(suite, rows, options.rows):
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
