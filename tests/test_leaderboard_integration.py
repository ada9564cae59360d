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
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not CORPORA.is_dir(), reason="source mirror not found")
def test_submit_score_rank_real_suite(tmp_path):
    built = cli("build", "--suites", "mrpc_symmetric", "--sources", str(CORPORA),
                "--no-download", "--out", "data", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "data/mrpc_symmetric/test.parquet").column("id").to_pylist()
    (tmp_path / "meta.yaml").write_text(META)
    (tmp_path / "a.jsonl").write_text("".join(
        json.dumps({"id": r, "label": (i // 7) % 2}) + "\n" for i, r in enumerate(rows)))
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"id": r, "label": 1}) + "\n"
                                              for r in rows))
    (tmp_path / "bad.jsonl").write_text(json.dumps({"id": "nope/0/x", "label": 1}) + "\n")
    for name, pred in (("A", "a.jsonl"), ("B", "b.jsonl")):
        proc = cli("submit", pred, "--name", name, "--meta", "meta.yaml", "--data", "data",
                   cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    bad = cli("submit", "bad.jsonl", "--name", "C", "--meta", "meta.yaml", "--data", "data",
              cwd=tmp_path)
    assert bad.returncode == 2 and "bad.jsonl" in bad.stderr
    assert sorted(p.name for p in (tmp_path / "submissions").iterdir()) == [".lock", ".staging",
                                                                           "a", "b"]
    results = json.loads((tmp_path / "submissions/a/results.json").read_text())
    assert "content_hash" in results["suites"]["mrpc_symmetric"]
    assert cli("rescore", "--data", "data", cwd=tmp_path).stdout.strip() == "0 change(s)"
    proc = cli("leaderboard", "--out", "site", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "site/leaderboard.md").read_text()
    # a constant is perfectly symmetric and right on the majority class: it beats an entry
    # at chance, but is flagged degenerate (near-constant predictions on the originals)
    assert md.index("| b |") < md.index("| a |")
    assert "| b |" in md and md.split("| b |")[1].splitlines()[0].rstrip().endswith(
        "degenerate |")
    # With the suite folder, neighbours are compared by a paired test on their shared groups
    # (class-weighted consistent-accuracy units: paired bootstrap) and ranks get intervals.
    proc = cli("leaderboard", "--out", "site2", "--data", "data", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    board = json.loads((tmp_path / "site2/leaderboard.json").read_text())
    assert board["suite_tests"]["mrpc_symmetric"][0]["method"] == "paired-bootstrap"
    rows = board["views"]["all"]["rows"]
    assert [r["name"] for r in rows] == ["b", "a"]
    assert all(r["rank_low"] <= r["rank"] <= r["rank_high"] for r in rows)
