"""Load Hugging Face models and map their labels to the task label names.

One loader for every part of the harness that runs a model: the prediction runner, the
fine-tuning command and the word-salad gradient transformations all call
:func:`load_classifier`. torch and transformers are imported inside the functions, so
``import bench.modeling`` stays light.

Label mapping: a classifier's ``config.id2label`` names its outputs. Each task label is
matched to a model label by name, ignoring case, ``_``, ``-`` and spaces
(``not_entailment`` = ``NOT ENTAILMENT``). ``--label-map`` overrides the match per task::

    snli:entailment=ENTAILMENT,neutral=NEUTRAL,contradiction=CONTRADICTION;rte:not_entailment=1

A value may be a model label name or an output index, and several outputs joined with ``+``
(``rte:not_entailment=neutral+contradiction`` sums the probabilities of a 3-way NLI head).
The same mapping can be given as a JSON file ``{"snli": {"entailment": "ENTAILMENT"}}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.errors import ConfigError
from bench.tasks import TaskSpec

#: A task label -> the model output indices whose probabilities it collects.
LabelMapping = tuple[tuple[int, ...], ...]
#: Overrides from ``--label-map``: task -> task label -> model label names / indices.
LabelOverrides = dict[str, dict[str, tuple[str, ...]]]


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
            verbalised labels (``bench.causal``).

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

    """

    name: str
    config: object
    tokenizer: object
    kind: str
    id2label: dict[int, str]

    @property
    def is_seq2seq(self) -> bool:
        """Whether the model generates text (T5-style)."""
        return self.kind == "seq2seq"

    @property
    def is_causal(self) -> bool:
        """Whether the model is a decoder-only LM."""
        return self.kind == "causal"


