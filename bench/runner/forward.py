"""The forward pass: a batch of input indices to model outputs, under inference mode."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from consistency_bench.bench.modeling.info import LoadedModel
from consistency_bench.bench.runner.options import RunnerOptions


def make_forward(loaded: LoadedModel, encoded: Sequence[dict], options: RunnerOptions):
    """Batch of input indices -> results.

    Model-label probabilities (classifiers), answers (seq2seq) or per-choice
    ``[log-likelihoods, token counts]`` (causal LMs, ``consistency_bench.bench.runner.causal``).
    """
    import torch

    if getattr(loaded, "is_causal", False):
        from consistency_bench.bench.runner.causal import make_causal_forward

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


def weights_dtype(loaded) -> str | None:
    """The dtype of the model's weights (``--dtype``, or bf16 for causal LMs on CUDA)."""
    try:
        return str(next(loaded.model.parameters()).dtype).removeprefix("torch.")
    except (AttributeError, StopIteration, TypeError):
        return None
