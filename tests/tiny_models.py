"""Tiny randomly initialised models written to a folder, for tests (no downloads)."""

from __future__ import annotations

import re
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "a the man woman dog is are not no on in of and to was with two people "
    "entailment neutral contradiction true false positive negative"
).split()


def _vocab() -> list[str]:
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("0123456789.,:;!?'\"-()")
    pieces = ["##" + c for c in letters]
    return SPECIAL + WORDS + letters + pieces


def tiny_bert(path: Path, labels=("entailment", "neutral", "contradiction"), seed: int = 0,
              hidden: int = 16) -> Path:
    """A 2-layer BERT classifier with the given id2label, saved under ``path``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(_vocab()) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(_vocab()), hidden_size=hidden, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=512, num_labels=len(labels),
        id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def tiny_t5(path: Path, seed: int = 0) -> Path:
    """A 1-layer T5 with a word-level tokenizer, saved under ``path``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    path.mkdir(parents=True, exist_ok=True)
    vocab = {tok: i for i, tok in enumerate(["<pad>", "</s>", "<unk>", *WORDS, "mnli", ":"])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = T5Config(
        vocab_size=len(vocab), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
        num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def words(text: str) -> list[str]:
    """Lower-case word tokens (for assertions)."""
    return re.findall(r"\w+", text.lower())


def tiny_gpt2(path: Path, seed: int = 0, corpus: list[str] | None = None, layers: int = 2,
              hidden: int = 32, vocab_size: int = 600, chat: bool = False,
              model_vocab: int | None = None) -> Path:
    """A tiny random GPT-2 with a byte-level BPE tokenizer trained here, saved under ``path``.

    Like GPT-2's own tokenizer, a space attaches to the following word (``" True"`` is one
    token when the word is frequent in ``corpus``), so verbalisers can be one or several tokens.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    corpus = corpus or [
        "Question: True, False or Neither? Answer: True False Neither yes no",
        "The man is not on the dog. A woman was with two people. positive negative",
    ] * 4 + [" ".join(WORDS)]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    backend.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    if chat:
        tokenizer.chat_template = (
            "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}"
        )
    config = GPT2Config(
        vocab_size=max(backend.get_vocab_size(), model_vocab or 0), n_positions=1024,
        n_embd=hidden, n_layer=layers, n_head=2, bos_token_id=0, eos_token_id=0,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
