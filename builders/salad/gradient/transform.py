"""Gradient-based transformations: Drop, Repeat, Replace and CopyOne (paper Table 3).

Token importance is the dot product of a token's input embedding and the gradient of the task
loss with respect to it, ``s_i = t_i^T ∇_{t_i} L`` (paper, "Gradient-based Transformations"),
computed with the model under test on the original input and its gold label (the predicted
label where the gold one is missing). Tokens are the model's own (sub-word) tokens; the bottom
``r`` (default 50%, ``k = floor(r * n)`` of the ``n`` tokens of the transformed text) are the
least important ones:

* Drop: remove the ``k`` least important tokens.
* Repeat: replace each of them with a token drawn uniformly from the other ``n - k`` (the most
  important ones).
* Replace: replace each of them with a token drawn uniformly from the vocabulary (special and
  bracketed placeholder tokens such as ``[unused0]`` excluded).
* CopyOne (pair tasks): the most important token of the *other* text becomes the whole
  transformed text.

The edit functions are pure and seeded per row; :func:`token_importance` needs torch and a
loaded Hugging Face sequence-classification model and fast tokenizer (imported lazily).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

RATIO = 0.5
_PLACEHOLDER = re.compile(r"^(\[.*\]|<.*>)$")


@dataclass(frozen=True)
class Importance:
    """Token importance of one input.

    Attributes:
        tokens: Model tokens of the text to transform (no special tokens).
        scores: ``t_i^T ∇ L`` per token of ``tokens``.
        other_tokens: Model tokens of the other text of a pair (empty for single texts).
        other_scores: Scores of ``other_tokens``.
        label: The label index the loss was computed with.

    """

    tokens: tuple[str, ...]
    scores: tuple[float, ...]
    other_tokens: tuple[str, ...] = ()
    other_scores: tuple[float, ...] = ()
    label: int = -1


def bottom(scores: Sequence[float], ratio: float = RATIO) -> list[int]:
    """Positions of the ``floor(ratio * n)`` lowest scores (ties broken by position)."""
    if not 0 < ratio < 1:
        raise ValueError(f"ratio must lie in (0, 1), got {ratio}")
    k = int(ratio * len(scores))
    order = sorted(range(len(scores)), key=lambda i: (scores[i], i))
    return sorted(order[:k])


def drop(tokens: Sequence[str], scores: Sequence[float], ratio: float = RATIO) -> list[str] | None:
    """Drop the least important tokens; ``None`` when nothing would be dropped."""
    low = set(bottom(scores, ratio))
    if not low:
        return None
    return [t for i, t in enumerate(tokens) if i not in low]


def repeat(
    tokens: Sequence[str], scores: Sequence[float], rng: random.Random, ratio: float = RATIO
) -> list[str] | None:
    """Replace the least important tokens by tokens drawn from the most important ones."""
    low = set(bottom(scores, ratio))
    if not low:
        return None
    high = [t for i, t in enumerate(tokens) if i not in low]
    return [rng.choice(high) if i in low else t for i, t in enumerate(tokens)]


def replace(
    tokens: Sequence[str],
    scores: Sequence[float],
    rng: random.Random,
    vocabulary: Sequence[str],
    ratio: float = RATIO,
) -> list[str] | None:
    """Replace the least important tokens by random vocabulary tokens."""
    if not vocabulary:
        raise ValueError("replace needs a non-empty vocabulary")
    low = set(bottom(scores, ratio))
    if not low:
        return None
    return [rng.choice(vocabulary) if i in low else t for i, t in enumerate(tokens)]


def copy_one(other_tokens: Sequence[str], other_scores: Sequence[float]) -> list[str] | None:
    """The single most important token of the other text (first on ties)."""
    if not other_tokens:
        return None
    best = max(range(len(other_scores)), key=lambda i: (other_scores[i], -i))
    return [other_tokens[best]]


def replacement_vocabulary(tokenizer) -> list[str]:
    """Vocabulary tokens usable by Replace, in id order (specials and placeholders excluded)."""
    special = set(tokenizer.all_special_tokens)
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    return [t for t, _ in vocab if t not in special and not _PLACEHOLDER.match(t)]


def tokens_to_text(tokenizer, tokens: Sequence[str]) -> str:
    """Model tokens back to a string (a leading WordPiece ``##`` is dropped)."""
    text = tokenizer.convert_tokens_to_string(list(tokens)).strip()
    return text[2:] if text.startswith("##") else text


# One piece (over 60 lines): one batched forward and backward loop over the texts.
def token_importance(
    model,
    tokenizer,
    texts: Sequence[str],
    text_pairs: Sequence[str | None],
    labels: Sequence[int],
    *,
    transform_pair: bool,
    batch_size: int = 16,
    max_length: int = 256,
) -> list[Importance]:
    """Embedding × gradient importance of every token, batch by batch.

    Args:
        model: A loaded ``AutoModelForSequenceClassification`` (put in eval mode here).
        tokenizer: Its fast tokenizer (``sequence_ids`` is needed to tell the texts apart).
        texts: First inputs.
        text_pairs: Second inputs (``None`` for single-text tasks).
        labels: Label index per input for the loss; -1 means "use the predicted label".
        transform_pair: Whether the transformed text is the second input (pair tasks).
        batch_size: Inputs per forward / backward pass.
        max_length: Truncation length in model tokens.

    Returns:
        One :class:`Importance` per input, in input order.

    """
    import torch

    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("token importance needs a fast tokenizer (sequence_ids)")
    model.eval()
    device = next(model.parameters()).device
    embed = model.get_input_embeddings()
    out: list[Importance] = []
    for start in range(0, len(texts), batch_size):
        chunk = slice(start, start + batch_size)
        firsts, seconds = list(texts[chunk]), list(text_pairs[chunk])
        pairs = seconds if any(s is not None for s in seconds) else None
        enc = tokenizer(
            firsts, pairs, padding=True, truncation=True, max_length=max_length,
            return_tensors="pt",
        )
        inputs = {k: v.to(device) for k, v in enc.items()}
        input_ids = inputs.pop("input_ids")
        embeddings = embed(input_ids).detach().requires_grad_(True)
        logits = model(inputs_embeds=embeddings, **inputs).logits
        gold = torch.tensor(list(labels[chunk]), device=device)
        target = torch.where(gold >= 0, gold, logits.argmax(-1))
        loss = torch.nn.functional.cross_entropy(logits, target, reduction="sum")
        (grad,) = torch.autograd.grad(loss, embeddings)
        scores = (embeddings * grad).sum(-1).detach().cpu().tolist()
        ids = input_ids.cpu().tolist()
        for row in range(len(firsts)):
            sequence = enc.sequence_ids(row)
            tokens = tokenizer.convert_ids_to_tokens(ids[row])
            own = 1 if transform_pair else 0
            mine = [i for i, s in enumerate(sequence) if s == own]
            other = [i for i, s in enumerate(sequence) if s == 1 - own] if pairs else []
            out.append(
                Importance(
                    tokens=tuple(tokens[i] for i in mine),
                    scores=tuple(float(scores[row][i]) for i in mine),
                    other_tokens=tuple(tokens[i] for i in other),
                    other_scores=tuple(float(scores[row][i]) for i in other),
                    label=int(target[row]),
                )
            )
    return out
