"""Issue 28: hostile input to shards and merge, lm-eval conversion, submit and publish-results.

Table-driven like ``tests/test_bad_input_more.py`` (whose case folder and setups it uses:
``data/`` with four built suites, ``p.jsonl``, ``meta.yaml``): each case exits 2 with one
``error:`` line holding the fragment, no traceback, and every file under the folder unchanged.
The cases that hang without the fix run in a subprocess with a time limit; the accepted-input
tests at the end pin what is not an error (lm-eval's own text form of a log-likelihood, a line
break in ``notes``, an ``https://`` URL, parts that merge).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from consistency_bench.cli import main
from tests.helpers import ROOT
from tests.test_bad_input import META, _lm_eval_samples, _rows, snapshot, stored
from tests.test_bad_input_more import (  # noqa: F401  (fixtures)
    Case,
    case_dir,
    check_refused,
    meta,
    small_data,
)

D = ("--data", "data")
SUB = ("--submissions", "subs")
DATE = "2026-01-01T00-00-00.000000"
TASK = "consistency_bench_rte_semantic"
SAMPLES = f"lm-out/model/samples_{TASK}_{DATE}.jsonl"
RESULTS = f"lm-out/model/results_{DATE}.json"
CL = ("convert-lm-eval", "lm-out", *D, "--out", "x.jsonl")
S = ("submit", "p.jsonl", "--name", "x", "--meta", "meta.yaml", *D, *SUB)
HUB = ("submit", "p.jsonl", "--name", "x", "--meta", "meta.yaml", *D, "--hub", "org/lb",
       "--dry-run")
PR = ("publish-results", "--entry", "alpha", "--model", "org/m", "--dataset", "org/d", *SUB,
      "--setup", "plain", "--force", "--dry-run")
MP = ("merge-predictions", "p0.part", "p1.part", *D, "--out", "m.jsonl")
PREDICT = ("predict", "--model", "m", *D, "--out", "o.jsonl", "--suites", "rte_semantic")


# --------------------------------------------------------------------------- setups


def samples(change: Callable[[list[dict]], list[dict]] | None = None) -> Callable[[Path], None]:
    """lm-eval's samples of rte_semantic (``lm-out/model``), changed by ``change``."""

    def setup(tmp: Path) -> None:
        _lm_eval_samples(tmp)
        path = tmp / SAMPLES
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        if change is not None:
            rows = change(rows)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))

    return setup


def resps(line: int, value: list) -> Callable[[list[dict]], list[dict]]:
    def change(rows: list[dict]) -> list[dict]:
        rows[line - 1]["filtered_resps"] = value
        return rows

    return change


def duplicate_line(rows: list[dict]) -> list[dict]:
    return [rows[0], rows[1], rows[1], *rows[2:]]


def linked(source: str, name: str, setup: Callable[[Path], None] | None = None
           ) -> Callable[[Path], None]:
    """``name``: a hard link of ``source`` (after ``setup``)."""

    def make(tmp: Path) -> None:
        if setup:
            setup(tmp)
        os.link(tmp / source, tmp / name)

    return make


def mirror(folder: str) -> Callable[[Path], None]:
    """A source mirror at ``folder`` holding one corpus file (never read: refused first)."""

    def setup(tmp: Path) -> None:
        (tmp / folder / "becel" / "boolq").mkdir(parents=True)
        (tmp / folder / "becel" / "boolq" / "validation.tsv").write_text("a corpus\n")

    return setup


def files(texts: dict[str, str]) -> Callable[[Path], None]:
    """Files under the case folder: relative path -> text."""

    def setup(tmp: Path) -> None:
        for name, text in texts.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    return setup


def csv_in_folder(tmp: Path) -> None:
    (tmp / "g").mkdir()
    (tmp / "g" / "c.csv").write_text("premise,hypothesis,label\nA man sleeps.,A man is "
                                     "awake.,contradiction\n")


def model_folder(tmp: Path) -> None:
    (tmp / "m").mkdir()
    (tmp / "m" / "config.json").write_text('{"model_type": "bert"}')


