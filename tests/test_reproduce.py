"""Run records and spot-check reproduction (issue 28 item 13), with a tiny model built here.

An entry made by ``predict`` reproduces 100%; the same file with its salad rows edited fails;
an entry whose meta.yaml names another model fails; without the weights (or without a run
record) ``reproduce`` refuses with one line and changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.bench.reproduce.compare import (
    Comparison,
    SuiteComparison,
    compare,
    label_index,
)
from consistency_bench.bench.reproduce.sample import choose_groups
from consistency_bench.bench.reproduce.thresholds import THRESHOLDS, tier_for, verdict
from consistency_bench.bench.runrecord.identity import weights_digest
from consistency_bench.bench.runrecord.schema import read_record
from consistency_bench.cli import main
from tests.helpers import build_suites
from tests.tiny_models import tiny_bert

SUITES = ["mrpc_semantic", "mrpc_salad_reverse"]
META = "model: {model}\nrevision: local\nlicense: MIT\nlink: https://example.org/tiny\n" \
       "contact: me@example.org\n"


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("repro-suites") / "cb", SUITES)


@pytest.fixture(scope="module")
def made(folder: Path, tmp_path_factory) -> Path:
    """A work folder: a tiny MRPC classifier ``tiny/`` and its predictions ``p.jsonl``."""
    import contextlib

    work = tmp_path_factory.mktemp("repro")
    tiny_bert(work / "tiny", labels=("not_equivalent", "equivalent"))
    (work / "meta.yaml").write_text(META.format(model="tiny"))
    with contextlib.chdir(work):
        assert main(["predict", "--model", "tiny", "--data", str(folder), "--out", "p.jsonl",
                     "--device", "cpu", "--no-progress", "--batch-size", "16"]) == 0
    return work


def entry_state(subs: Path) -> dict[str, str]:
    """Every file under the submissions folder with its sha256 (nothing changed: equal)."""
    return {str(p.relative_to(subs)): file_sha256(p) for p in sorted(subs.rglob("*"))
            if p.is_file()}


def submit(made: Path, folder: Path, pred: str, name: str, meta: str = "meta.yaml",
           *extra: str) -> int:
    return main(["submit", pred, "--name", name, "--meta", meta, "--data", str(folder),
                 "--submissions", "subs", *extra])


def altered_copy(made: Path, name: str, row: int) -> bytes:
    """``p.jsonl`` with row ``row``'s answer flipped, written as ``name``: not a byte copy.

    A byte-identical copy of an entry's predictions is refused whatever it is called (issue
    27 item 9); the tests that need another entry of the same run flip one row each.
    """
    rows = [json.loads(line) for line in (made / "p.jsonl").read_text().splitlines()]
    rows[row]["label"], rows[row]["probs"] = 1 - rows[row]["label"], rows[row]["probs"][::-1]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    (made / name).write_bytes(data)
    return data


def reproduce(folder: Path, name: str, *extra: str) -> int:
    return main(["reproduce", name, "--submissions", "subs", "--data", str(folder),
                 "--device", "cpu", *extra])


def test_predict_writes_the_run_record(made, folder):
    record = read_record(made / "p.jsonl.run.json")
    manifest = json.loads((folder / "suites.json").read_text())["suites"]
    model = record["model"]
    assert record["mode"] == "classifier" and record["api"] is None
    assert model["id"] == "tiny" and model["source"] == "local"
    assert model["commit_source"] == "weights-sha256"
    assert model["commit"] == model["weights_sha256"] == weights_digest(made / "tiny")[0]
    assert record["predictions"] == {"file": "p.jsonl", "sha256": file_sha256(made / "p.jsonl"),
                                     "rows": sum(manifest[s]["rows"] for s in SUITES),
                                     "sampled": False}
    assert sorted((s["name"], s["sha256"]) for s in record["suites"]) == [
        (s, manifest[s]["sha256"]) for s in sorted(SUITES)]
    settings = record["settings"]
    assert settings["max_length"] == 512 and settings["dtype"] is None
    assert settings["weights_dtype"] == "float32" and settings["num_fewshot"] == 0
    assert len(settings["prompts_sha256"]) == 64
    assert record["device"]["type"] == "cpu" and record["device"]["precision"] == "float32"
    assert record["packages"]["torch"] and record["run"]["shard"] is None


def test_entry_made_by_predict_reproduces_fully(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    assert submit(made, folder, "p.jsonl", "tiny") == 0
    assert "with its run record" in capsys.readouterr().out
    stored = json.loads((made / "subs/tiny/run.json").read_text())
    assert stored == json.loads((made / "p.jsonl.run.json").read_text())
    assert reproduce(folder, "tiny") == 0
    out = capsys.readouterr().out
    assert "tiny: passed:" in out and "label agreement 100.00%" in out
    report = json.loads((made / "subs/tiny/reproduction.json").read_text())
    assert report["status"] == "passed" and report["label_agreement"] == 1.0
    assert report["max_prob_diff"] <= 2e-6 and report["groups"] == 2 * 32
    assert report["model"]["matched_by"] == "weights-sha256"
    assert report["threshold"]["tier"] == "float32" and report["precision"] == "float32"
    assert main(["leaderboard", "--submissions", "subs", "--out", "site"]) == 0
    board = json.loads((made / "site/leaderboard.json").read_text())
    shown = board["meta"]["tiny"]["reproduced"]
    assert shown["status"] == "passed" and shown["rows"] == report["rows"]
    assert board["meta"]["tiny"]["setup"]["mode"] == "classifier"
    assert all(r["reproduced"] == shown for v in board["views"].values() for r in v["rows"])
    assert "| ✓ 100.0% |" in (made / "site/leaderboard.md").read_text()


def test_edited_salad_rows_fail(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    rows = [json.loads(line) for line in (made / "p.jsonl").read_text().splitlines()]
    for row in rows:
        if "_salad_" in row["id"]:
            row["label"], row["probs"] = 1 - row["label"], row["probs"][::-1]
    edited = "".join(json.dumps(r) + "\n" for r in rows).encode()
    (made / "edited.jsonl").write_bytes(edited)
    record = json.loads((made / "p.jsonl.run.json").read_text())
    record["predictions"]["sha256"] = hashlib.sha256(edited).hexdigest()  # as a forger would
    (made / "edited.jsonl.run.json").write_text(json.dumps(record))
    # the same model as `tiny`: one model, one entry (issue 27 item 9) asks for a variant
    assert submit(made, folder, "edited.jsonl", "edited", "meta.yaml",
                  "--variant", "salad rows edited") == 0
    assert reproduce(folder, "edited") == 1
    assert "edited: failed:" in capsys.readouterr().out
    report = json.loads((made / "subs/edited/reproduction.json").read_text())
    assert report["status"] == "failed"
    assert report["suites"]["mrpc_salad_reverse"]["label_agreement"] == 0.0
    assert report["suites"]["mrpc_semantic"]["label_agreement"] == 1.0
    assert "mrpc_salad_reverse: label agreement 0.00%" in report["reason"]


def test_meta_naming_another_model_fails(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    (made / "other.yaml").write_text(META.format(model="other-org/other-model"))
    data = altered_copy(made, "o.jsonl", 0)
    record = json.loads((made / "p.jsonl.run.json").read_text())
    record["predictions"]["sha256"] = hashlib.sha256(data).hexdigest()
    (made / "o.jsonl.run.json").write_text(json.dumps(record))
    assert submit(made, folder, "o.jsonl", "other", "other.yaml") == 0
    assert reproduce(folder, "other") == 1
    report = json.loads((made / "subs/other/reproduction.json").read_text())
    assert report["status"] == "failed" and report["rows"] == 0  # judged before any run
    assert "meta.yaml names model 'other-org/other-model'" in report["reason"]
    assert "'tiny'" in report["reason"]


def test_refusals_are_one_line_and_change_nothing(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    altered_copy(made, "bare.jsonl", 1)  # no record beside it
    assert submit(made, folder, "bare.jsonl", "bare", "meta.yaml", "--variant", "bare") == 0
    assert "no run record: not reproducible" in capsys.readouterr().out
    if not (made / "subs/tiny").is_dir():
        assert submit(made, folder, "p.jsonl", "tiny") == 0
    (made / "subs/tiny/reproduction.json").unlink(missing_ok=True)
    tiny_bert(made / "impostor", labels=("not_equivalent", "equivalent"), seed=1)
    before = entry_state(made / "subs")
    cases = [(["bare"], "has no run.json"),
             (["tiny", "--model", "impostor"], "is not the recorded model")]
    (made / "tiny").rename(made / "away")
    try:
        cases.append((["tiny"], "which is not on this machine; pass --model PATH"))
        for args, words in cases:
            capsys.readouterr()
            assert reproduce(folder, *args) == 2, args
            err = capsys.readouterr().err
            assert words in err and err.count("\n") == 1, err
    finally:
        (made / "away").rename(made / "tiny")
    assert entry_state(made / "subs") == before
    assert reproduce(folder, "tiny", "--model", "tiny", "--groups-per-suite", "2") == 0


def test_submit_refuses_a_record_of_another_file(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    text = (made / "p.jsonl").read_text()
    (made / "changed.jsonl").write_text(text.replace('"label": 0', '"label": 1', 1))
    shutil.copy(made / "p.jsonl.run.json", made / "changed.jsonl.run.json")
    assert submit(made, folder, "changed.jsonl", "changed") == 2
    err = capsys.readouterr().err
    assert "describes another prediction file" in err and err.count("\n") == 1
    assert not (made / "subs/changed").exists()


def test_shard_parts_merge_with_their_records(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    common = ["--model", "tiny", "--data", str(folder), "--suites", "mrpc_semantic",
              "--device", "cpu", "--no-progress", "--batch-size", "16"]
    for i in (0, 1):
        assert main(["predict", *common, "--shard", f"{i}/2", "--out", f"part{i}.jsonl"]) == 0
    part = read_record(made / "part1.jsonl.run.json")
    assert part["run"]["shard"] == [1, 2] and part["predictions"]["rows"] > 0
    assert main(["merge-predictions", "part0.jsonl", "part1.jsonl", "--data", str(folder),
                 "--out", "m.jsonl"]) == 0
    merged = read_record(made / "m.jsonl.run.json")
    assert merged["predictions"]["sha256"] == file_sha256(made / "m.jsonl")
    assert merged["run"]["shard"] is None
    assert [p["shard"] for p in merged["run"]["parts"]] == [[0, 2], [1, 2]]
    assert merged["model"] == part["model"] and merged["settings"] == part["settings"]
    tampered = dict(part, model={**part["model"], "weights_sha256": "0" * 64})
    (made / "part1.jsonl.run.json").write_text(json.dumps(tampered))
    (made / "m.jsonl").unlink()
    capsys.readouterr()
    assert main(["merge-predictions", "part0.jsonl", "part1.jsonl", "--data", str(folder),
                 "--out", "m.jsonl"]) == 2
    assert "not a part of the same run" in capsys.readouterr().err
    assert not (made / "m.jsonl").exists()


def test_baseline_recipe_reproduces_exactly(folder, corpora, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["baseline", "tfidf-lr", "--data", str(folder), "--sources", str(corpora),
                 "--no-download", "--out", "b.jsonl"]) == 0
    record = read_record(tmp_path / "b.jsonl.run.json")
    assert record["mode"] == "baseline" and record["model"]["id"] == "baseline:tfidf-lr"
    assert record["model"]["name"] == "TF-IDF + logistic regression"
    assert "becel/mrpc/train.tsv" in record["settings"]["sources"]
    (tmp_path / "m.yaml").write_text(META.format(model="TF-IDF + logistic regression"))
    assert main(["submit", "b.jsonl", "--name", "tfidf", "--meta", "m.yaml", "--data",
                 str(folder), "--submissions", "subs"]) == 0
    assert reproduce(folder, "tfidf", "--sources", str(corpora)) == 0
    report = json.loads((tmp_path / "subs/tfidf/reproduction.json").read_text())
    assert report["threshold"]["tier"] == "exact" and report["max_prob_diff"] == 0.0
    assert report["label_agreement"] == 1.0 and report["model"]["code_matches"]


def test_sample_is_seeded_and_independent_of_order():
    groups = [f"s/g{i:03d}" for i in range(200)]
    first = choose_groups(groups, 32, seed=0)
    assert first == choose_groups(list(reversed(groups)) + groups[:5], 32, seed=0)
    assert choose_groups(groups, 8, seed=0) == first[:8]  # a larger sample extends it
    assert choose_groups(groups, 32, seed=1) != first
    assert len(first) == 32 and len(set(first)) == 32
    assert sorted(choose_groups(groups[:3], 32, seed=0)) == groups[:3]  # fewer: all of them


def test_labels_compare_as_the_scorer_reads_them():
    names = ["not_equivalent", "equivalent"]
    assert label_index("NOT EQUIVALENT", names) == 0 and label_index("1", names) == 1
    assert label_index(1.0, names) == 1 and label_index("maybe", names) == "maybe"
    rows = {"s": frozenset({"s/a", "s/b"})}
    found = compare({"s/a": {"label": 0, "probs": [0.7, 0.3]}, "s/b": {"label": "equivalent"}},
                    {"s/a": {"label": "not_equivalent", "probs": [0.6999, 0.3001]},
                     "s/b": {"label": 1, "probs": [0.2, 0.8]}}, rows, {"s": 2}, {"s": names})
    suite = found.suites["s"]
    assert suite.agree == 2 and suite.missing_probs == 1
    assert found.max_prob_diff == pytest.approx(1e-4)


def test_thresholds_by_precision():
    def comparison(agree: int, diff: float) -> Comparison:
        return Comparison({"s": SuiteComparison("s", 50, rows=100, agree=agree, prob_rows=100,
                                                max_prob_diff=diff)})

    f32, bf16 = ({"mode": "classifier", "device": {"precision": p}}
                 for p in ("float32", "bfloat16"))
    assert tier_for(f32, f32) is THRESHOLDS["float32"]
    assert tier_for(f32, bf16) is THRESHOLDS["reduced"]
    assert tier_for({"mode": "baseline"}, {"mode": "baseline"}) is THRESHOLDS["exact"]
    assert verdict(comparison(100, 1e-5), THRESHOLDS["float32"]) == (True, "")
    ok, why = verdict(comparison(98, 1e-5), THRESHOLDS["float32"])
    assert not ok and "label agreement 98.00% < 99%" in why
    assert verdict(comparison(98, 0.03), THRESHOLDS["reduced"])[0]
    assert not verdict(comparison(100, 0.01), THRESHOLDS["float32"])[0]


HUB_SCRIPT = r'''
import contextlib, json, sys
from pathlib import Path
from tests.tiny_models import tiny_bert
from consistency_bench.cli import main
from consistency_bench.bench.runrecord.identity import identify
from consistency_bench.bench.modeling.loading import inspect_model

cache, work, data, commit = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
repo = cache / "models--org--tiny"
snapshot = tiny_bert(repo / "snapshots" / commit, labels=("not_equivalent", "equivalent"))
(repo / "refs").mkdir()
(repo / "refs" / "main").write_text(commit)
with contextlib.chdir(work):
    Path("meta.yaml").write_text("model: org/tiny\nrevision: " + commit[:12] + "\nlicense: MIT\n"
                                 "link: https://example.org/t\ncontact: me\n")
    codes = [main(["predict", "--model", "org/tiny", "--data", data, "--suites", "mrpc_semantic",
                   "--out", "h.jsonl", "--device", "cpu", "--no-progress"]),
             main(["submit", "h.jsonl", "--name", "hub", "--meta", "meta.yaml", "--data", data,
                   "--submissions", "subs"]),
             main(["reproduce", "hub", "--submissions", "subs", "--data", data, "--device", "cpu",
                   "--groups-per-suite", "4"])]
    report = json.loads(Path("subs/hub/reproduction.json").read_text())
    codes.append(main(["reproduce", "hub", "--submissions", "subs", "--data", data, "--device",
                       "cpu", "--groups-per-suite", "4", "--model", str(snapshot)]))
    again = json.loads(Path("subs/hub/reproduction.json").read_text())
    record = json.loads(Path("h.jsonl.run.json").read_text())
local = identify(str(snapshot), inspect_model(str(snapshot)).config)
print(json.dumps({"codes": codes, "model": record["model"], "check": report["model"],
                  "local_copy": again["model"], "snapshot": local}))
'''


def test_hub_model_is_recorded_at_its_commit_and_reproduced(folder, tmp_path):
    from tests.helpers import python_stdout

    commit = "0123456789abcdef0123456789abcdef01234567"
    env = {"HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    import os

    out = python_stdout(HUB_SCRIPT, str(tmp_path / "cache"), str(tmp_path), str(folder), commit,
                        env={**os.environ, **env})
    found = json.loads(out.strip().splitlines()[-1])
    assert found["codes"] == [0, 0, 0, 0]
    model = found["model"]
    assert model["source"] == "hub" and model["hub_id"] == "org/tiny"
    assert model["commit"] == commit and model["commit_source"] == "snapshot"
    assert model["weights_sha256"] and model["weights_files"] == 1
    assert found["check"]["revision"] == commit  # loaded at the recorded commit
    assert found["check"]["matched_by"] == "weights-sha256"
    assert found["local_copy"]["matched_by"] == "weights-sha256"
    snapshot = found["snapshot"]
    assert snapshot["source"] == "local" and snapshot["commit_source"] == "snapshot"
    assert (snapshot["hub_id"], snapshot["commit"]) == ("org/tiny", commit)


def test_committed_page_shows_each_entry_reproduction():
    """The committed leaderboard.json shows what each committed entry's files say."""
    from consistency_bench.leaderboard.reproduce.shown import entry_extras
    from consistency_bench.leaderboard.submissions.reader import load_all
    from tests.helpers import ROOT

    board = json.loads((ROOT / "leaderboard/site/leaderboard.json").read_text())
    for sub in load_all(ROOT / "submissions"):
        extras = entry_extras(sub.path, sub.results)
        assert board["meta"][sub.slug]["reproduced"] == extras["reproduced"], sub.slug
        assert board["meta"][sub.slug]["setup"] == extras["setup"], sub.slug
    shown = {name: (meta["reproduced"] or {}).get("status")
             for name, meta in board["meta"].items()}
    for name in ("majority", "random", "lexical-overlap", "vader", "tfidf-lr"):
        assert shown[name] == "passed", name


