"""Causal LMs in `predict`: tiny random GPT-2 and a tokenizer trained in the test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from consistency_bench.bench.errors import ConfigError  # noqa: E402
from consistency_bench.bench.modeling.label_map import parse_label_map  # noqa: E402
from consistency_bench.bench.modeling.loading import load_classifier  # noqa: E402
from consistency_bench.bench.prompting.prompts import (  # noqa: E402
    PROMPTS,
    build_context,
    lookup,
    render,
    with_verbalisers,
)
from consistency_bench.bench.runner.causal import choice_probs, encode, make_causal_forward  # noqa: E402
from consistency_bench.bench.runner.options import RunnerOptions  # noqa: E402
from consistency_bench.bench.runner.run import predict  # noqa: E402
from consistency_bench.bench.runner.unique_inputs import collect_causal_inputs  # noqa: E402
from consistency_bench.cli import main  # noqa: E402
from tests.helpers import build_suites  # noqa: E402
from tests.tiny_models import tiny_bert, tiny_gpt2  # noqa: E402

#: The key/value cache is passed under the name the installed transformers takes
#: (``consistency_bench.bench.runner.causal._cache_argument``): its deprecation warning for the old
#: name is
#: an error.
pytestmark = pytest.mark.filterwarnings("error:`past_key_values`:FutureWarning")

SUITES = ["wic_semantic", "sst2_semantic"]


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("causal") / "cb", SUITES)


def suite_texts(folder: Path) -> list[str]:
    texts = []
    for suite in SUITES:
        for row in pq.read_table(folder / suite / "test.parquet").to_pylist():
            texts += [row["text"], row["text_pair"] or ""]
    return texts


@pytest.fixture(scope="module")
def gpt2(folder, tmp_path_factory) -> Path:
    corpus = suite_texts(folder) + ["Question: Answer: True False Neither yes no positive "
                                    "negative Sentence used same way"] * 20
    return tiny_gpt2(tmp_path_factory.mktemp("gpt2") / "m", corpus=corpus, vocab_size=1500)


def opts(**kw) -> RunnerOptions:
    kw.setdefault("progress", False)
    return RunnerOptions(**kw)


def full_sequence_ll(model, ctx: list[int], cont: list[int]) -> float:
    """Reference: one forward over context + continuation, summed token log-probs."""
    with torch.inference_mode():
        logits = model(torch.tensor([ctx + cont])).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)
    return sum(float(logp[len(ctx) - 1 + j, tok]) for j, tok in enumerate(cont))


def test_decoder_only_config_loads_as_causal(gpt2):
    loaded = load_classifier(gpt2, device="cpu")
    assert loaded.is_causal and not loaded.is_seq2seq and loaded.id2label == {}


def test_prefix_shared_scores_equal_full_sequences(gpt2):
    loaded = load_classifier(gpt2, device="cpu")
    items = [
        ("The dog is on the man.\nQuestion: True, False or Neither?\nAnswer:",
         [" True", " Neither", " a much longer answer of many tokens"]),
        ("Short:", [" yes", " no maybe so"]),
        ("A third context that is longer than the others by a few words:", [" no"]),
    ]
    encoded = encode(loaded.tokenizer, items, 1024)
    assert any(len(c) > 1 for e in encoded for c in e.conts)  # the KV-cache path runs
    results = make_causal_forward(loaded, encoded, opts())([0, 1, 2])
    for e, (lls, ntokens) in zip(encoded, results, strict=True):
        assert ntokens == [len(c) for c in e.conts]
        for cont, ll in zip(e.conts, lls, strict=True):
            assert ll == pytest.approx(full_sequence_ll(loaded.model, e.ctx, cont), abs=1e-4)


def lm_eval_cut_ll(model, ctx: list[int], cont: list[int], max_length: int) -> float:
    """lm-eval's HFLM: input ``(ctx + cont)[-(L + 1):][:-1]``, the last len(cont) positions."""
    inp = (ctx + cont)[-(max_length + 1):][:-1]
    with torch.inference_mode():
        logits = model(torch.tensor([inp])).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)[len(inp) - len(cont):]
    return sum(float(logp[j, tok]) for j, tok in enumerate(cont))