def normalise_label(name: str) -> str:
    """Case-, underscore-, hyphen- and space-insensitive form of a label name."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def resolve_dtype(dtype):
    """A ``torch.dtype`` from a name (``"bfloat16"``, ``"float16"``, ``"float32"``) or None."""
    if dtype is None or dtype == "auto":
        return None
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    names = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16}
    try:
        return names[str(dtype)]
    except KeyError:
        raise ConfigError(f"unknown dtype {dtype!r}; use one of {', '.join(names)}") from None


#: Device types ``--device`` accepts.
DEVICE_TYPES = ("cpu", "cuda", "mps")


def resolve_device(device=None):
    """``torch.device`` from a name; default: ``cuda`` when available, else ``cpu``.

    Raises:
        ConfigError: An unknown device type (``tpu``), or CUDA asked for where there is none.

    """
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = device
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        device = None
    if device is None or device.type not in DEVICE_TYPES:
        raise ConfigError(
            f"--device {name!s}: unknown device; use {', '.join(DEVICE_TYPES)} or cuda:N"
        )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device} requested but CUDA is not available on this machine")
    return device


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


def model_kind(config) -> str:
    """``"classifier"``, ``"seq2seq"`` or ``"causal"`` from a model config.

    A classification head wins; a multimodal (image-text-to-text) checkpoint is causal when
    it runs on text alone (Gemma 3, Mistral 3, LLaVA, ...) and refused otherwise
    (:func:`multimodal_kind`); encoder-decoder configs are text-to-text; a
    decoder-only architecture (``*ForCausalLM``, ``*LMHeadModel``, or no architecture and a
    model type transformers lists as causal) is a causal LM; anything else a classifier.

    Raises:
        ConfigError: A multimodal checkpoint ``predict`` cannot run as a causal LM (the
            message says what to do instead).

    """
    archs = config.architectures or []
    if any(a.endswith("ForSequenceClassification") for a in archs):
        return "classifier"
    multimodal = multimodal_kind(config)
    if multimodal is not None:
        return multimodal
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "causal"
    if not archs:  # no saved head: causal when the type is an LM and no labels were named
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        default_labels = all(str(v).startswith("LABEL_") for v in config.id2label.values())
        if config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and default_labels:
            return "causal"
    return "classifier"


#: Image-text-to-text families whose model, given text alone (no ``pixel_values``), is its
#: causal text model: loaded with ``AutoModelForImageTextToText`` and scored on the causal
#: path. Each is checked by ``tests/test_multimodal.py`` (tiny random weights, the runner's
#: prefix-shared scores against one full forward per choice) with transformers 5.24. Left out
#: on purpose: ``paligemma`` (its prefix attends both ways: scores differ from a causal
#: forward), and families whose tiny model could not be built or run there.
TEXT_ONLY_FAMILIES: frozenset[str] = frozenset({
    "aria", "aya_vision", "cohere2_vision", "deepseek_vl", "exaone4_5", "hyperclovax_vision_v2",
    "idefics3", "lfm2_vl", "lighton_ocr", "llava", "llava_next", "llava_next_video",
    "llava_onevision", "minicpm_ocr", "minicpmv4_6", "minicpmv4_7", "mistral3", "ovis2",
    "pp_chart2table", "shieldgemma2", "smolvlm", "video_llama_3", "video_llava", "vipllava",
})


def multimodal_kind(config) -> str | None:
    """``"causal"`` for a multimodal checkpoint that runs as a causal LM on text, else refuse.

    A config is multimodal when its model type or an architecture is in transformers'
    ``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES``. It runs on the causal path, text only,
    when ``AutoModelForCausalLM`` loads its type whole (``gemma3`` ->
    ``Gemma3ForConditionalGeneration``) or its family is in :data:`TEXT_ONLY_FAMILIES`
    (Mistral 3, LLaVA, ...: :func:`multimodal_loader`). The others would load as a
    classifier with a random head; they are refused before any weights load, with advice.

    Returns:
        ``"causal"``, or None when the config is not multimodal.

    Raises:
        ConfigError: A multimodal checkpoint that cannot run as a causal LM here.

    """
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if not is_multimodal(config):
        return None
    model_type = getattr(config, "model_type", None)
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or model_type in TEXT_ONLY_FAMILIES:
        return "causal"
    archs = list(config.architectures or [])
    what = archs[0] if archs else model_type
    text = getattr(config, "text_config", None)
    text_type = getattr(text, "model_type", None)
    text_class = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(text_type)
    if text_class is not None:
        raise ConfigError(
            f"{what} is a multimodal (image-text-to-text) checkpoint whose text model "
            f"({text_type}) is a causal LM, but model type {model_type!r} is not one predict "
            f"runs on text alone (checked families: bench.modeling.TEXT_ONLY_FAMILIES); save "
            f"its text model as a {text_class} checkpoint (config.text_config and the "
            "language-model weights) and pass that folder to --model, or run it through "
            "lm-eval (docs/runner.md); it is not scored as a classifier (that would be a "
            "random head)"
        )
    raise ConfigError(
        f"{what} is a multimodal (image-text-to-text) checkpoint without a causal text model "
        f"transformers can load (text model: {text_type or 'none'}); predict runs text "
        "classifiers, text-to-text models and causal LMs only"
    )


def is_multimodal(config) -> bool:
    """Whether the config's type or an architecture is an image-text-to-text one."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    archs = set(config.architectures or [])
    return getattr(config, "model_type", None) in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES or (
        bool(archs & set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.values()))
    )


def multimodal_loader(config) -> str | None:
    """``"image-text-to-text"`` when a causal model must load with that auto class.

    That is a :data:`TEXT_ONLY_FAMILIES` checkpoint ``AutoModelForCausalLM`` does not take.
    """
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    model_type = getattr(config, "model_type", None)
    if (is_multimodal(config) and model_type in TEXT_ONLY_FAMILIES
            and model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES):
        return "image-text-to-text"
    return None


#: Errors a broken checkpoint raises while loading (safetensors' own error is added below).
_LOAD_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, RuntimeError, KeyError,
                                                 EOFError)


def _load_errors() -> tuple[type[BaseException], ...]:
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - safetensors ships with transformers
        return _LOAD_ERRORS
    return (*_LOAD_ERRORS, SafetensorError)


