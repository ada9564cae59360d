"""Benchmark: scoring a full-size prediction file, whole processes, against pandas.

Each side is a whole process, start-up included, as a user runs it:

* ``consistency-bench score PRED --data DIR --out R.json`` (validation, every metric,
  10,000-resample bootstrap per suite);
* ``benchmarks/pandas_reference.py``: what a user would write with pandas (per group,
  vectorised; main scores only, no validation);
* the parse floor: a process that only parses the JSONL with ``pyarrow.json``;
* the first ``score`` against the folder: the same command with an empty cache of derived
  suite columns (``$CONSISTENCY_BENCH_SCORE_CACHE``), which it fills; the main side runs with
  that cache filled (one warm-up run before the timed runs), as every later score does;
* with ``--code DIR``: the same ``score`` command run with the code of another checkout
  (e.g. ``git archive COMMIT | tar -x -C DIR``), for before/after figures.

The sides run interleaved, ``--repeat`` times; the script prints medians of wall time, CPU time
(user + system, less sensitive to other load on the machine) and peak RSS per side, and the
ratio against the harness. It checks that the harness and pandas give the same main scores.
Scale test: the suites replicated 1x, 2x, 4x (ids, groups and antecedents suffixed), so a
step that is not linear in rows shows. Usage::

    python benchmarks/bench_score.py --data DIR [--family becel] [--scale 1 2 4] [--repeat 5]
        [--code OLD_CHECKOUT] [--whole-folder]

``--whole-folder`` with ``--family``: the file covers that family's suites while ``score``
reads the whole folder, as a user scoring one family against the published folder does.

Without ``--data`` the suites are built from ``--sources`` into a temporary folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from code_view import code_root

from consistency_bench.bench.io.manifest import MANIFEST, read_manifest

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCES = HERE.parents[1] / "shared" / "corpora"
#: The environment variable of ``score``'s cache of derived suite columns.
SCORE_CACHE = "CONSISTENCY_BENCH_SCORE_CACHE"


def select_folder(src: Path, dst: Path, family: str | None, scale: int) -> Path:
    """A copy of the built folder ``src`` with the suites of ``family``, each ``scale`` times.

    Copy ``j > 0`` of a row gets ``~j`` appended to its id, group and antecedent ids, so it is
    a distinct unit with the same structure. The manifest's rows, groups and hashes are updated.
    """
    manifest = read_manifest(src)
    out = {}
    for name, entry in manifest.items():
        if family and entry["family"] != family:
            continue
        table = pq.read_table(src / entry["path"])
        copies = [table]
        for j in range(1, scale):
            suffix = f"~{j}"
            copy = table
            for column in ("id", "group"):
                values = pc.binary_join_element_wise(table.column(column), suffix, "")
                copy = copy.set_column(copy.schema.get_field_index(column), column, values)
            if "antecedent_ids" in table.column_names:
                lists = table.column("antecedent_ids").combine_chunks()
                flat = pc.binary_join_element_wise(lists.flatten(), suffix, "")
                renamed = pa.ListArray.from_arrays(lists.offsets, flat)
                index = copy.schema.get_field_index("antecedent_ids")
                copy = copy.set_column(index, copy.schema.field(index), renamed)
            copies.append(copy.cast(table.schema))
        target = dst / entry["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.concat_tables(copies), target, compression="zstd")
        out[name] = {
            **entry,
            "rows": entry["rows"] * scale,
            "groups": entry["groups"] * scale,
            "sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
        }
    (dst / MANIFEST).write_text(json.dumps({"suites": out}))
    return dst


def make_submission(folder: Path, out: Path, seed: int = 0, family: str | None = None) -> int:
    """Random labels with probabilities for every row of every suite (of ``family``, when
    given); returns the row count."""
    rng = random.Random(seed)
    n = 0
    with open(out, "w") as handle:
        for entry in read_manifest(folder).values():
            if family and entry["family"] != family:
                continue
            k = len(entry["label_names"])
            ids = pq.read_table(folder / entry["path"], columns=["id"]).column("id").to_pylist()
            for row_id in ids:
                weights = [rng.random() + 1e-3 for _ in range(k)]
                total = sum(weights)
                probs = [w / total for w in weights]
                label = max(range(k), key=probs.__getitem__)
                handle.write(json.dumps({"id": row_id, "label": label, "probs": probs}) + "\n")
                n += 1
    return n


#: Runs the command of its arguments and prints its wall time and rusage as JSON. The timed
#: process must be forked from a small process: a process started from this one (vfork, then
#: exec) keeps this process's peak RSS as its own ``ru_maxrss``, which is large here (the
#: folder's tables were read to write the prediction file).
LAUNCHER = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"wall": time.perf_counter() - start, "code": os.waitstatus_to_exitcode(status),
                  "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss}))
"""


