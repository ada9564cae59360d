"""`consistency-bench train` with a tiny random encoder as the base (no downloads)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from bench.errors import SourceError  # noqa: E402
from bench.modeling import load_classifier  # noqa: E402
from bench.sources import SourceResolver  # noqa: E402
from bench.training import TrainConfig, _batches, fine_tune, minilm_path  # noqa: E402
from tests.tiny_models import tiny_bert  # noqa: E402


def test_batches_are_seeded_epochs():
    batches = _batches(10, 4, 5, seed=3)
    assert len(batches) == 5 and all(len(b) == 4 for b in batches)
    first_epoch = sorted(i for b in batches[:2] for i in b)
    assert len(set(first_epoch)) == 8
    assert batches == _batches(10, 4, 5, seed=3) != _batches(10, 4, 5, seed=4)


def test_fine_tune_saves_a_model_predict_can_load(corpora: Path, tmp_path):
    base = tiny_bert(tmp_path / "base", labels=("a", "b"))
    out = tmp_path / "rte-model"
    record = fine_tune(TrainConfig(task="rte", base=str(base), max_steps=3, batch_size=4,
                                   device="cpu", threads=1),
                       out, SourceResolver(corpora, download=False))
    assert record["steps"] == 3 and record["examples_seen"] == 12
    assert record["reduced_cpu_run"] is True
    assert 0.0 <= record["validation_accuracy"] <= 1.0
    assert json.loads((out / "training.json").read_text())["task"] == "rte"
    loaded = load_classifier(out, device="cpu")
    assert loaded.id2label == {0: "entailment", 1: "not_entailment"}


def test_fine_tune_refuses_tasks_without_train_split(corpora: Path, tmp_path):
    with pytest.raises(SourceError, match="no training split for task 'boolq'"):
        fine_tune(TrainConfig(task="boolq", base=str(tmp_path)), tmp_path / "x",
                  SourceResolver(corpora, download=False))
    assert not (tmp_path / "x").exists()


def test_minilm_is_bundled():
    path = minilm_path()
    assert (path / "config.json").is_file() and (path / "model.safetensors").is_file()