def parts(edit: Callable[[list[list]], None] | None = None, sha: str | None = None,
          run_suites: list | None = None, count: int = 2) -> Callable[[Path], None]:
    """``p0.part`` and ``p1.part``: rte_semantic split in two, as ``predict --shard`` writes
    them (each row ``[position, record]``); ``edit`` changes the rows of the two parts."""

    def setup(tmp: Path) -> None:
        manifest = json.loads((tmp / "data" / "suites.json").read_text())["suites"]
        ids = [r["id"] for r in _rows(tmp / "data", "rte_semantic")]
        suites = run_suites or [["rte_semantic", sha or manifest["rte_semantic"]["sha256"],
                                 len(ids)]]
        rows = [[i, {"id": row_id, "label": 0, "probs": [0.75, 0.25]}]
                for i, row_id in enumerate(ids)]
        halves = [rows[: len(rows) // 2], rows[len(rows) // 2:]]
        if edit:
            edit(halves)
        for index, half in enumerate(halves):
            header = {"format": "consistency-bench-part", "version": 1,
                      "shard": [index, count],
                      "rows": len(ids), "run": {"model": "m", "suites": suites}}
            text = "\n".join([json.dumps(header), *(json.dumps(r) for r in half)]) + "\n"
            (tmp / f"p{index}.part").write_text(text)

    return setup


def row(part: int, index: int, **fields) -> Callable[[list[list]], None]:
    def edit(halves: list[list]) -> None:
        halves[part][index][1].update(fields)

    return edit


def nan_probs(halves: list[list]) -> None:
    halves[1][3][1]["probs"] = [float("nan"), 0.5]  # json.dumps writes NaN


def dup_across(halves: list[list]) -> None:
    halves[1][0][1]["id"] = halves[0][0][1]["id"]


def fifo(name: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        os.mkfifo(tmp / name)

    return setup


def replaced_by_fifo(name: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / name).unlink()
        os.mkfifo(tmp / name)

    return setup


def stored_and(setup: Callable[[Path], None]) -> Callable[[Path], None]:
    def both(tmp: Path) -> None:
        stored(tmp)
        setup(tmp)

    return both


def _meta_with(line: str) -> Callable[[Path], None]:
    return meta(META.replace("model: toy\n", "") + line + "\n")


# --------------------------------------------------------------------------- cases

CASES: dict[str, Case] = {
    # item 3: an output that is an input, by identity, also found inside input folders
    "convert_lm_eval_out_in_input_folder": Case(
        ("convert-lm-eval", "lm-out", *D, "--out", SAMPLES),
        f"is the input file {SAMPLES} (found in the input folder lm-out)", samples()),
    "convert_lm_eval_out_hard_link_of_sample": Case(
        (*CL[:-1], "copy.jsonl"), f"is the input file {SAMPLES} (found in the input folder "
        "lm-out)", linked(SAMPLES, "copy.jsonl", samples())),
    "convert_lm_eval_out_results_beside_sample": Case(
        ("convert-lm-eval", SAMPLES, *D, "--out", RESULTS), f"is the input file {RESULTS}",
        samples()),
    "predict_out_in_model_folder": Case(
        ("predict", "--model", "m", *D, "--out", "m/config.json"),
        "is the input file m/config.json (found in the input folder m)", model_folder),
    "score_out_hard_link_of_input": Case(("score", "p.jsonl", *D, "--out", "h.jsonl"),
                                         "is the input file p.jsonl", linked("p.jsonl",
                                                                              "h.jsonl")),
    "merge_out_hard_link_of_part": Case(
        (*MP[:-1], "h.part"), "is the input file p1.part", linked("p1.part", "h.part", parts())),
    # ... and output folders that are an input or hold one (replaced as a whole)
    "train_out_is_its_base_model": Case(("train", "--task", "rte", "--base", "m", "--out", "m",
                                         "--overwrite"), "--out m: is the input m",
                                        model_folder),
    "generate_out_holds_its_input": Case(
        ("generate", "--data", "g/c.csv", "--task-type", "nli", "--columns",
         "premise,hypothesis", "--labels", "entailment,neutral,contradiction", "--out", "g",
         "--overwrite"), "--out g: holds the input g/c.csv", csv_in_folder),
    "leaderboard_out_is_submissions": Case(("leaderboard", *SUB, "--out", "subs",
                                            "--overwrite"), "--out subs: is the input subs",
                                           stored_and(lambda tmp: None)),
    "export_lm_eval_out_in_data": Case(("export-lm-eval", *D, "--out", "data/tasks"),
                                       "--out data/tasks: is inside the built suite folder"),
    # ... the source mirror (--sources), a served run's label map and request cache
    "build_out_is_its_sources": Case(("build", "--sources", "src", "--no-download", "--out",
                                      "src", "--overwrite", "--suites", "boolq_semantic"),
                                     "--out src: is the input src", mirror("src")),
    "build_out_holds_its_sources": Case(("build", "--sources", "o/src", "--no-download",
                                         "--out", "o", "--overwrite", "--suites",
                                         "boolq_semantic"), "--out o: holds the input o/src",
                                        mirror("o/src")),
    "baseline_out_in_sources": Case(
        ("baseline", "majority", "--sources", "src", "--no-download", *D, "--out",
         "src/becel/boolq/validation.tsv"), "is the input file src/becel/boolq/validation.tsv "
        "(found in the input folder src)", mirror("src")),
    "served_out_is_its_label_map": Case(
        (*PREDICT[:3], "--api", "openai", "--base-url", "https://example.org/v1", *D,
         "--out", "lm.json", "--label-map", "lm.json"), "--out lm.json: is the input file "
        "lm.json", files({"lm.json": "{}"})),
    "served_out_in_its_cache": Case(
        (*PREDICT[:3], "--api", "openai", "--base-url", "https://example.org/v1", *D,
         "--out", "c/requests.sqlite3", "--cache", "c"), "is the input file "
        "c/requests.sqlite3 (found in the input folder c)",
        files({"c/requests.sqlite3": "responses"})),
    # item 4: control characters in metadata (local submit, submit --hub)
    "submit_meta_nul": Case(S, "field 'model' value 'a\\x00b': control character U+0000",
                            _meta_with('model: "a\\0b"')),
    "submit_meta_ansi": Case(S, "field 'model' value '\\x1b[31mred': control character U+001B",
                             _meta_with('model: "\\e[31mred"')),
    "submit_hub_meta_ansi": Case(HUB, "field 'model' value '\\x1b[2Jx': control character "
                                 "U+001B", _meta_with('model: "\\e[2Jx"')),
    "submit_hub_meta_nul_in_contact": Case(HUB, "field 'contact' value 'a\\x00@b'",
                                           meta(META.replace("someone@example.org",
                                                             '"a\\0@b"'))),
    "submit_meta_line_break_in_model": Case(S, "control character U+000A at character 1; "
                                            "write plain text (tab and line break only in "
                                            "notes)", _meta_with('model: "a\\nb"')),
    "submit_meta_escape_in_notes": Case(S, "field 'notes' value 'ok\\x1b[1A': control "
                                        "character U+001B", meta(META + 'notes: "ok\\e[1A"\n')),
    "submit_meta_bidi_override": Case(S, "control character U+202E",
                                      _meta_with('model: "gpt\\u202e2"')),
    "submit_meta_c1_control": Case(S, "control character U+009B",
                                   _meta_with('model: "a\\x9bb"')),
    # item 5: merge-predictions checks rows as score does
    "merge_nan_probs": Case(MP, "p1.part:5: field 'probs' value [nan, 0.5]: probabilities "
                            "must be finite", parts(nan_probs)),
    "merge_id_of_another_suite": Case(MP, "p0.part:3: field 'id' value 'wic_semantic/0': row "
                                      "1 is a row of suite rte_semantic",
                                      parts(row(0, 1, id="wic_semantic/0"))),
    "merge_unknown_id": Case(MP, "p0.part:4: field 'id' value 'rte_semantic/nope': unknown "
                             "id", parts(row(0, 2, id="rte_semantic/nope"))),
    "merge_label_out_of_range": Case(MP, "p1.part:2: field 'label' value 7",
                                     parts(row(1, 0, label=7))),
    "merge_probs_wrong_length": Case(MP, "p0.part:2: field 'probs'",
                                     parts(row(0, 0, probs=[0.2, 0.3, 0.5]))),
    "merge_duplicate_id_across_parts": Case(MP, "duplicate id (also at p0.part:2)",
                                            parts(dup_across)),
    "merge_parts_of_other_suites": Case(MP, "p0.part:1: the part was predicted on suite "
                                        "rte_semantic with sha256 000000000000...",
                                        parts(sha="0" * 64)),
    "merge_run_suites_edited": Case(MP, "field 'run.suites' value",
                                    parts(run_suites=[["rte_semantic", "x", 3]])),
    # item 6: publish-results --leaderboard-url
    "publish_results_url_javascript": Case((*PR, "--leaderboard-url", "javascript:alert(1)"),
                                           "'javascript:alert(1)': not an https:// URL"),
    "publish_results_url_newline": Case((*PR, "--leaderboard-url", "https://x\n- evil: 1"),
                                        "holds the control or space character U+000A"),
    "publish_results_url_http": Case((*PR, "--leaderboard-url", "http://example.org"),
                                     "not an https:// URL"),
    "publish_results_url_bidi": Case((*PR, "--leaderboard-url", "https://exa\u202emple.org"),
                                     "U+202E"),
    # item 7: convert-lm-eval: a log-likelihood as a string, a sample line twice
    "convert_lm_eval_ll_string": Case(CL, ".jsonl:2: field filtered_resps value ['-1.0', "
                                      "False]: not a log-likelihood",
                                      samples(resps(2, [["-1.0", False], [-2.0, False]]))),
    "convert_lm_eval_ll_text_spelling": Case(CL, ".jsonl:3: field filtered_resps value "
                                             "[' -1', 'False']", samples(resps(3, [
                                                 [" -1", "False"], ["-2.0", "False"]]))),
    "convert_lm_eval_ll_text_nan": Case(CL, ".jsonl:4: field filtered_resps value ['nan', "
                                        "'False']", samples(resps(4, [
                                            ["nan", "False"], ["-2.0", "False"]]))),
    "convert_lm_eval_ll_mixed_forms": Case(CL, ".jsonl:5: field filtered_resps mixes numbers "
                                           "and text", samples(resps(5, [
                                               ["-1.5", "False"], [-2.0, False]]))),
    "convert_lm_eval_duplicate_line": Case(CL, ".jsonl:3: field doc.id value "
                                           "'rte_semantic/", samples(duplicate_line)),
    # item 9: --shard
    "predict_shard_huge": Case((*PREDICT, "--shard", "0/99999999999999999999999"),
                               "--shard '0/99999999999999999999999': use INDEX/COUNT in "
                               "ASCII digits"),
    "predict_shard_arabic_digits": Case((*PREDICT, "--shard", "١/٢"), "--shard '١/٢'"),
    "predict_shard_space": Case((*PREDICT, "--shard", " 0/2"), "--shard ' 0/2'"),
    "predict_shard_above_bound": Case((*PREDICT, "--shard", "0/4097"), "<= 4096"),
    "predict_shard_leading_zero": Case((*PREDICT, "--shard", "01/2"), "--shard '01/2'"),
    "merge_part_count_above_bound": Case(MP, "expected [i, n] with 0 <= i < n <= 4096",
                                         parts(count=5000)),
    # messages
    "submit_meta_fifo": Case(("submit", "p.jsonl", "--name", "x", "--meta", "pipe.yaml", *D,
                              *SUB), "pipe.yaml: metadata file: is a FIFO (named pipe), not a "
                             "regular file", fifo("pipe.yaml")),
    "submit_meta_dev_zero": Case(("submit", "p.jsonl", "--name", "x", "--meta", "/dev/zero",
                                  *D, *SUB), "/dev/zero: metadata file: is a device, not a "
                                 "regular file"),
    "submit_hub_meta_dev_zero": Case((*HUB[:5], "/dev/zero", *HUB[6:]),
                                     "/dev/zero: metadata file: is a device"),
    "publish_results_card_fifo": Case((*PR, "--model-card", "card.md"), "--model-card "
                                      "card.md: is a FIFO (named pipe), not a regular file",
                                      stored_and(fifo("card.md"))),
    "publish_results_card_dev_zero": Case((*PR, "--model-card", "/dev/zero"), "--model-card "
                                          "/dev/zero: is a device, not a regular file",
                                          stored_and(lambda tmp: None)),
    "rescore_entry_meta_fifo": Case(("rescore", *SUB, *D), "subs/alpha/meta.yaml: is a FIFO "
                                    "(named pipe), not a regular file",
                                    stored_and(replaced_by_fifo("subs/alpha/meta.yaml"))),
    "merge_given_twice_both_spellings": Case(
        ("merge-predictions", "p0.part", "./p0.part", "p1.part", *D, "--out", "m.jsonl"),
        "part 0/2 given twice: p0.part and ./p0.part", parts()),
    "merge_out_missing_parent": Case((*MP[:-1], "nowhere/deeper/m.jsonl"),
                                     "the folder nowhere/deeper does not exist; create it",
                                     parts()),
    "score_out_missing_parent": Case(("score", "p.jsonl", *D, "--out", "nowhere/r.json"),
                                     "the folder nowhere does not exist"),
    "score_out_parent_is_a_file": Case(("score", "p.jsonl", *D, "--out", "p.jsonl/r.json"),
                                       "the folder p.jsonl is not a folder"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input(name, case_dir, capsys):  # noqa: F811
    check_refused(CASES[name], case_dir, capsys)
    assert not (case_dir / "nowhere").exists()


def test_case_counts():
    """The counts docs/errors.md reports."""
    commands = {c.argv[0] for c in CASES.values()}
    print(f"\nHOSTILE INPUT (issue 28): {len(CASES)} cases over {len(commands)} commands")
    assert len(CASES) == 56 and len(commands) == 13


# --------------------------------------------------------------------------- hangs


def _cli(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "consistency_bench", *argv], capture_output=True,
                          text=True, env=environ, cwd=folder, check=False, timeout=30)


def test_a_fifo_found_in_a_samples_folder_is_refused_not_read(case_dir):  # noqa: F811
    """Item 10: ``convert-lm-eval DIR`` opened a FIFO named samples_*.jsonl and blocked (its
    results file beside it, with the right hashes: nothing stopped the read before)."""
    samples()(case_dir)
    (case_dir / SAMPLES).unlink()
    os.mkfifo(case_dir / SAMPLES)
    before = snapshot(case_dir)
    done = _cli(case_dir, *CL)  # blocked until the 30 s limit before the fix
    assert done.returncode == 2, done.stderr
    assert f"{SAMPLES}: is a FIFO (named pipe), not a regular file" in done.stderr
    assert done.stderr.count("\n") == 1 and snapshot(case_dir) == before


def test_a_fifo_as_results_file_is_refused_not_read(case_dir):  # noqa: F811
    samples()(case_dir)
    (case_dir / RESULTS).unlink()
    os.mkfifo(case_dir / RESULTS)
    done = _cli(case_dir, *CL)
    assert done.returncode == 2 and "is a FIFO (named pipe), not a regular file" in done.stderr


# --------------------------------------------------------------------------- accepted


def test_lm_eval_text_form_is_read_as_lm_eval_writes_it(case_dir, capsys):  # noqa: F811
    """lm-eval 0.4 writes every response as text (``utils.sanitize_list``): still read."""
    from lm_eval.utils import sanitize_list

    def as_lm_eval(rows: list[dict]) -> list[dict]:
        for r in rows:
            r["filtered_resps"] = sanitize_list([(-1.25, False), (-2.5, True)])
        return rows

    samples()(case_dir)
    assert main(list(CL)) == 0
    numbers = (case_dir / "x.jsonl").read_bytes()
    (case_dir / "x.jsonl").unlink()
    path = case_dir / SAMPLES
    rows = as_lm_eval([json.loads(x) for x in path.read_text().splitlines()])
    assert json.loads(json.dumps(rows[0]["filtered_resps"])) == [["-1.25", "False"],
                                                                  ["-2.5", "True"]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(list(CL)) == 0, capsys.readouterr().err
    text = (case_dir / "x.jsonl").read_bytes()
    first = json.loads(text.splitlines()[0])
    assert first["label"] == 0 and first["probs"] == [0.777300, 0.222700]
    assert len(text.splitlines()) == len(numbers.splitlines())


def test_notes_keep_line_breaks_and_tabs(case_dir, capsys):  # noqa: F811
    (case_dir / "meta.yaml").write_text(META + 'notes: "line one\n\tline two"\n')
    assert main(list(S)) == 0, capsys.readouterr().err
    stored_meta = (case_dir / "subs" / "x" / "meta.yaml").read_text()
    assert "line one" in stored_meta and "line two" in stored_meta


def test_valid_parts_merge_to_the_rows_in_order(case_dir, capsys):  # noqa: F811
    parts()(case_dir)
    assert main(list(MP)) == 0, capsys.readouterr().err
    lines = (case_dir / "m.jsonl").read_text().splitlines()
    ids = [r["id"] for r in _rows(case_dir / "data", "rte_semantic")]
    assert [json.loads(x)["id"] for x in lines] == ids
    assert json.loads(lines[0]) == {"id": ids[0], "label": 0, "probs": [0.75, 0.25]}
    assert main(["score", "m.jsonl", *D]) == 0  # what merge accepts, score accepts


@pytest.mark.parametrize("url", ["https://huggingface.co/spaces/org/lb",
                                 "https://example.org/board?view=task#rte"])
def test_https_urls_pass(url):
    from consistency_bench.leaderboard.publish.steps import check_url

    assert check_url(url, "--leaderboard-url") == url


@pytest.mark.parametrize("text", ["0/1", "0/2", "1/2", "4095/4096"])
def test_shards_in_ascii_digits_pass(text):
    from consistency_bench.bench.runner.distributed import Shard, parse_shard

    i, n = map(int, text.split("/"))
    assert parse_shard(text) == Shard(i, n)


# --------------------------------------------------------------------------- CSV (item 8)


CELLS = {
    "x;=1+1": '"\'x;=1+1"', "=1+1": '"\'=1+1"', "@SUM(A1)": '"\'@SUM(A1)"',
    "+cmd|' /C calc'!A0": '"\'+cmd|\' /C calc\'!A0"', "-2+3": '"\'-2+3"',
    "x, -1+1": '"\'x, -1+1"', "1;@x": '"\'1;@x"', 'x;"=1"': '"\'x;""=1"""',
    "a\tb": "a b", " =1": '"\'=1"',
    # not formulas: numbers, intervals, names, plain text (kept as they were)
    "-1.5": "-1.5", "90.0": "90.0", "[-3.0, -1.0]": '"[-3.0, -1.0]"', "gpt-2": "gpt-2",
    "a,b": '"a,b"', "a;b": '"a;b"', "plain": "plain", "–": "–",
}


@pytest.mark.skipif(not __import__("shutil").which("node"), reason="node is not installed")
def test_csv_cells_are_neutralised_by_owasps_rule():
    """The page's CSV download: ``x;=1+1`` stayed unquoted, a formula where ``;`` separates."""
    import re

    from consistency_bench.leaderboard.webpage.static import JS

    source = re.search(r"  function csvField\(text\) \{.*?\n  \}\n", JS, re.S).group(0)
    code = source + f"console.log(JSON.stringify({json.dumps(list(CELLS))}.map(csvField)));"
    done = subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert dict(zip(CELLS, json.loads(done.stdout), strict=True)) == CELLS
