"""When does splitting a run pay? One process vs ``torchrun`` x2 vs one ``--shard`` of two.

    PYTHONPATH=. nice -n 10 python benchmarks/bench_split.py --data consistency-bench --runs 3

Every side is a whole process, the command a user runs, timed from start to exit:

1. ``single``: ``python -m consistency_bench predict`` (one process, torch's default threads);
2. ``torchrun2``: ``python -m torch.distributed.run --nproc_per_node 2 -m consistency_bench
   predict`` (two processes, gloo on CPU, torchrun's default of one thread each), one file;
3. ``shard``: ``predict --shard 0/2`` alone, one process (what each of two machines runs).

Two random causal LMs (``tests/tiny_models.py``'s GPT-2 builder): ``tiny`` (2 layers, 32
wide: start-up dominates) and ``compute`` (``--layers`` x ``--hidden``, default 6 x 384: the
forward passes dominate). Sides are interleaved, order rotated per run. Printed: every run,
medians, and the ratios to ``single`` (below 1 means faster). The machine's cores, load
average before each run and torch's thread count are printed with the figures: the ratio
depends on all three (on 2 cores, two processes of one thread each use the same cores as one
process of two threads, so splitting pays only where one process cannot keep both cores
busy, or where start-up is small next to compute).
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = ["rte_semantic", "wic_semantic", "sst2_semantic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_models(out: Path, layers: int, hidden: int) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    from tests.tiny_models import tiny_gpt2

    return {
        "tiny": tiny_gpt2(out / "tiny"),
        "compute": tiny_gpt2(out / "compute", layers=layers, hidden=hidden),
    }


def command(side: str, model: Path, data: Path, suites: list[str], out: Path) -> list[str]:
    predict = ["-m", "consistency_bench", "predict", "--model", str(model), "--data", str(data),
               "--suites", *suites, "--no-progress", "--out", str(out)]
    if side == "single":
        return [sys.executable, *predict]
    if side == "shard":
        return [sys.executable, *predict, "--shard", "0/2"]
    return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
            "--master_addr", "127.0.0.1", "--master_port", str(free_port()), *predict]


def timed(cmd: list[str]) -> float:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--suites", nargs="+", default=SUITES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--models", nargs="+", default=["tiny", "compute"])
    args = parser.parse_args()
    import torch

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"torch {torch.__version__} with {torch.get_num_threads()} threads by default; "
          f"suites {' '.join(args.suites)}; compute model {args.layers} x {args.hidden}")
    sides = ["single", "torchrun2", "shard"]
    with tempfile.TemporaryDirectory() as tmp:
        models = make_models(Path(tmp), args.layers, args.hidden)
        times: dict[tuple[str, str], list[float]] = {}
        for run in range(args.runs):
            for name in args.models:
                order = sides[run % 3:] + sides[:run % 3]
                for side in order:
                    out = Path(tmp) / f"{name}-{side}-{run}.jsonl"
                    load = os.getloadavg()[0]
                    took = timed(command(side, models[name], args.data, args.suites, out))
                    times.setdefault((name, side), []).append(took)
                    print(f"run {run + 1} {name:8s} {side:10s} {took:7.1f}s  (load {load:.1f})",
                          flush=True)
        print(f"\nmedians of {args.runs} runs (ratio to single; below 1 is faster):")
        for name in args.models:
            base = statistics.median(times[(name, "single")])
            for side in sides:
                median = statistics.median(times[(name, side)])
                print(f"  {name:8s} {side:10s} {median:7.1f}s  {median / base:5.2f}x")


if __name__ == "__main__":
    main()
