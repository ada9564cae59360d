"""Publishing tests against tests/hub_standin.py, a loopback stand-in for the Hub."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.publish import write_model_card  # noqa: E402
from leaderboard.ranking import Entry, rank  # noqa: E402
from leaderboard.render import render_all  # noqa: E402
from tests.hub_standin import TOKEN, Hub
from tests.test_leaderboard_ranking import res, suite

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def site(tmp_path):
    subs = tmp_path / "subs"
    results = {"a": res(s1=suite(0.1)), "b": res(s1=suite(0.3))}
    for name, r in results.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "meta.yaml").write_text(f"model: {name}\n")
        (subs / name / "results.json").write_text(json.dumps(r))
    render_all(rank([Entry(n, r) for n, r in results.items()]), tmp_path / "site", subs)
    return tmp_path


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data"
    (root / "snli_symmetric").mkdir(parents=True)
    (root / "snli_symmetric" / "test.parquet").write_bytes(b"PAR1 fake parquet bytes PAR1")
    (root / "suites.json").write_text('{"suites": {}}\n')
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: snli_symmetric\n"
        "  data_files: snli_symmetric/test.parquet\n---\n# card\n"
    )
    return root


def cli(args, hub_url, tmp_path, token=TOKEN):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HF_") and k != "TRANSFORMERS_OFFLINE"
    }
    env.update(
        PYTHONPATH=str(REPO),
        HF_ENDPOINT=hub_url,
        HF_HOME=str(tmp_path / "hf_home"),
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    if token:
        env["HF_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_publish_leaderboard_one_commit_exact_files(site):
    with Hub() as hub:
        proc = cli(
            ["publish", "--repo", "org/board", "--site", "site", "--submissions", "subs"],
            hub.url,
            site,
        )
    assert proc.returncode == 0, proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    assert hub.unexpected == []
    assert [c["repo"] for c in hub.commits] == ["org/board"]
    commit = hub.commits[0]
    assert commit["type"] == "dataset" and commit["revision"] == "main"
    assert commit["header"]["value"]["summary"] == "Update leaderboard"
    assert sorted(commit["files"]) == [
        "README.md",
        "heatmap.png",
        "index.html",
        "leaderboard.json",
        "leaderboard.md",
        "submissions/a/meta.yaml",
        "submissions/a/results.json",
        "submissions/b/meta.yaml",
        "submissions/b/results.json",
    ]
    for path in ("index.html", "heatmap.png", "leaderboard.json"):
        assert commit["files"][path] == (site / "site" / path).read_bytes()
    card = commit["files"]["README.md"].decode()
    assert card.startswith("---\n") and "| a | #1 " in card  # per-task summary table
    assert hub.requests == [
        ("POST", "/api/repos/create"),
        ("POST", "/api/validate-yaml"),
        ("POST", "/api/datasets/org/board/preupload/main"),
        ("POST", "/api/datasets/org/board/commit/main"),
    ]


def test_publish_suites_and_existing_repo(data, tmp_path):
    with Hub() as hub:
        first = cli(["publish-suites", "--repo", "org/suites", "--data", "data"], hub.url, tmp_path)
        second = cli(
            ["publish-suites", "--repo", "org/suites", "--data", "data"], hub.url, tmp_path
        )  # repo exists now: create_repo answers 409, exist_ok
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert len(hub.commits) == 2
    assert sorted(hub.commits[0]["files"]) == [
        "README.md",
        "snli_symmetric/test.parquet",
        "suites.json",
    ]
    assert (
        hub.commits[0]["files"]["snli_symmetric/test.parquet"]
        == (data / "snli_symmetric" / "test.parquet").read_bytes()
    )


def test_dry_run_sends_nothing(site):
    with Hub() as hub:
        proc = cli(
            [
                "publish",
                "--repo",
                "org/board",
                "--site",
                "site",
                "--submissions",
                "subs",
                "--dry-run",
            ],
            hub.url,
            site,
        )
    assert proc.returncode == 0, proc.stderr
    assert hub.requests == []
    assert "create_commit org/board" in proc.stdout and "add index.html" in proc.stdout
    assert "nothing sent" in proc.stdout


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("ratelimit", "rate limited"),
        ("noauth", "not authorised"),
        ("missing", "not found"),
    ],
)
def test_hub_errors_are_clear_and_commit_nothing(site, mode, message):
    with Hub(mode) as hub:
        proc = cli(
            ["publish", "--repo", "org/board", "--site", "site", "--submissions", "subs"],
            hub.url,
            site,
        )
    assert proc.returncode == 2
    assert message in proc.stderr and "nothing was committed" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    assert hub.commits == []


def test_wrong_token_is_auth_error(site):
    with Hub() as hub:
        proc = cli(
            ["publish", "--repo", "org/board", "--site", "site", "--submissions", "subs"],
            hub.url,
            site,
            token="hf_wrong",
        )
    assert proc.returncode == 2 and "not authorised" in proc.stderr
    assert "hf_wrong" not in proc.stdout + proc.stderr


def test_bad_repo_id(site):
    proc = cli(
        ["publish", "--repo", "../x", "--site", "site", "--dry-run"], "http://127.0.0.1:9", site
    )
    assert proc.returncode == 2 and "ORG/NAME" in proc.stderr


def test_model_card_model_index(tmp_path):
    card = tmp_path / "README.md"
    card.write_text("---\nlicense: mit\n---\n# My model\n")
    write_model_card(card, res(s1=suite(0.1)), "my-model", "org/suites")
    import yaml

    text = card.read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["license"] == "mit"
    [entry] = meta["model-index"]
    assert entry["name"] == "my-model"
    assert entry["results"][0]["dataset"]["config"] == "s1"
    assert entry["results"][0]["metrics"][0]["value"] == 0.1
    assert text.endswith("# My model\n")
    # huggingface_hub parses it back
    from huggingface_hub import ModelCard

    parsed = ModelCard(text)
    assert parsed.data.eval_results[0].metric_value == 0.1
