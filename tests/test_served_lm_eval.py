"""lm-eval both ways against the stand-in server: its API models and our served client agree.

Real lm-eval 0.4.13 (extra ``lm-eval``, with its ``api`` extra) runs as a whole process:
``local-completions`` on the exported multiple-choice tasks, and ``local-chat-completions``
on the ``export-lm-eval --generative`` tasks; ``convert-lm-eval`` reads both, and the files
must equal what ``predict --api openai`` writes from the same server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("lm_eval")
pytest.importorskip("tenacity")  # lm-eval's API models import it

from consistency_bench.bench.served.answers import INVALID_ANSWER, answer_regex, parse_answer
from consistency_bench.cli import main
from tests.openai_standin import Standin
from tests.test_served import make_folder, make_gpt2, read, served

SUITE = "wic_semantic"


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return make_folder(corpora, tmp_path_factory)


@pytest.fixture(scope="module")
def gpt2(folder, tmp_path_factory) -> Path:
    return make_gpt2(folder, tmp_path_factory)


@pytest.fixture(scope="module")
def server(gpt2):
    standin = Standin(gpt2, served="tiny").start()
    yield standin
    standin.stop()


def lm_eval(root: Path, tasks: Path, model: str, model_args: str, task: str,
            *extra: str) -> Path:
    out = root / "out"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_CACHE": str(root / "cache"),
           "OPENAI_API_KEY": "unused"}
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", model, "--model_args", model_args,
         "--tasks", task, "--include_path", str(tasks), "--output_path", str(out),
         "--log_samples", *extra],
        env=env, capture_output=True, cwd=root, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_local_completions_samples_convert_to_the_served_clients_file(server, folder, gpt2,
                                                                      tmp_path):
    tasks = tmp_path / "tasks"
    assert main(["export-lm-eval", "--data", str(folder), "--out", str(tasks), "--suites",
                 SUITE]) == 0
    # max_length L + 2: lm-eval's API models keep (ctx + cont)[-(max_length - 1):], the
    # served client (ctx + cont)[-(L + 1):] (docs/runner.md, "Served models")
    out = lm_eval(tmp_path, tasks, "local-completions",
                  f"model=tiny,base_url={server.url}/completions,tokenizer={gpt2},"
                  "tokenizer_backend=huggingface,max_length=1024,num_concurrent=4",
                  "consistency_bench")
    converted, ours = tmp_path / "lmeval.jsonl", tmp_path / "served.jsonl"
    assert main(["convert-lm-eval", str(out), "--data", str(folder), "--out",
                 str(converted)]) == 0
    assert main(served(server, folder, ours, "--suites", SUITE, "--max-length", "1022")) == 0
    a, b = read(converted), read(ours)
    assert a.keys() == b.keys() and len(a) == 280
    assert sum(a[k]["label"] == b[k]["label"] for k in a) / len(a) >= 0.999
    assert max(abs(p - q) for k in a for p, q in zip(a[k]["probs"], b[k]["probs"],
                                                     strict=True)) <= 1e-4


def test_generative_export_round_trip_with_local_chat_completions(server, folder, tmp_path):
    tasks = tmp_path / "tasks"
    assert main(["export-lm-eval", "--data", str(folder), "--out", str(tasks), "--suites",
                 SUITE, "--generative"]) == 0
    config = yaml.safe_load((tasks / f"consistency_bench_gen_{SUITE}.yaml").read_text())
    assert config["output_type"] == "generate_until"
    assert config["metadata"]["choices"] == ["no", "yes"]
    assert config["filter_list"][0]["filter"][0]["fallback"] == INVALID_ANSWER
    out = lm_eval(tmp_path, tasks, "local-chat-completions",
                  f"model=tiny,base_url={server.url}/chat/completions,num_concurrent=4",
                  "consistency_bench_gen", "--apply_chat_template")
    converted, ours = tmp_path / "lmeval.jsonl", tmp_path / "served.jsonl"
    assert main(["convert-lm-eval", str(out), "--data", str(folder), "--out",
                 str(converted)]) == 0
    assert main(served(server, folder, ours, "--suites", SUITE, "--mode", "generate",
                       "--top-logprobs", "0")) == 0
    assert converted.read_bytes() == ours.read_bytes()  # same requests, same answers
    # and the same answer texts, row by row (most are invalid: the model is random)
    import sqlite3

    with sqlite3.connect(ours.with_suffix(".cache") / "requests.sqlite3") as db:
        texts = {json.loads(body)["messages"][-1]["content"]:
                 json.loads(resp)["choices"][0]["message"]["content"]
                 for body, resp in db.execute("SELECT body, response FROM responses")}
    logged = [json.loads(line) for path in out.rglob("samples_*.jsonl")
              for line in path.read_text().splitlines()]
    assert len(logged) == 280
    for sample in logged:
        prompt = sample["arguments"]["gen_args_0"]["arg_0"]
        while isinstance(prompt, list) and len(prompt) == 1:  # lm-eval logs ['<JSON>']
            prompt = prompt[0]
        messages = json.loads(prompt) if isinstance(prompt, str) else prompt
        assert texts[messages[-1]["content"]] == sample["resps"][0][0]
    # valid answers convert to their label: rewrite some logged answers and convert again
    (samples,) = out.rglob("samples_*.jsonl")
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    for i, sample in enumerate(lines):
        sample["resps"] = [[[" Yes.", "no", "maybe"][i % 3]]]
    samples.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["convert-lm-eval", str(out), "--data", str(folder), "--out",
                 str(converted)]) == 0
    labels = {x["doc"]["id"]: [1, 0, INVALID_ANSWER][i % 3] for i, x in enumerate(lines)}
    assert {k: r["label"] for k, r in read(converted).items()} == labels
    # lm-eval's strict filter agrees with our parser on every answer it logged
    import re

    pattern = re.compile(config["filter_list"][0]["filter"][0]["regex_pattern"])
    for path in out.rglob("samples_*.jsonl"):
        for line in path.read_text().splitlines():
            sample = json.loads(line)
            text = sample["resps"][0][0]
            ours_label = parse_answer(text, ["no", "yes"])
            assert bool(pattern.findall(text)) == (ours_label is not None)


@pytest.mark.parametrize(("text", "label"), [
    ("yes", 1), (" Yes.", 1), ("YES!", 1), ("'no'", 0), ("n o", 0), ("No\n", 0),
    ("yes no", None), ("Answer: yes", None), ("", None), ("yess", None), ("ye", None),
])
def test_strict_answers_and_the_lm_eval_filter_agree(text, label):
    import re

    assert parse_answer(text, ["no", "yes"]) == label
    assert bool(re.findall(answer_regex(["no", "yes"]), text)) == (label is not None)