def test_a_pull_request_may_add_its_run_record():
    from consistency_bench.leaderboard.review.checks import Refused, request_slug

    files = ["requests/a/meta.yaml", "requests/a/predictions.jsonl.gz"]
    assert request_slug([*files, "requests/a/run.json"]) == "a"
    with pytest.raises(Refused, match="lacks"):
        request_slug(["requests/a/meta.yaml", "requests/a/run.json"])
    with pytest.raises(Refused, match=r"is not requests/<name>/meta\.yaml"):
        request_slug([*files, "requests/a/reproduction.json"])  # only the maintainers write it


def test_parts_without_every_record_merge_without_one(made, folder, monkeypatch, capsys):
    monkeypatch.chdir(made)
    common = ["--model", "tiny", "--data", str(folder), "--suites", "mrpc_semantic",
              "--device", "cpu", "--no-progress", "--batch-size", "16"]
    for i in (0, 1):
        assert main(["predict", *common, "--shard", f"{i}/2", "--out", f"q{i}.jsonl"]) == 0
    (made / "q1.jsonl.run.json").unlink()
    capsys.readouterr()
    assert main(["merge-predictions", "q0.jsonl", "q1.jsonl", "--data", str(folder),
                 "--out", "qm.jsonl"]) == 0
    assert "not every part has a run record, so none was written" in capsys.readouterr().out
    assert (made / "qm.jsonl").is_file() and not (made / "qm.jsonl.run.json").exists()