def test_cut_contexts_follow_lm_eval_per_choice(gpt2):
    """Issue 32 item 10: each choice keeps L + 1 - len(choice) context tokens, as lm-eval.

    Before, every choice kept L - (longest choice) tokens: the one-token choice below saw
    fewer context tokens than lm-eval gives it, and its score differed.
    """
    loaded = load_classifier(gpt2, device="cpu")
    ctx = "The man is on the dog and the woman was with two people. " * 4 + "Answer:"
    choices = [" yes", " no maybe so and more words here"]
    max_length = 24
    (e,) = encode(loaded.tokenizer, [(ctx, choices)], max_length)
    assert e.truncated and len(e.conts[0]) < len(e.conts[1])
    assert [len(e.context(k)) for k in range(2)] == [max_length + 1 - len(c) for c in e.conts]
    assert len(e.groups()) == 2  # different cut contexts: scored in separate rows
    (lls, _), = make_causal_forward(loaded, [e], opts())([0])
    for k, cont in enumerate(e.conts):
        assert lls[k] == pytest.approx(
            lm_eval_cut_ll(loaded.model, e.ctx, cont, max_length), abs=1e-4)
    # the old rule (L - longest for every choice) gives the short choice another score
    old_ctx = e.ctx[-(max_length - len(e.conts[1])):]
    assert abs(full_sequence_ll(loaded.model, old_ctx, e.conts[0]) - lls[0]) > 1e-4


def test_encoding_splits_like_lm_eval(gpt2):
    """Context tokens = encode(context); continuation = encode(context + cont) minus them."""
    tok = load_classifier(gpt2, device="cpu").tokenizer
    ctx = "Is it so?\nAnswer: "  # trailing space moves to the continuation, as in lm-eval
    (e,) = encode(tok, [(ctx, ["yes"])], 1024)
    whole = tok("Is it so?\nAnswer: yes")["input_ids"]
    assert e.ctx == tok("Is it so?\nAnswer:")["input_ids"]
    assert e.ctx + e.conts[0] == whole[: len(e.ctx)] + whole[len(e.ctx):]
    with pytest.raises(ConfigError, match="--max-length 1"):
        encode(tok, [(ctx, ["yes"])], 1)


def test_predict_end_to_end_probs_are_softmax_of_log_likelihoods(folder, gpt2, tmp_path):
    loaded = load_classifier(gpt2, device="cpu")
    out = tmp_path / "pred.jsonl"
    stats = predict(loaded, str(gpt2), folder, SUITES, out, opts())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    rows = [r for s in SUITES for r in pq.read_table(folder / s / "test.parquet").to_pylist()]
    assert [r["id"] for r in records] == [r["id"] for r in rows]
    assert stats.rows == len(rows) and stats.unique <= stats.rows
    for record in records:
        assert record["label"] == max(range(2), key=record["probs"].__getitem__)
        assert sum(record["probs"]) == pytest.approx(1, abs=1e-5)
    # spot-check three rows against a from-scratch forward of prompt + verbaliser
    tok = loaded.tokenizer
    for row, record in list(zip(rows, records, strict=True))[::200][:3]:
        spec = lookup("becel", row["task"], ["a", "b"])
        ctx = render(spec.template, row)
        ctx_ids = tok(ctx)["input_ids"]
        lls = [full_sequence_ll(loaded.model, ctx_ids, tok(ctx + " " + c)["input_ids"]
                                [len(ctx_ids):]) for c in spec.choices]
        top = max(lls)
        expected = [math.exp(x - top) / sum(math.exp(y - top) for y in lls) for x in lls]
        assert record["probs"] == pytest.approx(expected, abs=1e-4)
    # length normalisation by characters (lm-eval's acc_norm) changes only the scoring step
    normed = tmp_path / "norm.jsonl"
    predict(loaded, str(gpt2), folder, SUITES[:1], normed, opts(length_norm="chars"))
    assert normed.read_text() != out.read_text()[: len(normed.read_text())]


