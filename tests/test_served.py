"""``predict --api openai`` against the stand-in server (tests/openai_standin.py).

A tiny random GPT-2 serves both routes: local ``predict`` and the served client must agree
(labels, probabilities within 1e-4), on cut contexts too; errors are one line before any
request of the run; the cache resumes a run killed with SIGKILL without a repeated request;
the key never appears in any output or file.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("httpx")

from consistency_bench.bench.served.answers import INVALID_ANSWER, normalise  # noqa: E402
from consistency_bench.cli import main  # noqa: E402
from tests.helpers import build_suites  # noqa: E402
from tests.openai_standin import Standin  # noqa: E402
from tests.test_causal import suite_texts  # noqa: E402
from tests.tiny_models import tiny_gpt2  # noqa: E402

SUITES = ["wic_semantic", "sst2_semantic"]
ROOT = Path(__file__).resolve().parents[1]


def make_folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("served") / "cb", SUITES)


def make_gpt2(folder: Path, tmp_path_factory) -> Path:
    corpus = suite_texts(folder) + ["Question: Answer: True False Neither yes no positive "
                                    "negative Sentence used same way"] * 20
    return tiny_gpt2(tmp_path_factory.mktemp("gpt2") / "m", corpus=corpus, vocab_size=1500,
                     chat=True)


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


@pytest.fixture
def fresh(server):
    """The server with no faults and zeroed counters."""
    server.faults.__init__()
    server.counter.__init__()
    yield server
    server.open_gate()
    server.faults.__init__()


def served(server, folder, out: Path, *extra: str, cache: Path | None = None) -> list[str]:
    return ["predict", "--api", "openai", "--base-url", server.url, "--model", "tiny",
            "--tokenizer", str(server.model.root), "--data", str(folder), "--out", str(out),
            "--cache", str(cache or out.with_suffix(".cache")), "--no-progress", *extra]


def read(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def agreement(a: dict, b: dict) -> tuple[float, float]:
    assert a.keys() == b.keys()
    same = sum(a[k]["label"] == b[k]["label"] for k in a) / len(a)
    diff = max(abs(p - q) for k in a for p, q in zip(a[k]["probs"], b[k]["probs"], strict=True))
    return same, diff


@pytest.mark.parametrize("extra", [[], ["--suites", "wic_semantic", "--num-fewshot", "2",
                                        "--fewshot-seed", "3"],
                                   ["--suites", "wic_semantic", "--max-length", "48"]],
                         ids=["zero-shot", "two-shot", "cut"])
def test_loglikelihood_agrees_with_local_predict(fresh, folder, gpt2, tmp_path, extra, capsys):
    """Same prompts, demonstrations and truncation: >= 99.9% labels, probs within 1e-4."""
    local, api = tmp_path / "local.jsonl", tmp_path / "api.jsonl"
    length = [] if "--max-length" in extra else ["--max-length", "1022"]
    assert main(["predict", "--model", str(gpt2), "--data", str(folder), "--out", str(local),
                 "--no-progress", *length, *extra]) == 0
    assert main(served(fresh, folder, api, *length, *extra)) == 0
    err = capsys.readouterr().err
    same, diff = agreement(read(local), read(api))
    assert same >= 0.999 and diff <= 1e-4
    assert api.read_text().count("\n") == local.read_text().count("\n")
    if "--max-length" in extra:  # issue 32 item 10: the cut rows agree as well
        assert "were cut (contexts cut from the left, per choice" in err
    record = json.loads(Path(str(api) + ".run.json").read_text())
    assert record["mode"] == "loglikelihood"
    assert record["api"]["endpoint"] == fresh.url.rsplit("/v1", 1)[0]
    assert record["api"]["served_model"] == "tiny"
    assert record["api"]["server_model"]["max_model_len"] == 1024
    assert record["api"]["usage"]["prompt_tokens"] > 0
    from consistency_bench.bench.runrecord.schema import (  # issue 28 item 13's format
        describes,
        read_record,
    )

    checked = read_record(Path(str(api) + ".run.json"))
    assert describes(checked, api) and checked["model"]["source"] == "api"
    assert sum(s["rows"] for s in checked["suites"]) == checked["predictions"]["rows"]


def test_identical_rerun_sends_nothing_and_writes_the_same_file(fresh, folder, tmp_path, capsys):
    out = tmp_path / "a.jsonl"
    cache = tmp_path / "cache"
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", cache=cache)) == 0
    first = out.read_bytes()
    sent = sum(fresh.counter.answered.values())
    assert sent > 0 and fresh.counter.repeated() == 0
    capsys.readouterr()
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", cache=cache)) == 0
    assert sum(fresh.counter.answered.values()) == sent  # nothing sent the second time
    assert out.read_bytes() == first
    assert f"0 sent, {sent} cached" in capsys.readouterr().out


def test_killed_run_resumes_without_a_repeated_request(fresh, folder, tmp_path):
    """SIGKILL mid-run, run again: no answered request is sent twice, the file is identical."""
    reference = tmp_path / "reference.jsonl"
    args = ["--suites", "wic_semantic", "--concurrency", "4"]
    assert main(served(fresh, folder, reference, *args, cache=tmp_path / "c0")) == 0
    fresh.counter.__init__()
    out, cache = tmp_path / "out.jsonl", tmp_path / "c1"
    fresh.faults.gate_after = 60  # answer 60, then hold every request
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "consistency_bench",
                             *served(fresh, folder, out, *args, cache=cache)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while fresh.counter.held < 4 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert fresh.counter.held == 4, proc.stderr.read() if proc.poll() is not None else "held"
    os.kill(proc.pid, signal.SIGKILL)  # every worker waits at the gate: 60 answered, cached
    proc.wait()
    fresh.open_gate(drop_held=True)  # the 4 held requests were never answered
    assert not out.exists()
    assert main(served(fresh, folder, out, *args, cache=cache)) == 0
    assert fresh.counter.repeated() == 0
    rows = len(reference.read_text().splitlines())
    assert sum(fresh.counter.answered.values()) == rows  # 60 before the kill, the rest after
    assert out.read_bytes() == reference.read_bytes()


def test_retries_429_5xx_and_malformed_json_with_retry_after(fresh, folder, tmp_path, capsys):
    fresh.faults.statuses = [429, 503, 500, 502]
    fresh.faults.retry_after = "1"
    fresh.faults.malformed = 2
    out = tmp_path / "p.jsonl"
    start = time.monotonic()
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", "--backoff", "0.01"))\
        == 0
    # the faults hit the first request (sent alone): four Retry-After waits of 1 s
    assert time.monotonic() - start >= 4.0
    printed = capsys.readouterr().out
    assert "6 retries" in printed
    assert fresh.counter.received["/v1/completions"] == \
        fresh.counter.answered["/v1/completions"] + 6


def test_gives_up_after_the_retries_and_a_rerun_resumes(fresh, folder, tmp_path, capsys):
    fresh.faults.latency = 1.0
    out, cache = tmp_path / "p.jsonl", tmp_path / "c"
    args = ["--suites", "wic_semantic", "--request-timeout", "0.3", "--retries", "1"]
    assert main(served(fresh, folder, out, *args, cache=cache)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no answer within 0.3s" in err[0] and "cannot serve" in err[0]
    assert not out.exists()
    fresh.faults.latency = 0.0
    assert main(served(fresh, folder, out, *args, cache=cache)) == 0
    assert len(out.read_text().splitlines()) == 280


@pytest.mark.parametrize("case", ["unreachable", "401", "model", "echo", "concurrency",
                                  "insecure", "window"])
def test_bad_input_is_one_line_exit_2_before_any_request(fresh, folder, tmp_path, capsys, case):
    out = tmp_path / "p.jsonl"
    args = served(fresh, folder, out, "--suites", "wic_semantic")
    expected = {
        "unreachable": "cannot reach the endpoint", "401": "HTTP 401: the endpoint refused the key",
        "model": "--model nope: not served at", "echo": "cannot serve --mode loglikelihood",
        "concurrency": "--concurrency 0: use 1 or more", "insecure": "--allow-insecure",
        "window": "exceed the server's window of 1024",
    }[case]
    if case == "unreachable":
        args[args.index("--base-url") + 1] = "http://127.0.0.1:9/v1"
    elif case == "401":
        fresh.faults.key = "the-right-key"
    elif case == "model":
        args[args.index("--model") + 1] = "nope"
    elif case == "echo":
        fresh.faults.echo = False
    elif case == "concurrency":
        args += ["--concurrency", "0"]
    elif case == "insecure":
        args[args.index("--base-url") + 1] = "http://example.org:8000/v1"
    elif case == "window":
        args += ["--max-length", "1023"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err
    # the mode probe is the run's first request, sent alone; nothing else goes out
    assert fresh.counter.received["/v1/completions"] == (1 if case == "echo" else 0)
    assert not out.exists()


def test_the_key_is_never_printed_logged_or_stored(fresh, folder, tmp_path, capsys,
                                                    monkeypatch):
    key = "sk-test-9f8e7d6c5b4a"
    fresh.faults.key = key
    monkeypatch.setenv("CB_TEST_KEY", key)
    out, cache = tmp_path / "p.jsonl", tmp_path / "cache"
    args = served(fresh, folder, out, "--suites", "wic_semantic", "--api-key-env",
                  "CB_TEST_KEY", cache=cache)
    assert main(args) == 0
    fresh.faults.statuses = [500] * 3  # an error path echoes the server's message
    assert main([*args, "--mode", "generate", "--retries", "0"]) == 2
    fresh.faults.statuses = []
    monkeypatch.setenv("CB_TEST_KEY", "wrong")
    assert main(args) == 2  # refused at /models: HTTP 401
    printed = capsys.readouterr()
    assert "HTTP 401: the endpoint refused the key ($CB_TEST_KEY, set)" in printed.err
    assert key not in printed.out + printed.err
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"p.jsonl", "p.jsonl.run.json", "requests.sqlite3"}
    for path in files:
        assert key.encode() not in path.read_bytes(), path
    with sqlite3.connect(cache / "requests.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 280


def test_dry_run_counts_requests_and_tokens_and_sends_nothing(fresh, folder, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    assert main(served(fresh, folder, out, "--dry-run")) == 0
    printed = capsys.readouterr().out
    assert sum(fresh.counter.received.values()) == 0 and not out.exists()
    assert "654 rows of 2 suites, 654 requests (1308 prompts)" in printed
    assert "prompt tokens (counted with the tokenizer)" in printed
    args = served(fresh, folder, out, "--dry-run", "--mode", "generate")
    at = args.index("--tokenizer")
    assert main(args[:at] + args[at + 2:]) == 0  # no tokenizer: estimated
    assert "prompt tokens (estimated as characters / 4)" in capsys.readouterr().out


def test_generate_structured_choice_answers_every_row_with_renormalised_probs(
        fresh, folder, gpt2, tmp_path, capsys):
    """First-token probabilities equal the model's, renormalised over the verbalisers."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    fresh.faults.max_logprobs = 100_000
    out = tmp_path / "g.jsonl"
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", "--mode", "generate",
                       "--structured", "choice", "--top-logprobs", "1500")) == 0
    assert "0 invalid answers, 0 label-only rows" in capsys.readouterr().out
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(isinstance(r["label"], int) for r in records)
    mixed = tmp_path / "mixed.jsonl"  # index labels and invalid answers in one file
    mixed.write_text("".join(json.dumps({**r, "label": INVALID_ANSWER} if i % 7 == 0 else r)
                             + "\n" for i, r in enumerate(records)))
    assert main(["score", str(mixed), "--data", str(folder), "--out", str(tmp_path / "r.json"),
                 "--n-boot", "10"]) == 0
    counted = json.loads((tmp_path / "r.json").read_text())["predictions"]["invalid_answers"]
    assert counted["count"] == len(range(0, len(records), 7))
    # reference: the model's first-token distribution, summed per verbaliser by the same rule
    tok = AutoTokenizer.from_pretrained(gpt2)
    model = AutoModelForCausalLM.from_pretrained(gpt2, dtype=torch.float32).eval()
    from consistency_bench.bench.runner.options import RunnerOptions
    from consistency_bench.bench.runner.unique_inputs import collect_causal_inputs

    collected = collect_causal_inputs(folder, ["wic_semantic"], RunnerOptions(progress=False),
                                      messages=True)
    texts = [tok.decode([i]) for i in range(len(tok))]
    for row in (0, 101, 202):
        messages, conts = collected.unique[collected.suites[0].inputs[row]]
        choices = conts.split("\x1f")
        ids = tok(tok.apply_chat_template(json.loads(messages), tokenize=False,
                                          add_generation_prompt=True))["input_ids"]
        with torch.inference_mode():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1)
        mass = [0.0] * len(choices)
        for i, text in enumerate(texts):
            said = normalise(text)
            owners = [k for k, c in enumerate(choices) if said and normalise(c).startswith(said)]
            if len(owners) == 1:
                mass[owners[0]] += math.exp(float(logp[i]))
        expected = [m / sum(mass) for m in mass]
        assert records[row]["probs"] == pytest.approx(expected, abs=2e-6)


