"""What the harness knows about a model: before its weights load, and once they have."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LoadedModel:
    """A model ready for inference.

    Attributes:
        model: The ``torch.nn.Module`` (eval mode, on its device).
        tokenizer: Its tokenizer.
        id2label: Output index -> label name (classifiers); empty for text-to-text models
            and causal LMs.
        is_seq2seq: Whether the model generates text (T5-style) instead of class logits.
        is_causal: Whether the model is a decoder-only LM, scored by the log-likelihood of
            verbalised labels (``consistency_bench.bench.runner.causal``).

    """

    model: object
    tokenizer: object
    id2label: dict[int, str]
    is_seq2seq: bool
    is_causal: bool = False
    config: object = None

    def __post_init__(self) -> None:
        if self.config is None:
            self.config = getattr(self.model, "config", None)

    @property
    def device(self):
        """The device of the model's first parameters (its input embeddings).

        With ``--device-map`` the layers are spread over several devices; inputs go to the
        first one and accelerate's hooks move activations between them.
        """
        return next(self.model.parameters()).device


@dataclass
class ModelInfo:
    """What the runner needs to know about a model before its weights load.

    The config and tokenizer are small files: every check that does not need the weights
    (suites, prompts, few-shot pools, lengths, label mapping) runs against this.

    Attributes:
        name: Hub name or local folder.
        config: The model's ``PretrainedConfig``.
        tokenizer: Its tokenizer.
        kind: ``"classifier"``, ``"seq2seq"`` or ``"causal"`` (:func:`model_kind`).
        id2label: Output index -> label name (classifiers only).
        revision: Hub revision (branch, tag or commit) the files were read at, or None.

    """

    name: str
    config: object
    tokenizer: object
    kind: str
    id2label: dict[int, str]
    revision: str | None = None

    @property
    def is_seq2seq(self) -> bool:
        """Whether the model generates text (T5-style)."""
        return self.kind == "seq2seq"

    @property
    def is_causal(self) -> bool:
        """Whether the model is a decoder-only LM."""
        return self.kind == "causal"
