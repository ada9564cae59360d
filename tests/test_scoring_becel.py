"""Scoring the BECEL suites end to end, against hand-made and BECEL-layout predictions."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

from consistency_bench.bench.scoring.engine import score_file
from consistency_bench.builders.export import build_all
from consistency_bench.cli import main
from tests.helpers import write_predictions

BECEL_EXAMPLES = "becel/examples"


def convert(source, suite, folder, out) -> int:
    """Run ``consistency-bench convert-becel``; return its exit code."""
    args = ["convert-becel", str(source), "--suite", suite, "--data", str(folder)]
    return main([*args, "--out", str(out)])


def test_oracle_predictions_are_perfectly_consistent(becel_folder, tmp_path):
    from consistency_bench.bench.io.manifest import read_manifest

    suites = sorted(read_manifest(becel_folder))
    preds = write_predictions(becel_folder, tmp_path / "oracle.jsonl", suites)
    results = score_file(preds, becel_folder, n_boot=200)
    assert sorted(results["suites"]) == suites and results["skipped"] == {}
    for name, entry in results["suites"].items():
        assert entry["main_score"] == 0.0, name
        assert entry["metrics"]["accuracy"] == 1.0, name
        assert 0.0 <= entry["ci95"][0] <= entry["ci95"][1] <= 1.0
        assert len(entry["content_hash"]) == 64
    trn = results["suites"]["snli_transitive"]
    assert trn["n"] == trn["metrics"]["n_conditioned"] == 2375


def test_constant_predictor(becel_folder, tmp_path):
    names = ["mrpc_semantic", "mrpc_negational", "mrpc_symmetric"]
    preds = write_predictions(becel_folder, tmp_path / "c.jsonl", names, choose=lambda r, n: 1)
    results = score_file(preds, becel_folder, n_boot=200)["suites"]
    assert results["mrpc_semantic"]["main_score"] == 0.0
    assert results["mrpc_symmetric"]["main_score"] == 0.0
    assert results["mrpc_negational"]["main_score"] == 1.0  # never changes its answer


def _becel_reference_transitive(corpora, task: str, arrays: dict) -> float:
    """BECEL's own src/evaluation_metrics.py logic, re-implemented over the raw files."""
    folder = corpora / "becel" / task
    split = "test" if task == "snli" else "train"
    with open(folder / f"{split}.tsv", newline="") as handle:
        gold = [int(r["label"]) for r in csv.DictReader(handle, delimiter="\t")]
    with open(folder / "transitive.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    consistent = []
    for row, pred in zip(rows, arrays["transitive_preds"], strict=True):
        label = int(row["label"])
        if task == "snli":
            hit = {2: pred == 2, 3: pred in (1, 2), 4: pred in (0, 1)}[label]
        else:
            hit = pred == label
        a, b = (int(x) for x in row["originated_idx"].split("|"))
        o = arrays["originated_preds"]
        if o[a] == gold[a] and o[b] == gold[b]:
            consistent.append(1 if hit else 0)
    return 1 - sum(consistent) / len(consistent)


@pytest.mark.parametrize("task", ["snli", "wic"])
def test_becel_examples_score_as_becel_scores_them(task, corpora, becel_folder, tmp_path):
    source = corpora / BECEL_EXAMPLES / f"{task}-transitive.json"
    out = tmp_path / "p.jsonl"
    assert convert(source, f"{task}_transitive", becel_folder, out) == 0
    results = score_file(out, becel_folder, n_boot=200)["suites"][f"{task}_transitive"]
    reference = _becel_reference_transitive(corpora, task, json.loads(source.read_text()))
    assert results["main_score"] == pytest.approx(reference, abs=1e-12)
    # Recorded values: SNLI 2.31% of 2160, WiC 47.77% of 1930 (docs/suites/becel.md).
    expected = {"snli": (0.0231, 2160), "wic": (0.4777, 1930)}[task]
    assert results["main_score"] == pytest.approx(expected[0], abs=5e-5)
    assert results["n"] == expected[1]


def test_convert_becel_rejects_misaligned_arrays(corpora, becel_folder, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    code = convert(
        corpora / BECEL_EXAMPLES / "mrpc-semantic.json", "mrpc_semantic", becel_folder, out
    )
    err = capsys.readouterr().err
    assert code == 2 and "original_preds" in err and "has 100 predictions" in err and "202" in err
    assert not out.exists()


def test_convert_becel_additive_layout(becel_folder, tmp_path):
    from consistency_bench.bench.scoring.engine import SuiteFolder

    data = SuiteFolder(becel_folder).load("sst2_additive")
    gold = data.gold[data.variant == "merged"].tolist()
    arrays = {
        "first_preds": gold,
        "second_preds": gold,
        "merged_preds": [1 - g for g in gold],
        "labels": gold,
    }
    source = tmp_path / "sst2-additive.json"
    source.write_text(json.dumps(arrays))
    out = tmp_path / "p.jsonl"
    assert convert(source, "sst2_additive", becel_folder, out) == 0
    entry = score_file(out, becel_folder, n_boot=100)["suites"]["sst2_additive"]
    assert entry["main_score"] == 1.0 and entry["n"] == len(gold)
    per_class = entry["metrics"]["tau_add_per_class"]
    assert per_class["negative"] == {"tau": 1.0, "n_conditioned": gold.count(0)}
    assert per_class["positive"]["n_conditioned"] == gold.count(1) == len(gold) - gold.count(0)


def test_partial_suite_is_skipped_with_reason(becel_folder, tmp_path):
    preds = write_predictions(becel_folder, tmp_path / "p.jsonl", ["rte_semantic"])
    lines = preds.read_text().splitlines()[:-3]
    preds.write_text("\n".join(lines) + "\n")
    results = score_file(preds, becel_folder, n_boot=100)
    assert results["suites"] == {}
    assert results["skipped"]["rte_semantic"] == "3 of 496 rows missing from the prediction file"


def test_scores_are_deterministic_and_written_atomically(becel_folder, tmp_path, capsys):
    preds = write_predictions(
        becel_folder,
        tmp_path / "p.jsonl",
        ["wic_symmetric"],
        choose=lambda r, n: len(r["id"] + r["text"]) % 2,
    )
    outs = []
    for name in ("a.json", "b.json"):
        assert (
            main(["score", str(preds), "--data", str(becel_folder), "--out", str(tmp_path / name)])
            == 0
        )
        outs.append(json.loads((tmp_path / name).read_text()))
        outs[-1].pop("provenance")  # date and arguments (--out) differ by design
    assert outs[0] == outs[1]
    entry = outs[0]["suites"]["wic_symmetric"]
    assert entry["main_metric"] == "tau_sym" and 0 < entry["main_score"] < 1
    assert entry["ci95"][0] < entry["main_score"] < entry["ci95"][1]
    assert "wic_symmetric" in capsys.readouterr().out


def test_tampered_suite_is_refused(becel_folder, tmp_path, capsys):
    copy = tmp_path / "consistency-bench"
    shutil.copytree(becel_folder, copy)
    target = copy / "rte_semantic" / "test.parquet"
    target.write_bytes(target.read_bytes() + b"x")
    preds = write_predictions(becel_folder, tmp_path / "p.jsonl", ["rte_semantic"])
    assert main(["score", str(preds), "--data", str(copy)]) == 2
    assert "does not match suites.json" in capsys.readouterr().err


def test_confidence_on_consistent_and_inconsistent_groups(becel_folder, tmp_path):
    preds = write_predictions(becel_folder, tmp_path / "p.jsonl", ["rte_semantic"])
    records = [json.loads(line) for line in preds.read_text().splitlines()]
    for i, record in enumerate(records):
        if i % 4 == 1:  # flip every second paraphrase: those groups become inconsistent
            record["label"] = 1 - record["label"]
            record["probs"] = [0.4, 0.6] if record["label"] else [0.6, 0.4]
        else:
            record["probs"] = [0.9, 0.1] if record["label"] == 0 else [0.1, 0.9]
    preds.write_text("".join(json.dumps(r) + "\n" for r in records))
    entry = score_file(preds, becel_folder, n_boot=100)["suites"]["rte_semantic"]
    assert entry["main_score"] == pytest.approx(0.5)
    confidence = entry["metrics"]["confidence"]
    assert confidence["consistent"] == pytest.approx(0.9)
    assert confidence["inconsistent"] == pytest.approx(0.75)


def test_unit_outcomes_match_the_consistent_accuracy(becel_folder, tmp_path):
    """Units are the ranked score's outcomes: every derived row, not only the tau set C."""
    from consistency_bench.bench.scoring.engine import unit_outcomes

    names = ["wic_symmetric", "wic_transitive"]
    preds = write_predictions(
        becel_folder, tmp_path / "p.jsonl", names, choose=lambda r, n: len(r["text"]) % 2
    )
    results = score_file(preds, becel_folder, n_boot=100)["suites"]
    outcomes = unit_outcomes(preds, becel_folder)
    for name in names:
        units = outcomes[name]
        entry = results[name]
        expected = entry["metrics"].get("n_derived", entry["n"])
        assert len(units) == expected
        assert sum(units.values()) / len(units) == pytest.approx(entry["consistent_accuracy"])
    assert results["wic_transitive"]["metrics"]["n_derived"] > results["wic_transitive"]["n"]


def test_every_family_provides_unit_outcomes(corpora, tmp_path):
    """Paired tests need per-unit outcomes; their mean is the consistent accuracy."""
    from consistency_bench.bench.scoring.engine import unit_outcomes
    from consistency_bench.builders.catalog import SUITES

    names = ["rte_calm", "mrpc_salad_sort", "conv_ent_coherence"]
    folder = tmp_path / "cb"
    from consistency_bench.bench.registries.source_files import SourceResolver

    build_all(
        [SUITES[n] for n in names],
        SourceResolver(corpora, download=False),
        folder,
        log=lambda _: None,
    )
    preds = write_predictions(
        folder, tmp_path / "p.jsonl", names, choose=lambda r, n: len(r["text"]) % len(n)
    )
    results = score_file(preds, folder, n_boot=50)["suites"]
    outcomes = unit_outcomes(preds, folder)
    for name in names:
        units = outcomes[name]
        assert len(units) == results[name]["n"]
        spec = results[name]["metrics"].get("ranked_units")
        if spec is None:  # a mean of per-unit values
            assert sum(units.values()) / len(units) == pytest.approx(
                results[name]["consistent_accuracy"])
            continue
        # word salad: unit codes, from which the statistic recomputes the ranked score
        from consistency_bench.bench.metrics.consistent.salad_score import UNIT_STATISTICS

        codes, counts = np.unique(np.array(list(units.values()), dtype=np.int64),
                                  return_counts=True)
        got = UNIT_STATISTICS[spec["statistic"]](codes, counts, spec["n_labels"], spec["copy"])
        assert float(got["score"]) == pytest.approx(results[name]["consistent_accuracy_cc"])
        assert float(got["value"]) == pytest.approx(results[name]["consistent_accuracy"])
