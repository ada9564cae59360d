"""Device check of `predict`'s CUDA paths, run on a machine with one NVIDIA GPU.

Prepared here by ``bash benchmarks/gpu_prepare.sh`` (a few built suites, the MiniLM config and
tokenizer, the test corpora subset and the ``datasets`` wheels in ``.gpu/``), then run there from
the repository root::

    python3 benchmarks/gpu_check.py OUT_DIR

Every step is a whole ``consistency-bench predict`` process (``python -m bench.cli``), timed
from the outside. It prints one line per step and writes ``OUT_DIR/figures.json``:

- throughput (rows/s) of a MiniLM-L6-shaped classifier (random weights, seed 0: the compute of
  the real model, not its answers) on ``mnli_calm`` with CUDA autocast, CUDA bf16 weights,
  CUDA float32, and on the CPU (every core) for a 1/20 shard;
- agreement of labels between those runs, and the largest probability difference;
- a tiny GPT-2 with ``--device-map auto`` against ``--device cuda:0`` and the CPU;
- ``torchrun`` with one and with two processes on a machine with one GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GPU = ROOT / ".gpu"
DATA = GPU / "cb"


def run(name: str, args: list[str], figures: dict, timeout: int = 240) -> int:
    """Run ``args``, print and record its wall time and exit status under ``name``."""
    start = time.perf_counter()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
        code, tail = done.returncode, (done.stdout + done.stderr)[-1500:]
    except subprocess.TimeoutExpired:
        code, tail = 124, "timed out"
    seconds = time.perf_counter() - start
    figures["steps"][name] = {"rc": code, "seconds": round(seconds, 2)}
    print(f"== {name}: rc {code}, {seconds:.1f} s", flush=True)
    if code != 0:
        print(tail, flush=True)
        figures["steps"][name]["tail"] = tail[-600:]
    return code


def predictions(path: Path) -> dict[str, dict]:
    """Id -> row of a prediction JSONL file or of a part file (``--shard``)."""
    rows: dict[str, dict] = {}
    for file in [path]:
        if file.is_file():
            for line in file.read_text(encoding="utf-8").splitlines():
                row = json.loads(line) if line.strip() else None
                if isinstance(row, list) and len(row) == 2:  # a part line: [position, record]
                    row = row[1]
                if isinstance(row, dict) and "id" in row:
                    rows[row["id"]] = row
    return rows


def compare(a: dict[str, dict], b: dict[str, dict]) -> dict:
    """Label agreement and largest probability difference over the ids both files hold."""
    common = sorted(set(a) & set(b))
    same = sum(a[i]["label"] == b[i]["label"] for i in common)
    diff = max((max(abs(x - y) for x, y in zip(a[i]["probs"], b[i]["probs"], strict=False))
                for i in common if a[i].get("probs") and b[i].get("probs")), default=None)
    return {"rows": len(common), "same_label": same,
            "agreement": round(same / len(common), 6) if common else None,
            "max_prob_diff": diff}


def main(out: Path) -> int:
    """Run every step; write ``out/figures.json``."""
    import torch
    import transformers

    out.mkdir(parents=True, exist_ok=True)
    work = Path("/tmp/gpu-check")
    work.mkdir(parents=True, exist_ok=True)
    figures: dict = {"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                     "torch": torch.__version__, "transformers": transformers.__version__,
                     "cpu_cores": os.cpu_count(), "steps": {}, "compare": {}}
    print(json.dumps({k: figures[k] for k in ("device", "torch", "transformers", "cpu_cores")}))

    # A MiniLM-L6-shaped classifier with random weights (seed 0) and the real tokenizer.
    model = work / "minilm-random"
    if not model.exists():
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        torch.manual_seed(0)
        net = AutoModelForSequenceClassification.from_config(
            AutoConfig.from_pretrained(GPU / "minilm"))
        net.save_pretrained(model)
        AutoTokenizer.from_pretrained(GPU / "minilm").save_pretrained(model)
    cli = [sys.executable, "-m", "bench.cli"]
    predict = [*cli, "predict", "--model", str(model), "--data", str(DATA), "--suites",
               "mnli_calm", "--no-progress"]
    n_rows = 117780
    files = {}
    for name, extra in (("cuda_autocast", ["--device", "cuda"]),
                        ("cuda_bf16", ["--device", "cuda", "--dtype", "bfloat16"]),
                        ("cuda_fp32", ["--device", "cuda", "--no-amp"])):
        files[name] = work / f"{name}.jsonl"
        files[name].unlink(missing_ok=True)
        if run(name, [*predict, *extra, "--out", str(files[name])], figures) == 0:
            figures["steps"][name]["rows_per_s"] = round(
                n_rows / figures["steps"][name]["seconds"], 1)
    files["cpu_shard"] = work / "cpu_shard.jsonl"
    if run("cpu_fp32_shard_0_of_20", [*predict, "--device", "cpu", "--shard", "0/20", "--out",
                                      str(files["cpu_shard"])], figures, timeout=300) == 0:
        cpu = predictions(files["cpu_shard"])
        figures["steps"]["cpu_fp32_shard_0_of_20"]["rows"] = len(cpu)
        figures["steps"]["cpu_fp32_shard_0_of_20"]["rows_per_s"] = round(
            len(cpu) / figures["steps"]["cpu_fp32_shard_0_of_20"]["seconds"], 1)
        for name in ("cuda_fp32", "cuda_autocast", "cuda_bf16"):
            if files[name].is_file():
                figures["compare"][f"{name}_vs_cpu"] = compare(predictions(files[name]), cpu)
    if files["cuda_fp32"].is_file():
        fp32 = predictions(files["cuda_fp32"])
        for name in ("cuda_autocast", "cuda_bf16"):
            if files[name].is_file():
                figures["compare"][f"{name}_vs_cuda_fp32"] = compare(predictions(files[name]),
                                                                     fp32)

    # A tiny GPT-2: --device-map auto against one GPU and the CPU.
    sys.path.insert(0, str(ROOT))
    from tests.tiny_models import tiny_gpt2

    gpt2 = tiny_gpt2(work / "gpt2")
    causal = [*cli, "predict", "--model", str(gpt2), "--data", str(DATA), "--suites",
              "rte_semantic", "rte_negational", "--no-progress"]
    for name, extra in (("gpt2_cpu", ["--device", "cpu"]),
                        ("gpt2_cuda0", ["--device", "cuda:0"]),
                        ("gpt2_device_map_auto", ["--device-map", "auto"]),
                        ("gpt2_device_map_max_memory",
                         ["--device-map", "auto", "--max-memory", "0=1GiB,cpu=4GiB"])):
        files[name] = work / f"{name}.jsonl"
        files[name].unlink(missing_ok=True)
        run(name, [*causal, *extra, "--out", str(files[name])], figures)
    base = predictions(files["gpt2_cpu"]) if files["gpt2_cpu"].is_file() else {}
    for name in ("gpt2_cuda0", "gpt2_device_map_auto", "gpt2_device_map_max_memory"):
        if files[name].is_file() and base:
            figures["compare"][f"{name}_vs_cpu"] = compare(predictions(files[name]), base)

    # torchrun on one GPU: one process reproduces the single-process file; two must be refused.
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    for procs in (1, 2):
        name = f"torchrun_{procs}_procs_one_gpu"
        files[name] = work / f"{name}.jsonl"
        files[name].unlink(missing_ok=True)
        run(name, [*torchrun, f"--nproc_per_node={procs}", "-m", "bench.cli", "predict",
                   "--model", str(gpt2), "--data", str(DATA), "--suites", "rte_semantic",
                   "rte_negational", "--no-progress", "--out", str(files[name])], figures)
    if files["torchrun_1_procs_one_gpu"].is_file() and files["gpt2_cuda0"].is_file():
        figures["compare"]["torchrun_1_vs_cuda0"] = compare(
            predictions(files["torchrun_1_procs_one_gpu"]), predictions(files["gpt2_cuda0"]))

    (out / "figures.json").write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures["compare"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "gpu-figures")))
