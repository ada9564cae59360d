"""Benchmark: the leaderboard at N entries over every suite (issue 33, items 4 and 5).

Entries are synthetic (``benchmarks/synthetic_board.py``): noise levels spread from 2% to 60%,
so the right order is known (lowest noise first). Two parts:

``ranking`` (in one process, the library step it is): every entry is scored and its cells'
samples made once (as ``leaderboard --data`` caches them), then ``rank`` runs on the first
entries of several board sizes, without samples (cells, flags, views, Borda) and with them
(plus the rank intervals, cell intervals and paired neighbour tests), interleaved, ``--repeat``
times; medians, and the difference (the interval and test cost).

``processes`` (whole processes, as a maintainer runs them; each forked from a small launcher
so its peak memory is its own): N prediction files are written, then ``submit`` of each entry;
``leaderboard --data`` cold (``--no-cache``), then with the cache: the first render (which
writes it), renders with nothing changed and renders with one entry added (interleaved,
``--repeat`` times, then nothing changed once more; every render into one site folder, as
a maintainer renders); then ``review --merge`` of one pull request on the stand-in Hub
(``tests/hub_standin.py``) after the board is published there. Prints medians of wall and CPU
time and peak memory, the site's file sizes, and how closely the ranks follow the noise.

Usage (from the repository root; ``--work`` keeps the files between runs, so an interrupted run
resumes, and ``processes`` reuses the entries already submitted)::

    python benchmarks/bench_leaderboard.py ranking --data consistency-bench --entries 100 250 500 \\
        [--board /tmp/board500.pkl]
    python benchmarks/bench_leaderboard.py processes --data consistency-bench --entries 500 \\
        --work /tmp/board500 [--repeat 3] [--no-review] [--skip-no-cache] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from synthetic_board import Board, aligned, entry_name, noise_levels  # noqa: E402


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def board_samples(data: Path, n: int):
    """Results, samples and expected order of ``n`` synthetic entries (scored in-process)."""
    from consistency_bench.bench.scoring.engine import ScoreOptions, SuiteFolder, scored_suite
    from consistency_bench.leaderboard.ranking.model import Entry
    from consistency_bench.leaderboard.ranking.resample import sample_cells, units_key

    folder = SuiteFolder(data)
    names = [entry_name(q) for q in noise_levels(n)]
    results: dict[str, dict] = {e: {} for e in names}
    samples: dict[str, dict] = {}
    options = ScoreOptions(n_boot=100)
    for suite in sorted(folder.manifest):
        part = folder.load(suite)
        cells, owners = [], []
        for e, q in zip(names, noise_levels(n), strict=True):
            res, units = scored_suite(part, aligned(part, e, q), options)
            results[e][suite] = json.loads(json.dumps(res))
            if units is not None and res.get("consistent_accuracy_cc") is not None:
                cells.append((units.outcomes, (res.get("metrics") or {}).get("ranked_units"),
                              float(res.get("consistent_accuracy_chance") or 0.0)))
                owners.append(e)
                key = units_key(suite, str(folder.manifest[suite]["sha256"]),
                                units.codes.astype("int64").tobytes())
        if cells:
            samples[suite] = dict(zip(owners, sample_cells(suite, key, cells), strict=True))
        print(f"  scored {suite} for {n} entries", file=sys.stderr, flush=True)
    entries = [Entry(e, {"suites": results[e]}) for e in names]
    return entries, samples


def rank_order(lb) -> tuple[float, int]:
    """Spearman's rho between the 'all' view's ranks and the noise order, and the largest
    displacement (ranked rows only)."""
    import numpy as np

    rows = [r for r in lb.views["all"].rows if r.rank is not None]
    expected = sorted(r.name for r in rows)  # names sort by noise
    got = [r.name for r in rows]
    pos = {name: i for i, name in enumerate(expected)}
    ranks = np.array([pos[name] for name in got], dtype=float)
    if len(ranks) < 2:
        return 1.0, 0
    rho = float(np.corrcoef(ranks, np.arange(len(ranks)))[0, 1])
    return rho, int(np.max(np.abs(ranks - np.arange(len(ranks)))))


def ranking(args: argparse.Namespace) -> None:
    """Time ``rank`` without and with samples at each board size."""
    import pickle

    from consistency_bench.leaderboard.ranking.board import rank

    largest = max(args.entries)
    saved = args.board if args.board is not None and args.board.exists() else None
    if saved is not None:  # a board this script saved (--board): not scored again
        with saved.open("rb") as fh:
            entries, samples = pickle.load(fh)
        print(f"read the board of {len(entries)} entries from {saved}", flush=True)
    else:
        start = time.perf_counter()
        entries, samples = board_samples(args.data, largest)
        print(f"scored {largest} entries and made their samples in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        if args.board is not None:
            with args.board.open("wb") as fh:
                pickle.dump((entries, samples), fh)
    if len(entries) < largest:
        raise SystemExit(f"--board holds {len(entries)} entries, fewer than {largest}")
    largest = len(entries)
    print(f"\nrank() over every suite, median of {args.repeat} interleaved runs (s; CPU s)")
    print(f"{'entries':>8} {'no samples':>16} {'with samples':>16} {'intervals+tests':>16} "
          f"{'rho':>6} {'max shift':>9}")
    for n in sorted(args.entries):
        step = largest / n
        subset = [entries[int(i * step)] for i in range(n)]
        names = {e.name for e in subset}
        mine = {s: {e: c for e, c in cs.items() if e in names} for s, cs in samples.items()}
        runs: dict[str, list[tuple[float, float]]] = {"plain": [], "samples": []}
        lb = None
        for _ in range(args.repeat):
            for side in runs:
                wall, cpu = time.perf_counter(), time.process_time()
                lb = rank(subset, samples=mine if side == "samples" else None)
                runs[side].append((time.perf_counter() - wall, time.process_time() - cpu))
        plain = [_median([r[k] for r in runs["plain"]]) for k in (0, 1)]
        full = [_median([r[k] for r in runs["samples"]]) for k in (0, 1)]
        rho, shift = rank_order(lb)
        print(f"{n:>8} {plain[0]:>7.2f}; {plain[1]:>6.2f} {full[0]:>7.2f}; {full[1]:>6.2f} "
              f"{full[0] - plain[0]:>7.2f}; {full[1] - plain[1]:>6.2f} {rho:>6.3f} "
              f"{shift:>9}", flush=True)


#: Runs the command of its arguments and prints its wall time and rusage as JSON; forked from
#: this small process, so the peak RSS is the command's own (docs/benchmarks.md).
LAUNCHER = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"wall": time.perf_counter() - start, "code": os.waitstatus_to_exitcode(status),
                  "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss}))
"""


