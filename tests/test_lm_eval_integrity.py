"""``--hub`` exports pin the dataset commit; ``convert-lm-eval`` checks the documents lm-eval saw.

No lm-eval run: the samples and results files are written here in lm-eval 0.4.13's layout
(``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``; each sample logs its ``doc``,
the ``arguments`` and the per-choice ``resps``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from consistency_bench.bench.errors import DataError
from consistency_bench.bench.io.manifest import parquet_path, read_manifest
from consistency_bench.bench.lm_eval.convert_samples import convert_samples
from consistency_bench.bench.lm_eval.export_tasks import task_name
from consistency_bench.cli import main
from tests.helpers import build_suites
from tests.hub_standin import TOKEN, Hub

REPO = Path(__file__).resolve().parents[1]
SUITES = ["rte_semantic", "kornli_calm"]
DATE = "2026-11-25T12-00-00.000001"
SHA = "ab" * 20


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("integrity") / "cb", SUITES)


def write_run(folder: Path, out: Path, shots: dict[str, int], alter=None,
              config: dict | None = None) -> Path:
    """lm-eval-style output for ``shots`` (suite -> n-shot); ``alter(i, row)`` edits docs.

    ``config`` is the results file's run ``config`` (lm-eval writes the model backend there).
    """
    manifest = read_manifest(folder)
    configs, nshot = {}, {}
    out.mkdir(parents=True)
    for suite, k in shots.items():
        task = task_name(suite)
        rows = pq.read_table(parquet_path(folder, suite)).to_pylist()
        labels = len(manifest[suite]["label_names"])  # one choice per label, as lm-eval logs
        with open(out / f"samples_{task}_{DATE}.jsonl", "w") as handle:
            for i, row in enumerate(rows):
                doc = alter(i, dict(row)) if alter else row
                lls = [-1.0 - i % 3] + [-2.0 - j for j in range(labels - 1)]
                handle.write(json.dumps({
                    "doc_id": i, "doc": doc,
                    "arguments": {f"gen_args_{j}": {"arg_0": "ctx", "arg_1": f" {chr(65 + j)}"}
                                  for j in range(labels)},
                    "resps": [[[ll, False]] for ll in lls],
                    "filtered_resps": [[ll, False] for ll in lls],
                }) + "\n")
        fewshot = "no few-shot pool" if suite == "kornli_calm" else {"pool": "rte"}
        configs[task] = {"num_fewshot": k, "metadata": {
            "suite": suite, "sha256": manifest[suite]["sha256"], "fewshot": fewshot}}
        nshot[task] = k
    results = {"configs": configs, "n-shot": nshot}
    if config is not None:
        results["config"] = config
    (out / f"results_{DATE}.json").write_text(json.dumps(results))
    return out


def test_vllm_samples_convert_like_hf_samples(folder, tmp_path):
    """lm-eval's vLLM backend logs each choice as ``(logprob, is_greedy)``, as its hf backend
    does (lm_eval 0.4.13 ``models/vllm_causallms.py`` ``_parse_logprobs``); only the run's
    ``config`` differs, so ``convert-lm-eval`` gives the same prediction file (docs/runner.md).
    """
    hf = write_run(folder, tmp_path / "hf", {"rte_semantic": 0},
                   config={"model": "hf", "model_args": "pretrained=./m"})
    vllm = write_run(folder, tmp_path / "vllm", {"rte_semantic": 0},
                     config={"model": "vllm", "model_args": "pretrained=./m,tensor_parallel_size"
                             "=1,data_parallel_size=8,gpu_memory_utilization=0.9"})
    outs = {}
    for name, run in (("hf", hf), ("vllm", vllm)):
        outs[name] = tmp_path / f"{name}.jsonl"
        assert main(["convert-lm-eval", str(run), "--data", str(folder), "--out",
                     str(outs[name])]) == 0
    assert outs["vllm"].read_bytes() == outs["hf"].read_bytes()
    assert len(outs["vllm"].read_text().splitlines()) == 496


def test_convert_refuses_a_copy_with_half_the_rows_altered(folder, tmp_path):
    def alter(i, row):
        if i % 2 == 0:
            row["text"] = row["text"] + " (altered)"
        return row

    run = write_run(folder, tmp_path / "altered", {"rte_semantic": 0}, alter)
    out = tmp_path / "p.jsonl"
    with pytest.raises(DataError, match=r"suite rte_semantic: 248 of 496 documents in .* differ "
                                        r"from .*rte_semantic/test.parquet \(first: row "
                                        r"rte_semantic/r00000/original field text"):
        convert_samples([run], folder, out)
    assert not out.exists()
    assert main(["convert-lm-eval", str(run), "--data", str(folder), "--out", str(out)]) == 2
    clean = write_run(folder, tmp_path / "clean", {"rte_semantic": 0})
    assert convert_samples([clean], folder, out) == {"rte_semantic": 496}


def test_convert_refuses_an_altered_label_or_a_missing_document_field(folder, tmp_path):
    def relabel(i, row):
        if i == 7:
            row["label"] = 1 - row["label"]
        return row

    run = write_run(folder, tmp_path / "label", {"rte_semantic": 0}, relabel)
    with pytest.raises(DataError, match=r"1 of 496 documents.*field label"):
        convert_samples([run], folder, tmp_path / "p.jsonl")
    bare = write_run(folder, tmp_path / "bare", {"rte_semantic": 0},
                     lambda i, row: {"id": row["id"]})
    with pytest.raises(DataError, match=r"496 of 496 documents.*field text: lm-eval saw "
                                        "'<missing>'"):
        convert_samples([bare], folder, tmp_path / "p.jsonl")


def test_convert_leaves_out_a_suite_run_zero_shot_for_want_of_a_pool(folder, tmp_path):
    lines = []
    run = write_run(folder, tmp_path / "mixed", {"rte_semantic": 2, "kornli_calm": 0})
    counts = convert_samples([run], folder, tmp_path / "p.jsonl", log=lines.append)
    assert counts == {"rte_semantic": 496}
    assert lines == ["suite kornli_calm: left out: lm-eval ran it 0-shot (no few-shot pool) "
                     "while other suites ran 2-shot"]
    zero = write_run(folder, tmp_path / "zero", {"rte_semantic": 0, "kornli_calm": 0})
    assert set(convert_samples([zero], folder, tmp_path / "q.jsonl")) == set(SUITES)


def export(args, tmp_path, hub_url=None, offline=False):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HF_") and k != "TRANSFORMERS_OFFLINE"}
    env.update(PYTHONPATH=str(REPO), HF_HOME=str(tmp_path / "hf_home"), HF_TOKEN=TOKEN,
               HF_HUB_DISABLE_TELEMETRY="1")
    if hub_url:
        env["HF_ENDPOINT"] = hub_url
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, "-m", "consistency_bench", "export-lm-eval", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_hub_export_pins_the_dataset_commit(folder, tmp_path):
    base = ["--data", str(folder), "--suites", "rte_semantic", "--hub", "org/suites"]
    with Hub() as hub:
        hub.add_repo("org/suites", "dataset")
        hub.repos["org/suites"]["head"] = SHA
        resolved = export([*base, "--out", "a"], tmp_path, hub.url)
        given = export([*base, "--out", "b", "--dataset-revision", "cd" * 20], tmp_path,
                       hub.url)
        missing = export(["--data", str(folder), "--hub", "org/none", "--out", "c"], tmp_path,
                         hub.url)
    assert resolved.returncode == 0, resolved.stderr
    assert ("GET", "/api/datasets/org/suites/revision/main") in hub.requests
    config = yaml.safe_load((tmp_path / "a" / "consistency_bench_rte_semantic.yaml").read_text())
    assert config["dataset_path"] == "org/suites" and config["dataset_name"] == "rte_semantic"
    assert config["dataset_kwargs"] == {"revision": SHA}
    assert config["metadata"]["revision"] == SHA
    assert given.returncode == 0, given.stderr
    pinned = yaml.safe_load((tmp_path / "b" / "consistency_bench_rte_semantic.yaml").read_text())
    assert pinned["dataset_kwargs"] == {"revision": "cd" * 20}
    assert missing.returncode == 2 and "cannot resolve revision 'main'" in missing.stderr
    offline = export([*base, "--out", "d"], tmp_path, offline=True)
    assert offline.returncode == 2 and "pass --dataset-revision SHA" in offline.stderr
    assert "Traceback" not in offline.stderr + missing.stderr
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()
    local = export(["--data", str(folder), "--out", "e", "--dataset-revision", SHA], tmp_path)
    assert local.returncode == 2 and "--hub exports only" in local.stderr
