"""``publish --space``: the data in the dataset repo, the page in a static Space (stand-in Hub)."""

from __future__ import annotations

import pytest
import yaml

from tests.hub_standin import Hub
from tests.test_hub_reads import SUITES, built  # noqa: F401  (the module fixture)
from tests.test_hub_submit import rendered_site
from tests.test_leaderboard_publish import cli


@pytest.fixture
def site(built, tmp_path):  # noqa: F811
    """Two entries stored by the real submit and rendered by `leaderboard`."""
    return rendered_site(built, tmp_path, ("a", "b"))


ARGS = ["publish", "--repo", "org/board", "--site", "site", "--submissions", "subs",
        "--space", "org/board-page", "--suites-repo", "org/cb"]


def test_publish_space_page_and_dataset_with_predictions(site):
    with Hub() as hub:
        proc = cli(ARGS, hub.url, site)
    assert proc.returncode == 0, proc.stderr
    assert hub.unexpected == []
    data, page = hub.commits
    assert (data["repo"], data["type"]) == ("org/board", "dataset")
    for name in ("a", "b"):  # the predictions travel with the data, through LFS
        path = f"submissions/{name}/predictions.jsonl.gz"
        assert data["files"][path] == (site / "subs" / name / "predictions.jsonl.gz").read_bytes()
        assert path in data["lfs"]
    assert (page["repo"], page["type"], page["revision"]) == ("org/board-page", "space", "main")
    assert hub.created["org/board-page"]["type"] == "space"
    assert hub.created["org/board-page"]["sdk"] == "static"
    lazy = sorted(p.relative_to(site / "site").as_posix()
                  for p in (site / "site" / "data").rglob("*.js"))
    assert lazy and sorted(page["files"]) == sorted([
        "README.md", "heatmap.png", "index.html", "leaderboard.json",
        "submissions/a/meta.yaml", "submissions/b/meta.yaml",  # the page links to them
        *lazy,  # and loads these (views, suites, entries, the index) when asked
    ])
    for path in lazy:
        assert page["files"][path] == (site / "site" / path).read_bytes()
    card = page["files"]["README.md"].decode()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["sdk"] == "static" and meta["app_file"] == "index.html"
    assert meta["title"] and meta["emoji"]
    assert meta["datasets"] == ["org/board", "org/cb"]
    assert {"leaderboard", "submission:semiautomatic", "test:public", "judge:auto",
            "modality:text"} <= set(meta["tags"])
    html = page["files"]["index.html"].decode()
    link = f'<a href="{hub.url}/datasets/org/board" rel="noopener noreferrer">org/board</a>'
    assert link in html
    original = (site / "site" / "index.html").read_text()
    assert html.replace(html.split("\n")[html.split("\n").index(
        "<h1>consistency-bench leaderboard</h1>") + 1] + "\n", "", 1) == original
    assert page["files"]["heatmap.png"] == (site / "site" / "heatmap.png").read_bytes()
    assert f"published {6 + len(lazy)} files to org/board-page" in proc.stdout
    # the Space as the Hub's read API shows it
    assert hub.files_at("org/board-page") == page["files"]


def test_publish_space_dry_run_and_bad_space(site):
    with Hub() as hub:
        dry = cli([*ARGS, "--dry-run"], hub.url, site)
        bad = cli([*ARGS[:-4], "--space", "not a repo"], hub.url, site)
        lone = cli([*ARGS[:-4], "--suites-repo", "org/cb"], hub.url, site)
    assert dry.returncode == 0, dry.stderr
    assert "create_repo space org/board-page (exist_ok, sdk static)" in dry.stdout
    assert "add submissions/a/predictions.jsonl.gz" in dry.stdout
    assert dry.stdout.count("dry run: nothing sent") == 2
    assert bad.returncode == 2 and "--space 'not a repo'" in bad.stderr
    assert lone.returncode == 2 and "--suites-repo" in lone.stderr
    assert hub.commits == [] and hub.requests == []


def test_space_failure_names_the_space_after_the_data(site):
    with Hub() as hub:
        hub.faults.append(("POST", r"/api/spaces/org/board-page/commit/main", 503))
        proc = cli(ARGS, hub.url, site)
    assert proc.returncode != 0
    assert [c["repo"] for c in hub.commits] == ["org/board"]
    assert "space repo 'org/board-page'" in proc.stderr
    assert "HTTP 503" in proc.stderr
