"""``verify``: re-score what a leaderboard dataset repo publishes (stand-in Hub, real scorer)."""

from __future__ import annotations

import json

import pytest

from tests.hub_standin import Hub
from tests.test_hub_reads import SUITES, built  # noqa: F401  (the module fixture)
from tests.test_hub_submit import rendered_site
from tests.test_leaderboard_publish import cli


@pytest.fixture
def published(built, tmp_path):  # noqa: F811
    """Two entries stored by the real submit and rendered: oracle and always-label-0."""
    return rendered_site(built, tmp_path, ("oracle", "zeros"))


def test_verify_clean_then_catches_an_edited_result(published, built):  # noqa: F811
    verify = ["verify", "--hub", "org/lb", "--data", str(built)]
    with Hub() as hub:
        pub = cli(["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs"],
                  hub.url, published)
        assert pub.returncode == 0, pub.stderr
        n = len(hub.requests)
        clean = cli(verify, hub.url, published, token=None)  # reads need no token
        files = hub.repos["org/lb"]["files"]
        results = json.loads(files["submissions/zeros/results.json"])
        suite = sorted(results["suites"])[0]
        results["suites"][suite]["main_score"] += 0.25  # a hand edit on the Hub
        files["submissions/zeros/results.json"] = json.dumps(results).encode()
        del files["submissions/oracle/predictions.jsonl.gz"]
        hub.repos["org/lb"]["head"] = "e" * 40
        caught = cli(verify, hub.url, published, token=None)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "ok\toracle" in clean.stdout and "ok\tzeros" in clean.stdout
    assert "2 entries of org/lb at commit" in clean.stdout and "2 ok, 0 differ" in clean.stdout
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert f"DIFFERS\tzeros\t{suite}\tmain_score" in caught.stdout
    assert "UNVERIFIABLE\toracle\tnot published: predictions.jsonl.gz" in caught.stdout
    assert f"at commit {'e' * 40}: 0 ok, 1 differ, 1 unverifiable" in caught.stdout
    assert hub.unexpected == []
    assert {m for m, _ in hub.requests[n:]} <= {"GET", "HEAD"}  # verify only reads


def test_verify_errors_are_one_line(published, built, tmp_path):  # noqa: F811
    with Hub() as hub:
        assert cli(["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs"],
                   hub.url, published).returncode == 0
        missing = cli(["verify", "--hub", "org/none", "--data", str(built)], hub.url, published)
        bad = cli(["verify", "--hub", "org/lb", "--data", str(tmp_path / "nope")], hub.url,
                  published)
        # 501: not one of the statuses the client retries (408, 429, 500, 502-504)
        hub.faults.append(("GET", r"/api/datasets/org/lb/tree/.*", 501))
        fault = cli(["verify", "--hub", "org/lb", "--data", str(built)], hub.url, published)
    assert missing.returncode == 2 and "dataset repo 'org/none' not found" in missing.stderr
    assert bad.returncode == 2 and "nope" in bad.stderr
    assert fault.returncode == 2
    assert "HTTP 501 while reading the file list of dataset repo 'org/lb'" in fault.stderr