def test_a_served_run_record_is_valid_and_never_run_again(made, folder, monkeypatch, capsys):
    """Issue 30's records (mode generate, an api block) validate, and reproduce refuses them."""
    from consistency_bench.bench.runrecord.schema import new_record, write_record

    monkeypatch.chdir(made)
    altered_copy(made, "s.jsonl", 2)
    record = new_record(mode="generate", model={"id": "org/chat", "source": "api"},
                        settings={"mode": "generate"}, suites=read_record(
                            made / "p.jsonl.run.json")["suites"], predictions="s.jsonl",
                        rows=1220, device=None, packages={}, run={},
                        api={"host": "api.example.org", "served_model": "org/chat"})
    write_record(made / "s.jsonl.run.json", record)
    (made / "served.yaml").write_text(META.format(model="org/chat"))
    assert submit(made, folder, "s.jsonl", "served", "served.yaml") == 0
    capsys.readouterr()
    assert reproduce(folder, "served") == 2
    assert "made by a served model" in capsys.readouterr().err
    from consistency_bench.leaderboard.reproduce.shown import entry_extras

    shown = entry_extras(made / "subs/served", json.loads(
        (made / "subs/served/results.json").read_text()))["reproduced"]
    assert shown["status"] == "not-reproducible" and "served model" in shown["reason"]