def test_choice_probs_normalisation():
    assert choice_probs([-2.0, -2.0], [1, 1], ["no", "yes"], None) == [0.5, 0.5]
    chars = choice_probs([-2.0, -3.0], [1, 1], ["no", "yes"], "chars")  # -1.0 vs -1.0
    assert chars == pytest.approx([0.5, 0.5])
    tokens = choice_probs([-2.0, -4.0], [1, 2], ["a", "b"], "tokens")
    assert tokens == pytest.approx([0.5, 0.5])
    with pytest.raises(ConfigError):
        choice_probs([0.0], [1], ["a"], "bytes")


def test_prompt_table_covers_every_registered_task_with_matching_labels():
    import consistency_bench.builders.catalog  # noqa: F401  (registers every family's tasks)
    from consistency_bench.bench.registries.tasks import TASKS

    for name, task in TASKS.items():
        spec = lookup(None, name, task.label_names)
        assert len(spec.choices) == task.num_labels, name
        assert (None, name) in PROMPTS, name
    for (family, name), spec in PROMPTS.items():
        assert len(spec.choices) == TASKS[name].num_labels, (family, name)


def test_single_text_suites_get_prompts_without_text_pair():
    from consistency_bench.builders.catalog import SUITES as BUILT

    for spec in BUILT.values():
        if spec.family == "calm" or not spec.task_spec.is_pair:
            prompt = lookup(spec.family, spec.task, spec.task_spec.label_names, False)
            assert "text_pair" not in prompt.template, spec.name


def test_generic_prompt_and_verbaliser_override():
    spec = lookup("generated", "mynli", ["yes", "maybe", "not_so"], is_pair=True)
    assert spec.choices == ("yes", "maybe", "not so")
    assert render(spec.template, {"text": "A", "text_pair": "B"}).startswith("A\nB\n")
    rte = lookup("becel", "rte", ["entailment", "not_entailment"])
    override = parse_label_map("rte:entailment=yes,not_entailment=no")["rte"]
    assert with_verbalisers(rte, "rte", ["entailment", "not_entailment"],
                            override).choices == ("yes", "no")
    with pytest.raises(ConfigError, match="one verbaliser"):
        with_verbalisers(rte, "rte", ["entailment", "not_entailment"],
                         parse_label_map("rte:entailment=a+b")["rte"])


def test_fewshot_context_layout():
    context = build_context("Q", [("A1", "yes"), ("A2", "no")])
    assert context == "A1 yes\n\nA2 no\n\nQ"


def test_fewshot_and_chat_contexts(folder, gpt2, tmp_path):
    loaded = load_classifier(gpt2, device="cpu")
    shots = collect_causal_inputs(folder, ["sst2_semantic"], opts(num_fewshot=2), loaded.tokenizer)
    plain = collect_causal_inputs(folder, ["sst2_semantic"], opts(), loaded.tokenizer)
    assert len(shots.unique) == len(plain.unique)  # every row gets the same demonstrations
    assert all(ctx.count("Answer:") == 3 for ctx, _ in shots.unique)
    heads = {ctx.rsplit("\n\n", 1)[0] for ctx, _ in shots.unique}
    assert len(heads) == 1  # lm-eval's first_n: the first K of the seed's order, for every row
    with pytest.raises(ConfigError, match="no chat template"):
        collect_causal_inputs(folder, ["sst2_semantic"], opts(chat=True), loaded.tokenizer)
    chat_model = tiny_gpt2(tmp_path / "chat", corpus=suite_texts(folder)[:200], chat=True)
    tok = load_classifier(chat_model, device="cpu").tokenizer
    chat = collect_causal_inputs(folder, ["sst2_semantic"], opts(chat=True), tok)
    ctx, choices = chat.unique[0]
    assert ctx.startswith("<|user|>") and ctx.endswith("<|assistant|>")
    assert choices.split("\x1f") == ["negative", "positive"]  # no delimiter after a chat turn
    both = collect_causal_inputs(folder, ["sst2_semantic"], opts(chat=True, num_fewshot=2), tok)
    assert len(both.unique) == len(chat.unique)
    for ctx, _ in both.unique:  # two demonstrations as user / assistant turns, then the row
        assert ctx.count("<|user|>") == 3 and ctx.count("<|assistant|>") == 3
        assert ctx.endswith("<|assistant|>")
    turns = {ctx.rsplit("<|user|>", 1)[0] for ctx, _ in both.unique}
    assert len(turns) == 1  # the same demonstrations for every row
    answers = [t.split("\n")[0] for t in next(iter(turns)).split("<|assistant|>")[1:]]
    assert set(answers) <= {"negative", "positive"}


