"""``consistency-bench salad`` with a tiny randomly initialised BERT built in the test."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

from consistency_bench.cli import main

WORDS = (
    "the a he she it said is was not and of to in for on with that . , ' s company "
    "would will year percent million shares he ##s ##ed ##ing"
).split()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"]
    vocab = specials + sorted(set(WORDS)) + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(vocab))}
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True)  # transformers 5 API
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=128, num_labels=2,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _run(tmp: Path, model: Path, corpora: Path, *extra: str) -> int:
    return main([
        "salad", "--model", str(model), "--suite", "mrpc_salad_gradient", "sst2_salad_drop",
        "--data", str(tmp), "--sources", str(corpora), "--no-download", "--limit", "40",
        "--name", "tiny", *extra,
    ])


def test_salad_command_writes_model_configs(tiny_model, corpora, tmp_path):
    out = tmp_path / "consistency-bench"
    assert _run(out, tiny_model, corpora) == 0
    manifest = json.loads((out / "suites.json").read_text())["suites"]
    names = {"mrpc_salad_drop_tiny", "mrpc_salad_repeat_tiny", "mrpc_salad_replace_tiny",
             "mrpc_salad_copyone_tiny", "sst2_salad_drop_tiny"}
    assert set(manifest) == names
    assert "mrpc_salad_copyone_tiny" in (out / "README.md").read_text()
    for name in names:
        ds = datasets.load_dataset(str(out), name, split="test")
        assert ds.num_rows == 2 * manifest[name]["groups"] and 0 < ds.num_rows <= 80
    copy = pq.read_table(out / "mrpc_salad_copyone_tiny" / "test.parquet").to_pylist()
    for original, changed in zip(copy[::2], copy[1::2], strict=True):
        assert changed["agreement_with"] == "equivalent" and changed["model"] == "tiny"
        assert " " not in changed["text_pair"]  # one model token of the first text
        assert changed["text_pair"] in original["text"].lower() or changed["text_pair"] == "[UNK]"
    assert any(c["text_pair"] != "[UNK]" for c in copy[1::2])
    drop = pq.read_table(out / "mrpc_salad_drop_tiny" / "test.parquet").to_pylist()
    for original, changed in zip(drop[::2], drop[1::2], strict=True):
        assert len(changed["text_pair"]) < len(original["text_pair"])
    digest = (out / "mrpc_salad_repeat_tiny" / "test.parquet").read_bytes()
    again = tmp_path / "again"
    assert _run(again, tiny_model, corpora) == 0  # deterministic: byte-identical rebuild
    assert (again / "mrpc_salad_repeat_tiny" / "test.parquet").read_bytes() == digest


def test_salad_command_bad_arguments(tiny_model, corpora, tmp_path, capsys):
    code = main(["salad", "--model", str(tiny_model), "--suite", "mrpc_salad_sort",
                 "--data", str(tmp_path)])
    assert code == 2 and "mrpc_salad_sort" in capsys.readouterr().err
    code = main(["salad", "--model", str(tiny_model), "--suite", "sst2_salad_copyone",
                 "--data", str(tmp_path)])
    assert code == 2 and "pair tasks only" in capsys.readouterr().err
    code = main(["salad", "--model", str(tmp_path / "nope"), "--suite", "mrpc_salad_drop",
                 "--data", str(tmp_path)])
    assert code == 2 and "not a model folder" in capsys.readouterr().err
    assert not (tmp_path / "suites.json").exists()