def run_process(argv: list[str], code: Path = HERE.parent,
                env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Run ``argv`` to completion; (wall s, CPU s, peak RSS MiB) of that process alone."""
    root = code_root(code)
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", **(env or {})}
    proc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *argv], env=env, cwd=root,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"launcher failed: {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout)
    if result["code"]:
        raise SystemExit(f"{argv[:4]} failed: {proc.stderr[-2000:]}")
    return result["wall"], result["cpu"], result["rss"] / 1024


def compare(folder: Path, tmp: Path, repeat: int, label: str, code: Path | None = None,
            family: str | None = None) -> None:
    """Time the sides interleaved on ``folder``; print medians and ratios.

    The prediction file covers every suite of ``folder``, or only those of ``family``.
    """
    pred = tmp / "predictions.jsonl"
    rows = make_submission(folder, pred, family=family)
    harness_out, pandas_out = tmp / "harness.json", tmp / "pandas.json"
    sides = {
        "consistency-bench score": [sys.executable, "-m", "consistency_bench", "score", str(pred),
                                    "--data", str(folder), "--out", str(harness_out)],
        "pandas per-group reference": [sys.executable, str(HERE / "pandas_reference.py"),
                                       str(pred), str(folder), "--out", str(pandas_out)],
        "parse floor (pyarrow.json only)": [
            sys.executable, "-c",
            f"import pyarrow.json as j; j.read_json({str(pred)!r})",
        ],
    }
    codes = dict.fromkeys(sides, HERE.parent)
    # `score` keeps each suite's derived columns in a cache (SCORE_CACHE); the main side runs
    # with it filled (a warm-up run first), "first score" with an empty one every run
    cache, cold = tmp / "score-cache", "score, empty cache (first score)"
    envs = {name: {SCORE_CACHE: str(cache)} for name in sides}
    sides[cold] = [*sides["consistency-bench score"][:-1], str(tmp / "cold.json")]
    codes[cold] = HERE.parent
    if code is not None:
        name = f"score, code at {code.name}"
        sides[name] = [*sides["consistency-bench score"][:-1], str(tmp / "old.json")]
        codes[name], envs[name] = code.resolve(), {SCORE_CACHE: str(tmp / "old-cache")}
    run_process(sides["consistency-bench score"], env=envs["consistency-bench score"])
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
    for i in range(repeat):
        envs[cold] = {SCORE_CACHE: str(tmp / f"cold-cache-{i}")}
        for name, argv in sides.items():
            runs[name].append(run_process(argv, codes[name], envs[name]))
        shutil.rmtree(tmp / f"cold-cache-{i}", ignore_errors=True)
    harness = json.loads(harness_out.read_text())["suites"]
    cold_results = json.loads((tmp / "cold.json").read_text())["suites"]
    assert json.dumps(cold_results, sort_keys=True) == json.dumps(harness, sort_keys=True)
    if code is not None:  # before/after: the same results (provenance apart)
        old = json.loads((tmp / "old.json").read_text())["suites"]
        assert json.dumps(old, sort_keys=True) == json.dumps(harness, sort_keys=True)
    reference = json.loads(pandas_out.read_text())
    for name, value in reference["scores"].items():
        assert abs(harness[name]["main_score"] - value) < 1e-9, name
    size = pred.stat().st_size / 1e6
    print(f"\n{label}: {len(harness)} suites, {rows:,} rows ({size:.0f} MB JSONL with probs); "
          f"median of {repeat} interleaved runs; main scores identical on the "
          f"{len(reference['scores'])} suites pandas covers")
    print(f"{'side':<34} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9} {'wall ratio':>11} "
          f"{'CPU ratio':>10}")
    base_wall = statistics.median(r[0] for r in runs["consistency-bench score"])
    base_cpu = statistics.median(r[1] for r in runs["consistency-bench score"])
    for name, samples in runs.items():
        wall = statistics.median(r[0] for r in samples)
        cpu = statistics.median(r[1] for r in samples)
        rss = statistics.median(r[2] for r in samples)
        print(f"{name:<34} {wall:>7.2f} {cpu:>7.2f} {rss:>9.0f} {wall / base_wall:>10.2f}x "
              f"{cpu / base_cpu:>9.2f}x")


def main() -> None:
    """Build or reuse a folder, then compare at each scale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a built folder (default: build one)")
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--family", help="only this family's suites (default: every suite)")
    parser.add_argument("--scale", type=int, nargs="+", default=[1])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--code", type=Path,
                        help="also time `score` with the code of this checkout (before/after)")
    parser.add_argument("--whole-folder", action="store_true",
                        help="with --family: the file covers that family, `score` reads the "
                        "whole folder (a user scoring one family against the published folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = args.data
        if data is None:
            data = tmp / "built"
            subprocess.run([sys.executable, "-m", "consistency_bench", "build", "--sources",
                            str(args.sources), "--out", str(data), "--no-download"], check=True,
                           env={**os.environ, "PYTHONPATH": str(HERE.parent)},
                           stdout=subprocess.DEVNULL)
        for scale in args.scale:
            work = tmp / f"x{scale}"
            in_folder = None if args.whole_folder else args.family
            folder = select_folder(data, work / "data", in_folder, scale)
            label = f"{args.family or 'every suite'} x{scale}"
            label += ", whole folder" if args.whole_folder else ""
            compare(folder, work, args.repeat, label, args.code, family=args.family)


if __name__ == "__main__":
    main()
