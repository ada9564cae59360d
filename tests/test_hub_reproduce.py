"""``review --reproduce N`` on the stand-in Hub (issue 28 item 13).

Three pull requests: a tiny model's predictions with their run record, the same predictions
with edited labels (and the record's sha256 edited to match, as a forger would), and a file
without a record. ``review --reproduce 4 --merge`` reproduces the first (the comment reports
the figures, the merged entry stores reproduction.json, the republished leaderboard shows it),
refuses the second with the figures, and says why the third was not run.
"""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml

pytest.importorskip("torch")

from consistency_bench.cli import main
from tests.hub_standin import Hub
from tests.test_hub_reads import built, online  # noqa: F401  (fixtures)
from tests.test_hub_review import board  # noqa: F401  (fixture)
from tests.test_hub_submit import META
from tests.test_leaderboard_publish import cli
from tests.tiny_models import tiny_bert


def requests(hub, board, built):  # noqa: F811
    """Publish, then open the three pull requests."""
    for args in (["publish-suites", "--repo", "org/cb", "--data", str(built)],
                 ["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs"]):
        proc = cli(args, hub.url, board)
        assert proc.returncode == 0, proc.stderr
    tiny_bert(board / "tiny", labels=("entailment", "not_entailment"))
    import contextlib

    with contextlib.chdir(board):
        assert main(["predict", "--model", "tiny", "--data", str(built), "--suites",
                     "rte_semantic", "--out", "t.jsonl", "--device", "cpu",
                     "--no-progress"]) == 0
    (board / "tiny.yaml").write_text(yaml.safe_dump({**META, "model": "tiny"}))
    rows = [json.loads(line) for line in (board / "t.jsonl").read_text().splitlines()]
    edited = "".join(json.dumps({**r, "label": 1 - r["label"]}) + "\n" for r in rows).encode()
    (board / "e.jsonl").write_bytes(edited)
    record = json.loads((board / "t.jsonl.run.json").read_text())
    record["predictions"]["sha256"] = hashlib.sha256(edited).hexdigest()
    (board / "e.jsonl.run.json").write_text(json.dumps(record))
    for pred, name, meta in (("t.jsonl", "tinyent", "tiny.yaml"),
                             ("e.jsonl", "edited", "tiny.yaml"),
                             ("zeros.jsonl", "zeros", "meta.yaml")):
        # each its own variant: one model, one entry (issue 27 item 9) compares them with the
        # published entries of the same model
        proc = cli(["submit", pred, "--meta", meta, "--name", name, "--data", str(built),
                    "--hub", "org/lb", "--variant", f"request {name}"], hub.url, board)
        assert proc.returncode == 0, proc.stderr


def test_review_reproduces_each_request(online, board, built):  # noqa: F811
    with Hub() as hub:
        requests(hub, board, built)
        sent = set(hub.files_at("org/lb", "refs/pr/1"))
        done = cli(["review", "--hub", "org/lb", "--suites-repo", "org/cb", "--data",
                    str(built), "--submissions", "subs", "--site", "site", "--reproduce", "4",
                    "--device", "cpu", "--merge"], hub.url, board)
        comments = {n: hub.comments("org/lb", n) for n in (1, 2, 3)}
        published = hub.files_at("org/lb")
    assert "requests/tinyent/run.json" in sent
    assert done.returncode == 0, done.stderr
    assert "#1: reproduced" in done.stdout and "#3: not reproduced" in done.stdout
    assert "#2: refused: reproduction failed" in done.stdout
    assert "2 accepted, 1 refused" in done.stdout
    good = comments[1][-1]
    assert "**Reproduction** (4 groups per suite, seed 0): passed:" in good
    assert "label agreement 100.00%" in good
    bad = comments[2][-1]
    assert "reproduction failed: failed:" in bad and "label agreement 0.00%" in bad
    assert "<!-- consistency-bench review refused " in bad
    assert "the request has no run.json" in comments[3][-1]
    stored = json.loads((board / "subs/tinyent/reproduction.json").read_text())
    assert stored["status"] == "passed" and stored["groups_per_suite"] == 4
    assert not (board / "subs/edited").exists()
    assert {"submissions/tinyent/run.json", "submissions/tinyent/reproduction.json"} <= set(
        published)
    board_json = json.loads(published["leaderboard.json"])
    assert board_json["meta"]["tinyent"]["reproduced"]["status"] == "passed"
    assert board_json["meta"]["zeros"]["reproduced"]["status"] == "not-reproducible"
    assert board_json["meta"]["zeros"]["setup"] is None
