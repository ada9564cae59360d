"""A model's kind from its config: classifier, text-to-text or causal; multimodal checkpoints."""

from __future__ import annotations

from consistency_bench.bench.errors import ConfigError


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
            f"runs on text alone (checked families: consistency_bench.bench.modeling.model_kinds.TEXT_ONLY_FAMILIES); save "  # noqa: E501
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
