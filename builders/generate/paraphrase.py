"""Pluggable paraphrasers for semantic sets (BECEL section 3.2 used QuillBot, then MTurk).

A paraphraser is any callable ``list[str] -> list[str]``. ``Seq2SeqParaphraser`` wraps a local
``transformers`` sequence-to-sequence model (beam search, no sampling, so it is
deterministic). No paraphrase weights ship with this project and the Hub is not reachable
offline, so semantic generation without ``--paraphraser MODEL_PATH`` raises a clear error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError

Paraphraser = Callable[[Sequence[str]], list[str]]

NO_MODEL = (
    "semantic (paraphrase) sets need a paraphraser: pass --paraphraser PATH to a local "
    "transformers sequence-to-sequence model folder (e.g. a T5 or BART paraphrase model saved "
    "with save_pretrained). No default weights are bundled and the Hub is not reachable offline"
)


class Seq2SeqParaphraser:
    """Paraphrase with a local seq2seq model: beam search, first beam, fixed settings.

    Args:
        model_path: Folder with the model and tokenizer (``save_pretrained`` layout).
        prefix: Text put before every input (e.g. ``"paraphrase: "`` for T5 models).
        num_beams: Beam width.
        max_new_tokens: Longest paraphrase.
        batch_size: Inputs per forward pass.

    """

    def __init__(
        self,
        model_path: str,
        prefix: str = "",
        num_beams: int = 4,
        max_new_tokens: int = 64,
        batch_size: int = 16,
    ) -> None:
        path = Path(model_path)
        if not path.is_dir():
            raise ConfigError(f"--paraphraser {model_path}: not a local model folder. {NO_MODEL}")
        try:
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.model = AutoModelForSeq2SeqLM.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError, ImportError) as exc:
            raise ConfigError(
                f"--paraphraser {model_path}: cannot load a seq2seq model and tokenizer: {exc}"
            ) from None
        self.model.eval()
        self.prefix, self.num_beams = prefix, num_beams
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size

    def __call__(self, texts: Sequence[str]) -> list[str]:
        """One paraphrase per text."""
        import torch

        out: list[str] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [self.prefix + t for t in texts[start : start + self.batch_size]]
            encoded = self.tokenizer(batch, return_tensors="pt", padding=True, truncation=True)
            with torch.no_grad():
                generated = self.model.generate(
                    **encoded, num_beams=self.num_beams, do_sample=False,
                    max_new_tokens=self.max_new_tokens,
                )
            out += [t.strip() for t in self.tokenizer.batch_decode(generated,
                                                                   skip_special_tokens=True)]
        return out


def load_paraphraser(model_path: str | None, prefix: str = "") -> Paraphraser:
    """The paraphraser for ``--paraphraser``; a ``ConfigError`` when none is given."""
    if not model_path:
        raise ConfigError(NO_MODEL)
    return Seq2SeqParaphraser(model_path, prefix=prefix)
