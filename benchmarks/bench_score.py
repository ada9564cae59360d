"""Benchmark: score a full-size submission of every BECEL suite.

Compares, in one process, the harness (columnar: pyarrow + numpy) with a plain per-row Python
implementation of the same formulas (json.loads per line, dicts, loops), and prints rows per
second and the ratio. Usage::

    python benchmarks/bench_score.py [--sources ../shared/corpora] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from bench.manifest import read_manifest
from bench.predictions import read_predictions
from bench.scoring import ScoreOptions, SuiteFolder, score_predictions
from bench.sources import SourceResolver
from builders.catalog import SUITES
from builders.export import build_all

PERTURBED = {"semantic": "paraphrase", "negational": "negated", "symmetric": "swapped"}


def make_submission(folder: Path, out: Path, seed: int = 0) -> int:
    """Random labels with probabilities for every row of every suite; returns the row count."""
    manifest = read_manifest(folder)
    rng = random.Random(seed)
    n = 0
    with open(out, "w") as handle:
        for entry in manifest.values():
            k = len(entry["label_names"])
            for row_id in (
                pq.read_table(folder / entry["path"], columns=["id"]).column("id").to_pylist()
            ):
                weights = [rng.random() + 1e-3 for _ in range(k)]
                total = sum(weights)
                probs = [w / total for w in weights]
                label = max(range(k), key=probs.__getitem__)
                handle.write(json.dumps({"id": row_id, "label": label, "probs": probs}) + "\n")
                n += 1
    return n


def plain_python(pred_path: Path, folder: Path) -> dict[str, float]:
    """The same formulas, one row at a time, no numpy or pyarrow in the hot loop."""
    preds = {}
    with open(pred_path) as handle:
        for line in handle:
            record = json.loads(line)
            preds[record["id"]] = record["label"]
    out = {}
    for name, entry in read_manifest(folder).items():
        rows = pq.read_table(folder / entry["path"]).to_pylist()
        kind = entry["kind"]
        if kind in ("semantic", "negational", "symmetric"):
            groups: dict[str, dict[str, int]] = {}
            for row in rows:
                groups.setdefault(row["group"], {})[row["variant"]] = preds[row["id"]]
            other = {"semantic": "paraphrase", "negational": "negated", "symmetric": "swapped"}[
                kind
            ]
            same = sum(g["original"] == g[other] for g in groups.values())
            out[name] = same / len(groups) if kind == "negational" else 1 - same / len(groups)
        else:
            by_id = {row["id"]: row for row in rows}
            names = entry["label_names"]
            ok = total = 0
            for row in rows:
                if not row["antecedent_ids"]:
                    continue
                a, b = (by_id[i] for i in row["antecedent_ids"])
                if preds[a["id"]] != a["label"] or preds[b["id"]] != b["label"]:
                    continue
                total += 1
                op, _, label = row["constraint"].partition(":")
                hit = names[preds[row["id"]]] == label
                ok += hit if op == "is" else not hit
            out[name] = 1 - ok / total if total else float("nan")
    return out


def main() -> None:
    """Build, make a submission, time both implementations."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", default=str(Path(__file__).parents[2] / "shared" / "corpora"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "consistency-bench"
        specs = [s for s in SUITES.values() if s.family == "becel"]  # the 19 BECEL suites
        build_all(specs, SourceResolver(args.sources, download=False), folder, log=lambda _: None)
        pred_path = Path(tmp) / "predictions.jsonl"
        rows = make_submission(folder, pred_path)
        size_mb = pred_path.stat().st_size / 1e6

        def harness_total() -> dict:
            sf = SuiteFolder(folder)
            preds = read_predictions(pred_path, sf.manifest, sf.ids)
            return score_predictions(preds, sf, ScoreOptions(n_boot=10_000))

        sf = SuiteFolder(folder)
        parsed = read_predictions(pred_path, sf.manifest, sf.ids)
        for name in sf.manifest:
            sf.load(name)

        def harness_scoring_only() -> dict:
            return score_predictions(parsed, sf, ScoreOptions(n_boot=10_000))

        timings = {}
        for label, fn in (
            ("harness: read + validate + score", harness_total),
            ("harness: score parsed predictions", harness_scoring_only),
            ("plain per-row Python", lambda: plain_python(pred_path, folder)),
        ):
            runs = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = fn()
                runs.append(time.perf_counter() - start)
            timings[label] = (statistics.median(runs), result)

        harness = timings["harness: read + validate + score"][1]["suites"]
        plain = timings["plain per-row Python"][1]
        for name, value in plain.items():
            assert abs(harness[name]["main_score"] - value) < 1e-12, name
        base = timings["plain per-row Python"][0]
        print(f"{len(harness)} suites, {rows} prediction rows ({size_mb:.1f} MB JSONL with probs)")
        print(f"{'implementation':<36} {'seconds':>8} {'rows/s':>11} {'vs plain':>9}")
        for label, (seconds, _) in timings.items():
            print(f"{label:<36} {seconds:>8.3f} {rows / seconds:>11,.0f} {base / seconds:>8.1f}x")
        print("main scores identical between the two implementations")


if __name__ == "__main__":
    main()