def inspect_model(name_or_path) -> ModelInfo:
    """Read a model's config and tokenizer (no weights) and decide its kind.

    Raises:
        ConfigError: The model cannot be found, its config or tokenizer cannot be read, or it
            is a multimodal checkpoint ``predict`` cannot run (:func:`multimodal_kind`).

    """
    from transformers import AutoConfig, AutoTokenizer

    _check_model_path(name_or_path)
    try:
        config = AutoConfig.from_pretrained(str(name_or_path))
        tokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
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
    return ModelInfo(str(name_or_path), config, tokenizer, kind, id2label)


def parse_max_memory(spec: str | None) -> dict | None:
    """``--max-memory 0=20GiB,1=20GiB,cpu=60GiB`` -> ``{0: "20GiB", 1: "20GiB", "cpu": "60GiB"}``.

    Raises:
        ConfigError: A malformed part (names it and says what is accepted).

    """
    if not spec:
        return None
    out: dict = {}
    for part in (p.strip() for p in spec.split(",")):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip().replace(" ", "")
        size = re.fullmatch(r"\d+(\.\d+)?([KMGT]i?B|B)?", value, flags=re.IGNORECASE)
        if not eq or not (key.isdigit() or key in ("cpu", "mps")) or size is None:
            raise ConfigError(
                f"--max-memory part {part!r}: use DEVICE=SIZE with DEVICE a GPU index, cpu or "
                "mps and SIZE like 20GiB (e.g. 0=20GiB,1=20GiB,cpu=60GiB)"
            )
        out[int(key) if key.isdigit() else key] = value
    return out


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
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        if max_memory:
            raise ConfigError("--max-memory applies with --device-map auto only")
        device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype)
    cls = {"seq2seq": AutoModelForSeq2SeqLM, "causal": AutoModelForCausalLM}.get(
        kind, AutoModelForSequenceClassification
    )
    if kind == "causal" and multimodal_loader(info.config):
        cls = AutoModelForImageTextToText  # run on text alone (TEXT_ONLY_FAMILIES)
    kwargs: dict = {}
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
    try:
        try:
            model = cls.from_pretrained(name, **kwargs)
        except (ValueError, ImportError) as exc:
            message = str(exc).lower()
            if "attn_implementation" not in kwargs or not (
                "sdpa" in message or "scaled_dot_product" in message or "attention" in message
            ):
                raise
            kwargs.pop("attn_implementation")  # architecture without SDPA support
            model = cls.from_pretrained(name, **kwargs)
    except _load_errors() as exc:
        raise ConfigError(f"cannot load model {name!r} as {cls.__name__}: {_first_line(exc)}"
                          ) from exc
    if device_map is None:
        model.to(device)
    model.eval()
    tokenizer = info.tokenizer
    if kind == "classifier" and getattr(model.config, "pad_token_id", None) is None:
        model.config.pad_token_id = tokenizer.pad_token_id  # inspect_model set one
    return LoadedModel(model, tokenizer, dict(info.id2label), kind == "seq2seq",
                       kind == "causal", info.config)


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


def parse_label_map(spec: str | None) -> LabelOverrides:
    """Parse ``--label-map``: inline ``task:label=model[+model],...;task:...`` or a JSON file.

    Raises:
        ConfigError: The text is malformed; names the bad part.

    """
    if not spec:
        return {}
    path = Path(spec)
    if spec.endswith(".json") or path.is_file():
        from bench.json_input import JsonFileError, load_json_file

        try:
            data = load_json_file(path)
        except JsonFileError as exc:
            raise ConfigError(f"--label-map file {spec}: {exc.detail}") from None
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(
                f"--label-map file {spec}: expected {{task: {{label: model_label}}}}, got {data!r}"
            )
        out: LabelOverrides = {}
        for task, mapping in data.items():
            out[task] = {}
            for label, target in mapping.items():
                targets = target if isinstance(target, list) else str(target).split("+")
                out[task][str(label)] = tuple(str(t).strip() for t in targets)
        return out
    out = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        task, sep, pairs = part.partition(":")
        if not sep or not task.strip():
            raise ConfigError(
                f"--label-map part {part!r}: expected TASK:label=model_label,... "
                "(e.g. snli:entailment=ENTAILMENT,neutral=NEUTRAL)"
            )
        mapping = out.setdefault(task.strip(), {})
        for pair in filter(None, (p.strip() for p in pairs.split(","))):
            label, eq, target = pair.partition("=")
            if not eq or not label.strip() or not target.strip():
                raise ConfigError(f"--label-map part {part!r}: bad pair {pair!r}; use label=model")
            mapping[label.strip()] = tuple(t.strip() for t in target.split("+"))
    return out


