"""``submit --hub``: validated as ``submit`` validates, then one pull request (stand-in Hub)."""

from __future__ import annotations

import gzip

import pytest
import yaml

from tests.helpers import write_predictions
from tests.hub_standin import Hub
from tests.test_hub_reads import SUITES, built  # noqa: F401  (the module fixture)
from tests.test_leaderboard_publish import cli

META = {"model": "org/my-model", "revision": "abc123", "license": "mit",
        "link": "https://example.org/my-model", "contact": "me@example.org",
        "date": "2026-01-02"}



def rendered_site(built, tmp_path, names):  # noqa: F811
    """Entries ``names`` (the first an oracle, the second always label 0) stored by the real
    ``submit`` into ``tmp_path/subs`` and rendered by ``leaderboard`` into ``tmp_path/site``."""
    from consistency_bench.cli import main
    from consistency_bench.leaderboard.submissions.storage import submit as store

    (tmp_path / "meta.yaml").write_text(yaml.safe_dump(META))
    for name, choose in zip(names, (None, lambda row, names: 0), strict=True):
        kwargs = {"choose": choose} if choose else {}
        pred = write_predictions(built, tmp_path / f"{name}.jsonl", SUITES, **kwargs)
        store(pred, name=name, meta_path=tmp_path / "meta.yaml", root=tmp_path / "subs",
              data_dir=built, variant="always label 0" if choose else None)
    assert main(["leaderboard", "--submissions", str(tmp_path / "subs"), "--out",
                 str(tmp_path / "site")]) == 0
    return tmp_path

@pytest.fixture
def entry(built, tmp_path):  # noqa: F811
    write_predictions(built, tmp_path / "pred.jsonl", SUITES)
    (tmp_path / "meta.yaml").write_text(yaml.safe_dump(META))
    return tmp_path


def submit(args, hub, cwd, built):  # noqa: F811
    return cli(["submit", *args, "--data", str(built), "--hub", "org/lb"], hub.url, cwd)


def test_submit_hub_opens_one_pull_request(entry, built):  # noqa: F811
    with Hub() as hub:
        hub.add_repo("org/lb", "dataset", {"README.md": b"# lb\n"})
        proc = submit(["pred.jsonl", "--meta", "meta.yaml", "--name", "My Model"], hub, entry,
                      built)
    assert proc.returncode == 0, proc.stderr
    assert f"opened pull request {hub.url}/datasets/org/lb/discussions/1 on org/lb" in proc.stdout
    assert "2 suites scored locally" in proc.stdout
    [pr] = hub.pull_requests("org/lb")
    assert pr["title"] == "Submit my-model (org/my-model)" and pr["status"] == "open"
    files = hub.files_at("org/lb", "refs/pr/1")
    assert sorted(files) == ["README.md", "requests/my-model/meta.yaml",
                             "requests/my-model/predictions.jsonl.gz"]
    assert gzip.decompress(files["requests/my-model/predictions.jsonl.gz"]) == \
        (entry / "pred.jsonl").read_bytes()
    assert yaml.safe_load(files["requests/my-model/meta.yaml"]) == META
    assert hub.files_at("org/lb") == {"README.md": b"# lb\n"}  # main untouched
    assert not (entry / "submissions").exists()  # nothing stored locally
    assert hub.unexpected == []


@pytest.mark.parametrize(("change", "message"), [
    ("meta", "missing required field(s) ['contact']"),
    ("json", "pred.jsonl:2: not valid JSON"),
    ("empty", "no suite"),
    ("name", "path separator"),
    ("replace", "--replace is for the local submissions folder"),
])
def test_submit_hub_refuses_bad_input_before_sending(entry, built, change, message):  # noqa: F811
    args = ["pred.jsonl", "--meta", "meta.yaml", "--name", "x"]
    lines = (entry / "pred.jsonl").read_text().splitlines(keepends=True)
    if change == "meta":
        (entry / "meta.yaml").write_text(yaml.safe_dump({**META, "contact": ""}))
    elif change == "json":
        (entry / "pred.jsonl").write_text(lines[0] + "not json\n" + "".join(lines[2:]))
    elif change == "empty":  # one row only: no suite is covered, nothing would be scored
        (entry / "pred.jsonl").write_text(lines[0])
    elif change == "name":
        args[-1] = "../x"
    else:
        args.append("--replace")
    with Hub() as hub:
        hub.add_repo("org/lb", "dataset")
        proc = submit(args, hub, entry, built)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert hub.requests == []


def test_submit_hub_refuses_a_name_taken_on_the_hub(entry, built):  # noqa: F811
    with Hub() as hub:
        hub.add_repo("org/lb", "dataset", {"submissions/x/results.json": b"{}"})
        proc = submit(["pred.jsonl", "--meta", "meta.yaml", "--name", "X"], hub, entry, built)
    assert proc.returncode == 2
    assert "--name 'X': org/lb already has submissions/x; choose another name" in proc.stderr
    assert hub.commits == [] and hub.pull_requests("org/lb") == []


def test_submit_hub_dry_run_and_missing_repo(entry, built):  # noqa: F811
    args = ["pred.jsonl", "--meta", "meta.yaml", "--name", "x"]
    with Hub() as hub:
        dry = submit([*args, "--dry-run"], hub, entry, built)
        sent_dry = list(hub.requests)
        missing = submit(args, hub, entry, built)
    assert dry.returncode == 0, dry.stderr
    assert "create_commit dataset org/lb (pull request): 'Submit x (org/my-model)', 2 files" \
        in dry.stdout
    assert sent_dry == []
    assert missing.returncode != 0
    assert "dataset repo 'org/lb' not found" in missing.stderr


def test_submit_hub_refuses_a_copy_of_a_published_entry(entry, built):  # noqa: F811
    """Issue 27 item 9, on the Hub: compared with the published leaderboard.json."""
    import hashlib
    import json

    sha = hashlib.sha256((entry / "pred.jsonl").read_bytes()).hexdigest()
    board = {"meta": {"theirs": {**META, "model": "org/other", "parameters": None,
                                 "variant": None}},
             "predictions_sha256": {"theirs": sha}}
    other = {"meta": {"mine": {**META, "parameters": None, "variant": None}},
             "predictions_sha256": {"mine": "0" * 64}}
    args = ["pred.jsonl", "--meta", "meta.yaml", "--name", "x"]
    with Hub() as hub:
        hub.add_repo("org/lb", "dataset", {"leaderboard.json": json.dumps(board).encode()})
        copy = submit(args, hub, entry, built)
        hub.add_repo("org/lb2", "dataset", {"leaderboard.json": json.dumps(other).encode()})
        same = cli(["submit", *args, "--data", str(built), "--hub", "org/lb2"], hub.url, entry)
        varied = cli(["submit", *args, "--data", str(built), "--hub", "org/lb2", "--variant",
                      "5-shot"], hub.url, entry)
        files = hub.files_at("org/lb2", "refs/pr/1")
    assert copy.returncode == 2
    assert "byte-identical to those of entry 'theirs'" in copy.stderr
    assert "nothing was sent" in copy.stderr and hub.pull_requests("org/lb") == []
    assert same.returncode == 2 and "say what differs" in same.stderr
    assert "--variant TEXT" in same.stderr
    assert varied.returncode == 0, varied.stderr
    assert yaml.safe_load(files["requests/x/meta.yaml"])["variant"] == "5-shot"
