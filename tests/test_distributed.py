"""Several processes, shards, device maps: each must write the single-process file, byte for byte.

Tiny random models built in the test (a GPT-2 causal LM, a BERT classifier), two small suites
built from the mirror. torchrun runs two CPU processes on the gloo backend.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from consistency_bench.bench.errors import ConfigError  # noqa: E402
from consistency_bench.bench.modeling.devices import parse_max_memory  # noqa: E402
from consistency_bench.bench.runner.distributed import (  # noqa: E402
    Processes,
    from_env,
    parse_shard,
    process_device,
)
from consistency_bench.cli import main  # noqa: E402
from tests.helpers import build_suites  # noqa: E402
from tests.tiny_models import tiny_bert, tiny_gpt2  # noqa: E402

#: Runs that load a model turn every warning into an error (a deprecation included).
pytestmark = pytest.mark.filterwarnings("error")

SUITES = ["rte_semantic", "wic_semantic"]


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("dist") / "cb", SUITES)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> Path:
    return tiny_gpt2(tmp_path_factory.mktemp("gpt2") / "m")


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("bert") / "m",
                     labels=("entailment", "not_entailment"))


def predict_args(model: Path, folder: Path, out: Path, *extra: str,
                 pin_cpu: bool = True) -> list[str]:
    """``predict`` arguments; on the CPU unless ``extra`` names a device or ``pin_cpu`` is off.

    The CPU pin keeps every file comparable with the CPU-only torchrun runs
    (``CUDA_VISIBLE_DEVICES=""``) on a machine that has a GPU, where the default device would
    be CUDA and the scores would differ in the last digits.
    """
    label_map = ["--label-map", "wic:false=not_entailment,true=entailment"]
    device = [] if not pin_cpu or {"--device", "--device-map"} & set(extra) else ["--device", "cpu"]
    return ["predict", "--model", str(model), "--data", str(folder), "--out", str(out),
            "--suites", *SUITES, "--no-progress", "--batch-size", "16", *label_map, *device,
            *extra]


@pytest.fixture(scope="module")
def single(folder, gpt2, bert, tmp_path_factory) -> dict[str, Path]:
    """The single-process prediction files every other way of running must reproduce."""
    root = tmp_path_factory.mktemp("single")
    out = {}
    for name, model in (("gpt2", gpt2), ("bert", bert)):
        out[name] = root / f"{name}.jsonl"
        assert main(predict_args(model, folder, out[name])) == 0
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_torchrun_two_cpu_processes_write_the_single_process_file(folder, gpt2, single,
                                                                  tmp_path):
    out = tmp_path / "tr.jsonl"
    env = {**os.environ, "PYTHONWARNINGS": "error::DeprecationWarning,error::FutureWarning",
           "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
               "-m", "consistency_bench", *predict_args(gpt2, folder, out)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.read_bytes() == single["gpt2"].read_bytes()
    assert "on rank 0 of 2" in done.stdout  # rank 0 computed only its share
    assert done.stdout.count("wrote ") == 1  # one summary, one writer
    assert not out.with_name(out.name + ".parts").exists()
    assert "deprecat" not in done.stderr.lower()  # no deprecation warning in a normal run


@pytest.mark.parametrize("model", ["gpt2", "bert"])
def test_shards_merged_equal_the_single_process_file(folder, gpt2, bert, single, tmp_path,
                                                     capsys, model):
    path = {"gpt2": gpt2, "bert": bert}[model]
    parts = [tmp_path / f"part{i}.jsonl" for i in range(2)]
    for i, part in enumerate(parts):
        assert main(predict_args(path, folder, part, "--shard", f"{i}/2")) == 0
    capsys.readouterr()
    merged = tmp_path / "merged.jsonl"
    assert main(["merge-predictions", str(parts[1]), str(parts[0]), "--data", str(folder),
                 "--out", str(merged)]) == 0
    assert merged.read_bytes() == single[model].read_bytes()
    sizes = [len(p.read_text().splitlines()) - 1 for p in parts]
    assert all(sizes) and sum(sizes) == len(single[model].read_text().splitlines())


def test_merge_refuses_incomplete_repeated_foreign_and_edited_parts(folder, gpt2, tmp_path,
                                                                    capsys):
    parts = [tmp_path / f"p{i}.part" for i in range(2)]
    for i, part in enumerate(parts):
        assert main(predict_args(gpt2, folder, part, "--shard", f"{i}/2",
                                 "--suites", "wic_semantic")) == 0
    other = tmp_path / "other.part"  # another setting: length normalisation
    assert main(predict_args(gpt2, folder, other, "--shard", "1/2", "--suites", "wic_semantic",
                             "--length-norm", "chars")) == 0
    capsys.readouterr()
    out = tmp_path / "m.jsonl"

    def refused(*paths) -> str:
        assert main(["merge-predictions", *map(str, paths), "--data", str(folder), "--out",
                     str(out)]) == 2
        assert not out.exists()
        return capsys.readouterr().err

    assert "missing part(s) 1/2" in refused(parts[0])
    assert "part 0/2 given twice" in refused(parts[0], parts[0], parts[1])
    assert "length_norm None vs 'chars'" in refused(parts[0], other)
    lines = parts[1].read_text().splitlines()
    edited = tmp_path / "edited.part"
    edited.write_text("\n".join([lines[0], lines[2], lines[1], *lines[3:]]) + "\n")
    assert "increasing order" in refused(parts[0], edited)
    cut = tmp_path / "cut.part"
    cut.write_text("\n".join(lines[:-1]) + "\n")
    assert "is in none" in refused(parts[0], cut)
    prediction = tmp_path / "plain.jsonl"
    prediction.write_text(json.dumps({"id": "x", "label": 0}) + "\n")
    assert "not a part file" in refused(prediction, parts[1])


def test_device_map_auto_writes_the_single_process_file(folder, gpt2, single, tmp_path):
    out = tmp_path / "dm.jsonl"
    assert main(predict_args(gpt2, folder, out, "--device-map", "auto",
                             "--max-memory", "cpu=2GiB")) == 0
    assert out.read_bytes() == single["gpt2"].read_bytes()


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--shard", "2/2"], "--shard '2/2'"),
        (["--shard", "one/two"], "INDEX/COUNT"),
        (["--max-memory", "cpu=1GiB"], "--max-memory applies with --device-map auto only"),
        (["--device-map", "auto", "--max-memory", "gpu0=1GiB"], "--max-memory part 'gpu0=1GiB'"),
        (["--device-map", "auto", "--max-memory", "0=1GiB"], "names GPU 0"),
        (["--device-map", "auto", "--device", "cpu"], "the device map places the model"),
    ],
)
def test_bad_split_options_are_clean_errors(folder, gpt2, tmp_path, capsys, extra, fragment):
    if "names GPU 0" in fragment and torch.cuda.is_available():
        pytest.skip("this machine has a GPU 0")
    out = tmp_path / "p.jsonl"
    assert main(predict_args(gpt2, folder, out, *extra)) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert not out.exists() and not out.with_name(out.name + ".parts").exists()


def test_shard_and_memory_parsing():
    assert parse_shard(None) is None
    shard = parse_shard("1/4")
    assert (shard.index, shard.count, str(shard)) == (1, 4, "1/4")
    for bad in ("4/4", "0/0", "-1/2", "1"):
        with pytest.raises(ConfigError, match="INDEX/COUNT"):
            parse_shard(bad)
    assert parse_max_memory("0=20GiB, 1=20GiB,cpu=60GiB") == {0: "20GiB", 1: "20GiB",
                                                              "cpu": "60GiB"}
    assert parse_max_memory(None) is None
    with pytest.raises(ConfigError, match="DEVICE=SIZE"):
        parse_max_memory("0=lots")


def test_each_launched_process_gets_its_own_device():
    assert from_env({}) is None and from_env({"WORLD_SIZE": "1"}) is None
    procs = from_env({"WORLD_SIZE": "4", "RANK": "3", "LOCAL_RANK": "1",
                      "LOCAL_WORLD_SIZE": "2"})
    assert procs == Processes(rank=3, world=4, local_rank=1, local_world=2)
    with pytest.raises(ConfigError, match="RANK"):
        from_env({"WORLD_SIZE": "2"})
    assert process_device("cuda:1", None) == "cuda:1"  # one process: as asked
    assert process_device("cpu", procs) == "cpu"
    with pytest.raises(ConfigError, match="every process would use that GPU"):
        process_device("cuda:1", procs)
    with pytest.raises(ConfigError, match="one process per node"):
        process_device(None, procs, device_map="auto")
    if torch.cuda.is_available():
        if torch.cuda.device_count() > 1:
            assert process_device(None, procs) == "cuda:1"
    else:
        assert process_device(None, procs) == "cpu"  # never plain "cuda" (GPU 0 for all)
        with pytest.raises(ConfigError, match="CUDA is not available"):
            process_device("cuda", procs)


@pytest.mark.gpu
def test_torchrun_on_every_gpu_writes_the_single_process_file(folder, gpt2, tmp_path):
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < 2:
        pytest.skip("needs two CUDA devices")
    one, many = tmp_path / "one.jsonl", tmp_path / "many.jsonl"
    assert main(predict_args(gpt2, folder, one, "--device", "cuda:0")) == 0
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(count),
               "--master_port", str(free_port()), "-m", "consistency_bench",
               *predict_args(gpt2, folder, many, pin_cpu=False)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert many.read_bytes() == one.read_bytes()


@pytest.mark.gpu
def test_device_map_over_gpus_writes_the_single_gpu_file(folder, gpt2, tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    one, mapped = tmp_path / "one.jsonl", tmp_path / "mapped.jsonl"
    assert main(predict_args(gpt2, folder, one, "--device", "cuda:0")) == 0
    assert main(predict_args(gpt2, folder, mapped, "--device-map", "auto")) == 0
    a = [json.loads(x) for x in one.read_text().splitlines()]
    b = [json.loads(x) for x in mapped.read_text().splitlines()]
    assert [r["label"] for r in a] == [r["label"] for r in b]


FEWSHOT = ["--suites", "rte_semantic", "--num-fewshot", "2", "--fewshot-seed", "7"]


def part_header(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


def test_fewshot_runs_split_by_torchrun_or_shards_write_the_single_process_file(
        folder, gpt2, tmp_path, capsys):
    """The merged runner (prepare/execute) with few-shot pools: every split, the same bytes."""
    one = tmp_path / "one.jsonl"
    assert main(predict_args(gpt2, folder, one, *FEWSHOT)) == 0
    zero = tmp_path / "zero.jsonl"
    assert main(predict_args(gpt2, folder, zero, "--suites", "rte_semantic")) == 0
    assert one.read_bytes() != zero.read_bytes()  # the demonstrations change the scores
    parts = [tmp_path / f"fs{i}.part" for i in range(2)]
    for i, part in enumerate(parts):
        assert main(predict_args(gpt2, folder, part, *FEWSHOT, "--shard", f"{i}/2")) == 0
    header = part_header(parts[0])["run"]
    pools = json.loads((folder / "suites.json").read_text())["fewshot"]
    assert header["num_fewshot"] == 2 and header["fewshot_seed"] == 7
    assert header["fewshot_pools"] == {"rte": pools["rte"]["sha256"]}
    assert header["dtype"] == "float32" and header["amp"] is True
    merged = tmp_path / "merged.jsonl"
    assert main(["merge-predictions", *map(str, parts), "--data", str(folder), "--out",
                 str(merged)]) == 0
    assert merged.read_bytes() == one.read_bytes()
    capsys.readouterr()
    out = tmp_path / "tr.jsonl"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
               "-m", "consistency_bench", *predict_args(gpt2, folder, out, *FEWSHOT)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.read_bytes() == one.read_bytes()
    assert not out.with_name(out.name + ".parts").exists()


def test_merge_refuses_parts_of_another_seed_pool_dtype_or_prompt(folder, gpt2, tmp_path, capsys,
                                                          monkeypatch):
    import hashlib
    import shutil

    import pyarrow.parquet as pq

    base = tmp_path / "p0.part"
    assert main(predict_args(gpt2, folder, base, *FEWSHOT, "--shard", "0/2")) == 0
    # the same folder with another rte pool: its first demonstration for seed 7 dropped
    other = tmp_path / "cb"
    shutil.copytree(folder, other)
    manifest = json.loads((other / "suites.json").read_text())
    entry = manifest["fewshot"]["rte"]
    from consistency_bench.bench.prompting.demonstrations import seed_order

    table = pq.read_table(other / entry["path"])
    first = seed_order(table.to_pylist(), 7)[0]["id"]
    keep = [i for i, r in enumerate(table.column("id").to_pylist()) if r != first]
    pq.write_table(table.take(keep), other / entry["path"])
    entry["sha256"] = hashlib.sha256((other / entry["path"]).read_bytes()).hexdigest()
    entry["rows"] = len(keep)
    (other / "suites.json").write_text(json.dumps(manifest))
    variants = {
        "fewshot_seed 7 vs 8": (folder, ["--fewshot-seed", "8"]),
        "fewshot_pools": (other, []),
        "dtype 'float32' vs 'bfloat16'": (folder, ["--dtype", "bfloat16"]),
    }
    variants["inputs_sha1"] = (folder, [])  # another version's prompts (see below)
    for fragment, (data, extra) in variants.items():
        part = tmp_path / "p1.part"
        part.unlink(missing_ok=True)
        if fragment == "inputs_sha1":
            monkeypatch.setattr("consistency_bench.bench.prompting.prompts.FEWSHOT_DELIMITER",
                                "\n\n\n")
        assert main(predict_args(gpt2, data, part, *FEWSHOT, *extra, "--shard", "1/2")) == 0
        capsys.readouterr()
        out = tmp_path / "m.jsonl"
        assert main(["merge-predictions", str(base), str(part), "--data", str(data), "--out",
                     str(out)]) == 2
        err = capsys.readouterr().err
        assert fragment in err and not out.exists(), err


def test_device_map_with_cpu_only_limits_stays_on_the_cpu_where_a_gpu_exists(gpt2, monkeypatch):
    """``--max-memory cpu=...`` alone keeps the model, its inputs and its dtype on the CPU.

    Found on an H200: the run took CUDA as its device (inputs, bf16 default for causal models)
    although the map placed every layer on the CPU, and its scores left the CPU file's.
    """
    from consistency_bench.bench.modeling.loading import inspect_model, load_model

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    loaded = load_model(inspect_model(str(gpt2)), device_map="auto",
                        max_memory=parse_max_memory("cpu=2GiB"))
    param = next(loaded.model.parameters())
    assert param.device.type == "cpu"
    assert param.dtype == torch.float32  # not the bf16 a CUDA causal model defaults to
    assert loaded.device.type == "cpu"