def _model_index(target: str, id2label: Mapping[int, str]) -> int | None:
    by_name = {normalise_label(v): k for k, v in id2label.items()}
    if normalise_label(target) in by_name:
        return by_name[normalise_label(target)]
    if target.isdigit() and int(target) in id2label:
        return int(target)
    return None


def resolve_label_mapping(
    id2label: Mapping[int, str], task: TaskSpec, overrides: LabelOverrides | None = None
) -> LabelMapping:
    """For each task label (in index order), the model outputs that stand for it.

    Args:
        id2label: The model's output index -> label name.
        task: The task whose label names must be covered.
        overrides: Parsed ``--label-map``; entries for ``task`` win over name matching.

    Raises:
        ConfigError: A task label matches no model label (names every unmatched one), or an
            override names a label the task or the model does not have.

    """
    override = dict((overrides or {}).get(task.name, {}))
    task_norm = {normalise_label(n): n for n in task.label_names}
    for label in override:
        if normalise_label(label) not in task_norm:
            raise ConfigError(
                f"--label-map {task.name}: {label!r} is not a label of task {task.name} "
                f"(labels: {', '.join(task.label_names)})"
            )
    override = {task_norm[normalise_label(k)]: v for k, v in override.items()}
    model_labels = ", ".join(f"{k}={v}" for k, v in sorted(id2label.items()))
    mapping: list[tuple[int, ...]] = []
    unmatched: list[str] = []
    for name in task.label_names:
        if name in override:
            indices = []
            for target in override[name]:
                index = _model_index(target, id2label)
                if index is None:
                    raise ConfigError(
                        f"--label-map {task.name}:{name}={target!r}: the model has no such "
                        f"label or index (model labels: {model_labels})"
                    )
                indices.append(index)
            mapping.append(tuple(indices))
            continue
        index = _model_index_by_name(name, id2label)
        if index is None:
            unmatched.append(name)
        else:
            mapping.append((index,))
    if unmatched:
        raise ConfigError(
            f"cannot map the labels of task {task.name}: {', '.join(unmatched)} match no model "
            f"label (model labels: {model_labels}); pass --label-map "
            f"'{task.name}:{unmatched[0]}=MODEL_LABEL,...' or a JSON file"
        )
    used = [i for indices in mapping for i in indices]
    if len(set(used)) != len(used):
        raise ConfigError(
            f"label mapping of task {task.name} uses a model output twice: {mapping}"
        )
    return tuple(mapping)


def _model_index_by_name(name: str, id2label: Mapping[int, str]) -> int | None:
    by_name = {normalise_label(v): k for k, v in id2label.items()}
    return by_name.get(normalise_label(name))


def map_probs(model_probs: Sequence[float], mapping: LabelMapping) -> list[float]:
    """Task-label probabilities: sum the mapped model outputs, renormalise over the task.

    Model outputs no task label uses (e.g. a fourth class) are dropped before renormalising.
    """
    sums = [sum(model_probs[i] for i in indices) for indices in mapping]
    total = sum(sums)
    if total <= 0:
        return [1.0 / len(sums)] * len(sums)
    return [s / total for s in sums]


def match_generated(text: str, task: TaskSpec, overrides: LabelOverrides | None = None):
    """Task label index of a generated answer, or the answer itself when it is free text.

    The answer matches a label name (case/underscore-insensitive), or a model-side name given
    for that label in ``--label-map`` (``boolq:true=yes``).
    """
    norm = normalise_label(text)
    for index, name in enumerate(task.label_names):
        if norm == normalise_label(name):
            return index
    override = (overrides or {}).get(task.name, {})
    for label, targets in override.items():
        if norm in {normalise_label(t) for t in targets}:
            for index, name in enumerate(task.label_names):
                if normalise_label(name) == normalise_label(label):
                    return index
    return text
