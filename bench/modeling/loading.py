"""Inspect a model (config and tokenizer) and load its weights on a device or a device map."""

from __future__ import annotations

from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.modeling.devices import resolve_device, resolve_dtype
from consistency_bench.bench.modeling.info import LoadedModel, ModelInfo
from consistency_bench.bench.modeling.model_kinds import model_kind, multimodal_loader


def _check_model_path(name_or_path) -> None:
    """A name that can only be a local path must be an existing folder."""
    text = str(name_or_path)
    if Path(text).exists():
        if not Path(text).is_dir():
            raise ConfigError(f"--model {text}: not a model folder (a file)")
        return
    looks_local = text.startswith((".", "/", "~")) or text.count("/") > 1 or "\\" in text
    if looks_local:
        raise ConfigError(f"--model {text}: no such model folder")


#: Errors a broken checkpoint raises while loading (safetensors' own error is added below).
_LOAD_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, RuntimeError, KeyError,
                                                 EOFError)


def _load_errors() -> tuple[type[BaseException], ...]:
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - safetensors ships with transformers
        return _LOAD_ERRORS
    return (*_LOAD_ERRORS, SafetensorError)


def inspect_model(name_or_path, revision: str | None = None) -> ModelInfo:
    """Read a model's config and tokenizer (no weights) and decide its kind.

    ``revision``: a Hub branch, tag or commit (``predict --revision``; ``reproduce`` passes
    the recorded commit).

    Raises:
        ConfigError: The model cannot be found, its config or tokenizer cannot be read, or it
            is a multimodal checkpoint ``predict`` cannot run (:func:`multimodal_kind`).

    """
    from transformers import AutoConfig, AutoTokenizer

    _check_model_path(name_or_path)
    at = {"revision": revision} if revision else {}
    try:
        config = AutoConfig.from_pretrained(str(name_or_path), **at)
        tokenizer = AutoTokenizer.from_pretrained(str(name_or_path), **at)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot load model {name_or_path!r}: {_first_line(exc)}") from exc
    kind = model_kind(config)
    id2label = {} if kind != "classifier" else {
        int(k): str(v) for k, v in config.id2label.items()
    }
    if kind == "classifier" and tokenizer.pad_token is None:
        # decoder-only classifiers (Llama, GPT-2 heads) ship without a pad token; batching
        # needs one and the head reads the last non-pad token, so pad with EOS as they train
        if tokenizer.eos_token is None:
            raise ConfigError(
                f"model {name_or_path!r}: its tokenizer has neither a pad nor an EOS token, "
                "so inputs cannot be batched"
            )
        tokenizer.pad_token = tokenizer.eos_token
    return ModelInfo(str(name_or_path), config, tokenizer, kind, id2label, revision)


