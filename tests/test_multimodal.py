"""Model detection: multimodal checkpoints run as causal LMs or are refused, never classifiers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from transformers import AutoConfig  # noqa: E402
from transformers.models.auto.configuration_auto import CONFIG_MAPPING  # noqa: E402
from transformers.models.auto.modeling_auto import (  # noqa: E402
    MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
)

from consistency_bench.bench.errors import ConfigError  # noqa: E402
from consistency_bench.bench.modeling.loading import load_classifier  # noqa: E402
from consistency_bench.bench.modeling.model_kinds import TEXT_ONLY_FAMILIES, model_kind  # noqa: E402
from consistency_bench.cli import main  # noqa: E402
from tests.tiny_models import tiny_gpt2  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")


def _text_type(model_type: str) -> str | None:
    try:
        config = CONFIG_MAPPING[model_type]()
    except Exception:
        return None
    return getattr(getattr(config, "text_config", None), "model_type", None)


#: Every image-text-to-text family of the installed transformers whose text model is causal
#: (its text config's type, or its own type, has an AutoModelForCausalLM class).
CAUSAL_TEXT_FAMILIES = sorted(
    mt for mt in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    if {mt, _text_type(mt)} & set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
)


def test_the_family_list_is_not_empty():
    assert {"gemma3", "mistral3", "llava"} <= set(CAUSAL_TEXT_FAMILIES)
    assert set(CAUSAL_TEXT_FAMILIES) >= TEXT_ONLY_FAMILIES


#: Sizes that make any family's default config tiny (attributes a config lacks are skipped).
SMALL = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
         "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 64, "vocab_size": 700,
         "max_position_embeddings": 512, "num_layers": 1, "d_model": 32, "image_size": 28,
         "patch_size": 14, "projection_dim": 32, "num_experts": 2, "moe_intermediate_size": 32,
         "num_experts_per_tok": 1, "depth": 1, "embed_dim": 32, "num_heads": 2,
         "out_hidden_size": 32, "sliding_window": 64, "ffn_dim": 64}


def tiny_config(model_type: str):
    """The family's default config with its text and vision parts shrunk (image token 699)."""
    config = CONFIG_MAPPING[model_type]()
    for part in (config.text_config, getattr(config, "vision_config", None)):
        for name, value in SMALL.items():
            if part is not None and getattr(part, name, None) is not None:
                setattr(part, name, value)
        if part is not None and getattr(part, "layer_types", None) is not None:
            part.layer_types = ["full_attention"] * part.num_hidden_layers
    for name in ("image_token_id", "image_token_index"):
        if hasattr(config, name):
            setattr(config, name, 699)
    config.architectures = [MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES[model_type]]
    return config


def assert_scores_match_full_forward(loaded) -> None:
    from consistency_bench.bench.runner.causal import encode, make_causal_forward
    from consistency_bench.bench.runner.options import RunnerOptions

    items = [("The dog is on the man. Answer:", [" True", " a much longer answer"]),
             ("Short:", [" yes"])]
    encoded = encode(loaded.tokenizer, items, 512)
    results = make_causal_forward(loaded, encoded, RunnerOptions(progress=False))([0, 1])
    for enc, (lls, _) in zip(encoded, results, strict=True):
        for cont, ll in zip(enc.conts, lls, strict=True):
            with torch.inference_mode():
                logits = loaded.model(input_ids=torch.tensor([enc.ctx + cont])).logits[0]
            logp = torch.log_softmax(logits.float(), -1)
            ref = sum(float(logp[len(enc.ctx) - 1 + j, t]) for j, t in enumerate(cont))
            assert ll == pytest.approx(ref, abs=1e-3)


@pytest.mark.filterwarnings("ignore")  # default configs of some families warn on creation
@pytest.mark.parametrize("model_type", sorted(TEXT_ONLY_FAMILIES))
def test_text_only_families_score_as_causal_lms(model_type, tokenizer_dir):
    """Each listed family, tiny and random, given text alone: the runner's scores are right."""
    from transformers import AutoModelForImageTextToText, AutoTokenizer

    from consistency_bench.bench.modeling.info import LoadedModel

    config = tiny_config(model_type)
    assert model_kind(config) == "causal"
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_config(config).eval()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    assert_scores_match_full_forward(LoadedModel(model, tokenizer, {}, False, True, config))


def test_mistral3_checkpoint_loads_and_runs_on_the_causal_path(tokenizer_dir, tmp_path):
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(0)
    AutoModelForImageTextToText.from_config(tiny_config("mistral3")).save_pretrained(tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_dir / name, tmp_path / name)
    loaded = load_classifier(tmp_path, device="cpu")
    assert loaded.is_causal and loaded.id2label == {}
    assert type(loaded.model).__name__ == "Mistral3ForConditionalGeneration"
    assert_scores_match_full_forward(loaded)


