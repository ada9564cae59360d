"""Causal LM scoring: log-likelihood of each verbalised label given a prompt.

Tokenisation follows lm-evaluation-harness (``HFLM._encode_pair``): trailing whitespace of
the context moves to the continuation, ``context + continuation`` is encoded whole, and the
continuation's tokens are what follows the context's own encoding. The model input is the
context's tokens followed by the continuation's, exactly as lm-eval scores it, so the two
routes agree up to floating-point noise.

Truncation follows lm-eval's ``HFLM._loglikelihood_tokens`` for each choice: the model input
is ``(context + continuation)[-(L + 1):][:-1]``, so a choice of ``n`` tokens keeps the last
``L + 1 - n`` context tokens. Choices of different lengths can therefore see different cut
contexts; choices whose cut contexts are equal still share one forward pass.

Prefix sharing: each distinct context is run once for all its choices. The last context
position gives the first token of every choice; choices of more than one token continue
from the context's KV cache (repeated per choice, never recomputed), with the padded
context positions masked and explicit position ids. Only the logits that are scored are
computed (the last context position, then the continuation positions).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError

#: Separates the choices in a causal input's key (see ``consistency_bench.bench.runner``).
CHOICE_SEP = "\x1f"


@dataclass(frozen=True)
class Encoded:
    """Token ids of one context and of each of its continuations.

    Attributes:
        ctx: The context's tokens (whole; see ``cut``).
        conts: Each continuation's tokens.
        truncated: Whether the context was cut for any choice.
        cut: When truncated, the context each choice keeps (lm-eval's rule, per choice).

    """

    ctx: list[int]
    conts: list[list[int]]
    truncated: bool = False
    cut: tuple[list[int], ...] | None = None

    def context(self, k: int) -> list[int]:
        """The context tokens choice ``k`` is scored after."""
        return self.ctx if self.cut is None else self.cut[k]

    def groups(self) -> list[tuple[list[int], list[int]]]:
        """``(context, choice indices)``: the choices that share one (cut) context."""
        if self.cut is None:
            return [(self.ctx, list(range(len(self.conts))))]
        found: dict[tuple[int, ...], list[int]] = {}
        for k, ctx in enumerate(self.cut):
            found.setdefault(tuple(ctx), []).append(k)
        return [(list(ctx), ks) for ctx, ks in found.items()]

    @property
    def length(self) -> int:
        """Tokens of the longest context + continuation sequence."""
        return max(len(self.context(k)) + len(c) for k, c in enumerate(self.conts))


def split_key(text: str, pair: str | None) -> tuple[str, list[str]]:
    """Context and continuations of a causal input key ``(context, choices joined)``."""
    return text, (pair or "").split(CHOICE_SEP)


def _encode_kwargs(tokenizer, text: str) -> dict:
    bos = getattr(tokenizer, "bos_token", None)
    if bos and text.startswith(bos):  # lm-eval: no second BOS when the text starts with one
        return {"add_special_tokens": False}
    return {}


def encode(tokenizer, items: Sequence[tuple[str, Sequence[str]]], max_length: int) -> list[Encoded]:
    """Encode ``(context, continuations)`` items as lm-eval does, batched.

    Args:
        tokenizer: The model's tokenizer.
        items: Context and the continuations (target delimiter included) of each input.
        max_length: Tokens the model may see (``L``); a choice of ``n`` tokens keeps the
            last ``L + 1 - n`` context tokens (lm-eval: ``(ctx + cont)[-(L + 1):][:-1]``).

    Raises:
        ConfigError: A continuation alone needs ``max_length`` tokens or more.

    """
    contexts, wholes, owners = [], [], []
    for ctx, conts in items:
        n_spaces = len(ctx) - len(ctx.rstrip())
        moved = ctx[len(ctx) - n_spaces:] if n_spaces else ""
        ctx = ctx[: len(ctx) - n_spaces] if n_spaces else ctx
        contexts.append(ctx)
        for cont in conts:
            wholes.append(ctx + moved + cont)
            owners.append(len(contexts) - 1)
    ctx_ids = _batch_encode(tokenizer, contexts)
    whole_ids = _batch_encode(tokenizer, wholes)
    out: list[Encoded] = []
    pos = 0
    for i, (_, conts) in enumerate(items):
        ids = ctx_ids[i]
        tails = [whole_ids[pos + k][len(ids):] for k in range(len(conts))]
        pos += len(conts)
        longest = max(len(t) for t in tails)
        if longest == 0:
            raise ConfigError(f"a verbaliser of context {contexts[i][-60:]!r} encodes to no token")
        if longest >= max_length:
            raise ConfigError(
                f"--max-length {max_length}: a verbaliser needs {longest} tokens; raise it"
            )
        out.append(cut_per_choice(ids, tails, max_length))
    return out


def cut_per_choice(ids: list[int], conts: list[list[int]], max_length: int) -> Encoded:
    """lm-eval's left truncation, per choice: ``(ctx + cont)[-(L + 1):][:-1]``.

    A choice of ``n`` tokens keeps the last ``L + 1 - n`` context tokens, so choices of
    different lengths may keep different contexts (``Encoded.cut``).
    """
    keeps = [max_length + 1 - len(c) for c in conts]
    if all(len(ids) <= keep for keep in keeps):
        return Encoded(ids, conts)
    return Encoded(ids, conts, True, tuple(ids[-keep:] for keep in keeps))


def _batch_encode(tokenizer, texts: list[str]) -> list[list[int]]:
    plain = [i for i, t in enumerate(texts) if not _encode_kwargs(tokenizer, t)]
    special = [i for i, t in enumerate(texts) if _encode_kwargs(tokenizer, t)]
    out: list[list[int]] = [[] for _ in texts]
    for idx, kwargs in ((plain, {}), (special, {"add_special_tokens": False})):
        if idx:
            enc = tokenizer([texts[i] for i in idx], **kwargs)["input_ids"]
            for i, ids in zip(idx, enc, strict=True):
                out[i] = list(ids)
    return out


# One piece (over 60 lines): a factory; its closures share the model's settings.
def make_causal_forward(loaded, encoded: dict[int, Encoded] | Sequence[Encoded], options):
    """Batch of input indices -> ``[log-likelihoods, token counts]`` per input.

    One forward over the left-padded contexts, keeping only the last position's logits;
    continuations longer than one token run a second, short forward from the contexts' KV
    cache. Log-softmax in float32.
    """
    import torch

    model = loaded.model
    device = loaded.device
    tok = loaded.tokenizer
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    amp = contextlib.nullcontext()
    if device.type == "cuda" and options.amp and next(model.parameters()).dtype == torch.float32:
        amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        amp = torch.autocast("cuda", dtype=amp_dtype)

    import inspect

    keep_last = "logits_to_keep" in inspect.signature(model.forward).parameters

    def forward(batch: list[int]) -> list:
        # one row per distinct (cut) context of each input: uncut inputs have one
        owners = [(pos, ks) for pos, i in enumerate(batch) for _, ks in encoded[i].groups()]
        items = [Encoded(ctx, [encoded[i].conts[k] for k in ks])
                 for i in batch for ctx, ks in encoded[i].groups()]
        scores = _forward_rows(items)
        out = [[[0.0] * len(encoded[i].conts), [len(c) for c in encoded[i].conts]]
               for i in batch]
        for (pos, ks), row in zip(owners, scores, strict=True):
            for k, s in zip(ks, row, strict=True):
                out[pos][0][k] = round(s, 6)
        return out

    def _forward_rows(items: list[Encoded]) -> list[list[float]]:
        lens = [len(e.ctx) for e in items]
        width = max(lens)
        # left padding: every context ends at the last position, so only that position's
        # logits are computed (``logits_to_keep=1``); position ids skip the padding
        ids = torch.full((len(items), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(items), width), dtype=torch.long)
        for row, e in enumerate(items):
            ids[row, width - len(e.ctx):] = torch.tensor(e.ctx, dtype=torch.long)
            mask[row, width - len(e.ctx):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        ids, mask, positions = ids.to(device), mask.to(device), positions.to(device)
        tails = [(row, k) for row, e in enumerate(items) for k, c in enumerate(e.conts)
                 if len(c) > 1]
        kwargs = {"logits_to_keep": 1} if keep_last else {}
        with torch.inference_mode(), amp:
            out = model(input_ids=ids, attention_mask=mask, position_ids=positions,
                        use_cache=bool(tails), **kwargs)
            last = torch.log_softmax(out.logits[:, -1].float(), dim=-1).cpu()
            scores = [[float(last[row, c[0]]) for c in e.conts] for row, e in enumerate(items)]
            if tails:
                lens_t = torch.tensor(lens, device=device)
                _score_tails(model, _output_cache(out), items, tails, mask, lens_t, scores,
                             pad_id, device)
        return scores

    return forward


def _score_tails(model, cache, items, tails, mask, lens_t, scores, pad_id, device) -> None:
    """Add the log-likelihood of tokens 2.. of multi-token continuations, from the cache."""
    import torch

    rows = torch.tensor([row for row, _ in tails], device=device)
    cache.reorder_cache(rows)  # one cache row per continuation, sharing the context's K/V
    conts = [items[row].conts[k] for row, k in tails]
    width = max(len(c) - 1 for c in conts)
    ids = torch.full((len(tails), width), pad_id, dtype=torch.long)
    tail_mask = torch.zeros((len(tails), width), dtype=torch.long)
    for i, c in enumerate(conts):
        ids[i, : len(c) - 1] = torch.tensor(c[:-1], dtype=torch.long)
        tail_mask[i, : len(c) - 1] = 1
    ids, tail_mask = ids.to(device), tail_mask.to(device)
    full_mask = torch.cat([mask[rows], tail_mask], dim=1)
    positions = lens_t[rows].unsqueeze(1) + torch.arange(width, device=device).unsqueeze(0)
    out = model(input_ids=ids, attention_mask=full_mask, position_ids=positions,
                use_cache=False, **{_cache_argument(model): cache})
    logp = torch.log_softmax(out.logits.float(), dim=-1).cpu()
    for i, ((row, k), c) in enumerate(zip(tails, conts, strict=True)):
        target = torch.tensor(c[1:], dtype=torch.long)
        picked = logp[i, torch.arange(len(c) - 1), target]
        scores[row][k] += float(picked.sum())


def _output_cache(out):
    """The key/value cache of a model output: ``cache`` from transformers 5.x.

    Reading ``out.past_key_values`` there logs a deprecation warning on every run.
    """
    return out["cache"] if "cache" in out else out["past_key_values"]


def _cache_argument(model) -> str:
    """The name under which ``model.forward`` takes a key/value cache.

    ``cache`` from transformers 5.x (where ``past_key_values`` is deprecated, to be removed in
    5.40), ``past_key_values`` before.
    """
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def choice_probs(lls: Sequence[float], ntokens: Sequence[int], choices: Sequence[str],
                 length_norm: str | None) -> list[float]:
    """Softmax over the choices' (optionally length-normalised) log-likelihoods.

    Args:
        lls: Log-likelihood of each continuation.
        ntokens: Its number of tokens.
        choices: The verbalisers (for ``chars``: lm-eval's ``acc_norm`` divides by their
            length in characters).
        length_norm: None, ``"chars"`` or ``"tokens"``.

    """
    import math

    if length_norm == "chars":
        scores = [ll / max(1, len(c)) for ll, c in zip(lls, choices, strict=True)]
    elif length_norm == "tokens":
        scores = [ll / max(1, n) for ll, n in zip(lls, ntokens, strict=True)]
    elif length_norm is None:
        scores = list(lls)
    else:
        raise ConfigError(f"unknown length normalisation {length_norm!r}; use chars or tokens")
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]
