"""Everything a run needs before the model's weights load: inputs, tokens, labels, settings."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

from consistency_bench.bench.modeling.label_map import resolve_label_mapping
from consistency_bench.bench.runner.options import RunnerOptions, config_of, max_length_of
from consistency_bench.bench.runner.unique_inputs import (
    CollectedInputs,
    collect_causal_inputs,
    collect_inputs,
    input_key,
)


def _fingerprint(model_name: str, model, options: RunnerOptions) -> dict:
    config = config_of(model)
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


# One piece (over 60 lines): read, encode and fingerprint the inputs, steps in order.
def prepare(
    model,
    model_name: str,
    data_dir: str | os.PathLike,
    suites: Sequence[str],
    options: RunnerOptions | None = None,
) -> Prepared:
    """Read the suites, build, deduplicate and tokenise the inputs, resolve the labels.

    Needs only the config and tokenizer (``consistency_bench.bench.modeling.info.ModelInfo``, or a
    loaded model),
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
            data_dir, suites, seq2seq=model.is_seq2seq, wic_format=options.wic_format,
            only=options.rows,
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
        from consistency_bench.bench.runner.causal import encode, split_key

        encoded = encode(model.tokenizer, [split_key(*u) for u in collected.unique], max_length)
        lengths = [e.length for e in encoded]
        truncated = {i for i, e in enumerate(encoded) if e.truncated}
    else:
        encoded, truncated = _tokenize(model.tokenizer, collected.unique, max_length)
        lengths = [len(e["input_ids"]) for e in encoded]
    fingerprint = _fingerprint(model_name, model, options)
    from consistency_bench.bench.io.manifest import read_manifest

    manifest = read_manifest(data_dir)
    settings = {
        **fingerprint,
        "label_map": {t: {k: list(v) for k, v in m.items()}
                      for t, m in sorted(options.label_map.items())},
        "length_norm": options.length_norm, "chat": options.chat,
        "num_fewshot": options.num_fewshot, "fewshot_seed": options.seed,
        "fewshot_pools": _pools_used(data_dir, collected, manifest, options),
        "batch_size": options.batch_size, "amp": options.amp,
        "revision": getattr(config_of(model), "_commit_hash", None),
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
    from consistency_bench.bench.prompting.demonstrations import read_pools, suite_pool

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