@pytest.mark.parametrize("model_type", CAUSAL_TEXT_FAMILIES)
def test_causal_text_multimodal_is_causal_or_refused_with_advice(model_type, tmp_path):
    """A saved config (no weights) of each family: causal, or a refusal naming the text model."""
    config = CONFIG_MAPPING[model_type]()
    config.architectures = [MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES[model_type]]
    config.save_pretrained(tmp_path)
    config = AutoConfig.from_pretrained(tmp_path)
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or model_type in TEXT_ONLY_FAMILIES:
        assert model_kind(config) == "causal"
        return
    with pytest.raises(ConfigError) as err:
        model_kind(config)
    message = str(err.value)
    text_class = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[_text_type(model_type)]
    assert "multimodal" in message and text_class in message and "random head" in message


def test_every_image_text_family_is_never_a_classifier():
    for model_type, cls in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.items():
        try:
            config = CONFIG_MAPPING[model_type]()
        except Exception:
            config = CONFIG_MAPPING["llava"]()
            config.model_type = model_type
        config.architectures = [cls]
        try:
            kind = model_kind(config)
        except ConfigError:
            continue
        assert kind == "causal", (model_type, kind)


def _tiny_gemma3(path: Path, tokenizer_dir: Path) -> Path:
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    config = Gemma3Config(
        text_config={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 64,
                     "vocab_size": 600, "max_position_embeddings": 512, "sliding_window": 64},
        vision_config={"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "intermediate_size": 64, "image_size": 28, "patch_size": 14},
        mm_tokens_per_image=4,
    )
    torch.manual_seed(0)
    Gemma3ForConditionalGeneration(config).save_pretrained(path)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_dir / name, path / name)
    return path


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory) -> Path:
    return tiny_gpt2(tmp_path_factory.mktemp("tok") / "m")


def test_gemma3_multimodal_runs_on_the_causal_path(tokenizer_dir, tmp_path):
    from consistency_bench.bench.runner.causal import encode, make_causal_forward
    from consistency_bench.bench.runner.options import RunnerOptions

    loaded = load_classifier(_tiny_gemma3(tmp_path / "g3", tokenizer_dir), device="cpu")
    assert loaded.is_causal and loaded.id2label == {}
    assert type(loaded.model).__name__ == "Gemma3ForConditionalGeneration"
    items = [("The dog is on the man. Answer:", [" True", " a much longer answer"])]
    (enc,) = encode(loaded.tokenizer, items, 512)
    (result,) = make_causal_forward(loaded, [enc], RunnerOptions(progress=False))([0])
    for cont, ll in zip(enc.conts, result[0], strict=True):
        with torch.inference_mode():
            logits = loaded.model(input_ids=torch.tensor([enc.ctx + cont])).logits[0].float()
        logp = torch.log_softmax(logits, -1)
        ref = sum(float(logp[len(enc.ctx) - 1 + j, t]) for j, t in enumerate(cont))
        assert ll == pytest.approx(ref, abs=1e-4)


def test_paligemma_is_refused_before_any_weights_load(tokenizer_dir, tmp_path, capsys):
    folder = tmp_path / "pg"
    folder.mkdir()
    config = CONFIG_MAPPING["paligemma"]()
    config.architectures = ["PaliGemmaForConditionalGeneration"]
    config.save_pretrained(folder)  # no weights at all: a load would fail differently
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_dir / name, folder / name)
    data = tmp_path / "data"  # an empty built folder: the model is refused first
    data.mkdir()
    (data / "suites.json").write_text(json.dumps({"suites": {}}))
    out = tmp_path / "p.jsonl"
    code = main(["predict", "--model", str(folder), "--data", str(data), "--out", str(out),
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "GemmaForCausalLM" in err and "cannot load model '" not in err
    assert not out.exists()


def test_decoder_classifier_without_pad_token_batches(tmp_path):
    """A GPT-2 classification head ships no pad token: EOS pads, no crash on batching."""
    from transformers import GPT2ForSequenceClassification

    from consistency_bench.bench.runner.forward import make_forward
    from consistency_bench.bench.runner.options import RunnerOptions

    path = tiny_gpt2(tmp_path / "lm")
    model = GPT2ForSequenceClassification.from_pretrained(
        path, num_labels=2, id2label={0: "entailment", 1: "not_entailment"},
        label2id={"entailment": 0, "not_entailment": 1})
    model.config.architectures = ["GPT2ForSequenceClassification"]
    model.save_pretrained(tmp_path / "clf")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(path / name, tmp_path / "clf" / name)
    loaded = load_classifier(tmp_path / "clf", device="cpu")
    assert loaded.id2label == {0: "entailment", 1: "not_entailment"}
    tok = loaded.tokenizer
    encoded = [dict(tok("a short one")), dict(tok("a rather longer input of many words"))]
    probs = make_forward(loaded, encoded, RunnerOptions(progress=False))([0, 1])
    for i, row in enumerate(probs):
        with torch.inference_mode():
            alone = torch.softmax(loaded.model(torch.tensor([encoded[i]["input_ids"]])).logits,
                                  -1)[0].tolist()
        assert row == pytest.approx(alone, abs=1e-4)
