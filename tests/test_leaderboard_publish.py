"""Publishing tests against tests/hub_standin.py, a loopback stand-in for the Hub.

Every request goes to 127.0.0.1. LFS tests run with ``HF_HUB_DISABLE_XET=1`` (the stand-in
serves no Xet storage); one test keeps Xet on and has the Xet token endpoint answer 403.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.output_checks import OWNED
from consistency_bench.leaderboard.hub.eval_results import (
    Setup,
    eval_result_entries,
    eval_results_yaml,
    eval_yaml,
)
from consistency_bench.leaderboard.publish.model_results import write_model_card
from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry
from consistency_bench.leaderboard.submissions.meta import Submission
from consistency_bench.leaderboard.submissions.reader import site_record
from consistency_bench.leaderboard.webpage.render import render_all
from tests.hub_standin import (
    TOKEN,
    Hub,
    eval_results_errors,
    eval_yaml_errors,
    model_index_errors,
)
from tests.test_leaderboard_ranking import res, suite

REPO = Path(__file__).resolve().parents[1]
PLAIN = ".eval_results/consistency-bench_plain-0shot-none.yaml"
PARQUET = {  # suite -> bytes of a stand-in Parquet file
    "snli_symmetric": b"PAR1 fake parquet bytes PAR1",
    "rte_semantic": bytes(range(256)) * 10,  # 2,560 bytes: multipart with a 1 KiB chunk
}


@pytest.fixture
def site(tmp_path):
    subs = tmp_path / "subs"
    results = {"a": res(s1=suite(0.1)), "b": res(s1=suite(0.3))}
    for name, r in results.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "meta.yaml").write_text(f"model: {name}\n")
        (subs / name / "results.json").write_text(json.dumps(r))
    render_all(rank([Entry(n, r) for n, r in results.items()]), tmp_path / "site", subs)
    # what `consistency-bench leaderboard` records: the entries the site was rendered from
    stored = [Submission(n, subs / n, {}, r) for n, r in results.items()]
    written = sorted(p.relative_to(tmp_path / "site").as_posix()
                     for p in (tmp_path / "site").rglob("*") if p.is_file())
    (tmp_path / "site" / OWNED).write_text(json.dumps(
        {"command": "leaderboard", "files": written, **site_record(subs, stored)}))
    return tmp_path


def manifest_entry(suite_name: str, data: bytes) -> dict:
    return {"path": f"{suite_name}/test.parquet", "sha256": hashlib.sha256(data).hexdigest(),
            "task": "snli", "kind": "symmetric", "rows": 1}


@pytest.fixture
def data(tmp_path):
    root = tmp_path / "data"
    suites = {}
    for name, payload in PARQUET.items():
        (root / name).mkdir(parents=True)
        (root / name / "test.parquet").write_bytes(payload)
        suites[name] = manifest_entry(name, payload)
    (root / "suites.json").write_text(json.dumps({"suites": suites}, indent=1) + "\n")
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        + "".join(f"- config_name: {n}\n  data_files: {n}/test.parquet\n" for n in PARQUET)
        + "---\n# card\n"
    )
    return root


def scored(**suites) -> dict:
    """A results JSON with the accuracy-aware keys of the issue-9 contract."""
    out = {}
    for name, cc in suites.items():
        entry = {"family": "becel", "task": "snli", "kind": "symmetric", "main_metric": "tau_sym",
                 "main_score": 0.1, "higher_is_better": False, "n": 10,
                 "content_hash": hashlib.sha256(PARQUET.get(name, b"")).hexdigest()}
        if cc != "absent":
            ca = None if cc is None else 0.25 + cc * 0.75  # cc follows from ca and chance
            entry.update(consistent_accuracy=ca,
                         consistent_accuracy_chance=0.25, consistent_accuracy_cc=cc)
        out[name] = entry
    return {"schema_version": 1, "harness_version": "0.1.0", "suites": out}


@pytest.fixture
def subs(tmp_path):
    entry = tmp_path / "submissions" / "my-model"
    entry.mkdir(parents=True)
    results = scored(snli_symmetric=0.375, rte_semantic=-0.125, wic_semantic=None,
                     mrpc_semantic="absent")
    (entry / "results.json").write_text(json.dumps(results))
    (entry / "meta.yaml").write_text("model: org/model\n")  # publish-results checks --model
    return tmp_path / "submissions"


def cli(args, hub_url, tmp_path, token=TOKEN, xet=False):
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
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    if not xet:
        env["HF_HUB_DISABLE_XET"] = "1"
    if token:
        env["HF_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "consistency_bench", *args],
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
    lazy = sorted(p.relative_to(site / "site").as_posix()
                  for p in (site / "site" / "data").rglob("*.js"))  # the page's lazy files
    assert lazy and sorted(commit["files"]) == sorted([
        "README.md",
        "assets/explorer.js",
        "heatmap.png",
        "index.html",
        "leaderboard.json",
        "leaderboard.md",
        "plots/accuracy-consistency.png",
        "plots/profile.png",
        "results.parquet",
        "submissions/a/meta.yaml",
        "submissions/a/results.json",
        "submissions/b/meta.yaml",
        "submissions/b/results.json",
        *lazy,
    ])
    assert commit["lfs"] == {"heatmap.png", "plots/accuracy-consistency.png",
                             "plots/profile.png", "results.parquet"}  # PNG, Parquet via LFS
    for path in ("index.html", "heatmap.png", "leaderboard.json", "results.parquet"):
        assert commit["files"][path] == (site / "site" / path).read_bytes()
    card = commit["files"]["README.md"].decode()
    assert card.startswith("---\n")
    assert (site / "site" / "leaderboard.md").read_text() in card  # the rendered table, as is
    pngs = ("heatmap.png", "plots/accuracy-consistency.png", "plots/profile.png",
            "results.parquet")
    oids = [hashlib.sha256((site / "site" / p).read_bytes()).hexdigest() for p in pngs]
    lfs = [r for r in hub.requests if r[1].startswith("/lfs/")]  # in the client's order
    assert sorted(lfs) == sorted([("PUT", f"/lfs/upload/{o}") for o in oids]
                                 + [("POST", f"/lfs/verify/{o}") for o in oids])
    assert [r for r in hub.requests if not r[1].startswith("/lfs/")] == [
        ("POST", "/api/repos/create"),
        ("POST", "/api/validate-yaml"),
        ("POST", "/api/datasets/org/board/preupload/main"),
        ("POST", "/datasets/org/board.git/info/lfs/objects/batch"),
        ("POST", "/api/datasets/org/board/commit/main"),
    ]
    assert f"published {13 + len(lazy)} files to org/board" in proc.stdout


def test_publish_suites_lfs_eval_yaml_and_unchanged_republish(data, tmp_path):
    args = ["publish-suites", "--repo", "org/suites", "--data", "data"]
    with Hub() as hub:
        first = cli(args, hub.url, tmp_path)
        n_first = len(hub.requests)
        second = cli(args, hub.url, tmp_path)  # same files: repo exists (409), nothing sent
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert hub.unexpected == []
    [commit] = hub.commits
    assert sorted(commit["files"]) == [
        "README.md", "eval.yaml", "rte_semantic/test.parquet", "snli_symmetric/test.parquet",
        "suites.json",
    ]
    assert commit["lfs"] == {"rte_semantic/test.parquet", "snli_symmetric/test.parquet"}
    for name, payload in PARQUET.items():
        assert commit["files"][f"{name}/test.parquet"] == payload
        assert hub.objects[hashlib.sha256(payload).hexdigest()] == payload
    assert len(hub.sent("PUT")) == 2 and len(hub.sent("POST")) >= 2
    spec = yaml.safe_load(commit["files"]["eval.yaml"])
    assert "evaluation_framework" not in spec  # no listed name fits (docs/leaderboard.md)
    assert "consistent_accuracy_cc" in spec["description"]
    assert spec["tasks"] == [
        {"id": "rte_semantic", "config": "rte_semantic", "split": "test"},
        {"id": "snli_symmetric", "config": "snli_symmetric", "split": "test"},
    ]
    again = hub.requests[n_first:]
    assert ("PUT" not in {m for m, _ in again})  # no object re-sent
    assert not any(p.endswith("/commit/main") for _, p in again)  # no commit
    assert ("GET", "/api/datasets/org/suites/revision/main") in again
    assert "nothing to publish" in second.stdout


def test_publish_suites_multipart_transfer(data, tmp_path):
    payload = PARQUET["rte_semantic"]
    oid = hashlib.sha256(payload).hexdigest()
    with Hub(multipart_chunk=1024) as hub:
        proc = cli(["publish-suites", "--repo", "org/suites", "--data", "data"], hub.url, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert hub.sent("PUT").count(f"/lfs/part/{oid}/1") == 1
    assert [p for p in hub.sent("PUT") if p.startswith(f"/lfs/part/{oid}/")] == [
        f"/lfs/part/{oid}/{i}" for i in (1, 2, 3)
    ]
    assert f"/lfs/complete/{oid}" in hub.sent("POST")
    assert f"/lfs/verify/{oid}" in hub.sent("POST")
    assert hub.commits[0]["files"]["rte_semantic/test.parquet"] == payload


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "snli_symmetric" / "test.parquet").write_bytes(b"PAR1 edited PAR1"),
         "changed after the build"),
        (lambda root: (root / "rte_semantic" / "test.parquet").unlink(), "missing"),
        (lambda root: (root / "stray").mkdir() or (root / "stray" / "test.parquet")
         .write_bytes(b"x"), "stray/test.parquet: not in suites.json"),
    ],
    ids=["edited", "missing", "stray"],
)
def test_publish_suites_checks_hashes_before_sending_anything(data, tmp_path, damage, message):
    damage(data)
    with Hub() as hub:
        proc = cli(["publish-suites", "--repo", "org/suites", "--data", "data"], hub.url, tmp_path)
        dry = cli(["publish-suites", "--repo", "org/suites", "--data", "data", "--dry-run"],
                  hub.url, tmp_path)
    assert proc.returncode == 2 and dry.returncode == 2
    assert message in proc.stderr and "nothing was sent" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert hub.requests == []


def test_manifest_without_sha256_is_refused(data):
    from consistency_bench.bench.errors import DataError
    from consistency_bench.leaderboard.publish.plans import verified_suite_files

    manifest = json.loads((data / "suites.json").read_text())
    del manifest["suites"]["rte_semantic"]["sha256"]
    (data / "suites.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match="suite 'rte_semantic' has no sha256"):
        verified_suite_files(data)


def test_standin_refuses_bad_bytes_and_unverified_objects(tmp_path):
    """Negative control: the stand-in's sha256 and verify checks can fail."""
    good = b"some parquet bytes"
    oid = hashlib.sha256(good).hexdigest()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with Hub() as hub:
        hub.add_repo("org/d", "dataset")
        assert httpx.put(f"{hub.url}/lfs/upload/{oid}", content=b"other bytes").status_code == 400
        verify = httpx.post(f"{hub.url}/lfs/verify/{oid}", json={"oid": oid, "size": len(good)},
                            headers=auth)
        assert verify.status_code == 404
        line = {"key": "lfsFile", "value": {"path": "a.parquet", "algo": "sha256", "oid": oid,
                                            "size": len(good)}}
        body = json.dumps({"key": "header", "value": {"summary": "x"}}) + "\n" + json.dumps(line)
        commit = httpx.post(f"{hub.url}/api/datasets/org/d/commit/main", content=body,
                            headers=auth)
        assert commit.status_code == 400
    assert hub.commits == [] and hub.objects == {}


