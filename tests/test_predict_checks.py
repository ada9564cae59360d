"""`predict` traps: checks before the weights load, truncation counts, `_t2t` suites, warnings."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from consistency_bench.bench.modeling.loading import inspect_model  # noqa: E402
from consistency_bench.bench.runner.options import RunnerOptions  # noqa: E402
from consistency_bench.bench.runner.predict_run import default_suites  # noqa: E402
from consistency_bench.bench.runner.unique_inputs import collect_causal_inputs  # noqa: E402
from consistency_bench.cli import main  # noqa: E402
from tests.helpers import build_suites  # noqa: E402
from tests.tiny_models import tiny_bert, tiny_gpt2  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")

SUITES = ["wic_semantic"]


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("checks") / "cb", SUITES)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> Path:
    return tiny_gpt2(tmp_path_factory.mktemp("gpt2") / "m")


@pytest.fixture(scope="module")
def broken(gpt2, tmp_path_factory) -> Path:
    """The GPT-2 with garbage weights: any error that names them came after a load attempt."""
    path = tmp_path_factory.mktemp("broken") / "m"
    shutil.copytree(gpt2, path)
    (path / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    return path


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--suites", "no_such_suite"], "suite 'no_such_suite' is not in"),
        (["--suites", "wic_semantic", "--max-length", "1"], "--max-length 1: a verbaliser"),
        (["--suites", "wic_semantic", "--num-fewshot", "1000000"],
         "has 64 demonstrations in its pool"),
        (["--suites", "wic_semantic", "--shard", "3/2"], "--shard '3/2'"),
        (["--suites", "wic_semantic", "--chat"], "no chat template"),
    ],
)
def test_refusals_come_before_the_weights_load_and_leave_nothing(folder, broken, tmp_path,
                                                                 capsys, extra, fragment):
    out = tmp_path / "p.jsonl"
    code = main(["predict", "--model", str(broken), "--data", str(folder), "--out", str(out),
                 "--no-progress", *extra])
    err = capsys.readouterr().err
    assert code == 2 and fragment in err, err
    assert "cannot load model" not in err  # the broken weights were never read
    assert not out.exists() and not out.with_name(out.name + ".parts").exists()


@pytest.fixture(scope="module")
def nopools(folder, tmp_path_factory) -> Path:
    """The folder as one built before pools existed: no ``fewshot`` entry, no pool files."""
    import json

    path = tmp_path_factory.mktemp("nopools") / "cb"
    shutil.copytree(folder, path)
    manifest = json.loads((path / "suites.json").read_text())
    del manifest["fewshot"]
    (path / "suites.json").write_text(json.dumps(manifest))
    shutil.rmtree(path / "fewshot")
    return path


@pytest.mark.parametrize("chat", [False, True])
def test_a_missing_pool_is_refused_before_the_weights_load_and_leaves_nothing(
        nopools, broken, tmp_path, capsys, chat):
    out = tmp_path / "p.jsonl"
    if chat:  # --chat is checked first: give the broken model a template
        import json

        config = tmp_path / "chat"
        shutil.copytree(broken, config)
        tok = config / "tokenizer_config.json"
        data = json.loads(tok.read_text())
        data["chat_template"] = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
        tok.write_text(json.dumps(data))
        model = config
    else:
        model = broken
    code = main(["predict", "--model", str(model), "--data", str(nopools), "--out", str(out),
                 "--no-progress", "--suites", "wic_semantic", "--num-fewshot", "2",
                 "--shard", "0/2", *(["--chat"] if chat else [])])
    err = capsys.readouterr().err
    assert code == 2 and "has no few-shot pools" in err, err
    assert "cannot load model" not in err
    assert not out.exists() and not out.with_name(out.name + ".parts").exists()


def test_the_same_run_with_sound_options_reaches_the_weights(folder, broken, tmp_path, capsys):
    """Control for the test above: with nothing else wrong, the broken weights are the error."""
    out = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(broken), "--data", str(folder), "--out", str(out),
                 "--suites", "wic_semantic", "--no-progress"]) == 2
    assert "cannot load model" in capsys.readouterr().err


def test_truncation_is_counted_and_reported(folder, gpt2, tmp_path, capsys):
    from consistency_bench.bench.runner.causal import split_key

    info = inspect_model(gpt2)
    collected = collect_causal_inputs(folder, SUITES, RunnerOptions(progress=False),
                                      info.tokenizer)
    tok = info.tokenizer
    wholes = []  # tokens of context + longest verbaliser, as the model would see them
    for key in collected.unique:
        ctx, conts = split_key(*key)
        wholes.append(max(len(tok(ctx + c)["input_ids"]) for c in conts))
    limit = sorted(wholes)[len(wholes) // 2]
    # lm-eval's rule: the model sees (ctx + cont)[-(L + 1):][:-1], so a row is cut when
    # context + its longest verbaliser is over L + 1 tokens
    too_long = {i for i, n in enumerate(wholes) if n > limit + 1}
    rows = sum(1 for s in collected.suites for i in s.inputs if i in too_long)
    assert 0 < rows < collected.rows
    out = tmp_path / "p.jsonl"
    assert main(["predict", "--model", str(gpt2), "--data", str(folder), "--out", str(out),
                 "--suites", *SUITES, "--no-progress", "--max-length", str(limit)]) == 0
    err = capsys.readouterr().err
    assert (f"warning: --max-length {limit}: {rows} of {collected.rows} rows ({len(too_long)} "
            f"of {len(collected.unique)} distinct inputs) are longer and were cut") in err
    assert main(["predict", "--model", str(gpt2), "--data", str(folder), "--out", str(out),
                 "--suites", *SUITES, "--no-progress"]) == 0
    assert "warning" not in capsys.readouterr().err  # nothing cut at the model's 1,024


def test_classifier_truncation_is_counted(folder, tmp_path, capsys):
    bert = tiny_bert(tmp_path / "bert", labels=("false", "true"))
    info = inspect_model(bert)
    from consistency_bench.bench.runner.unique_inputs import collect_inputs

    collected = collect_inputs(folder, SUITES, seq2seq=False, wic_format="word-prefix")
    lengths = [len(info.tokenizer(t, p)["input_ids"]) for t, p in collected.unique]
    cut = sum(1 for n in lengths if n > 24)
    assert 0 < cut < len(lengths)
    assert main(["predict", "--model", str(bert), "--data", str(folder), "--out",
                 str(tmp_path / "p.jsonl"), "--no-progress", "--max-length", "24"]) == 0
    assert f"({cut} of {len(lengths)} distinct inputs)" in capsys.readouterr().err


def test_causal_default_suites_skip_t2t_unless_named(tmp_path, capsys):
    import json

    def entry(name):  # the manifest fields every reader checks (sha256, path)
        return {"task": "rte", "label_names": ["entailment", "not_entailment"],
                "sha256": "0" * 64, "path": f"{name}/test-00000-of-00001.parquet"}

    (tmp_path / "suites.json").write_text(json.dumps({"suites": {
        n: entry(n) for n in ("rte_calm", "rte_calm_t2t", "rte_semantic")}}))
    causal = SimpleNamespace(is_causal=True, is_seq2seq=False, id2label={})
    assert default_suites(tmp_path, causal, {}) == ["rte_calm", "rte_semantic"]
    assert "skipping 1 text-to-text suites" in capsys.readouterr().err
    t5 = SimpleNamespace(is_causal=False, is_seq2seq=True, id2label={})
    assert "rte_calm_t2t" in default_suites(tmp_path, t5, {})


def test_multi_token_continuations_log_no_deprecation(gpt2):
    """transformers logs "`past_key_values` ... deprecated" once per process when it is read."""
    import logging

    from transformers.utils import logging as hf_logging

    from consistency_bench.bench.modeling.loading import load_model
    from consistency_bench.bench.runner.causal import encode, make_causal_forward

    class Collect(logging.Handler):
        def __init__(self):
            super().__init__(logging.WARNING)
            self.messages: list[str] = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    root = hf_logging.get_logger("transformers")
    root.warning_once.cache_clear()
    loaded = load_model(inspect_model(gpt2), device="cpu")
    items = [("Short:", [" yes", " a much longer answer of many tokens"])]
    encoded = encode(loaded.tokenizer, items, 1024)
    assert max(len(c) for c in encoded[0].conts) > 1  # the KV-cache path runs
    handler = Collect()
    root.addHandler(handler)
    try:
        make_causal_forward(loaded, encoded, RunnerOptions(progress=False))([0])
    finally:
        root.removeHandler(handler)
    assert not [m for m in handler.messages if "deprecated" in m.lower()], handler.messages
