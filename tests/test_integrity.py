"""Issue 19: follow no symlink, verify stored results, never destroy what the user did not create.

Every test here failed on the code before the fix (checked against main 8a86d95). Stored
results are verified with the real scorers on four BECEL suites built from the mirror.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from consistency_bench.cli import main
from tests import test_bad_input as bad
from tests.helpers import ROOT, write_predictions

D = ("--data", "data")


@pytest.fixture(scope="session")
def small(becel_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four small BECEL suites in their own built folder."""
    return bad._subset(becel_folder, tmp_path_factory.mktemp("integrity") / "data", bad.SMALL)


@pytest.fixture
def work(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``data/`` (four built suites), ``p.jsonl`` (RTE + WiC), ``meta.yaml``; the cwd."""
    shutil.copytree(small, tmp_path / "data")
    write_predictions(tmp_path / "data", tmp_path / "p.jsonl", ["rte_semantic", "wic_semantic"])
    (tmp_path / "meta.yaml").write_text(bad.META)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _board(site: Path) -> list[str]:
    return sorted(json.loads((site / "leaderboard.json").read_text())["meta"])


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


# --------------------------------------------------------------------------- symlinks


def test_symlinked_results_json_is_never_uploaded(work, capsys):
    from consistency_bench.leaderboard.publish.plans import plan_leaderboard

    bad.stored(work, ("alpha", "beta"))
    token = work / "token.txt"
    token.write_text("hf_SECRET")
    (work / "subs/beta/results.json").unlink()
    (work / "subs/beta/results.json").symlink_to(token)
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")
    assert code == 0 and "beta/results.json: is a symbolic link" in err
    assert _board(work / "site") == ["alpha"]
    plan = plan_leaderboard(work / "site", work / "subs", "org/board")
    assert "submissions/beta/results.json" not in plan.files
    assert all(not isinstance(p, Path) or p.resolve() != token for p in plan.files.values())


def test_symlinked_entry_is_neither_ranked_nor_written_through(work, capsys):
    bad.stored(work, ("alpha",))
    outside = work / "outside"
    shutil.copytree(work / "subs/alpha", outside)
    results = outside / "results.json"
    stale = json.loads(results.read_text())
    stale["suites"]["rte_semantic"]["version"] = "0.0.1"  # rescore would rewrite it
    results.write_text(json.dumps(stale))
    before = results.read_bytes()
    (work / "subs/evil").symlink_to(outside)
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")
    assert code == 0 and "subs/evil: is a symbolic link" in err
    assert _board(work / "site") == ["alpha"]
    code, err = _run(capsys, "rescore", *D, "--submissions", "subs")
    assert code == 2 and "subs/evil: is a symbolic link" in err
    assert results.read_bytes() == before


def test_publish_refuses_a_symlink_in_the_site(work, capsys):
    bad.site(work)
    (work / "token.txt").write_text("hf_SECRET")
    (work / "site/notes.txt").symlink_to(work / "token.txt")
    code, err = _run(capsys, "publish", "--repo", "org/b", "--site", "site", "--submissions",
                     "subs", "--dry-run")
    assert code == 2 and "site/notes.txt: is a symbolic link" in err


def test_publish_refuses_a_site_of_other_submissions(work, capsys):
    bad.site(work)
    shutil.copytree(work / "subs", work / "subs2")
    results = work / "subs2/alpha/results.json"
    edited = json.loads(results.read_text())
    edited["notes"] = "another run"
    results.write_text(json.dumps(edited))
    code, err = _run(capsys, "publish", "--repo", "org/b", "--site", "site", "--submissions",
                     "subs2", "--dry-run")
    assert code == 2 and "rendered from other submissions" in err
    assert "alpha/results.json" in err
    code, _ = _run(capsys, "publish", "--repo", "org/b", "--site", "site", "--submissions",
                   "subs", "--dry-run")
    assert code == 0


def test_publish_never_sends_a_symlinked_predictions_file(work, capsys):
    """``publish`` adds each entry's predictions.jsonl.gz (issue 23): a link there, made after
    the site was rendered, sent the bytes it points to (a token) to the dataset repo."""
    bad.site(work)
    token = work / "token.txt"
    token.write_text("hf_SECRET")
    gz = work / "subs/alpha/predictions.jsonl.gz"
    gz.unlink()
    gz.symlink_to(token)
    code, err = _run(capsys, "publish", "--repo", "org/b", "--site", "site", "--submissions",
                     "subs", "--dry-run")
    assert code == 2 and "alpha/predictions.jsonl.gz: is a symbolic link" in err, err
    assert "Nothing was sent" in err


def test_publish_sends_only_the_files_leaderboard_wrote(work, capsys):
    """leaderboard keeps a user's files in its folder; publish (and --space) sent them to the
    public repos too."""
    from consistency_bench.leaderboard.publish.plans import plan_leaderboard
    from consistency_bench.leaderboard.space import plan_space

    bad.site(work)
    (work / "site/thesis.tex").write_text("unpublished draft")
    (work / "site/drafts").mkdir()
    (work / "site/drafts/notes.md").write_text("private")
    for plan in (plan_leaderboard(work / "site", work / "subs", "org/b"),
                 plan_space(work / "site", "org/page", "org/b")):
        assert "index.html" in plan.files
        assert not {"thesis.tex", "drafts/notes.md"} & set(plan.files), sorted(plan.files)
    assert "not sent, not written by `consistency-bench leaderboard`: drafts/notes.md, " \
        "thesis.tex" in capsys.readouterr().err


# --------------------------------------------------------------------------- stored results


def _edit(path: Path, suite: str, **fields) -> None:
    data = json.loads(path.read_text())
    data["suites"][suite].update(fields)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("value", [float("nan"), 1e300, -50.0, "0.9", 0.99])
def test_bad_ranked_score_is_refused_without_data(work, capsys, value):
    bad.stored(work, ("alpha", "beta"))
    _edit(work / "subs/alpha/results.json", "rte_semantic", consistent_accuracy_cc=value)
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")
    assert code == 0, err
    field = "alpha/results.json: suite 'rte_semantic' field 'consistent_accuracy_cc'"
    assert field in err and "entry skipped" in err
    assert _board(work / "site") == ["beta"]
    code, err = _run(capsys, "publish-results", "--entry", "alpha", "--model", "org/m",
                     "--dataset", "org/d", "--submissions", "subs", "--setup", "plain",
                     "--dry-run")
    assert code == 2 and field in err  # nor is it sent to a model repo


def test_a_perfect_entry_is_ranked(work, capsys):
    """The scorer's means of a perfect sst2_semantic file round to 1.0000000000000002; the
    value checks skipped this honest entry as out of [0, 1] (with and without --data)."""
    write_predictions(work / "data", work / "o.jsonl", ["sst2_semantic"])
    assert main(["submit", "o.jsonl", "--name", "oracle", "--meta", "meta.yaml", *D,
                 "--submissions", "subs"]) == 0
    res = json.loads((work / "subs/oracle/results.json").read_text())["suites"]["sst2_semantic"]
    assert res["consistent_accuracy"] > 1.0  # the rounding this test is about
    for extra in ((), D):
        code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site", *extra)
        assert code == 0 and "skipped" not in err, err
        assert _board(work / "site") == ["oracle"]


def test_a_lone_surrogate_in_a_stored_meta_skips_that_entry(work, capsys):
    """submit stored ``model: "a\\ud800"``; leaderboard then died encoding the page (a
    traceback, no board for anyone)."""
    bad.stored(work, ("alpha", "beta"))
    meta = work / "subs/beta/meta.yaml"
    meta.write_text(meta.read_text().replace("model: toy", 'model: "a\\ud800"'))
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")
    assert code == 0 and "beta/meta.yaml: field 'model'" in err and "not valid Unicode" in err
    assert _board(work / "site") == ["alpha"]


def test_hand_edited_score_is_refused_with_data(work, capsys):
    """cc 0.99 with a matching consistent accuracy passes the value checks; --data catches it."""
    bad.stored(work, ("alpha", "beta"))
    path = work / "subs/alpha/results.json"
    chance = json.loads(path.read_text())["suites"]["rte_semantic"]["consistent_accuracy_chance"]
    _edit(path, "rte_semantic", consistent_accuracy_cc=0.99,
          consistent_accuracy=0.99 * (1 - chance) + chance)
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")
    assert code == 0 and _board(work / "site") == ["alpha", "beta"]  # values alone look fine
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site2", *D)
    assert code == 0, err
    assert "entry 'alpha'" in err and "consistent_accuracy_cc stored 0.99" in err
    assert "not ranked" in err
    assert _board(work / "site2") == ["beta"]


def test_changed_predictions_are_refused_with_data(work, capsys):
    bad.stored(work, ("alpha", "beta"))
    gz = work / "subs/alpha/predictions.jsonl.gz"
    lines = gzip.decompress(gz.read_bytes()).decode().splitlines()
    first = json.loads(lines[0])
    first["label"] = 1 - first["label"] if isinstance(first["label"], int) else 0
    lines[0] = json.dumps(first)
    gz.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site", *D)
    assert code == 0, err
    assert "entry 'alpha'" in err and "predictions.jsonl.gz has sha256" in err
    assert _board(work / "site") == ["beta"]


def test_verified_entries_are_ranked_with_data(work, capsys):
    bad.stored(work, ("alpha", "beta"))
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site", *D)
    assert code == 0 and err == ""
    assert _board(work / "site") == ["alpha", "beta"]


# --------------------------------------------------------------------------- data loss


def _specials(work: Path) -> dict[str, Path]:
    null = work / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null, in our folder
    fifo = work / "fifo"
    os.mkfifo(fifo)
    earlier = work / "earlier.json"
    earlier.write_text("{}")
    link = work / "link.json"
    link.symlink_to(earlier)
    return {"device": null, "fifo": fifo, "symlink": link}


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink"])
def test_out_is_only_a_regular_file(work, capsys, kind):
    target = _specials(work)[kind]
    mode = os.lstat(target).st_mode
    code, err = _run(capsys, "score", "p.jsonl", *D, "--out", str(target), "--n-boot", "10")
    assert (code == 2 and "not a regular file" in err) or "symbolic link" in err
    assert os.lstat(target).st_mode == mode
    assert (work / "earlier.json").read_text() == "{}"


@pytest.mark.parametrize("argv", [
    ("score", "p.jsonl", *D, "--out", "data/suites.json", "--n-boot", "10"),
    ("score", "p.jsonl", *D, "--out", "data/rte_semantic/r.json", "--n-boot", "10"),
    ("convert-becel", "b.json", "--suite", "rte_semantic", *D, "--out", "data/x.jsonl"),
    ("convert-lm-eval", "lm-out", *D, "--out", "data/x.jsonl"),
    ("baseline", "majority", *D, "--out", "data/x.jsonl", "--no-download"),
    # folders (also what `review --merge` writes): an entry or a site there is a stray folder
    # that publish-suites then refuses as "not in suites.json"
    ("submit", "p.jsonl", "--name", "e", "--meta", "meta.yaml", *D, "--submissions", "data"),
    ("submit", "p.jsonl", "--name", "e", "--meta", "meta.yaml", *D, "--submissions",
     "data/subs"),
    ("leaderboard", "--submissions", "subs", "--out", "data/site"),
    ("leaderboard", "--submissions", "subs", "--out", "data", "--overwrite"),
])
def test_no_output_inside_a_built_folder(work, capsys, argv):
    bad.becel_json(work)
    bad._lm_eval_samples(work)
    before = bad.snapshot(work / "data")
    code, err = _run(capsys, *argv)
    assert code == 2 and "inside the built suite folder" in err, err
    assert bad.snapshot(work / "data") == before


def test_leaderboard_keeps_files_it_did_not_write(work, capsys):
    bad.stored(work, ("alpha",))
    site = work / "site"
    site.mkdir()
    (site / "leaderboard.json").write_text("{}")  # an old site, before the owned record
    (site / "thesis.tex").write_text("my thesis")
    (site / "submissions/gone").mkdir(parents=True)
    (site / "submissions/gone/meta.yaml").write_text("model: gone\n")  # the old site's own
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")[0] == 0
    assert (site / "thesis.tex").read_text() == "my thesis"
    assert not (site / "submissions/gone").exists()
    bad.stored(work, ("beta",))
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")[0] == 0
    shutil.rmtree(work / "subs/beta")
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")[0] == 0
    assert sorted(p.name for p in (site / "submissions").iterdir()) == ["alpha"]
    (site / "CNAME").write_text("board.example.org\n")
    (site / ".nojekyll").write_text("")
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")[0] == 0
    assert sorted(p.name for p in site.iterdir() if not p.name.startswith(".consistency")) == [
        ".nojekyll", "CNAME", "assets", "data", "heatmap.png", "index.html",
        "leaderboard.json", "leaderboard.md", "plots", "results.parquet", "submissions",
        "thesis.tex"]


def test_leaderboard_refuses_a_foreign_folder_and_keeps_its_files_with_overwrite(work, capsys):
    bad.stored(work, ("alpha",))
    other = work / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "other")
    assert code == 2 and "--overwrite" in err
    code, _ = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "other",
                   "--overwrite")
    assert code == 0 and (other / "thesis.tex").read_text() == "mine"
    assert (other / "leaderboard.json").is_file()


def test_export_lm_eval_keeps_a_users_task(work, capsys):
    assert _run(capsys, "export-lm-eval", *D, "--out", "tasks")[0] == 0
    (work / "tasks/my_task.yaml").write_text("task: mine\n")
    code, err = _run(capsys, "export-lm-eval", *D, "--out", "tasks", "--suites", "rte_semantic")
    assert code == 0, err
    assert (work / "tasks/my_task.yaml").read_text() == "task: mine\n"
    assert not (work / "tasks/consistency_bench_wic_semantic.yaml").exists()  # ours: replaced


def test_out_a_symlink_to_an_earlier_output_is_refused(work, capsys):
    bad.site(work)
    (work / "link").symlink_to(work / "site")
    before = bad.snapshot(work / "site")
    for _ in range(2):  # and the next run is not broken by the first
        code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "link")
        assert code == 2 and "is a symbolic link" in err
    assert (work / "link").is_symlink() and bad.snapshot(work / "site") == before
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")[0] == 0


def test_rescore_does_not_put_old_scores_on_replaced_predictions(tmp_path):
    """A `submit --replace` that lands while rescore scores the old entry keeps its scores."""
    from consistency_bench.leaderboard.submissions.rescore import rescore
    from consistency_bench.leaderboard.submissions.storage import submit
    from tests.submission_helpers import fake_score_file

    (tmp_path / "meta.yaml").write_text(bad.META)
    (tmp_path / "data").mkdir()
    for name, label in (("old.jsonl", 0), ("new.jsonl", 1)):
        (tmp_path / name).write_text("".join(
            json.dumps({"id": f"toy/{i}/original", "label": label}) + "\n" for i in range(10)))

    def store(pred: str) -> None:
        submit(tmp_path / pred, name="toy", meta_path=tmp_path / "meta.yaml",
               root=tmp_path / "subs", data_dir=tmp_path / "data", replace=True,
               scorer=fake_score_file)

    store("old.jsonl")
    (tmp_path / "data" / "VERSION").write_text("2")  # rescore has something to rewrite
    raced = []

    def racing_scorer(path, data_dir, **kw):
        out = fake_score_file(path, data_dir, **kw)
        if not raced:  # the replace lands between rescore's read and its write
            raced.append(True)
            store("new.jsonl")
        return out

    rescore(tmp_path / "subs", tmp_path / "data", scorer=racing_scorer)
    entry = tmp_path / "subs" / "toy"
    new_rows = gzip.decompress((entry / "predictions.jsonl.gz").read_bytes())
    assert json.loads(new_rows.splitlines()[0])["label"] == 1
    results = json.loads((entry / "results.json").read_text())
    assert results["suites"]["toy"]["main_score"] == 0.0  # new.jsonl's score, not old's 1.0


def test_slugs_keep_information_and_refuse_a_collision(work, capsys):
    from consistency_bench.leaderboard.submissions.meta import slugify

    assert slugify("café") != slugify("cafè")
    assert slugify("café").startswith("cafe-") and slugify("Toy Model") == "toy-model"
    bad.stored(work, ("café",))
    lines = (work / "p.jsonl").read_text().splitlines(keepends=True)
    (work / "p2.jsonl").write_text("".join(lines[1:] + lines[:1]))  # not a copy (issue 27)
    code, err = _run(capsys, "submit", "p2.jsonl", "--name", "cafè", "--meta", "meta.yaml",
                     *D, "--submissions", "subs", "--replace", "--variant", "second")
    assert code == 0, err
    assert len(list(p for p in (work / "subs").iterdir() if not p.name.startswith("."))) == 2
    bad.stored(work, ("My Model",))
    before = bad.snapshot(work / "subs")
    code, err = _run(capsys, "submit", "p.jsonl", "--name", "my model", "--meta", "meta.yaml",
                     *D, "--submissions", "subs", "--replace")
    assert code == 2 and "which is the entry 'My Model'" in err
    assert bad.snapshot(work / "subs") == before
    _edit(work / "subs/my-model/results.json", "rte_semantic", version="0.0.1")
    assert _run(capsys, "rescore", *D, "--submissions", "subs")[0] == 0  # rewrites it ...
    code, err = _run(capsys, "submit", "p.jsonl", "--name", "my model", "--meta", "meta.yaml",
                     *D, "--submissions", "subs", "--replace")
    assert code == 2 and "which is the entry 'My Model'" in err  # ... keeping its name


@pytest.mark.parametrize("command", ["leaderboard", "rescore"])
def test_interrupted_replace_is_rolled_back_by_readers(work, capsys, command):
    bad.stored(work, ("alpha",))
    os.replace(work / "subs/alpha", work / "subs/.alpha.old")  # crash between the renames
    code, err = _run(capsys, "rescore", *D, "--submissions", "subs", "--dry-run")
    assert code == 0 and "'alpha' exists only as this folder" in err  # warned, not touched
    assert not (work / "subs/alpha").exists()
    argv = (["leaderboard", "--submissions", "subs", "--out", "site"] if command == "leaderboard"
            else ["rescore", *D, "--submissions", "subs"])
    code, err = _run(capsys, *argv)
    assert code == 0 and "entry 'alpha' restored from .alpha.old" in err
    assert (work / "subs/alpha/results.json").is_file()
    if command == "leaderboard":
        assert _board(work / "site") == ["alpha"]


# --------------------------------------------------------------------------- faults


def test_stale_staging_folders_are_swept_only_when_their_owner_is_dead(work, capsys):
    bad.stored(work, ("alpha",))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = work / f".site.{int(dead.stdout)}-abc123"
    alive = work / f".site.{os.getpid()}-def456"
    for folder in (stale, alive):
        folder.mkdir()
        (folder / "index.html").write_text("half")
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")[0] == 0
    assert not stale.exists() and alive.exists()


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_build_workers_die_with_their_parent(corpora, tmp_path, sig):
    out = tmp_path / "built"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "consistency_bench", "build", "--sources", str(corpora), "--out",
         str(out), "--family", "calm", "--jobs", "2", "--no-download"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    workers: list[int] = []
    deadline = time.time() + 120
    while len(workers) < 2 and time.time() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) == 2, "the pool never started"
    proc.send_signal(sig)
    proc.wait(timeout=30)
    deadline = time.time() + 15
    while any(_alive(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:  # do not leave them behind when the test fails
        os.kill(w, signal.SIGKILL)
    assert left == [], f"workers {left} outlived the build"
    staging = [p for p in tmp_path.iterdir() if p.name.startswith(".built.")]
    assert staging  # the killed build left its staging folder ...
    built = subprocess.run(
        [sys.executable, "-m", "consistency_bench", "build", "--sources", str(corpora), "--out",
         str(out), "--suites", "rte_calm", "--no-download"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".built.")]  # ... swept


# --------------------------------------------------------------------------- tracebacks


def test_leaderboard_out_dot_is_a_clean_error(work, capsys):
    bad.stored(work, ("alpha",))
    before = bad.snapshot(work)
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", ".",
                     "--overwrite")
    assert code == 2 and "is the current folder" in err
    assert bad.snapshot(work) == before


def test_train_out_dot_after_training_is_a_clean_error(work, capsys, corpora):
    (work / "training.json").write_text("{}")  # what an earlier `train --out .` left
    code, err = _run(capsys, "train", "--task", "rte", "--out", ".", "--overwrite",
                     "--device", "cpu", "--sources", str(corpora), "--no-download",
                     "--max-steps", "1", "--batch-size", "2", "--max-length", "16")
    assert code == 2 and "is the current folder" in err


# --------------------------------------------------------------------------- messages


def test_full_disk_names_the_file(work, capsys, monkeypatch):
    import consistency_bench.leaderboard.webpage.render

    bad.stored(work, ("alpha",))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a write(2): no file name

    monkeypatch.setattr(consistency_bench.leaderboard.webpage.render, "render_heatmap", full)
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site")
    assert code == 2 and "site: cannot write it (No space left on device)" in err
    monkeypatch.setattr("consistency_bench.leaderboard.submissions.storage._write_files", full)
    lines = (work / "p.jsonl").read_text().splitlines(keepends=True)
    (work / "p2.jsonl").write_text("".join(lines[1:] + lines[:1]))  # not a copy (issue 27)
    code, err = _run(capsys, "submit", "p2.jsonl", "--name", "beta", "--meta", "meta.yaml", *D,
                     "--submissions", "subs", "--variant", "second")
    assert code == 2 and "subs/beta: cannot write the entry (No space left on device)" in err
    assert not (work / "subs/beta").exists()


def test_value_checks_of_another_ranked_statistic():
    """A suite ranked on another statistic (``metrics.ranked_units``, the word-salad score of
    issue 18) is not a function of ``consistent_accuracy``: only its bounds are checked."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.leaderboard.stored import check_values

    def results(cc, ranked_units=None):
        metrics = {"ranked_units": ranked_units} if ranked_units else {}
        return {"suites": {"s": {
            "main_metric": "agreement", "higher_is_better": True, "main_score": 0.5,
            "consistent_accuracy": 0.09, "consistent_accuracy_chance": 0.5,
            "consistent_accuracy_cc": cc, "metrics": metrics}}}

    spec = {"statistic": "salad_no_signal_confidence", "n_labels": 2, "copy": True}
    check_values(results(0.02, spec), "r.json")  # not (0.09 - 0.5) / 0.5, and fine
    with pytest.raises(ConfigError, match="does not follow from consistent_accuracy"):
        check_values(results(0.02), "r.json")
    for bad_cc in (-50.0, 1e300, float("nan")):
        with pytest.raises(ConfigError, match="field 'consistent_accuracy_cc'"):
            check_values(results(bad_cc, spec), "r.json")


# --------------------------------------------------------------------------- hub reads


@pytest.mark.parametrize(("text", "reason"), [
    ('{"suites": ' + "[" * 30_000 + "]" * 30_000 + "}", "JSON nested 30001 levels deep"),
    ('{"suites": {}, "suites": {}}', "key 'suites' given twice"),
    ('{"suites": {}, "n": ' + "1" * 5000 + "}", "results.json: not valid JSON (an integer"),
    ('{"suites": {"rte_semantic": 5}}', "suite 'rte_semantic' is not an object"),
])
def test_verify_reports_a_hostile_results_json_as_unverifiable(tmp_path, text, reason):
    """``verify`` downloads results.json from the Hub: a deep one raised RecursionError (a
    traceback), a duplicate key was read silently."""
    from consistency_bench.leaderboard.hub.verify_published import verify_entry

    (tmp_path / "results.json").write_text(text)

    def scorer(*_):
        raise AssertionError("not scored")

    found = verify_entry("e", tmp_path / "results.json", tmp_path / "p.jsonl.gz", tmp_path,
                         scorer)
    assert found.status == "unverifiable" and reason in found.reason, found


def test_verify_prints_a_huge_stored_value_cut(work, capsys, monkeypatch):
    """A stored value of a published results.json is printed cut, not 5 MB on one line."""
    import consistency_bench.leaderboard.hub.verify_published as hub_verify
    from consistency_bench.leaderboard.submissions.rescore import Change

    change = Change("e", "rte_semantic", "main_score", "x" * 5_000_000, 0.5)
    monkeypatch.setattr(hub_verify, "verify_hub", lambda repo, data: (
        "f" * 40, [hub_verify.Finding("e", "differs", [change])]))
    capsys.readouterr()
    assert main(["verify", "--hub", "org/lb", *D]) == 1
    out = capsys.readouterr().out
    assert "(5,000,000 characters) -> re-scored 0.5" in out and len(out) < 1000, out[:300]


def test_review_reads_the_published_suites_json_with_bounded_depth(tmp_path):
    """``review`` downloads the suites repo's suites.json: a deep one raised RecursionError."""
    from consistency_bench.bench.errors import DataError
    from consistency_bench.leaderboard.review.loop import Reviewer

    class Api:
        def hf_hub_download(self, repo, name, *, repo_type, local_dir):
            path = Path(local_dir) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('{"suites": ' + "[" * 30_000 + "]" * 30_000 + "}")
            return str(path)

    reviewer = Reviewer.__new__(Reviewer)
    reviewer.suites_repo, reviewer.api, reviewer.workdir = "org/cb", Api(), tmp_path
    with pytest.raises(DataError, match="JSON nested 30001 levels deep"):
        reviewer.published_suites()


def test_leaderboard_with_a_missing_data_folder_stops_before_the_site(work, capsys):
    """A mistyped --data made every entry fail its check ("not ranked") and rewrote the
    site with no entry: a page wiped by a typo. It is now a clean error, the site untouched."""
    bad.stored(work, ("alpha", "beta"))
    assert _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site", *D)[0] == 0
    before = {p.name: p.read_bytes() for p in (work / "site").iterdir() if p.is_file()}
    code, err = _run(capsys, "leaderboard", "--submissions", "subs", "--out", "site",
                     "--data", "no-such-folder")
    assert code == 2 and "is not a built suite folder" in err and len(err.splitlines()) == 1
    assert {p.name: p.read_bytes() for p in (work / "site").iterdir() if p.is_file()} == before
    assert _board(work / "site") == ["alpha", "beta"]