def run_process(argv: list[str], log: Path, env: dict | None = None,
                cwd: Path = ROOT) -> dict:
    """Run ``argv`` (output to ``log``); its wall and CPU seconds and peak RSS in MiB.

    ``env``: the whole environment (default: this one, offline, the repository importable).
    """
    if env is None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(log), *argv], env=env,
                          cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"launcher failed: {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout)
    if result["code"]:
        raise SystemExit(f"{' '.join(argv[1:4])} failed (exit {result['code']}):\n"
                         + log.read_text(errors="replace")[-3000:])
    return {"wall": result["wall"], "cpu": result["cpu"], "rss": result["rss"] / 1024}


CLI = [sys.executable, "-m", "consistency_bench"]


def _meta(path: Path, name: str) -> Path:
    path = path.parent / "meta" / path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"model: synthetic/{name}\nrevision: v1\nlicense: mit\n"
                    f"link: https://example.org/{name}\ncontact: bench@example.org\n"
                    f"date: '2026-01-01'\nnotes: synthetic benchmark entry\n", encoding="utf-8")
    return path


def prepare(work: Path, data: Path, n: int, jobs: int = 1) -> tuple[list[str], dict]:
    """Write the prediction files of ``n + 1`` entries and submit the first ``n`` (resumes).

    ``jobs``: submits run at once (each a whole process); above 1 their times include the
    contention, so the report says how many ran at once.
    """
    from concurrent.futures import ThreadPoolExecutor

    from consistency_bench.bench.scoring.engine import SuiteFolder

    board = None
    levels = noise_levels(n + 1)  # the extra one is the entry added in the timed renders
    names = [entry_name(q) for q in levels]
    preds, subs, logs = work / "predictions", work / "submissions", work / "logs"
    for d in (preds, subs, logs / "submit"):
        d.mkdir(parents=True, exist_ok=True)
    for name, q in zip(names, levels, strict=True):
        if not (preds / f"{name}.jsonl.gz").exists():
            board = board or Board(SuiteFolder(data))
            board.write(name, q, preds / f"{name}.jsonl.gz")
    todo = [name for i, name in enumerate(names)  # the middle one is added later
            if i != n // 2 and not (subs / name).exists()]

    def submit(entry: str) -> dict:
        return run_process(
            [*CLI, "submit", str(preds / f"{entry}.jsonl.gz"), "--name", entry, "--meta",
             str(_meta(work / f"{entry}.yaml", entry)), "--submissions", str(subs), "--data",
             str(data)], logs / "submit" / f"{entry}.log")

    submit_times = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(submit, todo):
            submit_times.append(result)
            if len(submit_times) % 25 == 0:
                print(f"  submitted {len(submit_times)} entries", flush=True)
    return names, {"submit": submit_times, "jobs": jobs}


def _render(work: Path, data: Path, out: str, *extra: str) -> dict:
    return run_process([*CLI, "leaderboard", "--submissions", str(work / "submissions"),
                        "--out", str(work / out), "--data", str(data), *extra],
                       work / "logs" / f"{out}.log")


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


def _rank_follows_noise(site: Path) -> tuple[float, int, int]:
    """Spearman's rho of the 'all' view's ranked rows against the noise order, the largest
    displacement, and the rows ranked."""
    import numpy as np

    rows = [r for r in json.loads((site / "leaderboard.json").read_text())["views"]["all"]
            ["rows"] if r["rank"] is not None]
    pos = {name: i for i, name in enumerate(sorted(r["name"] for r in rows))}
    got = np.array([pos[r["name"]] for r in rows], dtype=float)
    if len(got) < 2:
        return 1.0, 0, len(got)
    rho = float(np.corrcoef(got, np.arange(len(got)))[0, 1])
    return rho, int(np.max(np.abs(got - np.arange(len(got))))), len(got)


def _review(work: Path, data: Path, added: str) -> dict:
    """Publish the board on the stand-in Hub, open one pull request, time ``review --merge``."""
    from tests.hub_standin import TOKEN, Hub

    hub_dir = work / "hub"
    shutil.rmtree(hub_dir, ignore_errors=True)
    shutil.copytree(work / "submissions", hub_dir / "subs", symlinks=True)
    shutil.copytree(work / "site", hub_dir / "site", symlinks=True)
    logs = work / "logs"
    with Hub() as hub:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("HF_") and k != "TRANSFORMERS_OFFLINE"}
        env.update(PYTHONPATH=str(ROOT), HF_ENDPOINT=hub.url, HF_HOME=str(hub_dir / "hf_home"),
                   HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
                   HF_HUB_DISABLE_PROGRESS_BARS="1", HF_TOKEN=TOKEN)
        for argv in (["publish-suites", "--repo", "org/cb", "--data", str(data)],
                     ["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs",
                      "--space", "org/lb-page", "--suites-repo", "org/cb"],
                     ["submit", str(work / "predictions" / f"{added}.jsonl.gz"), "--meta",
                      str(_meta(work / f"{added}.yaml", added)), "--name", added, "--data",
                      str(data), "--hub", "org/lb"]):
            run_process([*CLI, *argv], logs / f"hub-{argv[0]}.log", env, cwd=hub_dir)
        timed = run_process([*CLI, "review", "--hub", "org/lb", "--suites-repo", "org/cb",
                             "--data", str(data), "--submissions", "subs", "--site", "site",
                             "--space", "org/lb-page", "--merge"], logs / "review.log", env,
                            cwd=hub_dir)
        merged = [p["status"] for p in hub.pull_requests("org/lb")]
    text = (logs / "review.log").read_text()
    if merged != ["merged"] or f"merged #1 ({added})" not in text:
        raise SystemExit(f"review did not merge the pull request ({merged}):\n{text[-2000:]}")
    return timed