def test_cli_predicts_causal_without_suites_and_skips_nothing(folder, gpt2, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(gpt2), "--data", str(folder), "--out", str(out),
                 "--no-progress", "--tasks", "wic"]) == 0
    captured = capsys.readouterr()
    assert "wrote 280 rows of 1 suites" in captured.out
    assert "Loading weights" not in captured.err  # --no-progress silences transformers too


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--device", "tpu"], "--device tpu: unknown device"),
        (["--max-length", "0"], "--max-length 0"),
        (["--num-fewshot", "-1"], "--num-fewshot -1"),
        (["--batch-size", "0"], "--batch-size '0'"),
    ],
)
def test_cli_bad_options_are_clean_errors(folder, gpt2, tmp_path, capsys, extra, fragment):
    out = tmp_path / "p.jsonl"
    code = main(["predict", "--model", str(gpt2), "--data", str(folder), "--out", str(out),
                 "--suites", "wic_semantic", "--no-progress", *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert not out.exists()


def test_cli_missing_and_corrupt_models(folder, gpt2, tmp_path, capsys):
    import shutil

    out = tmp_path / "p.jsonl"
    base = ["predict", "--data", str(folder), "--out", str(out), "--suites", "wic_semantic",
            "--no-progress"]
    assert main([*base, "--model", str(tmp_path / "nope")]) == 2
    assert "no such model folder" in capsys.readouterr().err
    broken = tmp_path / "broken"
    shutil.copytree(gpt2, broken)
    (broken / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    assert main([*base, "--model", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "cannot load model" in err and "Traceback" not in err
    assert not out.exists()


def test_generated_suite_predictable_with_label_map(tmp_path, capsys):
    data = tmp_path / "nli.tsv"
    data.write_text("premise\thypothesis\tlabel\nA man plays.\tA man plays music.\t0\n"
                    "Two dogs run.\tThe dogs sleep.\t2\nA cat sits.\tThe cat is old.\t2\n",
                    encoding="utf-8")
    folder = tmp_path / "gen"
    assert main(["generate", "--data", str(data), "--task-type", "nli", "--columns",
                 "premise,hypothesis", "--labels", "entailment,neutral,contradiction",
                 "--name", "mynli",
                 "--types", "symmetric", "--no-wordnet", "--out", str(folder)]) == 0
    bert = tiny_bert(tmp_path / "bert", labels=("LABEL_0", "LABEL_1", "LABEL_2"))
    out = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(bert), "--data", str(folder), "--out", str(out),
                 "--no-progress", "--label-map",
                 "mynli:entailment=LABEL_0,neutral=LABEL_1,contradiction=LABEL_2"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records and all(len(r["probs"]) == 3 for r in records)
    capsys.readouterr()
    # without the map the classifier's labels cover nothing: a clean error, not a traceback
    assert main(["predict", "--model", str(bert), "--data", str(folder), "--out",
                 str(tmp_path / "q.jsonl"), "--no-progress"]) == 2
    assert "cover no built suite" in capsys.readouterr().err


def test_classifier_without_suites_predicts_covered_and_lists_skipped(folder, tmp_path, capsys):
    bert = tiny_bert(tmp_path / "bert", labels=("false", "true"))  # covers wic, not sst2
    out = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(bert), "--data", str(folder), "--out", str(out),
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "skipping 1 suites whose labels the model does not cover: sst2_semantic" in captured.err
    assert "wrote 280 rows of 1 suites" in captured.out


def test_suite_task_falls_back_to_the_manifest():
    from consistency_bench.bench.runner.unique_inputs import suite_task

    task = suite_task({"task": "not_registered_anywhere", "label_names": ["a", "b"]})
    assert task.name == "not_registered_anywhere" and task.label_names == ("a", "b")
    assert suite_task({"task": "rte", "label_names": ["entailment", "not_entailment"]}).is_pair
