"""Served-model client throughput: ``predict --api openai`` at concurrency 1 vs N, whole processes.

    PYTHONPATH=. nice -n 10 python benchmarks/bench_served.py --data consistency-bench \
        --latency 0.2 --concurrency 32 --runs 3

The stand-in OpenAI-compatible server (``tests/openai_standin.py``) runs as its own process,
backed by a 1-layer GPT-2 of 16 dimensions (compute is not what is measured) and answering
every request after ``--latency`` seconds; its model runs in a second process
(``--engine-process``, as vLLM's engine core runs apart from its API server) unless
``--model-in-server``. The client runs as the process a user runs,
``python -m consistency_bench predict --api openai --base-url URL --model tiny ...
--concurrency C --cache FRESH_DIR`` (a fresh cache each run, so every request is sent),
interleaved: sequential (``--concurrency 1``) and ``--concurrency N`` alternate, ``--runs``
times. Printed: every run's whole-process wall time and its request phase (first request sent
to last response, from the summary line), the medians, the request rates and their ratio
(issue 30's target: at least 25x at N = 32 with 200 ms of latency), and the same concurrent
run against a second server with no latency: the rate the CPU allows (client and server
share the machine), which bounds the concurrent rate. The whole-process times
include start-up (imports, reading the suites, tokenising): with a few hundred requests it is
a large part of the concurrent run, so the ratio of whole-process times is lower than the
ratio of request rates; both are printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_model(data: Path, suites: list[str], out: Path) -> Path:
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT))
    from tests.tiny_models import tiny_gpt2

    texts = []
    for suite in suites:
        for row in pq.read_table(data / suite / "test.parquet").to_pylist():
            texts += [row["text"], row["text_pair"] or ""]
    return tiny_gpt2(out, corpus=texts + ["Answer: yes no"] * 20, layers=1, hidden=16,
                     vocab_size=1000)


def run_client(url: str, model: Path, data: Path, suites: list[str], concurrency: int,
               tmp: Path, env: dict) -> tuple[float, float, int]:
    cache = Path(tempfile.mkdtemp(dir=tmp))
    cmd = [sys.executable, "-m", "consistency_bench", "predict", "--api", "openai",
           "--base-url", url, "--model", "tiny", "--tokenizer", str(model), "--data", str(data),
           "--suites", *suites, "--out", str(cache / "p.jsonl"), "--cache", str(cache),
           "--concurrency", str(concurrency), "--no-progress", "--max-length", "1022"]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"client failed: {done.stderr.strip()[-500:]}")
    found = re.search(r"(\d+) requests \((\d+) sent.*\(requests ([0-9.]+)s\)", done.stdout)
    if not found or found[1] != found[2]:
        sys.exit(f"unexpected summary: {done.stdout}")
    return wall, float(found[3]), int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "consistency-bench")
    parser.add_argument("--suites", nargs="+", default=["wic_semantic"])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model-in-server", action="store_true",
                        help="run the stand-in's model in its HTTP process (default: in a "
                             "process of its own, as vLLM's engine core)")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = make_model(args.data, args.suites, tmp / "model")
        servers = [subprocess.Popen(
            [sys.executable, "-m", "tests.openai_standin", "--model", str(model), "--port",
             str(free_port()), "--latency", str(latency),
             *([] if args.model_in_server else ["--engine-process"])],
            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            for latency in (args.latency, 0.0)]
        try:
            url, url0 = (server.stdout.readline().strip() for server in servers)
            print(f"servers {url} (latency {args.latency}s), {url0} (none: the CPU ceiling); "
                  f"{platform.processor() or 'cpu'}, {os.cpu_count()} cores, load "
                  f"{os.getloadavg()[0]:.1f}")
            times: dict[object, list[tuple[float, float]]] = {
                1: [], args.concurrency: [], "ceiling": []}
            requests = 0
            for run in range(args.runs):
                order = [1, args.concurrency, "ceiling"]
                for c in order if run % 2 == 0 else order[::-1]:
                    target = url0 if c == "ceiling" else url
                    n = args.concurrency if c == "ceiling" else c
                    wall, phase, requests = run_client(target, model, args.data, args.suites,
                                                       int(n), tmp, env)
                    times[c].append((wall, phase))
                    print(f"run {run + 1} {c!s:>7}: whole process {wall:6.1f}s, "
                          f"requests {phase:6.2f}s ({requests / phase:6.1f} requests/s), "
                          f"load {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            for server in servers:
                server.terminate()
                server.wait()
    seq = [statistics.median(x[i] for x in times[1]) for i in (0, 1)]
    par = [statistics.median(x[i] for x in times[args.concurrency]) for i in (0, 1)]
    print(f"\n{requests} requests per run, {args.runs} runs, medians:")
    print(f"  concurrency  1: whole process {seq[0]:.1f}s, requests {seq[1]:.2f}s "
          f"({requests / seq[1]:.1f} requests/s)")
    print(f"  concurrency {args.concurrency}: whole process {par[0]:.1f}s, requests "
          f"{par[1]:.2f}s ({requests / par[1]:.1f} requests/s)")
    top = statistics.median(x[1] for x in times["ceiling"])
    print(f"  concurrency {args.concurrency} with no latency (the CPU ceiling of client + "
          f"server on this machine): requests {top:.2f}s ({requests / top:.1f} requests/s)")
    print(f"  request rate ratio {seq[1] / par[1]:.1f}x; whole-process ratio "
          f"{seq[0] / par[0]:.1f}x")


if __name__ == "__main__":
    main()
