"""CALM inputs as models see them: a pair encoder gets the paper's two inputs, a causal LM and
the lm-eval export the paper's one string, a text-to-text model the `_t2t` row as it is."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from consistency_bench.bench.lm_eval.export_tasks import export_tasks  # noqa: E402
from consistency_bench.bench.modeling.loading import load_classifier  # noqa: E402
from consistency_bench.bench.prompting.prompts import render  # noqa: E402
from consistency_bench.bench.prompting.row_inputs import model_input, t5_prompt  # noqa: E402
from consistency_bench.bench.runner.options import RunnerOptions  # noqa: E402
from consistency_bench.bench.runner.run import predict  # noqa: E402
from consistency_bench.bench.runner.unique_inputs import collect_causal_inputs  # noqa: E402
from tests.helpers import build_suites  # noqa: E402
from tests.tiny_models import tiny_bert  # noqa: E402

SUITES = ["rte_calm", "rte_calm_t2t"]
RTE_QUESTION = "\nQuestion: Is the hypothesis true given the premise? True or False?\nAnswer:"


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("calm-inputs") / "cb", SUITES)


def rows_of(folder: Path, suite: str) -> list[dict]:
    return pq.read_table(folder / suite / "test.parquet").to_pylist()


def expected_pair(row: dict) -> tuple[str, str]:
    """The paper's two inputs of an RTE row, written out from its raw sentences."""
    s1, s2 = row["raw_text"].strip(), row["raw_text_pair"].strip()
    return {
        "original": (f"Sentence1: {s1}", f"Sentence2: {s2}"),
        "reverse": (f"Sentence2: {s2}", f"Sentence1: {s1}"),
        "signal:[]": (f"[Sentence1] {s1}", f"[Sentence2] {s2}"),
        "signal:!": (f"Sentence1! {s1}", f"Sentence2! {s2}"),
    }[row["variant"]]


class TokenizerSpy:
    """A tokenizer that records every ``(text, text_pair)`` it is called with."""

    def __init__(self, tokenizer):
        self.tokenizer, self.seen = tokenizer, []

    def __call__(self, texts, pairs=None, **kwargs):
        self.seen.extend(zip(texts, pairs or [None] * len(texts), strict=True))
        return self.tokenizer(texts, pairs, **kwargs)

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)


def test_pair_encoder_predict_gets_both_texts(folder, tmp_path):
    """A tiny random BERT on rte_calm gets every row as a tokenizer text pair."""
    bert = tiny_bert(tmp_path / "bert", labels=("entailment", "not_entailment"))
    loaded = load_classifier(bert, device="cpu")
    spy = TokenizerSpy(loaded.tokenizer)
    out = tmp_path / "pred.jsonl"
    predict(dataclasses.replace(loaded, tokenizer=spy), str(bert), folder, ["rte_calm"], out,
            RunnerOptions(progress=False))
    rows = rows_of(folder, "rte_calm")
    assert len(spy.seen) == len({(r["text"], r["text_pair"]) for r in rows}) == 277 * 12
    assert all(pair is not None for _, pair in spy.seen)  # no one-string input
    by_id = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert len(by_id) == len(rows)
    checked = [r for r in rows[:36] if r["variant"] in ("original", "reverse", "signal:[]",
                                                        "signal:!")]
    assert len(checked) == 12
    for row in checked:
        text, pair = expected_pair(row)
        assert (text, pair) in spy.seen
        assert model_input(row, "rte", seq2seq=False) == (text, pair)
        enc = loaded.tokenizer(text, pair, return_tensors="pt")
        assert enc["token_type_ids"].max().item() == 1  # two segments: the pair form
        with torch.inference_mode():
            probs = torch.softmax(loaded.model(**enc).logits, -1)[0].tolist()
        assert by_id[row["id"]]["probs"] == pytest.approx(probs, abs=1e-5), row["id"]


def test_text_to_text_rows_are_given_as_they_are(folder):
    """A `_t2t` row already is T5's input; the T5 prompt does not wrap it a second time."""
    for row in rows_of(folder, "rte_calm_t2t")[:12]:
        assert row["text"].startswith("rte ") and row["text_pair"] is None
        assert t5_prompt(row, "rte") == row["text"]
        assert model_input(row, "rte", seq2seq=True) == (row["text"], None)
    plain = {"suite": "rte_semantic", "text": "A man sleeps.", "text_pair": "A person rests."}
    assert t5_prompt(plain, "rte") == "rte sentence1: A man sleeps. sentence2: A person rests."


def test_causal_prompt_is_the_papers_one_string(folder):
    """Pair rows and `_t2t` rows render one string; demonstrations (one-string pool) too."""
    collected = collect_causal_inputs(folder, SUITES, RunnerOptions(progress=False))
    contexts = {s.suite: [collected.unique[i][0] for i in s.inputs] for s in collected.suites}
    for row, context in zip(rows_of(folder, "rte_calm")[:24], contexts["rte_calm"][:24],
                            strict=True):
        text, pair = expected_pair(row) if row["variant"] in ("original", "reverse",
                                                              "signal:[]", "signal:!") else (
            row["text"], row["text_pair"])
        assert context == f"{text} {pair}{RTE_QUESTION}", row["id"]
    t2t = rows_of(folder, "rte_calm_t2t")[0]
    assert contexts["rte_calm_t2t"][0] == t2t["text"] + RTE_QUESTION
    shots = collect_causal_inputs(folder, ["rte_calm"], RunnerOptions(progress=False,
                                                                      num_fewshot=2))
    context = shots.unique[shots.suites[0].inputs[0]][0]
    demos = context.split("\n\n")
    assert len(demos) == 3 and "None" not in context
    for demo in demos[:2]:  # the pool holds the one-string form: rendered the same way
        assert demo.startswith("Sentence1: ") and " Sentence2: " in demo
        assert demo.endswith(RTE_QUESTION + " True") or demo.endswith(RTE_QUESTION + " False")


def test_lm_eval_export_renders_the_papers_form(folder, tmp_path):
    """lm-eval renders the exported doc_to_text on the pair rows as the paper's one string."""
    lm_eval_utils = pytest.importorskip("lm_eval.utils")
    export_tasks(folder, tmp_path / "tasks", SUITES)
    task = yaml.safe_load((tmp_path / "tasks" / "consistency_bench_rte_calm.yaml").read_text())
    rows = rows_of(folder, "rte_calm")
    for row in rows[:24]:
        assert row["text_pair"] is not None
        rendered = lm_eval_utils.apply_template(task["doc_to_text"], row)
        assert rendered == f"{row['text']} {row['text_pair']}{RTE_QUESTION}"
        assert rendered == render(task["doc_to_text"], row)  # predict renders the same string
    text, pair = expected_pair(rows[0])
    assert lm_eval_utils.apply_template(task["doc_to_text"], rows[0]) == (
        f"{text} {pair}{RTE_QUESTION}")  # Sentence1: <s1> Sentence2: <s2>, as the paper writes
    for sample in task["fewshot_config"]["samples"][:3]:  # pool rows: one string, no "None"
        shot = lm_eval_utils.apply_template(task["doc_to_text"], sample)
        assert shot == sample["text"] + RTE_QUESTION
    t2t = yaml.safe_load((tmp_path / "tasks" / "consistency_bench_rte_calm_t2t.yaml")
                         .read_text())
    assert "text_pair" not in t2t["doc_to_text"]
    row = rows_of(folder, "rte_calm_t2t")[0]
    assert lm_eval_utils.apply_template(t2t["doc_to_text"], row) == row["text"] + RTE_QUESTION