def test_generate_counts_invalid_answers_and_label_only_rows(fresh, folder, tmp_path, capsys):
    """The random model's free text is rarely a verbaliser: each is counted and scored."""
    fresh.faults.chat_logprobs = False
    out = tmp_path / "g.jsonl"
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", "--mode", "generate"))\
        == 0
    printed = capsys.readouterr()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    invalid = sum(r["label"] == INVALID_ANSWER for r in records)
    assert f"{invalid} invalid answers, {len(records)} label-only rows" in printed.out
    assert "returns no top_logprobs; the file is label-only" in printed.err
    assert all("probs" not in r for r in records)
    results = tmp_path / "r.json"
    assert main(["score", str(out), "--data", str(folder), "--out", str(results),
                 "--n-boot", "10"]) == 0
    counted = json.loads(results.read_text())["predictions"]["invalid_answers"]
    assert counted["count"] == invalid
    record = json.loads(Path(str(out) + ".run.json").read_text())
    assert record["mode"] == "generate" and record["api"]["system_fingerprints"] == ["standin-1"]
    # issue 28 item 13: submit stores the record; the page shows the setup, not reproducible
    meta = tmp_path / "meta.yaml"
    meta.write_text("model: tiny\nrevision: served\nlicense: MIT\n"
                    "link: https://example.org/tiny\ncontact: me@example.org\n")
    subs = tmp_path / "subs"
    assert main(["submit", str(out), "--name", "served-gen", "--meta", str(meta), "--data",
                 str(folder), "--submissions", str(subs)]) == 0
    assert "with its run record" in capsys.readouterr().out
    assert json.loads((subs / "served-gen/run.json").read_text()) == record
    from consistency_bench.leaderboard.reproduce.shown import entry_extras

    shown = entry_extras(subs / "served-gen",
                         json.loads((subs / "served-gen/results.json").read_text()))
    assert shown["setup"]["mode"] == "generate" and shown["setup"]["model"] == "tiny"
    assert shown["setup"]["api"]["endpoint"] == record["api"]["endpoint"]
    assert shown["reproduced"]["status"] == "not-reproducible"
    assert "served model" in shown["reproduced"]["reason"]