def test_xet_token_refused_is_not_authorised(data, tmp_path):
    pytest.importorskip("hf_xet")
    with Hub(xet="forbidden") as hub:
        proc = cli(["publish-suites", "--repo", "org/suites", "--data", "data"], hub.url, tmp_path,
                   xet=True)
    assert ("GET", "/api/datasets/org/suites/xet-write-token/main") in hub.requests
    assert proc.returncode == 2, proc.stderr
    assert "not authorised to write" in proc.stderr and "Xet" in proc.stderr
    assert "could not reach" not in proc.stderr and "ConnectionError" not in proc.stderr
    assert "nothing was committed" in proc.stderr and "Traceback" not in proc.stderr
    assert hub.commits == []


def test_publish_suites_dry_run_shows_eval_yaml(data, tmp_path):
    with Hub() as hub:
        proc = cli(["publish-suites", "--repo", "org/suites", "--data", "data", "--dry-run"],
                   hub.url, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert hub.requests == []
    assert "add eval.yaml" in proc.stdout and "add snli_symmetric/test.parquet" in proc.stdout
    assert "- id: snli_symmetric" in proc.stdout and "nothing sent" in proc.stdout


def test_dry_run_sends_nothing(site):
    with Hub() as hub:
        proc = cli(
            ["publish", "--repo", "org/board", "--site", "site", "--submissions", "subs",
             "--dry-run"],
            hub.url,
            site,
        )
    assert proc.returncode == 0, proc.stderr
    assert hub.requests == []
    assert "create_commit dataset org/board" in proc.stdout and "add index.html" in proc.stdout
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


def test_unreachable_hub_is_one_line(site):
    with Hub() as hub:  # start, note the port, stop: nothing listens there any more
        url = hub.url
    proc = cli(["publish", "--repo", "org/board", "--site", "site", "--submissions", "subs"],
               url, site)
    assert proc.returncode == 2, proc.stderr
    assert "could not reach the Hub" in proc.stderr and "Traceback" not in proc.stderr


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


# -- Hub Eval Results ---------------------------------------------------------------------

def test_eval_yaml_one_task_per_suite():
    spec = yaml.safe_load(eval_yaml({"b_s": {}, "a_s": {}}))
    assert list(spec) == ["name", "description", "tasks"]
    assert [t["id"] for t in spec["tasks"]] == ["a_s", "b_s"]
    assert eval_yaml({"b_s": {}, "a_s": {}}) == eval_yaml({"a_s": {}, "b_s": {}})
    listed = yaml.safe_load(eval_yaml({"a_s": {}}, framework="mteb"))
    assert list(listed) == ["name", "description", "evaluation_framework", "tasks"]
    assert eval_yaml_errors(spec) == [] and eval_yaml_errors(listed) == []
    for name in ("lm-eval", "consistency-bench", "inspect-ai"):
        with pytest.raises(ConfigError, match=f"--evaluation-framework {name}"):
            eval_yaml({"a_s": {}}, framework=name)


def test_eval_result_entries_headline_and_skips():
    from huggingface_hub import parse_eval_result_entries

    results = scored(snli_symmetric=0.375, wic_semantic=None, mrpc_semantic="absent",
                     rte_semantic=float("nan"))
    results["date"] = "2026-11-23T10:00:00Z"
    entries, skipped = eval_result_entries(results, "org/bench", dataset_revision="abc")
    assert [(e.task_id, e.value) for e in entries] == [("snli_symmetric", 0.375)]
    assert skipped == {"wic_semantic": "consistent_accuracy_cc undefined (null)",
                       "mrpc_semantic": "consistent_accuracy_cc missing",
                       "rte_semantic": "consistent_accuracy_cc not a finite number (nan)"}
    data = yaml.safe_load(eval_results_yaml(entries))
    assert data == [{"dataset": {"id": "org/bench", "task_id": "snli_symmetric",
                                 "revision": "abc"},
                     "value": 0.375, "date": "2026-11-23T10:00:00Z",
                     "notes": "consistent_accuracy_cc"}]
    [back] = parse_eval_result_entries(data)
    assert (back.dataset_id, back.task_id, back.value) == ("org/bench", "snli_symmetric", 0.375)


def test_publish_results_opens_pull_request(subs, tmp_path):
    with Hub() as hub:
        hub.add_repo("org/model", "model", {"README.md": b"# model\n"})
        proc = cli(["publish-results", "--entry", "my-model", "--model", "org/model",
                    "--dataset", "org/suites", "--setup", "plain"], hub.url, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert hub.unexpected == [] and hub.refused == []
    [commit] = hub.commits
    assert commit["pr"] == 1 and commit["type"] == "model"
    assert sorted(commit["files"]) == [PLAIN]
    assert hub.repos["org/model"]["files"] == {"README.md": b"# model\n"}  # main untouched
    data = yaml.safe_load(commit["files"][PLAIN])
    assert eval_results_errors(data) == []
    assert [(d["dataset"]["id"], d["dataset"]["task_id"], d["value"]) for d in data] == [
        ("org/suites", "rte_semantic", -0.125), ("org/suites", "snli_symmetric", 0.375)]
    assert ("POST", "/api/repos/create") not in hub.requests  # never creates a model repo
    assert "/api/models/org/model/commit/main" in hub.sent("POST")
    assert "opened pull request" in proc.stdout and "/discussions/1" in proc.stdout
    assert "left out 2 suite(s)" in proc.stdout and "wic_semantic" in proc.stdout


def test_publish_results_model_card_and_dry_run(subs, tmp_path):
    card = tmp_path / "README.md"
    card.write_text("---\nlicense: mit\n---\n# Mine\n")
    args = ["publish-results", "--entry", "my-model", "--model", "org/model",
            "--dataset", "org/suites", "--model-card", "README.md", "--setup", "chat",
            "--num-fewshot", "5", "--length-norm", "chars"]
    with Hub() as hub:
        hub.add_repo("org/model", "model")
        dry = cli([*args, "--dry-run"], hub.url, tmp_path)
        assert hub.requests == [] and dry.returncode == 0, dry.stderr
        proc = cli(args, hub.url, tmp_path)
    assert "task_id: snli_symmetric" in dry.stdout and "pull request" in dry.stdout
    assert proc.returncode == 0, proc.stderr
    assert sorted(hub.commits[0]["files"]) == [".eval_results/consistency-bench_chat-5shot-"
                                               "chars.yaml", "README.md"]
    assert hub.validated == [[]]  # the card's model-index passed the stand-in's schema
    assert card.read_text() == "---\nlicense: mit\n---\n# Mine\n"  # local file unchanged
    readme = hub.commits[0]["files"]["README.md"].decode()
    meta = yaml.safe_load(readme.split("---\n")[1])
    metrics = {r["dataset"]["config"]: r["metrics"] for r in meta["model-index"][0]["results"]}
    assert metrics["snli_symmetric"][1] == {"type": "consistent_accuracy_cc",
                                            "name": "consistent_accuracy_cc", "value": 0.375}
    assert len(metrics["mrpc_semantic"]) == 1  # no headline, main metric only


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no-model", "not found"),
        ("no-headline", "rescore"),
        ("other-files", "content_hash differs"),
        ("corrupt", "not valid JSON"),
        ("bad-entry", "expected the name of a folder"),
    ],
)
def test_publish_results_errors(subs, data, tmp_path, change, message):
    results = subs / "my-model" / "results.json"
    extra = []
    if change == "no-headline":
        results.write_text(json.dumps(scored(snli_symmetric="absent")))
    elif change == "other-files":
        body = scored(snli_symmetric=0.5)
        body["suites"]["snli_symmetric"]["content_hash"] = "0" * 64
        results.write_text(json.dumps(body))
        extra = ["--data", "data"]
    elif change == "corrupt":
        results.write_text("{not json")
    entry = "../submissions/my-model" if change == "bad-entry" else "my-model"
    with Hub() as hub:
        if change != "no-model":
            hub.add_repo("org/model", "model")
        proc = cli(["publish-results", "--entry", entry, "--model", "org/model",
                    "--dataset", "org/suites", "--setup", "plain", *extra], hub.url, tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert hub.commits == []


def test_help_shows_defaults():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for command, fragment in [("publish-suites", "(default: consistency-bench)"),
                              ("publish", "(default: leaderboard/site)"),
                              ("publish-results", "(default: submissions)")]:
        proc = subprocess.run([sys.executable, "-m", "consistency_bench", command, "--help"],
                              env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and fragment in " ".join(proc.stdout.split()), proc.stdout
        assert "--dry-run" in proc.stdout


def test_storage_refusing_an_object_names_the_file(data, tmp_path):
    with Hub(storage="refuse") as hub:
        proc = cli(["publish-suites", "--repo", "org/suites", "--data", "data"], hub.url, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "test.parquet" in proc.stderr and "HTTP 403" in proc.stderr, proc.stderr
    assert "nothing was committed" in proc.stderr and "Traceback" not in proc.stderr
    assert hub.commits == []


# -- publishing only what the leaderboard ranks (issue 22) --------------------------------

def test_publish_results_refuses_a_degenerate_entry_unless_flagged(tmp_path):
    """The majority baseline answers one label per task: degenerate on every suite it covers."""
    import shutil

    subs = tmp_path / "submissions"
    shutil.copytree(REPO / "submissions" / "majority", subs / "majority")
    results = json.loads((subs / "majority" / "results.json").read_text())
    args = ["publish-results", "--entry", "majority", "--model", "org/model", "--dataset",
            "org/suites", "--setup", "classifier", "--force"]  # its meta names no Hub model
    with Hub() as hub:
        hub.add_repo("org/model", "model")
        refused = cli(args, hub.url, tmp_path)
        assert refused.returncode == 2 and hub.commits == [], refused.stderr
        flagged = cli([*args, "--include-flagged"], hub.url, tmp_path)
    n = sum(r["consistent_accuracy_cc"] is not None for r in results["suites"].values())
    assert n == 34  # rte_symmetric and snli_symmetric have single-class originals: no score
    assert f"degenerate or incomplete on {n} suite(s)" in refused.stderr
    assert "rte_semantic: degenerate (RTE (" in refused.stderr
    assert "): near-constant predictions on the originals (100% one label))" in refused.stderr
    assert "--include-flagged" in refused.stderr and "Traceback" not in refused.stderr
    assert flagged.returncode == 0, flagged.stderr
    [commit] = hub.commits
    data = yaml.safe_load(commit["files"][".eval_results/consistency-bench_classifier.yaml"])
    assert eval_results_errors(data) == [] and len(data) == n
    assert all("; flagged degenerate (" in d["notes"] for d in data)
    assert all(d["date"] == results["provenance"]["date"] for d in data)
    assert {d["source"]["url"] for d in data} == {"https://huggingface.co/datasets/org/suites"}


def test_publish_flags_the_suites_the_committed_leaderboard_shows_as_degenerate():
    """``suite_flags`` and ``rank`` agree on every committed entry, suite by suite."""
    from consistency_bench.leaderboard.hub.eval_results import suite_flags
    from consistency_bench.leaderboard.submissions.reader import load_all

    subs = load_all(REPO / "submissions")
    board = rank([Entry(s.slug, s.results, s.meta) for s in subs])
    counts = {}
    for sub in subs:
        flags = suite_flags(sub.results, sub.slug)
        flagged = {s for s, why in flags.items() if why.startswith("degenerate")}
        shown = {s for s, cells in board.cells.items()
                 if sub.slug in cells and cells[sub.slug].degenerate}
        assert flagged == shown, (sub.slug, sorted(flagged ^ shown))
        counts[sub.slug] = len(flagged)
    assert counts["majority"] and not all(counts.values())  # not vacuous either way


def test_incomplete_entry_is_refused_and_listed_in_notes():
    results = scored(snli_symmetric=0.375)
    results["skipped"] = {"wic_semantic": "predictions cover 268 of 280 rows",
                          "mrpc_semantic": "no predictions for this suite"}
    with pytest.raises(ConfigError, match=r"on 1 suite\(s\).*wic_semantic: incomplete "
                                          r"\(predictions cover 268 of 280 rows\)"):
        eval_result_entries(results, "org/bench")
    [entry], _ = eval_result_entries(results, "org/bench", include_flagged=True,
                                     setup=Setup("plain", 3, "chars"))
    assert entry.notes == ("consistent_accuracy_cc; setup: causal LM, plain prompt, 3-shot, "
                           "length normalisation chars; entry incomplete on wic_semantic "
                           "(not published)")


def test_date_comes_from_provenance_then_meta():
    results = scored(snli_symmetric=0.375)
    [entry], _ = eval_result_entries(results, "org/bench", meta={"date": "2026-11-20"})
    assert entry.date == "2026-11-20"
    results["provenance"] = {"date": "2026-11-25T03:18:26+00:00"}
    [entry], _ = eval_result_entries(results, "org/bench", meta={"date": "2026-11-20"},
                                     source_url="https://example.org/board")
    assert entry.date == "2026-11-25T03:18:26+00:00"
    assert eval_results_errors(yaml.safe_load(eval_results_yaml([entry]))) == []


def test_two_setups_of_one_model_do_not_overwrite_each_other(subs, tmp_path):
    base = ["publish-results", "--entry", "my-model", "--model", "org/model", "--dataset",
            "org/suites"]
    with Hub() as hub:
        hub.add_repo("org/model", "model")
        for extra in (["--setup", "plain"], ["--setup", "chat", "--num-fewshot", "5"]):
            assert cli([*base, *extra], hub.url, tmp_path).returncode == 0
    paths = [next(iter(c["files"])) for c in hub.commits]
    assert paths == [PLAIN, ".eval_results/consistency-bench_chat-5shot-none.yaml"]
    notes = [yaml.safe_load(c["files"][p])[0]["notes"] for c, p in zip(hub.commits, paths,
                                                                        strict=True)]
    assert "plain prompt, 0-shot" in notes[0] and "chat template, 5-shot" in notes[1]
    with pytest.raises(ConfigError, match="a classifier setup takes neither"):
        Setup("classifier", 2)


def test_standin_applies_the_documented_schemas(tmp_path, monkeypatch):
    from huggingface_hub import CommitOperationAdd, HfApi, constants

    monkeypatch.setattr(constants, "is_offline_mode", lambda: False)  # the stand-in is local

    good = [{"dataset": {"id": "org/b", "task_id": "t"}, "value": 0.5, "date": "2026-11-25",
             "source": {"url": "https://x.org"}, "notes": "plain"}]
    assert eval_results_errors(good) == []
    bad = [{"dataset": {"id": "org/b"}, "value": "high", "date": "yesterday",
            "source": {"name": "logs"}, "evaluation_framework": "consistency-bench"}]
    errors = eval_results_errors(bad)
    for fragment in ("dataset.task_id: required", "value: 'high' is not", "date: 'yesterday'",
                     "source.url: required", "evaluation_framework: unknown field"):
        assert any(fragment in e for e in errors), (fragment, errors)
    assert eval_yaml_errors({"name": "n", "description": "d", "tasks": [{"id": "t"}],
                             "evaluation_framework": "consistency-bench"})
    assert model_index_errors({"model-index": [{"name": "m", "results": [
        {"task": {"name": "x"}, "dataset": {"type": "d", "name": "n"},
         "metrics": [{"type": "acc", "value": 1}]}]}]}) == ["model-index[0].results[0].task."
                                                             "type: required"]
    with Hub() as hub:
        hub.add_repo("org/model", "model")
        api = HfApi(endpoint=hub.url, token=TOKEN)
        with pytest.raises(Exception, match="Invalid evaluation results"):
            api.create_commit("org/model", [CommitOperationAdd(
                ".eval_results/x.yaml", yaml.safe_dump(bad).encode())], commit_message="bad",
                create_pr=True)
        with pytest.raises(ValueError, match=r"task\.type: required"):
            api.create_commit("org/model", [CommitOperationAdd(
                "README.md", b"---\nmodel-index:\n- name: m\n  results:\n  - task: {}\n"
                b"    dataset: {type: d, name: n}\n    metrics: [{type: a, value: 1}]\n---\n")],
                commit_message="bad card")
        api.create_commit("org/model", [CommitOperationAdd(
            ".eval_results/x.yaml", yaml.safe_dump(good).encode())], commit_message="good",
            create_pr=True)
    assert hub.refused and len(hub.commits) == 1


# -- publish-results checks its target (issue 23 item 5) -----------------------------------

@pytest.mark.parametrize(("meta", "force", "fragment"), [
    ("model: sentence-transformers/all-MiniLM-L6-v2\n", False,
     "was submitted for model 'sentence-transformers/all-MiniLM-L6-v2'"),
    ("license: mit\n", False, "has no 'model' in its meta.yaml"),
    ("model: sentence-transformers/all-MiniLM-L6-v2\n", True, None),
])
def test_publish_results_model_must_be_the_entrys_own(subs, tmp_path, meta, force, fragment):
    """Our fine-tune's scores must not be attached to another model's repo by a typo."""
    (subs / "my-model" / "meta.yaml").write_text(meta)
    args = ["publish-results", "--entry", "my-model", "--model", "org/model", "--dataset",
            "org/suites", "--setup", "plain", *(["--force"] if force else [])]
    with Hub() as hub:
        hub.add_repo("org/model", "model")
        proc = cli(args, hub.url, tmp_path)
    if fragment is None:
        assert proc.returncode == 0, proc.stderr
        assert len(hub.commits) == 1
    else:
        assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr
        assert "--force" in proc.stderr and "Traceback" not in proc.stderr
        assert hub.requests == []  # refused before anything is sent
