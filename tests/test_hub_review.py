"""The whole loop on the stand-in Hub: submissions by pull request, review, merge, verify.

A maintainer's leaderboard (one stored entry) is published with its Space and the suites;
outside researchers open pull requests (``submit --hub``, and hand-made bad ones); ``review``
comments, ``review --merge`` stores, merges and republishes; ``verify`` re-scores the result.
A 5xx during the merge leaves the Hub as it was, and the next review finishes the job.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from consistency_bench.cli import main
from consistency_bench.leaderboard.submissions.storage import gzip_bytes, submit
from tests.helpers import write_predictions
from tests.hub_standin import TOKEN, Hub
from tests.test_hub_reads import SUITES, built, hub_env, online  # noqa: F401  (fixtures)
from tests.test_hub_submit import META
from tests.test_leaderboard_publish import cli


@pytest.fixture
def board(built, tmp_path):  # noqa: F811
    """The maintainer's folder: one entry stored and rendered; two researchers' files."""
    (tmp_path / "meta.yaml").write_text(yaml.safe_dump(META))
    pred = write_predictions(built, tmp_path / "oracle.jsonl", SUITES)
    submit(pred, name="oracle", meta_path=tmp_path / "meta.yaml", root=tmp_path / "subs",
           data_dir=built)
    assert main(["leaderboard", "--submissions", str(tmp_path / "subs"), "--out",
                 str(tmp_path / "site")]) == 0
    write_predictions(built, tmp_path / "zeros.jsonl", SUITES, choose=lambda row, names: 0)
    return tmp_path


def start(hub, board, built):  # noqa: F811
    """Publish the suites, the leaderboard and its Space; one good pull request, made as
    docs/submit.md says: the suites downloaded with `hf download`, then `submit --hub`."""
    for args in (["publish-suites", "--repo", "org/cb", "--data", str(built)],
                 ["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs",
                  "--space", "org/lb-page", "--suites-repo", "org/cb"]):
        proc = cli(args, hub.url, board)
        assert proc.returncode == 0, proc.stderr
    env = hub_env(hub.url, board)  # the researcher: no token needed to download
    hf = Path(sys.executable).parent / "hf"
    got = subprocess.run([str(hf), "download", "org/cb", "--repo-type", "dataset",
                          "--local-dir", "suites"], env=env, cwd=board, capture_output=True,
                         text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    # the same model and revision as the stored entry: a variant says what differs (issue 27)
    proc = cli(["submit", "zeros.jsonl", "--meta", "meta.yaml", "--name", "zeros", "--data",
                "suites", "--hub", "org/lb", "--variant", "always label 0"], hub.url, board)
    assert proc.returncode == 0, proc.stderr


def review(hub, board, built, *extra):  # noqa: F811
    return cli(["review", "--hub", "org/lb", "--suites-repo", "org/cb", "--data", str(built),
                "--submissions", "subs", "--site", "site", "--space", "org/lb-page", *extra],
               hub.url, board)


def bad_requests(hub, board):
    """Hand-made pull requests: bad meta, a taken name, a path outside requests/, not gzip,
    and a copy of the stored entry's predictions under another name and model."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=hub.url, token=TOKEN)
    gz = gzip_bytes((board / "zeros.jsonl").read_bytes())
    for files in ({"requests/bad/meta.yaml": b"model: x\n",
                   "requests/bad/predictions.jsonl.gz": gz},
                  {"requests/oracle/meta.yaml": (board / "meta.yaml").read_bytes(),
                   "requests/oracle/predictions.jsonl.gz": gz},
                  {"requests/evil/meta.yaml": (board / "meta.yaml").read_bytes(),
                   "requests/evil/predictions.jsonl.gz": gz,
                   "submissions/evil/results.json": b"{}"},
                  {"requests/gz/meta.yaml": (board / "meta.yaml").read_bytes(),
                   "requests/gz/predictions.jsonl.gz": b"\x1f\x8b not gzip"},
                  {"requests/copycat/meta.yaml": yaml.safe_dump(
                      {**META, "model": "org/copycat"}).encode(),
                   "requests/copycat/predictions.jsonl.gz": gzip_bytes(
                       (board / "oracle.jsonl").read_bytes())}):
        api.create_commit("org/lb", [CommitOperationAdd(p, d) for p, d in files.items()],
                          commit_message="request", repo_type="dataset", create_pr=True)