def test_generate_json_schema_is_label_only(fresh, folder, tmp_path, capsys):
    out = tmp_path / "g.jsonl"
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", "--mode", "generate",
                       "--structured", "json-schema")) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(isinstance(r["label"], int) and "probs" not in r for r in records)


def test_concurrency_keeps_requests_in_flight(fresh, folder, tmp_path):
    fresh.faults.latency = 0.2
    out = tmp_path / "p.jsonl"
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", "--concurrency", "8",
                       "--max-length", "1022")) == 0
    assert fresh.counter.max_inflight == 8


def test_max_rps_spaces_requests(fresh, folder, tmp_path):
    out = tmp_path / "p.jsonl"
    start = time.monotonic()
    assert main(served(fresh, folder, out, "--suites", "wic_semantic", "--max-rps", "200",
                       "--concurrency", "16")) == 0
    assert time.monotonic() - start >= 279 / 200  # 280 request starts, 5 ms apart


def test_invalid_salad_answer_is_a_declined_salad_as_in_the_paper(corpora, tmp_path):
    """Word salad: an invalid answer to the salad is a declined salad (the paper's *invalid*
    class, Table 12: the right response); to the original, a wrong answer (ungated unit).

    The paper's agreement (line 160, shown beside the ranked score) counts it as a changed
    prediction: 0% agreement when every salad answer is invalid.
    """
    import pyarrow.parquet as pq

    folder = build_suites(corpora, tmp_path / "cb", ["mrpc_salad_sort"])
    rows = pq.read_table(folder / "mrpc_salad_sort" / "test.parquet").to_pylist()
    scored = {}
    for name, invalid_variant in (("salad", "sort"), ("original", "original")):
        path = tmp_path / f"{name}.jsonl"
        with path.open("w") as handle:
            for row in rows:
                gold = next(r["label"] for r in rows
                            if r["group"] == row["group"] and r["variant"] == "original")
                label = INVALID_ANSWER if row["variant"] == invalid_variant else gold
                handle.write(json.dumps({"id": row["id"], "label": label}) + "\n")
        out = tmp_path / f"{name}-results.json"
        assert main(["score", str(path), "--data", str(folder), "--out", str(out),
                     "--n-boot", "10"]) == 0
        scored[name] = json.loads(out.read_text())["suites"]["mrpc_salad_sort"]
    salad = scored["salad"]
    assert salad["metrics"]["salad_score"]["declined"] == 1.0
    assert salad["metrics"]["invalid_answer_share"] == 1.0
    assert salad["consistent_accuracy_cc"] == 1.0  # ranked: declining every salad is ideal
    assert salad["metrics"]["agreement"] == 0.0  # the paper's agreement: every answer changed
    original = scored["original"]
    assert original["metrics"]["accuracy_original"] == 0.0
    assert original["consistent_accuracy_cc"] < 0  # no unit is gated: below chance


