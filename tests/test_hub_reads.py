"""What ``publish-suites`` uploaded, loaded back through the stand-in Hub by the real clients.

``datasets.load_dataset("org/cb", "snli_transitive", split="test")`` and lm-eval's own task
loading run in a subprocess with ``HF_ENDPOINT`` pointing at ``tests/hub_standin.py`` and no
token (the published repo is public); every request goes to 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from consistency_bench.bench.io.manifest import read_manifest
from tests.helpers import build_suites
from tests.hub_standin import TOKEN, Hub

REPO = Path(__file__).resolve().parents[1]
SUITES = ["snli_transitive", "rte_semantic"]


@pytest.fixture(scope="module")
def built(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("hubreads") / "cb", SUITES)


def hub_env(url: str, tmp: Path, token: str | None = None) -> dict[str, str]:
    """Environment of a client process that talks only to the stand-in."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HF_") and k != "TRANSFORMERS_OFFLINE"}
    env.update(PYTHONPATH=str(REPO), HF_ENDPOINT=url, HF_HOME=str(tmp / "hf_home"),
               HF_DATASETS_CACHE=str(tmp / "datasets_cache"), HF_HUB_DISABLE_XET="1",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
    if token:
        env["HF_TOKEN"] = token
    return env


def run(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def publish(hub: Hub, built: Path, tmp: Path) -> None:
    proc = run(["-m", "consistency_bench", "publish-suites", "--repo", "org/cb", "--data",
                str(built)],
               hub_env(hub.url, tmp, TOKEN), tmp)
    assert proc.returncode == 0, proc.stderr


LOAD = """
import json, sys
import datasets, pyarrow.parquet as pq
ds = datasets.load_dataset("org/cb", sys.argv[1], split="test")
local = pq.read_table(sys.argv[2])
print(json.dumps({
    "rows": ds.num_rows,
    "same_table": ds.data.table.equals(local),
    "features": ds.features.to_dict(),
    "local_features": datasets.Features.from_arrow_schema(local.schema).to_dict(),
    "first_id": ds[0]["id"],
}))
"""


def test_load_dataset_through_the_hub_gives_the_built_rows_and_features(built, tmp_path):
    manifest = read_manifest(built)
    with Hub() as hub:
        publish(hub, built, tmp_path)
        n = len(hub.requests)
        proc = run(["-c", LOAD, "snli_transitive", str(built / "snli_transitive/test.parquet")],
                   hub_env(hub.url, tmp_path), tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["rows"] == manifest["snli_transitive"]["rows"] == 12199
    assert got["same_table"] is True
    assert got["features"] == got["local_features"]
    assert got["features"]["label"] == {
        "_type": "ClassLabel", "names": manifest["snli_transitive"]["label_names"]}
    assert hub.unexpected == []
    reads = hub.requests[n:]
    # the data came from the stand-in: the card, the tree of the config's folder, the file
    assert ("GET", "/datasets/org/cb/resolve/main/README.md") in reads
    assert any(p.endswith("/snli_transitive/test.parquet") and m == "GET" for m, p in reads)
    assert not any("rte_semantic/test.parquet" in p for _, p in reads)  # only the config asked
    # the few-shot pools went up with the suites (LFS, the built bytes), and load_dataset of
    # a suite's config reads none of them
    pools = json.loads((built / "suites.json").read_text())["fewshot"]
    assert len(pools) >= 2
    published = hub.files_at("org/cb")
    for name, info in pools.items():
        assert published[info["path"]] == (built / info["path"]).read_bytes(), name
        assert info["path"] in hub.repos["org/cb"]["lfs"]
    assert not any("/fewshot/" in p for _, p in reads)


LM_EVAL = """
import json, sys
from lm_eval.tasks import TaskManager, get_task_dict
out = {}
for where in sys.argv[1:]:  # one process, one lm_eval import: the Hub task, then the local one
    name = "consistency_bench_snli_transitive"
    manager = TaskManager(include_path=where, include_defaults=False)  # not the 14 s index
    task = get_task_dict([name], manager)[name]
    docs = list(task.test_docs())
    out[where] = {"ids": [d["id"] for d in docs], "path": task.config.dataset_path,
                  "text": task.doc_to_text(docs[0])}
print(json.dumps(out))
"""


def test_lm_eval_loads_the_exported_hub_task(built, tmp_path):
    pytest.importorskip("lm_eval")
    import pyarrow.parquet as pq

    from consistency_bench.bench.lm_eval.export_tasks import export_tasks

    export_tasks(built, tmp_path / "local", ["snli_transitive"])
    with Hub() as hub:
        publish(hub, built, tmp_path)
        export = run(["-m", "consistency_bench", "export-lm-eval", "--data", str(built), "--out",
                      str(tmp_path / "tasks"), "--suites", "snli_transitive", "--hub", "org/cb"],
                     hub_env(hub.url, tmp_path), tmp_path)  # pins main's commit: a Hub read
        assert export.returncode == 0, export.stderr
        proc = run(["-c", LM_EVAL, str(tmp_path / "tasks"), str(tmp_path / "local")],
                   hub_env(hub.url, tmp_path), tmp_path)
        head = hub.repos["org/cb"]["head"]
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    got, want = out[str(tmp_path / "tasks")], out[str(tmp_path / "local")]
    assert got["path"] == "org/cb" and want["path"] == "parquet"
    task = (tmp_path / "tasks" / "consistency_bench_snli_transitive.yaml").read_text()
    assert head in task  # the published commit, loaded by lm-eval at that revision
    ids = pq.read_table(built / "snli_transitive/test.parquet", columns=["id"]).column(0)
    assert got["ids"] == ids.to_pylist() == want["ids"]
    assert got["text"] == want["text"]
    assert any(p.endswith("/snli_transitive/test.parquet") for _, p in hub.requests)


@pytest.fixture
def online(monkeypatch):
    """``huggingface_hub`` in this process may reach the stand-in (conftest sets offline)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)


def test_pull_request_cycle_with_the_real_client(online, tmp_path):
    from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    def add(path, data):
        return CommitOperationAdd(path_in_repo=path, path_or_fileobj=data)

    with Hub() as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        api.create_repo("org/lb", repo_type="dataset")
        api.create_commit("org/lb", [add("README.md", b"# board\n")], commit_message="init",
                          repo_type="dataset")
        pr = api.create_commit("org/lb", [add("requests/x/meta.yaml", b"model: x\n"),
                                          add("requests/x/predictions.jsonl.gz", b"\x1f\x8bgz")],
                               commit_message="Add x", commit_description="please",
                               repo_type="dataset", create_pr=True)
        assert pr.pr_num == 1 and pr.pr_url == f"{hub.url}/datasets/org/lb/discussions/1"
        api.create_commit("org/lb", [add("requests/x/meta.yaml", b"model: x2\n")],
                          commit_message="fix meta", repo_type="dataset", revision="refs/pr/1")
        assert hub.files_at("org/lb") == {"README.md": b"# board\n"}  # main untouched
        [found] = api.get_repo_discussions("org/lb", repo_type="dataset",
                                           discussion_type="pull_request",
                                           discussion_status="open")
        assert (found.num, found.title, found.is_pull_request) == (1, "Add x", True)
        details = api.get_discussion_details("org/lb", 1, repo_type="dataset")
        assert [e.type for e in details.events] == ["comment", "commit", "commit"]
        tree = api.list_repo_tree("org/lb", repo_type="dataset", revision="refs/pr/1",
                                  recursive=True)
        assert sorted(e.path for e in tree) == [
            "README.md", "requests", "requests/x", "requests/x/meta.yaml",
            "requests/x/predictions.jsonl.gz"]
        got = hf_hub_download("org/lb", "requests/x/meta.yaml", repo_type="dataset",
                              revision="refs/pr/1", endpoint=hub.url, cache_dir=tmp_path)
        assert Path(got).read_bytes() == b"model: x2\n"
        [info] = api.get_paths_info("org/lb", ["requests/x/predictions.jsonl.gz"],
                                    repo_type="dataset", revision="refs/pr/1")
        assert info.lfs is not None and info.size == 4
        api.comment_discussion("org/lb", 1, "looks good", repo_type="dataset")
        assert hub.comments("org/lb", 1) == ["please", "looks good"]
        # a second pull request on the same file, then main changes it: a conflict
        api.create_commit("org/lb", [add("requests/x/meta.yaml", b"model: y\n")],
                          commit_message="Add y", repo_type="dataset", create_pr=True)
        api.merge_pull_request("org/lb", 1, repo_type="dataset")
        assert hub.files_at("org/lb")["requests/x/meta.yaml"] == b"model: x2\n"
        with pytest.raises(HfHubHTTPError) as err:
            api.merge_pull_request("org/lb", 2, repo_type="dataset")
        assert err.value.response.status_code == 409
        assert [d.num for d in api.get_repo_discussions(
            "org/lb", repo_type="dataset", discussion_status="open")] == [2]
        assert api.get_discussion_details("org/lb", 1, repo_type="dataset").status == "merged"
        main = api.dataset_info("org/lb")
        assert main.sha == hub.repos["org/lb"]["head"]
        assert sorted(s.rfilename for s in main.siblings) == [
            "README.md", "requests/x/meta.yaml", "requests/x/predictions.jsonl.gz"]
    assert hub.unexpected == []