def test_review_merge_publish_verify(online, board, built):  # noqa: F811
    with Hub() as hub:
        start(hub, board, built)
        bad_requests(hub, board)
        first = review(hub, board, built)
        comments = {n: hub.comments("org/lb", n) for n in (1, 2, 3, 4, 5, 6)}
        again = review(hub, board, built)
        n_again = {n: len(hub.comments("org/lb", n)) for n in (1, 2, 3, 4, 5, 6)}
        main_before = dict(hub.files_at("org/lb"))
        merged = review(hub, board, built, "--merge")
        verify = cli(["verify", "--hub", "org/lb", "--data", str(built)], hub.url, board)
        files = hub.repos["org/lb"]["files"]
        results = json.loads(files["submissions/zeros/results.json"])
        results["suites"]["rte_semantic"]["consistent_accuracy"] = 0.99  # a hand edit
        files["submissions/zeros/results.json"] = json.dumps(results).encode()
        hub.repos["org/lb"]["head"] = "f" * 40
        caught = cli(["verify", "--hub", "org/lb", "--data", str(built)], hub.url, board)
    assert first.returncode == 0, first.stderr
    assert "#1: accepted zeros" in first.stdout
    assert "1 accepted, 5 refused, 0 unchanged" in first.stdout
    [good] = comments[1]
    assert "| view | rank |" in good and "zeros" in good
    assert "<!-- consistency-bench review accepted " in good
    assert "missing required field(s)" in comments[2][0]
    assert "the name 'oracle' is taken" in comments[3][0]
    assert "may only add files under requests/<name>/" in comments[4][0]
    assert "submissions/evil/results.json" in comments[4][0]
    assert "requests/gz/predictions.jsonl.gz: not a valid gzip file" in comments[5][0]
    assert "byte-identical to those of entry 'oracle'" in comments[6][0]  # issue 27 item 9
    # idempotent: nothing new to say
    assert again.returncode == 0 and "0 accepted, 0 refused, 6 unchanged" in again.stdout
    assert n_again == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1}
    assert not any(p.startswith(("requests/", "submissions/zeros")) for p in main_before)
    # merge: stored, merged, republished (dataset and Space); the bad ones stay open
    assert merged.returncode == 0, merged.stderr
    assert "stored subs/zeros" in merged.stdout and "merged #1 (zeros)" in merged.stdout
    assert "1 accepted, 0 refused, 5 unchanged" in merged.stdout
    assert [p["status"] for p in hub.pull_requests("org/lb")] == ["merged"] + ["open"] * 5
    assert len(hub.comments("org/lb", 1)) == 1  # no second comment for the same head
    assert (board / "subs" / "zeros" / "results.json").is_file()
    data_commit, page_commit = hub.commits[-2:]
    assert data_commit["repo"] == "org/lb" and page_commit["repo"] == "org/lb-page"
    assert {"submissions/zeros/results.json", "submissions/zeros/predictions.jsonl.gz",
            "submissions/zeros/meta.yaml"} <= set(data_commit["files"])
    assert b"zeros" in page_commit["files"]["index.html"]
    assert "submissions/evil/results.json" not in hub.files_at("org/lb")
    # verify: clean, then the hand edit is caught
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "2 ok, 0 differ, 0 unverifiable" in verify.stdout
    assert caught.returncode == 1
    assert "DIFFERS\tzeros\trte_semantic\tconsistent_accuracy\tstored 0.99" in caught.stdout
    assert hub.unexpected == []