def load_model(info: ModelInfo, device=None, dtype=None, device_map: str | None = None,
               max_memory: dict | None = None) -> LoadedModel:
    """Load the weights of an inspected model (:func:`inspect_model`).

    Encoder-decoder configs (T5, BART with a generation head) load as
    ``AutoModelForSeq2SeqLM``; decoder-only LMs (``model_kind``) as ``AutoModelForCausalLM``
    (bf16 weights on CUDA unless ``dtype`` says otherwise); everything else as
    ``AutoModelForSequenceClassification``. On CUDA the model asks for SDPA attention
    (falling back to the default where the architecture has none).

    Args:
        info: The inspected model.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device`` or None (auto).
        dtype: Weight dtype (``"bfloat16"``, ...) or None to keep the checkpoint's.
        device_map: ``"auto"`` spreads the layers over every visible GPU (then CPU) with
            accelerate, for models larger than one device; ``device`` is then ignored.
        max_memory: Per-device limits for ``device_map`` (:func:`parse_max_memory`).

    Raises:
        ConfigError: The weights cannot be loaded (corrupt weights name the file's error).

    """
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForImageTextToText,
        AutoModelForSeq2SeqLM,
        AutoModelForSequenceClassification,
    )

    kind = info.kind
    device = _load_device(device, device_map, max_memory)
    torch_dtype = resolve_dtype(dtype)
    cls = {"seq2seq": AutoModelForSeq2SeqLM, "causal": AutoModelForCausalLM}.get(
        kind, AutoModelForSequenceClassification
    )
    if kind == "causal" and multimodal_loader(info.config):
        cls = AutoModelForImageTextToText  # run on text alone (TEXT_ONLY_FAMILIES)
    kwargs: dict = {"revision": info.revision} if info.revision else {}
    if torch_dtype is None and kind == "causal" and device.type == "cuda":
        torch_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if torch_dtype is not None:
        kwargs["dtype"] = torch_dtype
    if device.type == "cuda":
        kwargs["attn_implementation"] = "sdpa"
    if device_map is not None:
        kwargs["device_map"] = device_map
        if max_memory:
            kwargs["max_memory"] = max_memory
    name = info.name
    model = _from_pretrained(cls, name, kwargs)
    if device_map is None:
        model.to(device)
    model.eval()
    tokenizer = info.tokenizer
    if kind == "classifier" and getattr(model.config, "pad_token_id", None) is None:
        model.config.pad_token_id = tokenizer.pad_token_id  # inspect_model set one
    return LoadedModel(model, tokenizer, dict(info.id2label), kind == "seq2seq",
                       kind == "causal", info.config)


def _load_device(device, device_map: str | None, max_memory: dict | None):
    """The ``torch.device`` the model's inputs go to (see :func:`load_model`).

    Raises:
        ConfigError: ``device_map`` is not ``"auto"``; ``max_memory`` names a missing GPU
            or comes without ``device_map``.

    """
    import torch

    if device_map is not None:
        if device_map != "auto":
            raise ConfigError(f"--device-map {device_map!r}: use auto")
        gpus = [k for k in (max_memory or {}) if isinstance(k, int)]
        missing = [k for k in gpus if k >= torch.cuda.device_count()]
        if missing:
            raise ConfigError(
                f"--max-memory names GPU {missing[0]}, but this machine has "
                f"{torch.cuda.device_count()} CUDA devices"
            )
        # Limits that name no GPU keep the whole model on the CPU: its inputs and its default
        # dtype are then the CPU's, also on a machine with a GPU.
        on_gpu = torch.cuda.is_available() and (not max_memory or bool(gpus))
        return torch.device("cuda" if on_gpu else "cpu")
    else:
        if max_memory:
            raise ConfigError("--max-memory applies with --device-map auto only")
        return resolve_device(device)


def _from_pretrained(cls, name: str, kwargs: dict):
    """``cls.from_pretrained(name, **kwargs)``, again without SDPA when the architecture has none.

    Raises:
        ConfigError: The weights cannot be loaded.

    """
    try:
        try:
            return cls.from_pretrained(name, **kwargs)
        except (ValueError, ImportError) as exc:
            message = str(exc).lower()
            if "attn_implementation" not in kwargs or not (
                "sdpa" in message or "scaled_dot_product" in message or "attention" in message
            ):
                raise
            kwargs.pop("attn_implementation")  # architecture without SDPA support
            return cls.from_pretrained(name, **kwargs)
    except _load_errors() as exc:
        raise ConfigError(f"cannot load model {name!r} as {cls.__name__}: {_first_line(exc)}"
                          ) from exc


def load_classifier(name_or_path, device=None, dtype=None, device_map: str | None = None,
                    max_memory: dict | None = None) -> LoadedModel:
    """Load a sequence classifier, a text-to-text model or a causal LM and its tokenizer.

    :func:`inspect_model` then :func:`load_model` (see there).

    Raises:
        ConfigError: The model cannot be found or loaded (a missing local folder says
            "no such model folder"; corrupt weights name the file's error).

    """
    if device_map is None:
        resolve_device(device)  # a bad --device fails before anything is read
    return load_model(inspect_model(name_or_path), device, dtype, device_map, max_memory)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