def test_review_step_is_one_call_that_never_stops_the_loop(made, folder, monkeypatch):
    """``reproduce_step``: nothing without --reproduce or for a refused request; a run that
    stops with an unexpected error leaves the request accepted, says why in its comment."""
    import consistency_bench.leaderboard.reproduce.rerun as entry
    from consistency_bench.leaderboard.reproduce.review_step import ReproduceStep, reproduce_step
    from consistency_bench.leaderboard.reproduce.run_records import RUN
    from consistency_bench.leaderboard.review.checks import Review
    from consistency_bench.leaderboard.submissions.meta import META, PREDICTIONS

    files = {PREDICTIONS: made / "p.jsonl", META: made / "meta.yaml",
             RUN: made / "p.jsonl.run.json"}
    logged: list[str] = []
    step = ReproduceStep(folder, 2, device="cpu")
    refused = Review(3, "abc", "refused", slug="x", comment="c", files=files)
    reproduce_step(refused, step, logged.append)
    accepted = Review(4, "abc", "accepted", slug="x", comment="c", results={}, files=files)
    reproduce_step(accepted, None, logged.append)
    assert logged == [] and refused.comment == accepted.comment == "c"

    def oom(*args, **kwargs):
        raise RuntimeError("CUDA out of memory.\nTried to allocate 2 GiB")

    monkeypatch.setattr(entry, "reproduce_files", oom)
    reproduce_step(accepted, step, logged.append)
    assert accepted.verdict == "accepted" and accepted.reproduction is None
    assert logged == ["#4: not reproduced"]
    assert accepted.comment == ("c\n\n**Reproduction** (not run): the run stopped: RuntimeError: "
                                "CUDA out of memory.; the request is judged as without "
                                "--reproduce")


def test_submit_stores_a_reproduction_of_its_own_file_only(made, folder, monkeypatch):
    """``review --merge`` stores the reproduction with the entry (``submit``'s argument),
    and only one that checked this very file."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.leaderboard.reproduce.run_records import read_reproduction
    from consistency_bench.leaderboard.submissions.storage import submit as store

    monkeypatch.chdir(made)
    jsonl = hashlib.sha256((made / "p.jsonl").read_bytes()).hexdigest()
    report = {"status": "passed", "label_agreement": 1.0, "predictions_sha256": "0" * 64}
    with pytest.raises(ConfigError, match="checked another prediction file"):
        store("p.jsonl", name="withrepro", meta_path="meta.yaml", root="subs-r",
              data_dir=folder, reproduction=report)
    assert not Path("subs-r/withrepro").exists()
    store("p.jsonl", name="withrepro", meta_path="meta.yaml", root="subs-r", data_dir=folder,
          reproduction={**report, "predictions_sha256": jsonl})
    stored = read_reproduction("subs-r/withrepro")
    assert stored == {**report, "predictions_sha256": jsonl, "entry": "withrepro"}
    assert Path("subs-r/withrepro/run.json").is_file()
