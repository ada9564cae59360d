"""The ``details`` config of the leaderboard dataset repo, through the stand-in Hub (issue 31).

Two entries are submitted (real scorer) against two built suites, the site rendered, and
``publish --data`` sends them to tests/hub_standin.py; ``datasets.load_dataset(repo,
"details", split=KIND)`` in a client process (only 127.0.0.1) gives every suite row of both
entries, with answers equal to the prediction files and ``consistent`` flags whose
inconsistent groups are exactly those ``inspect`` lists. A second publish sends no details
file again (the files are byte-identical).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from consistency_bench.bench.inconsistent.inspect import InspectRequest, inspect_predictions
from tests.helpers import build_suites
from tests.hub_standin import TOKEN, Hub
from tests.test_hub_reads import hub_env

REPO = Path(__file__).resolve().parents[1]
SUITES = ["snli_negational", "rte_semantic"]


def _write(folder: Path, out: Path, flip_every: int, probs: bool) -> Path:
    """Predictions: gold, except every ``flip_every``-th group ignores the negation/flips."""
    manifest = json.loads((folder / "suites.json").read_text())["suites"]
    with open(out, "w") as handle:
        for name in SUITES:
            n = len(manifest[name]["label_names"])
            for row in pq.read_table(folder / name / "test.parquet").to_pylist():
                gold = row["label"] if row["label"] is not None else 0
                label = gold
                if row["source_row"] % flip_every == 0 and row["variant"] != "original":
                    label = 0 if row["variant"] == "negated" else (gold + 1) % n
                record = {"id": row["id"], "label": label}
                if probs:
                    record["probs"] = [0.8 if i == label else 0.2 / (n - 1) for i in range(n)]
                handle.write(json.dumps(record) + "\n")
    return out


def _cli(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "consistency_bench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def board(corpora, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("details")
    data = build_suites(corpora, root / "cb", SUITES)
    for name, every, probs in (("alpha", 3, True), ("beta", 5, False)):
        preds = _write(data, root / f"{name}.jsonl", every, probs)
        (root / f"{name}.yaml").write_text(
            f"model: org/{name}\nrevision: main\nlicense: mit\nlink: https://example.org\n"
            "contact: me@example.org\n")
        done = _cli(["submit", str(preds), "--name", name, "--meta", f"{name}.yaml", "--data",
                     "cb", "--submissions", "subs"], root)
        assert done.returncode == 0, done.stderr
    done = _cli(["leaderboard", "--data", "cb", "--submissions", "subs", "--out", "site"], root)
    assert done.returncode == 0, done.stderr
    return root


LOAD = """
import json, sys
import datasets
rows = datasets.load_dataset("org/lb", "details", split=sys.argv[1])
print(json.dumps({"columns": rows.column_names, "rows": rows.to_list()}))
"""


def _publish(hub: Hub, board: Path) -> subprocess.CompletedProcess:
    return _cli(["publish", "--repo", "org/lb", "--site", "site", "--submissions", "subs",
                 "--data", "cb"], board, hub_env(hub.url, board, TOKEN))


def test_details_load_through_the_hub_and_match_inspect(board):
    with Hub() as hub:
        done = _publish(hub, board)
        assert done.returncode == 0, done.stderr
        files = hub.files_at("org/lb")
        loaded = {}
        for split in ("negational", "semantic"):
            proc = subprocess.run([sys.executable, "-c", LOAD, split], cwd=board,
                                  env=hub_env(hub.url, board), capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, proc.stderr[-3000:]
            loaded[split] = json.loads(proc.stdout.splitlines()[-1])
        again = _publish(hub, board)
    assert again.returncode == 0, again.stderr
    card = files["README.md"].decode()
    assert "- config_name: results" in card and "- config_name: details" in card
    # datasets takes one builder for the repo from the first config: the Parquet one first
    assert card.index("config_name: details") < card.index("config_name: results") or \
        "data_files: leaderboard.json" not in card
    assert "path: details/negational/*.parquet" in card
    assert sorted(p for p in files if p.startswith("details/")) == [
        f"details/{k}/{e}.parquet" for k in ("negational", "semantic") for e in ("alpha", "beta")]
    manifest = json.loads((board / "cb" / "suites.json").read_text())["suites"]
    for split, suite in (("negational", "snli_negational"), ("semantic", "rte_semantic")):
        rows = loaded[split]["rows"]
        assert {r["entry"] for r in rows} == {"alpha", "beta"}
        for entry in ("alpha", "beta"):
            mine = [r for r in rows if r["entry"] == entry]
            assert len(mine) == manifest[suite]["rows"]  # every suite row, once
            assert all(r["suite"] == suite for r in mine)
            report = inspect_predictions(InspectRequest(
                board / "subs" / entry, board / "cb", suites=(suite,), limit=None))
            listed = {g.group for g in report.groups}
            flagged = {r["unit"] for r in mine if r["consistent"] is False}
            assert flagged == listed and listed  # the same groups as inspect, not none
            preds = {}
            for line in (board / f"{entry}.jsonl").read_text().splitlines():
                record = json.loads(line)
                preds[record["id"]] = record
            names = manifest[suite]["label_names"]
            assert all(r["prediction"] == names[preds[r["id"]]["label"]] for r in mine)
            assert all((r["probs"] is None) == (entry == "beta") for r in mine)
    # byte-identical details are not sent again: the details commit sends nothing
    assert "nothing to publish: org/lb already holds these 4 files" in again.stdout


def test_details_go_in_commits_of_at_most_files_per_commit_before_the_card(board, monkeypatch,
                                                                            tmp_path):
    from consistency_bench.leaderboard.details import publish as details
    from consistency_bench.leaderboard.publish.steps import plan_publish

    monkeypatch.setattr(details, "FILES_PER_COMMIT", 3)
    plans = plan_publish(board / "site", board / "subs", "org/lb", data=board / "cb",
                         details_dir=tmp_path)
    assert [len(p.files) for p in plans[:-1]] == [3, 1]
    assert all(set(p.files) <= {f"details/{k}/{e}.parquet" for k in ("negational", "semantic")
                                for e in ("alpha", "beta")} for p in plans[:-1])
    card = plans[-1].files["README.md"].decode()
    assert "config_name: details" in card and "split: negational" in card


def test_details_are_made_once_per_entry_and_kept_beside_the_submissions(board, monkeypatch,
                                                                         tmp_path):
    """Issue 33 item 2 at scale: ``review --merge`` republishes after every merged request;
    an entry's details are made again only when its predictions, its suite files or the code
    changed (at 500 entries, making every entry's details took about 12 min per merge). A
    kept file edited by hand is made again, never published."""
    import shutil

    from consistency_bench.bench.inconsistent import details as made
    from consistency_bench.leaderboard.details.publish import write_details
    from consistency_bench.leaderboard.details.reuse import FOLDER

    subs = tmp_path / "subs"
    shutil.copytree(board / "subs", subs, ignore=shutil.ignore_patterns(FOLDER))  # no cache
    entries = {n: (subs / n / "predictions.jsonl.gz", subs / n / "results.json")
               for n in ("alpha", "beta")}
    calls: list[str] = []
    real = made.entry_details
    monkeypatch.setattr(made, "entry_details",
                        lambda entry, *a, **k: calls.append(entry) or real(entry, *a, **k))

    def publish(name: str) -> dict[str, bytes]:
        out = tmp_path / name
        found = write_details(entries, board / "cb", out, cache_root=subs)
        return {path: file.read_bytes() for path, file in found.files.items()}

    first = publish("first")
    assert sorted(calls) == ["alpha", "beta"] and len(first) == 4
    assert sorted(p.name for p in (subs / FOLDER).glob("*.parquet")) == [
        "alpha.negational.parquet", "alpha.semantic.parquet", "beta.negational.parquet",
        "beta.semantic.parquet"]
    calls.clear()
    assert publish("second") == first and calls == []  # nothing made again
    kept = subs / FOLDER / "beta.semantic.parquet"
    kept.write_bytes(kept.read_bytes()[:-20] + b"\0" * 20)  # edited by hand
    assert publish("third") == first and calls == ["beta"]
    calls.clear()
    cold = write_details(entries, board / "cb", tmp_path / "cold")  # no cache at all
    assert {p: f.read_bytes() for p, f in cold.files.items()} == first
    assert sorted(calls) == ["alpha", "beta"]
    calls.clear()
    shutil.rmtree(subs / FOLDER)  # the cache may be deleted at any time
    assert publish("fourth") == first and sorted(calls) == ["alpha", "beta"]