def test_review_5xx_during_merge_then_resume(board, built):  # noqa: F811
    with Hub() as hub:
        start(hub, board, built)
        hub.faults.append(("POST", r"/api/datasets/org/lb/discussions/1/merge", 503))
        broken = review(hub, board, built, "--merge")
        main_after_fault = dict(hub.files_at("org/lb"))
        n_commits = len(hub.commits)
        resumed = review(hub, board, built, "--merge")
        verify = cli(["verify", "--hub", "org/lb", "--data", str(built)], hub.url, board)
    assert broken.returncode == 1  # this pull request failed; the run went through
    assert "HTTP 503 while merging pull request #1 of dataset repo 'org/lb'" in broken.stderr
    assert "#1: failed: " in broken.stdout and "zeros stays stored" in broken.stdout
    assert "not republished: #1 (zeros) stored but not merged" in broken.stdout
    assert not any(p.startswith(("requests/zeros", "submissions/zeros"))
                   for p in main_after_fault)  # nothing merged, nothing republished
    assert hub.pull_requests("org/lb")[0]["status"] == "merged"
    assert resumed.returncode == 0, resumed.stderr
    assert "stored" not in resumed.stdout  # the interrupted run had stored it already
    assert "merged #1 (zeros)" in resumed.stdout
    assert len(hub.commits) == n_commits + 4  # merge, details, dataset, Space
    assert len(hub.comments("org/lb", 1)) == 1
    assert "submissions/zeros/results.json" in hub.files_at("org/lb")
    # the republish keeps the details config (leaderboard/details/), the new entry's too
    assert any(p.startswith("details/") and p.endswith("/zeros.parquet")
               for p in hub.files_at("org/lb"))
    assert b"config_name: details" in hub.files_at("org/lb")["README.md"]
    assert verify.returncode == 0 and "2 ok" in verify.stdout


def test_review_5xx_on_the_space_commit_then_resume(board, built):  # noqa: F811
    with Hub() as hub:
        start(hub, board, built)
        hub.faults.append(("POST", r"/api/spaces/org/lb-page/commit/main", 503))
        broken = review(hub, board, built, "--merge")
        page_after_fault = hub.files_at("org/lb-page")
        resumed = review(hub, board, built, "--merge")
        page = hub.files_at("org/lb-page")
        n_commits = len(hub.commits)
        quiet = review(hub, board, built, "--merge")
    assert broken.returncode == 2 and "HTTP 503" in broken.stderr
    assert "submissions/zeros/results.json" in hub.files_at("org/lb")  # the data went out
    assert b"zeros" not in page_after_fault["leaderboard.json"]  # the page did not
    assert resumed.returncode == 0, resumed.stderr
    assert "0 accepted, 0 refused, 0 unchanged" in resumed.stdout  # nothing left open
    assert page["leaderboard.json"] == hub.files_at("org/lb")["leaderboard.json"]
    assert b"zeros" in page["index.html"]
    card = yaml.safe_load(page["README.md"].decode().split("---\n")[1])
    assert card["datasets"] == ["org/lb", "org/cb"]  # review keeps the suites link
    assert quiet.returncode == 0 and len(hub.commits) == n_commits  # in step: nothing sent


def test_pull_requests_deleting_or_hiding_files_are_refused(online, board, built):  # noqa: F811
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    with Hub() as hub:
        start(hub, board, built)  # pull request #1: a good one
        api = HfApi(endpoint=hub.url, token=TOKEN)
        gz = gzip_bytes((board / "zeros.jsonl").read_bytes())
        files = {"requests/old/meta.yaml": (board / "meta.yaml").read_bytes(),
                 "requests/old/predictions.jsonl.gz": gz}
        api.create_commit("org/lb", [CommitOperationAdd(p, d) for p, d in files.items()],
                          commit_message="an earlier request", repo_type="dataset")
        api.create_commit("org/lb", [CommitOperationDelete(p) for p in files],
                          commit_message="delete", repo_type="dataset", create_pr=True)
        sneaky = {"requests/sneaky/meta.yaml": files["requests/old/meta.yaml"],
                  "requests/sneaky/predictions.jsonl.gz": gz,
                  "submissions/é/results.json": b"{}"}  # git quotes this path in the diff
        api.create_commit("org/lb", [CommitOperationAdd(p, d) for p, d in sneaky.items()],
                          commit_message="sneaky", repo_type="dataset", create_pr=True)
        api.create_commit("org/lb", [CommitOperationAdd("README.md", b"# a better card\n")],
                          commit_message="card", repo_type="dataset", create_pr=True)
        twin = {"requests/zeros/meta.yaml": files["requests/old/meta.yaml"],
                "requests/zeros/predictions.jsonl.gz": gz}  # the name #1 takes in this run
        api.create_commit("org/lb", [CommitOperationAdd(p, d) for p, d in twin.items()],
                          commit_message="twin", repo_type="dataset", create_pr=True)
        proc = review(hub, board, built)
        again = review(hub, board, built)
    assert proc.returncode == 0, proc.stderr
    assert "#1: accepted zeros" in proc.stdout
    assert "#2: refused: the pull request deletes 'requests/old/meta.yaml'" in proc.stdout
    assert "a request only adds files" in hub.comments("org/lb", 2)[0]
    assert "#3: refused: the pull request changes a file with a quoted path" in proc.stdout
    assert "#4: changes no file under requests/: not a submission, skipped" in proc.stdout
    assert hub.comments("org/lb", 4) == []  # a maintainer's own pull request: left alone
    assert "#5: refused: the name 'zeros' is taken" in proc.stdout
    assert "3 refused, 0 unchanged, 1 not submissions" in proc.stdout
    assert again.returncode == 0 and "0 accepted, 0 refused, 4 unchanged" in again.stdout


