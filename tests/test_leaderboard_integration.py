"""End to end on a real suite built from the mirror: build, submit (real scorer), rank."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import CORPORA

REPO = Path(__file__).resolve().parents[1]

META = ("model: m\nrevision: r\nlicense: apache-2.0\nlink: https://example.org/m\n"
        "contact: c@example.org\ndate: 2024-01-01\n")


def cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "consistency_bench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not CORPORA.is_dir(), reason="source mirror not found")
def test_submit_score_rank_real_suite(tmp_path):
    built = cli("build", "--suites", "mrpc_symmetric", "--sources", str(CORPORA),
                "--no-download", "--out", "data", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "data/mrpc_symmetric/test.parquet")
    rows, gold = table.column("id").to_pylist(), table.column("label").to_pylist()
    (tmp_path / "meta.yaml").write_text(META)

    def write(name, labels):
        (tmp_path / name).write_text("".join(
            json.dumps({"id": r, "label": y}) + "\n" for r, y in zip(rows, labels, strict=True)))

    # good: gold with every 10th answer flipped; fair: every 5th flipped; chance: a pattern
    # unrelated to the gold; const: always 1.
    write("good.jsonl", [g if i % 10 else 1 - g for i, g in enumerate(gold)])
    write("fair.jsonl", [g if i % 5 else 1 - g for i, g in enumerate(gold)])
    write("chance.jsonl", [(i // 7) % 2 for i in range(len(rows))])
    write("const.jsonl", [1] * len(rows))
    (tmp_path / "bad.jsonl").write_text(json.dumps({"id": "nope/0/x", "label": 1}) + "\n")
    for name in ("good", "fair", "chance", "const"):  # one model: each says what differs
        proc = cli("submit", f"{name}.jsonl", "--name", name, "--meta", "meta.yaml", "--data",
                   "data", "--variant", name, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    bad = cli("submit", "bad.jsonl", "--name", "C", "--meta", "meta.yaml", "--data", "data",
              cwd=tmp_path)
    assert bad.returncode == 2 and "bad.jsonl" in bad.stderr
    assert sorted(p.name for p in (tmp_path / "submissions").iterdir()) == [
        ".lock", ".staging", "chance", "const", "fair", "good"]
    results = json.loads((tmp_path / "submissions/good/results.json").read_text())
    assert "content_hash" in results["suites"]["mrpc_symmetric"]
    assert cli("rescore", "--data", "data", cwd=tmp_path).stdout.strip() == "0 change(s)"
    proc = cli("leaderboard", "--out", "site", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "site/leaderboard.md").read_text()
    lines = {line.split("|")[1].strip(): line for line in md.splitlines()
             if line.startswith("| ") and not line.startswith("| Entry")}
    # The two informative entries are ranked in the right order; the constant (perfectly
    # symmetric, right on the majority class) and the entry at chance are flagged degenerate
    # and shown as references below them, never ranked.
    assert lines["good"].split("|")[2].strip().startswith("#1 ")
    assert lines["fair"].split("|")[2].strip().startswith("#2 ")
    for name in ("const", "chance"):
        assert lines[name].split("|")[2].strip().startswith("reference "), lines[name]
        assert lines[name].split("|")[-3].strip() == "degenerate", lines[name]  # Flags
        assert lines[name].split("|")[-2].strip() == "not reproducible"  # no run record
    order = [line.split("|")[1].strip() for line in md.splitlines() if line.startswith("| ")][1:]
    assert order[:2] == ["good", "fair"]
    # With the suite folder, neighbours are compared by a paired test on their shared groups
    # (class-weighted consistent-accuracy units: paired bootstrap) and ranks get intervals.
    proc = cli("leaderboard", "--out", "site2", "--data", "data", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    board = json.loads((tmp_path / "site2/leaderboard.json").read_text())
    assert board["suite_tests"]["mrpc_symmetric"][0]["method"] == "paired-bootstrap"
    rows = board["views"]["all"]["rows"]
    assert [r["name"] for r in rows][:2] == ["good", "fair"]
    assert [r["status"] for r in rows] == ["ranked", "ranked", "reference", "reference"]
    assert all(r["rank"] is None for r in rows[2:])
    assert all(r["rank_low"] <= r["rank"] <= r["rank_high"] for r in rows[:2])