def phases(work: Path, data: Path) -> dict[str, float]:
    """Wall seconds of each step of a warm render, in this process (CPU-bound steps)."""
    import tempfile

    from consistency_bench.leaderboard.cache.verified import verify_entries
    from consistency_bench.leaderboard.ranking.board import rank
    from consistency_bench.leaderboard.ranking.model import Entry
    from consistency_bench.leaderboard.submissions.reader import load_all
    from consistency_bench.leaderboard.webpage.render import (
        render_heatmap,
        render_html,
        render_markdown,
    )

    out: dict[str, float] = {}

    def step(name, fn):
        start = time.perf_counter()
        value = fn()
        out[name] = time.perf_counter() - start
        return value

    subs = step("read and check the entries (load_all)", lambda: load_all(work / "submissions"))
    verified = step("verify through the cache", lambda: verify_entries(
        subs, data, work / "submissions"))
    entries = [Entry(s.slug, s.results, s.meta) for s in verified.kept]
    step("rank without samples (cells, flags, views)", lambda: rank(entries))
    lb = step("rank with samples (+ intervals and tests)",
              lambda: rank(entries, samples=verified.samples))
    out["  of which intervals and tests"] = (out["rank with samples (+ intervals and tests)"]
                                             - out["rank without samples (cells, flags, views)"])
    step("render leaderboard.json", lambda: json.dumps(lb.to_dict(), indent=2, sort_keys=True))
    step("render leaderboard.md", lambda: render_markdown(lb))
    step("render index.html", lambda: render_html(lb))
    with tempfile.TemporaryDirectory() as tmp:
        step("render heatmap.png", lambda: render_heatmap(lb, Path(tmp) / "h.png"))
    return out