def test_a_push_during_the_review_is_not_merged(online, board, built,  # noqa: F811
                                                 monkeypatch):
    """The Hub merges whatever the pull request holds: a push after the review is caught."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from consistency_bench.leaderboard.review import loop as review_module
    from consistency_bench.leaderboard.review.loop import run_review

    real_submit = review_module.submit

    def store_then_push(*args, **kwargs):  # the submitter pushes while the entry is stored
        stored = real_submit(*args, **kwargs)
        HfApi(endpoint=hub.url, token=TOKEN).create_commit(
            "org/lb", [CommitOperationAdd("README.md", b"# mine now\n")],
            commit_message="late push", repo_type="dataset", revision="refs/pr/1")
        return stored

    monkeypatch.setattr(review_module, "submit", store_then_push)
    with Hub() as hub:
        start(hub, board, built)
        lines = []
        kwargs = dict(submissions=board / "subs", site=board / "site", merge=True,
                      endpoint=hub.url, token=TOKEN, log=lines.append)
        run_review("org/lb", built, "org/cb", **kwargs)
        monkeypatch.setattr(review_module, "submit", real_submit)
        main_after = dict(hub.files_at("org/lb"))
        status = hub.pull_requests("org/lb")[0]["status"]
        again = run_review("org/lb", built, "org/cb", **kwargs)
    assert status == "open" and "README.md" in main_after
    assert main_after["README.md"] != b"# mine now\n"  # the late push never reached main
    assert not any(p.startswith("submissions/zeros") for p in main_after)
    assert not (board / "subs" / "zeros").exists()
    assert any("changed since its review" in line for line in lines), lines
    assert [r.verdict for r in again] == ["refused"]  # reviewed again at its new head
    assert "may only add files under requests/" in again[0].reason


def test_review_merge_scores_the_entry_once(online, board, built, monkeypatch,  # noqa: F811
                                            tmp_path):
    """Issue 33 item 2: one ``review --merge`` scores the pull request's entry exactly once.

    The review's scoring gives the stored results (``submit`` does not score again) and the
    entry's verified-cells record (the render reads it); the stored entry was verified before,
    so it comes from the cache. The stored results are what ``score`` gives for the file, and
    the record is the one a render computes from the stored predictions, byte for byte.
    """
    import consistency_bench.bench.scoring.engine
    from consistency_bench.leaderboard.cache.store import FOLDER
    from consistency_bench.leaderboard.cache.verified import verify_entries
    from consistency_bench.leaderboard.review.loop import run_review
    from consistency_bench.leaderboard.submissions.reader import load_all

    monkeypatch.setenv("CONSISTENCY_BENCH_CACHE_KEY", str(tmp_path / "cells.key"))
    subs = board / "subs"
    assert verify_entries(load_all(subs), built, subs).recomputed == ["oracle"]  # cached now
    real = consistency_bench.bench.scoring.engine.read_predictions
    scored: list[Path] = []  # every scoring of a file (score, submit, a render) reads it here

    def spy(path, *args, **kwargs):
        import traceback

        # the explorer reads the files too (through the render's suite folder): not scorings
        if not any(f.name == "entry_samples" for f in traceback.extract_stack()):
            scored.append(Path(path))
        return real(path, *args, **kwargs)

    with Hub() as hub:
        start(hub, board, built)  # submit --hub scores in its own process: not counted
        monkeypatch.setattr(consistency_bench.bench.scoring.engine, "read_predictions", spy)
        lines: list[str] = []
        reviews = run_review("org/lb", built, "org/cb", submissions=subs, site=board / "site",
                             space="org/lb-page", merge=True, endpoint=hub.url, token=TOKEN,
                             log=lines.append)
        monkeypatch.setattr(consistency_bench.bench.scoring.engine, "read_predictions", real)
        published = dict(hub.files_at("org/lb"))
    assert [(r.verdict, r.merged) for r in reviews] == [("accepted", True)], lines
    assert len(scored) == 1, scored  # was 3: the review, submit, the render
    assert scored[0].name == "predictions.jsonl.gz" and "pr-1" in scored[0].parts
    board_json = json.loads(published["leaderboard.json"])
    assert "zeros" in {r["name"] for r in board_json["views"]["all"]["rows"]}
    stored = json.loads((subs / "zeros" / "results.json").read_text())
    fresh = consistency_bench.bench.scoring.engine.score_file(
        subs / "zeros" / "predictions.jsonl.gz", built)
    assert stored["suites"] == fresh["suites"] and stored["tasks"] == fresh["tasks"]
    record = (subs / FOLDER / "zeros.cells").read_bytes()
    (subs / FOLDER / "zeros.cells").unlink()
    assert verify_entries(load_all(subs), built, subs).recomputed == ["zeros"]
    assert (subs / FOLDER / "zeros.cells").read_bytes() == record


def test_review_dry_run_sends_and_writes_nothing(board, built):  # noqa: F811
    with Hub() as hub:
        start(hub, board, built)
        n = len(hub.requests)
        dry = review(hub, board, built, "--merge", "--dry-run")
        sent = [(m, p) for m, p in hub.requests[n:] if m not in ("GET", "HEAD")
                and "/paths-info/" not in p]  # a read: the sizes of the request's files
    assert dry.returncode == 0, dry.stderr
    assert "#1: accepted zeros" in dry.stdout and "would comment:" in dry.stdout
    assert sent == [] and hub.comments("org/lb", 1) == []
    assert not (board / "subs" / "zeros").exists()


@pytest.mark.parametrize(("paths", "message"), [
    ([], "changes no file"),
    (["requests/a/meta.yaml"], "lacks ['predictions.jsonl.gz']"),
    (["requests/a/meta.yaml", "requests/a/predictions.jsonl.gz", "requests/b/meta.yaml",
      "requests/b/predictions.jsonl.gz"], "one request per pull request"),
    (["requests/../meta.yaml"], "is not a valid entry name"),
    (["requests/A B/meta.yaml"], "is not a valid entry name"),
    (["requests/a/results.json"], "is not requests/<name>/meta.yaml"),
    (["requests/a/x/meta.yaml"], "is not requests/<name>/meta.yaml"),
    (["README.md"], "may only add files under requests/<name>/"),
])
def test_request_paths_refused(paths, message):
    from consistency_bench.leaderboard.review.checks import Refused, request_slug

    with pytest.raises(Refused, match=".*" + message.replace("[", r"\[").replace("(", r"\(")):
        request_slug(paths)


def test_request_paths_and_hashes():
    from consistency_bench.leaderboard.review.checks import (
        Refused,
        changed_paths,
        check_hashes,
        request_slug,
    )

    diff = ("diff --git a/requests/a/meta.yaml b/requests/a/meta.yaml\nnew file mode 100644\n"
            "diff --git a/requests/a/predictions.jsonl.gz b/requests/a/predictions.jsonl.gz\n")
    assert request_slug(changed_paths(diff)) == "a"
    with pytest.raises(Refused, match="renames or copies"):
        changed_paths("diff --git a/x b/y\n")
    quoted = diff + ('diff --git "a/submissions/\\303\\251/results.json" '
                     '"b/submissions/\\303\\251/results.json"\nnew file mode 100644\n')
    with pytest.raises(Refused, match="a file with a quoted path"):
        changed_paths(quoted)  # skipped, the file would reach main with the merge
    with pytest.raises(Refused, match=r"deletes 'requests/a/meta\.yaml'"):
        changed_paths("diff --git a/requests/a/meta.yaml b/requests/a/meta.yaml\n"
                      "deleted file mode 100644\n")
    results = {"suites": {"s1": {"content_hash": "a" * 64}, "s2": {"content_hash": "b" * 64}}}
    check_hashes(results, {"s1": "a" * 64, "s2": "b" * 64}, "org/cb")
    with pytest.raises(Refused) as err:
        check_hashes(results, {"s1": "c" * 64}, "org/cb")
    assert "s1: scored on content_hash aaaaaaaaaaaa..., the published suite is cccccccccccc" \
        in str(err.value)
    assert "s2 is not published in org/cb" in str(err.value)


def test_a_fix_pushed_to_a_refused_request_is_reviewed_again(online, board, built):  # noqa: F811
    from huggingface_hub import CommitOperationAdd, HfApi

    with Hub() as hub:
        for args in (["publish-suites", "--repo", "org/cb", "--data", str(built)],
                     ["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs"]):
            assert cli(args, hub.url, board).returncode == 0
        api = HfApi(endpoint=hub.url, token=TOKEN)
        gz = gzip_bytes((board / "zeros.jsonl").read_bytes())
        api.create_commit("org/lb", [CommitOperationAdd("requests/z/meta.yaml", b"model: z\n"),
                                     CommitOperationAdd("requests/z/predictions.jsonl.gz", gz)],
                          commit_message="Submit z", repo_type="dataset", create_pr=True)
        refused = review(hub, board, built)
        fixed = (board / "meta.yaml").read_bytes() + b"variant: always label 0\n"  # issue 27
        api.create_commit("org/lb", [CommitOperationAdd("requests/z/meta.yaml", fixed)],
                          commit_message="fix meta", repo_type="dataset", revision="refs/pr/1")
        accepted = review(hub, board, built)
    assert "#1: refused: requests/z/meta.yaml: missing required field(s)" in refused.stdout
    assert "#1: accepted z" in accepted.stdout
    first, second = hub.comments("org/lb", 1)
    assert "review refused" in first and "review accepted" in second


def test_stale_local_suites_stop_the_review_before_any_comment(board, built):  # noqa: F811
    with Hub() as hub:
        start(hub, board, built)
        files = hub.repos["org/cb"]["files"]
        suites = json.loads(files["suites.json"])
        suites["suites"]["rte_semantic"]["sha256"] = "0" * 64  # the published suite moved on
        files["suites.json"] = json.dumps(suites).encode()
        hub.repos["org/cb"]["head"] = "d" * 40
        proc = review(hub, board, built, "--merge")
    assert proc.returncode == 2
    assert "1 suite(s) differ from org/cb's suites.json (rte_semantic)" in proc.stderr
    assert "nothing was reviewed" in proc.stderr
    assert hub.comments("org/lb", 1) == []
    assert not (board / "subs" / "zeros").exists()


def test_docs_workflow_is_valid_yaml_with_commands_the_cli_takes():
    """docs/review-workflow.yml (and the cron line of docs/maintain.md) run real commands."""
    import re
    import shlex

    from consistency_bench.cli import make_parser

    root = Path(__file__).resolve().parents[1]
    flow = yaml.safe_load((root / "docs" / "review-workflow.yml").read_text())
    on = flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["schedule"][0]["cron"] and "workflow_dispatch" in on
    runs = [s["run"] for s in flow["jobs"]["review"]["steps"] if "run" in s]
    cron = re.search(r"^17 \*/6 .*$", (root / "docs" / "maintain.md").read_text(), re.M)
    cron_cmds = re.findall(r"consistency-bench (\w[^&']*)", cron.group(0))
    commands = [r.split("consistency-bench ", 1)[1] for r in runs
                if r.startswith("consistency-bench ")] + cron_cmds
    parsed = [make_parser().parse_args(shlex.split(c)) for c in commands]
    assert [a.command for a in parsed] == ["review", "verify", "review", "verify"]
    review_args = parsed[0]
    assert review_args.merge and review_args.space and not review_args.dry_run
    assert review_args.hub == "ORG/leaderboard" and review_args.suites_repo
