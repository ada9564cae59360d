"""`consistency-bench train` with a tiny random encoder as the base (no downloads)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from consistency_bench.bench.baselines.training import TrainConfig, _batches, fine_tune, minilm_path
from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.modeling.loading import load_classifier
from consistency_bench.bench.registries.source_files import SourceResolver
from tests.tiny_models import tiny_bert


def test_batches_are_seeded_epochs():
    batches = _batches(10, 4, 5, seed=3)
    assert len(batches) == 5 and all(len(b) == 4 for b in batches)
    first_epoch = sorted(i for b in batches[:2] for i in b)
    assert len(set(first_epoch)) == 8
    assert batches == _batches(10, 4, 5, seed=3) != _batches(10, 4, 5, seed=4)


def test_length_grouped_batches_keep_each_epoch_and_cut_padding():
    lengths = [(i * 37) % 101 for i in range(400)]
    plain = _batches(400, 8, 50, seed=1)
    grouped = _batches(400, 8, 50, seed=1, lengths=lengths)
    assert sorted(i for b in grouped for i in b) == sorted(i for b in plain for i in b)
    assert all(len(b) == 8 for b in grouped)

    def padding(batches):
        return sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b)
                   for b in batches)

    assert padding(grouped) < padding(plain) / 4
    assert grouped == _batches(400, 8, 50, seed=1, lengths=lengths)


def test_fine_tune_saves_a_model_predict_can_load(corpora: Path, tmp_path):
    base = tiny_bert(tmp_path / "base", labels=("a", "b"))
    out = tmp_path / "rte-model"
    record = fine_tune(TrainConfig(task="rte", base=str(base), max_steps=3, batch_size=4,
                                   device="cpu", threads=1),
                       out, SourceResolver(corpora, download=False))
    assert record["steps"] == 3 and record["examples_seen"] == 12
    assert record["training_data"] == ["becel/rte/train.tsv"]
    assert record["dev_sizes"] == {"becel/rte/validation.tsv": 277}
    assert 0.0 <= record["validation_accuracy"] <= 1.0
    assert json.loads((out / "training.json").read_text())["task"] == "rte"
    loaded = load_classifier(out, device="cpu")
    assert loaded.id2label == {0: "entailment", 1: "not_entailment"}


def test_nli_model_trains_on_mnli_half_0_and_reports_half_1(corpora: Path, tmp_path):
    base = tiny_bert(tmp_path / "base")
    record = fine_tune(TrainConfig(task="snli", base=str(base), max_steps=2, batch_size=2,
                                   device="cpu", threads=1, progress=False),
                       tmp_path / "nli", SourceResolver(corpora, download=False))
    half = "mnli/dev_matched.generative-nli.jsonl#half="
    assert record["training_data"] == [half + "0"] and record["train_examples"] == 4878
    assert record["dev_sizes"] == {half + "1": 4937}


def test_fine_tune_refuses_tasks_without_train_split(corpora: Path, tmp_path):
    with pytest.raises(SourceError, match="no training split for task 'qqp'"):
        fine_tune(TrainConfig(task="qqp", base=str(tmp_path)), tmp_path / "x",
                  SourceResolver(corpora, download=False))
    assert not (tmp_path / "x").exists()


def test_minilm_is_bundled():
    path = minilm_path()
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()