def test_standin_engine_process_answers_as_in_process(gpt2, server):
    """``--engine-process`` (the benchmark's stand-in): the model in a process of its own
    gives the same JSON as in the HTTP process, for completions with echo and for chat."""
    import httpx

    requests = [
        ("/completions", {"model": "tiny", "prompt": [[5, 6, 7, 8], [9, 10, 11]],
                          "max_tokens": 1, "logprobs": 1, "echo": True, "temperature": 0}),
        ("/completions", {"model": "tiny", "prompt": "Answer: yes", "max_tokens": 2,
                          "logprobs": 2, "echo": False}),
        ("/chat/completions", {"model": "tiny", "max_tokens": 2, "logprobs": True,
                               "top_logprobs": 2,
                               "messages": [{"role": "user", "content": "yes or no?"}]}),
    ]
    engine = Standin(gpt2, served="tiny", engine_process=True).start()
    try:
        assert engine.engine is not None and engine.engine.process.is_alive()
        for path, body in requests:
            got = httpx.post(engine.url + path, json=body, timeout=60)
            want = httpx.post(server.url + path, json=body, timeout=60)
            assert got.status_code == want.status_code == 200
            assert got.json() == want.json()
        models = httpx.get(engine.url + "/models", timeout=60).json()["data"][0]
        assert (models["id"], models["max_model_len"]) == ("tiny", server.model.max_model_len)
    finally:
        engine.stop()
    assert not engine.engine.process.is_alive()
