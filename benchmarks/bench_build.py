"""Build benchmark: our Parquet writer against plain pyarrow, and whole ``build`` processes.

1. Per suite (in one process, as the library step it is): rows are generated once, then our
   writer (``rows_to_table``: row-contract check, duplicate ids, HF features; then
   ``write_parquet``: deterministic settings, atomic, sha256) and the plain baseline a user
   would write (``pa.Table.from_pylist(rows)`` + ``pq.write_table``) run interleaved
   ``--repeat`` times; medians and the ratio are printed. Our writer does more (checks, HF
   schema, hashing), so the honest expectation is a ratio below 1.
2. Scale: the writer on the largest suite's rows replicated 1x, 2x, 4x (ids suffixed), so a
   step that is not linear in rows shows.
3. Whole processes (``--processes``): ``consistency-bench build`` into a new folder with
   ``--jobs 1`` and ``--jobs 2`` (build caches warm), a second build into the same folder with
   nothing changed (every suite up to date), a fresh build with the build cache off and one
   with the caches cold (the first build after an install), interleaved, medians of wall and
   CPU time (:func:`processes`). With ``--baseline DIR`` (the code before a change, e.g.
   ``git archive`` of main into DIR) a fresh build by that code runs interleaved with ours,
   each from its own folder.
4. PBSMT scale (``--pbsmt-scale``): ``mnli_salad_pbsmt``'s work (cross-fitted training and
   decoding) on the first quarter, half and all of MNLI dev matched (distinct rows), so a
   step that is not linear in rows shows.
5. PBSMT training against decoding (``--pbsmt-split``): ``mnli_salad_pbsmt``'s six systems
   trained and its 9,815 records translated, CPU of each step, in a process of its own per run
   (the first translation of each fold, which compiles the decoder or loads it from numba's
   cache, is left out); with ``--baseline DIR`` the same with that code, interleaved, and the
   outputs compared (md5 of every translation).

Usage::

    python benchmarks/bench_build.py [--family becel calm coherence] [--repeat 3] [--processes]
    python benchmarks/bench_build.py --family becel calm coherence salad --only-processes
    python benchmarks/bench_build.py --family becel calm coherence salad --only-processes \
        --baseline /tmp/code-before
    python benchmarks/bench_build.py --pbsmt-scale
    python benchmarks/bench_build.py --pbsmt-split --baseline /tmp/code-before --repeat 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from code_view import code_root

from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.catalog import SUITES
from consistency_bench.builders.suite.write import rows_to_table
from consistency_bench.builders.table_io import write_parquet

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCES = HERE.parents[1] / "shared" / "corpora"


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def writers(spec, rows: list[dict], tmp: Path, repeat: int) -> tuple[float, float]:
    """Medians (ours, plain) of writing ``rows``, interleaved."""
    ours, plain = [], []
    for _ in range(repeat):
        ours.append(_timed(lambda: write_parquet(rows_to_table(spec, rows), tmp / "ours.parquet")))
        plain.append(_timed(lambda: pq.write_table(pa.Table.from_pylist(rows),
                                                   tmp / "plain.parquet")))
    return statistics.median(ours), statistics.median(plain)


def run_process(argv: list[str], code: Path = HERE.parent,
                extra_env: dict[str, str] | None = None,
                drop_env: tuple[str, ...] = ()) -> tuple[float, float]:
    """(wall s, CPU s, children included) of one whole process run from the folder ``code``."""
    root = code_root(code)
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", **(extra_env or {})}
    for name in drop_env:
        env.pop(name, None)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime + 0.0  # the pool workers' time included


CACHE = "CONSISTENCY_BENCH_BUILD_CACHE"


def processes(families: list[str], sources: Path, tmp: Path, repeat: int,
              baseline: Path | None = None, cold_cache: bool = True) -> None:
    """Whole ``build`` processes into a new folder, interleaved; medians of wall and CPU time.

    Runs per round: fresh builds with ``--jobs 1`` and ``--jobs 2`` whose build caches
    (builders/cache: PBSMT n-best lists, numba's compiled decoder) were filled by an earlier,
    untimed build, as a user's later builds find them; a second build into the same folder
    with nothing changed; a fresh ``--jobs 2`` build with ``CONSISTENCY_BENCH_BUILD_CACHE=off``
    (every PBSMT part trained and decoded; numba's default cache beside the module, warm);
    with ``cold_cache``, a fresh ``--jobs 2`` build with an empty build cache and no
    ``NUMBA_CACHE_DIR`` (the first build after an install: numba compiles, every part is
    trained and decoded); with ``baseline``, a fresh ``--jobs 2`` build by that code (its
    numba cache warmed by an untimed build first).
    """
    base = [sys.executable, "-m", "consistency_bench", "build", "--sources",
            str(sources.resolve()), "--no-download"]
    if set(families) != {s.family for s in SUITES.values()}:
        if len(families) != 1:
            raise SystemExit("--processes takes one --family, or all of them")
        base += ["--family", families[0]]
    warm = {CACHE: str(tmp / "cache-warm")}
    run_process([*base, "--out", str(tmp / "warm-up"), "--jobs", "2"], extra_env=warm)
    run_process([*base, "--out", str(tmp / "warm-up-off"), "--jobs", "2"],
                extra_env={CACHE: "off"})
    if baseline is not None:
        run_process([*base, "--out", str(tmp / "warm-up-baseline"), "--jobs", "2"],
                    code=baseline)
    runs: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeat):
        for jobs in (1, 2):
            out = tmp / f"built-{jobs}"
            shutil.rmtree(out, ignore_errors=True)
            runs.setdefault(f"fresh, --jobs {jobs}, caches warm", []).append(
                run_process([*base, "--out", str(out), "--jobs", str(jobs)], extra_env=warm))
        runs.setdefault("second build, nothing changed", []).append(
            run_process([*base, "--out", str(tmp / "built-2")], extra_env=warm))
        out = tmp / "built-off"
        shutil.rmtree(out, ignore_errors=True)
        runs.setdefault("fresh, --jobs 2, build cache off", []).append(
            run_process([*base, "--out", str(out), "--jobs", "2"], extra_env={CACHE: "off"}))
        if cold_cache:
            out, cache = tmp / "built-cold", tempfile.mkdtemp(dir=tmp)
            shutil.rmtree(out, ignore_errors=True)
            runs.setdefault("fresh, --jobs 2, caches cold", []).append(
                run_process([*base, "--out", str(out), "--jobs", "2"],
                            extra_env={CACHE: cache}, drop_env=("NUMBA_CACHE_DIR",)))
        if baseline is not None:
            out = tmp / "built-baseline"
            shutil.rmtree(out, ignore_errors=True)
            runs.setdefault("baseline code, fresh, --jobs 2", []).append(
                run_process([*base, "--out", str(out), "--jobs", "2"], code=baseline))
    report(runs, families, repeat)


def report(runs: dict[str, list[tuple[float, float]]], families: list[str],
           repeat: int) -> None:
    """Print the medians of :func:`processes` and the ratios between its runs."""
    print(f"\nwhole `consistency-bench build` processes ({', '.join(families)}), "
          f"median of {repeat} interleaved runs")
    print(f"{'run':<36} {'wall s':>8} {'CPU s':>8}")
    medians = {name: (statistics.median(r[0] for r in samples),
                      statistics.median(r[1] for r in samples))
               for name, samples in runs.items()}
    for name, (wall, cpu) in medians.items():
        print(f"{name:<36} {wall:>8.2f} {cpu:>8.2f}")
    one, two = medians["fresh, --jobs 1, caches warm"], medians["fresh, --jobs 2, caches warm"]
    print(f"--jobs 2 against --jobs 1 (caches warm): {one[0] / two[0]:.2f}x faster (wall)")
    off = medians["fresh, --jobs 2, build cache off"]
    print(f"caches warm against build cache off: {off[0] / two[0]:.2f}x (wall), "
          f"{off[1] / two[1]:.2f}x (CPU)")
    for name in ("fresh, --jobs 2, caches cold", "baseline code, fresh, --jobs 2"):
        if name in medians:
            print(f"caches warm against {name}: {medians[name][0] / two[0]:.2f}x (wall), "
                  f"{medians[name][1] / two[1]:.2f}x (CPU)")


def pbsmt_scale(sources: Path, repeat: int) -> None:
    """``mnli_salad_pbsmt``'s training and decoding on 1/4, 1/2 and all of its rows."""
    from consistency_bench.builders.salad.pbsmt.suite_rows import pbsmt_text, train_pbsmt
    from consistency_bench.builders.salad.sources import read_records

    resolver = SourceResolver(sources, download=False)
    records = read_records("mnli", resolver)
    print(f"\nmnli_salad_pbsmt work on a share of MNLI dev matched (median CPU of {repeat})")
    print(f"{'scale':<6} {'rows':>7} {'CPU s':>8} {'ms per row':>11} {'per row vs 1x':>14}")
    first = None
    for scale in (1, 2, 4):
        part = records[: len(records) * scale // 4]
        samples = []
        for _ in range(repeat):
            start = time.process_time()
            models = {f: train_pbsmt([r for r in part if r.row % 2 != f]) for f in (0, 1)}
            for record in part:
                pbsmt_text(models[record.row % 2], record)
            samples.append(time.process_time() - start)
        cpu = statistics.median(samples)
        per_row = cpu / len(part) * 1000
        first = first or per_row
        print(f"{scale}x{'':<4} {len(part):>7} {cpu:>8.2f} {per_row:>11.3f} "
              f"{per_row / first:>14.2f}")


def pbsmt_split_child(sources: Path) -> None:
    """Print ``{"train", "decode", "md5"}`` of ``mnli_salad_pbsmt``'s work in this process."""
    import hashlib
    import json

    from consistency_bench.builders.salad.pbsmt.suite_rows import pbsmt_text, train_pbsmt
    from consistency_bench.builders.salad.sources import read_records

    resolver = SourceResolver(sources, download=False)
    records = read_records("mnli", resolver)
    train = decode = 0.0
    outputs = []
    for fold in (0, 1):
        start = time.process_time()
        models = train_pbsmt([r for r in records if r.row % 2 != fold])
        train += time.process_time() - start
        mine = [r for r in records if r.row % 2 == fold]
        pbsmt_text(models, mine[0])  # compiles the decoder, or loads it from the cache
        start = time.process_time()
        outputs += [pbsmt_text(models, r) for r in mine]
        decode += time.process_time() - start
    md5 = hashlib.md5(json.dumps(outputs).encode()).hexdigest()
    print(json.dumps({"train": train, "decode": decode, "md5": md5}))


def pbsmt_split(sources: Path, repeat: int, baseline: Path | None) -> None:
    """CPU of training and of decoding, this code (and the baseline's), interleaved."""
    import json

    sides = {"this code": HERE.parent}
    if baseline is not None:
        sides["baseline code"] = baseline
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    for _ in range(repeat):
        for name, code in sides.items():
            root = code_root(code)
            env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"}
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                                  "--pbsmt-split-child", "--sources", str(sources.resolve())],
                                 env=env, cwd=root, capture_output=True, text=True, check=True)
            runs[name].append(json.loads(out.stdout.splitlines()[-1]))
    print(f"\nmnli_salad_pbsmt: 6 systems trained, 9,815 records translated "
          f"(median CPU s of {repeat} processes each)")
    print(f"{'code':<14} {'train':>7} {'decode':>7}  md5 of the translations")
    medians = {}
    for name, samples in runs.items():
        medians[name] = {k: statistics.median(r[k] for r in samples) for k in ("train", "decode")}
        hashes = sorted({r["md5"] for r in samples})
        print(f"{name:<14} {medians[name]['train']:>7.2f} {medians[name]['decode']:>7.2f}  "
              f"{', '.join(hashes)}")
    if baseline is not None:
        same = {r["md5"] for samples in runs.values() for r in samples}
        ratio = medians["baseline code"]["decode"] / medians["this code"]["decode"]
        print(f"decoding {ratio:.2f}x faster than the baseline code; translations "
              f"{'identical' if len(same) == 1 else 'DIFFERENT'}")


def main() -> None:
    """Print the per-suite table, the scale test and (optionally) the process timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", nargs="+", default=["becel", "calm", "coherence"])
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--processes", action="store_true", help="also time whole builds")
    parser.add_argument("--only-processes", action="store_true",
                        help="time whole builds only (no per-suite writer table)")
    parser.add_argument("--baseline", type=Path,
                        help="folder holding the code before a change, to time against")
    parser.add_argument("--pbsmt-scale", action="store_true",
                        help="only the PBSMT scale test (1x, 2x, 4x rows)")
    parser.add_argument("--pbsmt-split", action="store_true",
                        help="only PBSMT training against decoding (with --baseline: both codes)")
    parser.add_argument("--pbsmt-split-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pbsmt_split_child:
        pbsmt_split_child(args.sources)
        return
    if args.pbsmt_split:
        pbsmt_split(args.sources, args.repeat, args.baseline)
        return
    if args.pbsmt_scale:
        pbsmt_scale(args.sources, args.repeat)
        return
    if args.only_processes:
        with tempfile.TemporaryDirectory() as tmp:
            processes(args.family, args.sources, Path(tmp), args.repeat, args.baseline)
        return
    resolver = SourceResolver(args.sources, download=False)
    print(f"{'suite':<28} {'rows':>8} {'generate s':>10} {'ours s':>8} {'plain s':>8} "
          f"{'plain/ours':>10}")
    totals = [0, 0.0, 0.0, 0.0]
    largest = None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for spec in (s for s in SUITES.values() if s.family in args.family):
            start = time.perf_counter()
            try:
                rows = list(spec.build(resolver))
            except SourceError as exc:
                print(f"{spec.name:<28} skipped: {str(exc).split('; ')[0][:70]}")
                continue
            generated = time.perf_counter() - start
            ours, plain = writers(spec, rows, tmp, args.repeat)
            print(f"{spec.name:<28} {len(rows):>8} {generated:>10.2f} {ours:>8.3f} "
                  f"{plain:>8.3f} {plain / ours:>9.2f}x")
            totals = [totals[0] + len(rows), totals[1] + generated, totals[2] + ours,
                      totals[3] + plain]
            if largest is None or len(rows) > len(largest[1]):
                largest = (spec, rows)
        n, generated, ours, plain = totals
        print(f"{'total':<28} {n:>8} {generated:>10.2f} {ours:>8.3f} {plain:>8.3f} "
              f"{plain / ours:>9.2f}x")
        if largest is not None:
            spec, rows = largest
            print(f"\nscale: writing {spec.name} replicated (median of {args.repeat})")
            print(f"{'scale':<6} {'rows':>9} {'ours s':>8} {'plain s':>8} {'ours per 1x':>12}")
            first = None
            for scale in (1, 2, 4):
                scaled = [
                    {**row, "id": f"{row['id']}~{j}"} if j else row
                    for j in range(scale)
                    for row in rows
                ]
                ours, plain = writers(spec, scaled, tmp, args.repeat)
                first = first or ours
                print(f"{scale}x{'':<4} {len(scaled):>9} {ours:>8.3f} {plain:>8.3f} "
                      f"{ours / first / scale:>11.2f}")
        if args.processes:
            processes(args.family, args.sources, tmp, args.repeat, args.baseline)


if __name__ == "__main__":
    main()