def _show(label: str, runs: list[dict], note: str = "") -> None:
    wall, cpu, rss = (_median([r[k] for r in runs]) for k in ("wall", "cpu", "rss"))
    print(f"{label:<46} {len(runs):>4} {wall:>8.2f} {cpu:>8.2f} {rss:>9.0f}  {note}")


def processes(args: argparse.Namespace) -> None:
    """Whole processes: submit, leaderboard cold / warm / one added, review."""
    [n] = args.entries if len(args.entries) == 1 else [max(args.entries)]
    work, data = args.work, args.data
    os.environ.setdefault("CONSISTENCY_BENCH_CACHE_KEY", str(work / "cells.key"))
    names, done = prepare(work, data, n, args.jobs)
    added = names[n // 2]
    subs = work / "submissions"
    shutil.rmtree(subs / added, ignore_errors=True)
    print(f"{n} entries over every suite of {data}; work folder {work}", flush=True)
    cold = [] if args.skip_no_cache else [_render(work, data, "site-cold", "--no-cache")]
    first = [_render(work, data, "site")]
    unchanged, plus_one = [], []
    for _ in range(args.repeat):  # interleaved: nothing changed, then one entry added
        unchanged.append(_render(work, data, "site"))
        run_process([*CLI, "submit", str(work / "predictions" / f"{added}.jsonl.gz"), "--name",
                     added, "--meta", str(_meta(work / f"{added}.yaml", added)),
                     "--submissions", str(subs), "--data", str(data)],
                    work / "logs" / "submit-added.log")
        # into the same site folder, as a maintainer renders: the earlier render's explorer
        # files are reused (a new folder would make every entry's file again)
        plus_one.append(_render(work, data, "site"))
        shutil.rmtree(subs / added)
    unchanged.append(_render(work, data, "site"))  # the site compared below: without it
    same = None if args.skip_no_cache else _files(work / "site-cold") == _files(work / "site")
    steps = phases(work, data)
    review = [] if args.no_review else [_review(work, data, added)]
    print(f"\n{'whole process (2 shared cores unless said)':<46} {'runs':>4} {'wall s':>8} "
          f"{'CPU s':>8} {'peak MiB':>9}")
    if done["submit"]:
        _show(f"submit, one entry ({done['jobs']} at once)", done["submit"],
              f"{len(done['submit'])} this run, {sum(r['wall'] for r in done['submit']):.0f} s")
    if cold:
        _show("leaderboard --data, cold (--no-cache)", cold)
    _show("leaderboard --data, first (writes the cache)", first)
    _show("leaderboard --data, warm, nothing changed", unchanged)
    _show("leaderboard --data, warm, one entry added", plus_one,
          f"+{_median([r['wall'] for r in plus_one]) - _median([r['wall'] for r in unchanged]):.2f}"
          " s wall over unchanged")
    if review:
        _show("review --merge, one pull request (stand-in Hub)", review)
    site = work / "site"
    sizes = {p.name: p.stat().st_size for p in site.iterdir() if p.is_file()}
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    print("\nsite (nothing changed): " + ", ".join(
        f"{name} {size / 1e6:.2f} MB" for name, size in sorted(sizes.items()))
        + f"; all files {total / 1e6:.2f} MB")
    print("\nsteps of a warm render, nothing changed (in one process, wall s): " + "; ".join(
        f"{name} {value:.2f}" for name, value in steps.items()))
    rho, shift, ranked = _rank_follows_noise(site)
    print(f"cached and cold (--no-cache) sites byte-identical: {same}; 'all' view: {ranked} "
          f"ranked, Spearman rho against the noise order {rho:.4f}, largest displacement "
          f"{shift}")
    print(f"timings: medians; the machine was shared unless said otherwise ({os.cpu_count()} "
          f"cores, load average {os.getloadavg()[0]:.1f} at the end)")


def main() -> None:
    """Parse the arguments and run one part."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    for name in ("ranking", "processes"):
        p = sub.add_parser(name)
        p.add_argument("--data", type=Path, default=ROOT / "consistency-bench")
        p.add_argument("--entries", type=int, nargs="+", default=[100, 250, 500])
        p.add_argument("--repeat", type=int, default=3)
        if name == "ranking":
            p.add_argument("--board", type=Path,
                           help="save the scored board here, or read it if it exists (a "
                           "pickle this script wrote: the scoring takes minutes)")
        if name == "processes":
            p.add_argument("--work", type=Path, required=True)
            p.add_argument("--no-review", action="store_true")
            p.add_argument("--jobs", type=int, default=1,
                           help="submits run at once while preparing (default 1)")
            p.add_argument("--skip-no-cache", action="store_true",
                           help="skip the --no-cache render (the first render is cold too); "
                           "the cached/cold byte comparison is then not made")
    args = parser.parse_args()
    {"ranking": ranking, "processes": processes}[args.part](args)


if __name__ == "__main__":
    main()
