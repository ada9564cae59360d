import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from consistency_bench.bench.errors import BenchError, ConfigError
from consistency_bench.bench.io.write import _umask
from consistency_bench.leaderboard.submissions.meta import slugify, validate_meta
from consistency_bench.leaderboard.submissions.reader import load_all
from consistency_bench.leaderboard.submissions.rescore import rescore
from consistency_bench.leaderboard.submissions.storage import PAUSE_ENV, submit
from tests.submission_helpers import fake_score_file

REPO = Path(__file__).resolve().parents[1]
META = """model: toy-model
revision: abc123
license: apache-2.0
link: https://example.org/toy
contact: someone@example.org
parameters: 110000000
date: 2024-05-01
notes: a test entry
"""


@pytest.fixture
def env(tmp_path):
    (tmp_path / "meta.yaml").write_text(META)
    (tmp_path / "data").mkdir()
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"id": f"toy/{i}/original", "label": i % 3}) + "\n"
                            for i in range(30)))
    return tmp_path


def snapshot(root: Path) -> dict:
    """Every file under root (dot-folders included) with its sha256."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".lock"}


def do_submit(env, name="Toy Model", pred=None, meta=None, replace=False):
    return submit(pred or env / "pred.jsonl", name=name, meta_path=meta or env / "meta.yaml",
                  root=env / "subs", data_dir=env / "data", replace=replace,
                  scorer=fake_score_file)


def test_submit_layout_and_determinism(env):
    sub = do_submit(env)
    assert sub.slug == "toy-model"
    files = sorted(p.name for p in sub.path.iterdir())
    assert files == ["meta.yaml", "predictions.jsonl.gz", "results.json"]
    raw = (env / "pred.jsonl").read_bytes()
    assert gzip.decompress((sub.path / "predictions.jsonl.gz").read_bytes()) == raw
    first = snapshot(env / "subs")
    first_results = json.loads((sub.path / "results.json").read_text())
    do_submit(env, replace=True)
    again = snapshot(env / "subs")
    # gzip mtime 0: byte-identical predictions and metadata; results differ only in the date
    assert {k: v for k, v in again.items() if not k.endswith("results.json")} == {
        k: v for k, v in first.items() if not k.endswith("results.json")}
    results = json.loads((sub.path / "results.json").read_text())
    assert results["provenance"]["command"] == "submit"
    assert {**results, "provenance": None} == {**first_results, "provenance": None}
    assert results["predictions"]["sha256"] == hashlib.sha256(raw).hexdigest()
    assert oct(sub.path.stat().st_mode & 0o777) == oct(0o777 & ~_umask())
    assert results["suites"]["toy"]["content_hash"] == "hash-v1"
    assert results["predictions"]["path"] == "predictions.jsonl.gz"
    [loaded] = load_all(env / "subs")
    assert loaded.meta["model"] == "toy-model" and loaded.meta["date"] == "2024-05-01"


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", "", "   ", "a\\b", ".hidden/..", "-"])
def test_bad_names_rejected(name):
    with pytest.raises(ConfigError):
        slugify(name)


def test_slugify():
    assert slugify("BERT base (uncased)") == "bert-base-uncased"
    assert slugify("roberta-large.v2") == "roberta-large.v2"


MALFORMED_META = [
    "- a list\n",
    "model: m\n",  # missing fields
    META + "extra_field: 1\n",
    META.replace("https://example.org/toy", "not a url"),
    META.replace("2024-05-01", "yesterday"),
    META.replace("110000000", "-5"),
    META.replace("110000000", "[1, 2]"),
    "model: [unclosed\n",
]
MALFORMED_PRED = [
    "",
    "not json\n",
    '{"id": "x"}\n',
    '[1, 2, 3]\n',
]


def test_malformed_submissions_change_nothing(env):
    do_submit(env)
    before = snapshot(env / "subs")
    tried = rejected = 0
    for i, text in enumerate(MALFORMED_META):
        meta = env / f"bad{i}.yaml"
        meta.write_text(text)
        tried += 1
        with pytest.raises(BenchError):
            do_submit(env, name=f"bad-meta-{i}", meta=meta)
        rejected += 1
    for i, text in enumerate(MALFORMED_PRED):
        pred = env / f"bad{i}.jsonl"
        pred.write_text(text)
        tried += 1
        with pytest.raises(BenchError):
            do_submit(env, name=f"bad-pred-{i}", pred=pred)
        rejected += 1
    for name in ["../escape", "a/b", ""]:
        tried += 1
        with pytest.raises(ConfigError):
            do_submit(env, name=name)
        rejected += 1
    tried += 1  # existing name without --replace
    with pytest.raises(ConfigError, match="--replace"):
        do_submit(env, name="toy model")
    rejected += 1
    tried += 1  # missing prediction file
    with pytest.raises(BenchError, match="not found"):
        do_submit(env, name="ghost", pred=env / "nope.jsonl")
    rejected += 1
    assert snapshot(env / "subs") == before
    assert not (env / "escape").exists()
    print(f"\nRELIABILITY malformed: tried={tried} rejected={rejected} state unchanged")
    assert tried == rejected == 17


def test_validate_meta_messages():
    with pytest.raises(ConfigError, match=r"missing required field.*contact"):
        validate_meta({"model": "m", "revision": "r", "license": "l", "link": "https://x"})
    with pytest.raises(ConfigError, match="'date' value 'soon'"):
        validate_meta({"model": "m", "revision": "r", "license": "l", "link": "https://x",
                       "contact": "c", "date": "soon"})


def _run_helper(env, name, extra_env=None, replace=False, pred="pred.jsonl", meta="meta.yaml"):
    cmd = [sys.executable, str(REPO / "tests" / "submission_helpers.py"), str(env / pred), name,
           str(env / meta), str(env / "subs"), str(env / "data")]
    if replace:
        cmd.append("--replace")
    e = {**os.environ, "PYTHONPATH": str(REPO), **(extra_env or {})}
    return subprocess.Popen(cmd, cwd=REPO, env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


N_CONCURRENT = 8


def test_concurrent_submits_land_exactly_once(env):
    # N distinct names plus N racing on one name: distinct all land, one racer wins.
    for i in range(N_CONCURRENT):  # distinct files and models: a copy is refused (issue 27)
        (env / f"pred-{i}.jsonl").write_text("".join(
            json.dumps({"id": f"toy/{j}/original", "label": (j + (j == i) + 1) % 3}) + "\n"
            for j in range(30)))
        (env / f"meta-{i}.yaml").write_text(META.replace("toy-model", f"toy-model-{i}"))
    procs = [_run_helper(env, f"model-{i}", pred=f"pred-{i}.jsonl", meta=f"meta-{i}.yaml")
             for i in range(N_CONCURRENT)]
    procs += [_run_helper(env, "contested") for _ in range(N_CONCURRENT)]
    codes = [p.wait(timeout=120) for p in procs]
    errs = [p.stderr.read() for p in procs]
    assert codes[:N_CONCURRENT] == [0] * N_CONCURRENT, errs
    racers = codes[N_CONCURRENT:]
    racer_errs = errs[N_CONCURRENT:]
    assert racers.count(0) == 1 and racers.count(2) == N_CONCURRENT - 1, (racers, racer_errs)
    assert all("already exists" in e for c, e in zip(racers, racer_errs, strict=True) if c == 2)
    subs = load_all(env / "subs")
    assert sorted(s.slug for s in subs) == sorted(
        [f"model-{i}" for i in range(N_CONCURRENT)] + ["contested"])
    assert not list((env / "subs" / ".staging").iterdir())
    print(f"\nRELIABILITY concurrent: {2 * N_CONCURRENT} submits, {N_CONCURRENT + 1} landed, "
          f"{N_CONCURRENT - 1} rejected as taken, no leftovers")


@pytest.mark.parametrize("replace", [False, True])
def test_kill_during_submit_leaves_state_intact(env, replace):
    do_submit(env)
    before = snapshot(env / "subs")
    other = env / "other.jsonl"
    other.write_text(json.dumps({"id": "toy/0/original", "label": 0}) + "\n")
    name = "Toy Model" if replace else "newcomer"
    (env / "meta-new.yaml").write_text(META.replace("toy-model", "newcomer-model"))
    proc = _run_helper(env, name, {PAUSE_ENV: "30"}, replace=replace, pred="other.jsonl",
                       meta="meta.yaml" if replace else "meta-new.yaml")
    staging = env / "subs" / ".staging"
    deadline = time.time() + 60
    # wait until the entry is fully staged (results.json written), i.e. at the pause
    while time.time() < deadline:
        if any((d / "results.json").exists() for d in staging.iterdir()):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("submit never reached the staged state")
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    after = {k: v for k, v in snapshot(env / "subs").items() if not k.startswith(".staging")}
    assert after == before
    assert [s.slug for s in load_all(env / "subs")] == ["toy-model"]
    # the next submit sweeps the dead staging and works (the lock died with the process)
    do_submit(env, name="next-one", pred=other, meta=env / "meta-new.yaml")
    assert not list(staging.iterdir())
    assert sorted(s.slug for s in load_all(env / "subs")) == ["next-one", "toy-model"]
    print(f"\nRELIABILITY kill (replace={replace}): SIGKILL at staged pause, state intact")


def test_one_model_one_entry(env):
    """Issue 27 item 9: a copy of a stored entry's predictions, or a second entry of the same
    model, revision and setup, is refused unless ``--variant`` says what differs."""
    do_submit(env)
    before = snapshot(env / "subs")
    (env / "meta-other.yaml").write_text(META.replace("toy-model", "other-model"))
    with pytest.raises(ConfigError, match="byte-identical to those of entry 'toy-model'"):
        do_submit(env, name="copy", meta=env / "meta-other.yaml")
    with pytest.raises(ConfigError, match="byte-identical"):  # no variant lets a copy in
        submit(env / "pred.jsonl", name="copy", meta_path=env / "meta.yaml", root=env / "subs",
               data_dir=env / "data", scorer=fake_score_file, variant="5-shot")
    other = env / "other.jsonl"
    other.write_text(json.dumps({"id": "toy/0/original", "label": 1}) + "\n")
    with pytest.raises(ConfigError, match=(
            r"entry 'toy-model' already has model 'toy-model', revision 'abc123' and no run "
            r"record: one model is one entry; say what differs .* with --variant TEXT")):
        do_submit(env, name="second", pred=other)
    assert snapshot(env / "subs") == before  # nothing was stored
    sub = submit(other, name="second", meta_path=env / "meta.yaml", root=env / "subs",
                 data_dir=env / "data", scorer=fake_score_file, variant=" 5-shot, chat ")
    assert sub.meta["variant"] == "5-shot, chat"
    assert "variant: 5-shot, chat" in (sub.path / "meta.yaml").read_text()
    third = env / "third.jsonl"
    third.write_text(json.dumps({"id": "toy/0/original", "label": 2}) + "\n")
    with pytest.raises(ConfigError, match="variant '5-shot, chat'"):  # that variant is taken
        submit(third, name="third", meta_path=env / "meta.yaml", root=env / "subs",
               data_dir=env / "data", scorer=fake_score_file, variant="5-shot, CHAT")
    do_submit(env, replace=True)  # an entry is not a copy of itself
    (env / "meta-var.yaml").write_text(META + "variant: 0-shot\n")
    with pytest.raises(ConfigError, match="says variant '0-shot'; give one"):
        submit(third, name="third", meta_path=env / "meta-var.yaml", root=env / "subs",
               data_dir=env / "data", scorer=fake_score_file, variant="5-shot")
    for bad in ("", "two\nlines", "x" * 201):
        with pytest.raises(ConfigError, match="--variant"):
            submit(third, name="third", meta_path=env / "meta.yaml", root=env / "subs",
                   data_dir=env / "data", scorer=fake_score_file, variant=bad)


def test_parameters_is_an_integer_count():
    """Issue 27 item 7: "1 threshold per task" was parsed as 1; text is refused now."""
    base = {"model": "m", "revision": "r", "license": "l", "link": "https://x.org",
            "contact": "c"}
    assert validate_meta({**base, "parameters": 22714756})["parameters"] == 22714756
    assert validate_meta({**base, "parameters": 0})["parameters"] == 0
    assert "parameters" not in validate_meta(base)
    for bad in ("110M", "1 threshold per task", 1.5, -1, True):
        with pytest.raises(ConfigError, match=r"field 'parameters' value .*: expected the "
                                              r"model's parameter count as an integer"):
            validate_meta({**base, "parameters": bad}, "m.yaml")


def test_crashed_replace_rolled_back(env):
    sub = do_submit(env)
    before = snapshot(env / "subs")
    # simulate a crash between moving the old entry aside and renaming the new one in
    os.replace(sub.path, env / "subs" / ".toy-model.old")
    other = env / "other.jsonl"  # not a copy of the entry rolled back (issue 27 item 9)
    other.write_text(json.dumps({"id": "toy/0/original", "label": 0}) + "\n")
    (env / "meta-new.yaml").write_text(META.replace("toy-model", "other-model"))
    do_submit(env, name="other", pred=other, meta=env / "meta-new.yaml")
    after = {k: v for k, v in snapshot(env / "subs").items() if not k.startswith("other")}
    assert after == before


def test_rescore_reports_changes(env):
    do_submit(env)
    assert rescore(env / "subs", env / "data", scorer=fake_score_file) == []
    (env / "data" / "VERSION").write_text("2")
    changes = rescore(env / "subs", env / "data", scorer=fake_score_file, dry_run=True)
    assert {c.what for c in changes} == {"content_hash", "version"}
    assert json.loads((env / "subs/toy-model/results.json").read_text())["suites"]["toy"][
        "version"] == "1"
    changes = rescore(env / "subs", env / "data", scorer=fake_score_file)
    assert changes[0].before == "hash-v1" and changes[0].after == "hash-v2"
    assert json.loads((env / "subs/toy-model/results.json").read_text())["suites"]["toy"][
        "version"] == "2"
    assert rescore(env / "subs", env / "data", scorer=fake_score_file) == []


def test_rescore_notices_the_word_salad_ranked_units():
    """Results scored before the no-signal salad score lack metrics.ranked_units (issue 18)."""
    from consistency_bench.leaderboard.submissions.rescore import diff_results

    old = {"suites": {"snli_salad_sort": {"main_score": 0.8, "metrics": {"agreement": 0.8}}}}
    new = {"suites": {"snli_salad_sort": {"main_score": 0.8, "metrics": {
        "agreement": 0.8, "ranked_units": {"statistic": "salad_no_signal_confidence", "n_labels": 3,
                                           "copy": False}}}}}
    changes = diff_results("m", old, new)
    assert [(c.suite, c.what, c.before) for c in changes] == [
        ("snli_salad_sort", "metrics.ranked_units", None)]
    assert diff_results("m", new, new) == []
