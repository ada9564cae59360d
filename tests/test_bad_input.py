"""Issue 11: every command survives bad input and faults (table-driven).

Each case is: the command line, the exit code, a fragment of the message, and the files that
must be unchanged (every file under the case's folder, the built suites included, unless the
case says otherwise). Faults are simulated portably: a full disk makes the rename of
``consistency_bench.bench.io.write`` and ``consistency_bench.bench.io.staged_folder`` fail with
ENOSPC, a read-only folder makes
their temporary-file creation fail with EACCES
(the tests run as root, where ``chmod`` stops nothing).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from consistency_bench.cli import main
from tests.helpers import ROOT, python_stdout, write_predictions

SMALL = ("rte_semantic", "wic_semantic", "sst2_semantic", "mrpc_semantic")
META = """model: toy
revision: abc
license: mit
link: https://example.org/toy
contact: someone@example.org
"""


@pytest.fixture(scope="session")
def small_folder(becel_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four small BECEL suites (RTE, WiC, SST-2, MRPC semantic) in their own built folder."""
    out = tmp_path_factory.mktemp("small") / "data"
    return _subset(becel_folder, out, SMALL)


def _subset(src: Path, out: Path, names) -> Path:
    manifest = json.loads((src / "suites.json").read_text())
    manifest["suites"] = {k: v for k, v in manifest["suites"].items() if k in names}
    out.mkdir(parents=True)
    for name in names:
        shutil.copytree(src / name, out / name)
    if (src / "fewshot").is_dir():  # the few-shot pools suites.json lists
        shutil.copytree(src / "fewshot", out / "fewshot")
    (out / "suites.json").write_text(json.dumps(manifest, indent=2))
    (out / "README.md").write_text("card\n")
    return out


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its sha256 (lock files left out)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def _rows(data: Path, suite: str) -> list[dict]:
    return pq.read_table(data / suite / "test.parquet").to_pylist()


def _jsonl(path: Path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


# --------------------------------------------------------------------------- setups


def partial(tmp: Path) -> None:
    """``partial.jsonl``: the first 10 RTE rows only."""
    _jsonl(tmp / "partial.jsonl", [{"id": r["id"], "label": 0} for r in _rows(tmp / "data",
                                                                               "rte_semantic")[:10]])


def mixed(tmp: Path) -> None:
    """``mixed.jsonl``: all of WiC, 10 rows of RTE."""
    rows = _rows(tmp / "data", "wic_semantic") + _rows(tmp / "data", "rte_semantic")[:10]
    _jsonl(tmp / "mixed.jsonl", [{"id": r["id"], "label": 0} for r in rows])


def short_probs_one(tmp: Path) -> None:
    """``probs.jsonl``: one row with ``probs: [1.0]`` on a 2-class suite, others without."""
    records = [{"id": r["id"], "label": 0} for r in _rows(tmp / "data", "rte_semantic")]
    records[3]["probs"] = [1.0]
    _jsonl(tmp / "probs.jsonl", records)


def short_probs_all(tmp: Path) -> None:
    """``probs.jsonl``: every row with ``probs: [1.0]``."""
    _jsonl(tmp / "probs.jsonl", [{"id": r["id"], "label": 0, "probs": [1.0]}
                                 for r in _rows(tmp / "data", "rte_semantic")])


def becel_json(tmp: Path) -> None:
    (tmp / "b.json").write_text('{"original_preds": [0], "paraphrase_preds": [0]}')


def bad_date(tmp: Path) -> None:
    (tmp / "meta.yaml").write_text(META + "date: 2026-13-45\n")


def latin1_meta(tmp: Path) -> None:
    (tmp / "meta.yaml").write_bytes(META.replace("toy\n", "caf\xe9\n", 1).encode("latin-1"))


def submissions_file(tmp: Path) -> None:
    (tmp / "subs").write_text("not a folder")


def stored(tmp: Path, names=("alpha",)) -> None:
    """Entries in ``subs/`` submitted with the real scorer.

    Each after the first gets its own file (the same predictions, rows rotated: other bytes,
    the same scores) and variant: a byte-identical copy of another entry, or a second entry of
    the same model without a variant, is refused (issue 27).
    """
    from consistency_bench.leaderboard.submissions.storage import submit

    lines = (tmp / "p.jsonl").read_text().splitlines(keepends=True)
    subs = tmp / "subs"
    there = sum(1 for d in subs.iterdir() if d.is_dir() and not d.name.startswith(".")) \
        if subs.is_dir() else 0
    for i, name in enumerate(names, start=there):
        pred = tmp / "p.jsonl"
        if i:
            pred = tmp / f"p-{name}.jsonl"
            pred.write_text("".join(lines[i:] + lines[:i]))
        submit(pred, name=name, meta_path=tmp / "meta.yaml", root=tmp / "subs",
               data_dir=tmp / "data", variant=f"test copy {i}" if i else None)


def stale_and_corrupt_gz(tmp: Path) -> None:
    """alpha's results are stale (rescore would rewrite them); beta's .gz is truncated."""
    stored(tmp, ("alpha", "beta"))
    results = tmp / "subs" / "alpha" / "results.json"
    data = json.loads(results.read_text())
    data["suites"]["rte_semantic"]["main_score"] = 0.5
    results.write_text(json.dumps(data))
    gz = tmp / "subs" / "beta" / "predictions.jsonl.gz"
    gz.write_bytes(gz.read_bytes()[:40])


def corrupt_results(tmp: Path) -> None:
    stored(tmp, ("alpha", "beta"))
    (tmp / "subs" / "beta" / "results.json").write_text('{"suites": {"rte_sem')


def bad_meta(tmp: Path) -> None:
    stored(tmp, ("alpha", "beta"))
    (tmp / "subs" / "beta" / "meta.yaml").write_text("model: [unclosed\n")


def site(tmp: Path) -> None:
    """One entry and its rendered site in ``site/``."""
    stored(tmp)
    assert main(["leaderboard", "--submissions", "subs", "--out", "site"]) == 0


def other_folder(tmp: Path) -> None:
    (tmp / "other").mkdir()
    (tmp / "other" / "notes.txt").write_text("mine")


def latin1_corpus(tmp: Path) -> None:
    (tmp / "c.csv").write_bytes("premise,hypothesis,label\ncaf\xe9 ok,b,entailment\n"
                                .encode("latin-1"))


def huge_field(tmp: Path) -> None:
    (tmp / "c.csv").write_text('premise,hypothesis,label\n"' + "x" * 140_000 + '",b,entailment\n')


def good_corpus(tmp: Path) -> None:
    (tmp / "c.csv").write_text("premise,hypothesis,label\nA man sleeps.,A man rests.,entailment\n")


def generated_suite(tmp: Path) -> None:
    """``data/suites.json`` already lists ``mynli_negational`` (an earlier generate)."""
    good_corpus(tmp)
    manifest = json.loads((tmp / "data" / "suites.json").read_text())
    manifest["suites"]["mynli_negational"] = {**manifest["suites"]["rte_semantic"],
                                              "family": "generated"}
    (tmp / "data" / "suites.json").write_text(json.dumps(manifest))


def rte_only(tmp: Path) -> None:
    _subset(tmp / "data", tmp / "rte", ["rte_semantic"])


def _lm_eval_samples(tmp: Path, sha256: str | None = None, rows: int | None = None) -> None:
    """``lm-out/``: lm-eval ``--log_samples`` output for rte_semantic, as lm-eval writes it."""
    date = "2026-01-01T00-00-00.000000"
    manifest = json.loads((tmp / "data" / "suites.json").read_text())["suites"]
    task = "consistency_bench_rte_semantic"
    meta = {"sha256": sha256 or manifest["rte_semantic"]["sha256"]}
    out = tmp / "lm-out" / "model"
    out.mkdir(parents=True)
    (out / f"results_{date}.json").write_text(json.dumps({"configs": {task: {"metadata": meta}}}))
    docs = _rows(tmp / "data", "rte_semantic")[:rows]  # lm-eval logs the whole row as doc
    _jsonl(out / f"samples_{task}_{date}.jsonl",
           [{"doc": d, "filtered_resps": [[-1.0, False], [-2.0, False]]} for d in docs])


def samples_other_build(tmp: Path) -> None:
    _lm_eval_samples(tmp, sha256="0" * 64)


def samples_partial(tmp: Path) -> None:
    _lm_eval_samples(tmp, rows=10)


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    """One bad input: command line (run in the case folder), exit code, message fragment.

    Attributes:
        argv: The command line; paths are relative to the case folder.
        code: Expected exit code.
        fragment: Must appear in stderr.
        setup: Prepares files in the case folder (besides ``data/``, ``p.jsonl``, ``meta.yaml``).
        fault: ``"enospc"`` (full disk) or ``"eacces"`` (read-only folder) in
        consistency_bench.bench.io.write and
            consistency_bench.bench.io.staged_folder.
        unchanged: Every file under the case folder must be unchanged (else: only the ones
            that existed, as for a leaderboard that skips a bad entry and writes its site).

    """

    argv: tuple[str, ...]
    code: int
    fragment: str
    setup: Callable[[Path], None] | None = None
    fault: str | None = None
    unchanged: bool = True


D = ("--data", "data")
G = ("generate", "--data", "c.csv", "--task-type", "nli", "--columns", "premise,hypothesis",
     "--labels", "entailment,neutral,contradiction")
T = ("train", "--task", "rte")
CASES: dict[str, Case] = {
    # score
    "score_n_boot_zero": Case(("score", "p.jsonl", *D, "--n-boot", "0"), 2, "--n-boot 0"),
    "score_n_boot_negative": Case(("score", "p.jsonl", *D, "--n-boot", "-3"), 2, "--n-boot -3"),
    "score_seed_negative": Case(("score", "p.jsonl", *D, "--seed", "-1"), 2, "--seed -1"),
    "score_out_folder": Case(("score", "p.jsonl", *D, "--out", "data"), 2, "is a folder"),
    "score_out_is_input": Case(("score", "p.jsonl", *D, "--out", "p.jsonl"), 2,
                               "is the input file"),
    "score_out_is_input_other_spelling": Case(
        ("score", "p.jsonl", *D, "--out", "nowhere/../p.jsonl"), 2, "is the input file"),
    "score_param_unknown": Case(("score", "p.jsonl", *D, "--param", "calm_thta=1"), 2,
                                "unknown key 'calm_thta'; known: calm_theta"),
    "score_param_no_value": Case(("score", "p.jsonl", *D, "--param", "calm_theta"), 2,
                                 "expected KEY=VALUE"),
    "score_no_suite_complete": Case(("score", "partial.jsonl", *D), 2,
                                    "rte_semantic: 486 of 496 rows missing", partial),
    "score_named_suite_incomplete": Case(
        ("score", "mixed.jsonl", *D, "--suites", "rte_semantic", "wic_semantic"), 2,
        "requested suite(s) not scored: rte_semantic: 486 of 496 rows missing", mixed),
    "score_unknown_suite": Case(("score", "p.jsonl", *D, "--suites", "rte_semantik"), 2,
                                "Did you mean: rte_semantic"),
    "score_probs_short_one_row": Case(("score", "probs.jsonl", *D), 2,
                                      "expected 2 probabilities", short_probs_one),
    "score_probs_short_every_row": Case(("score", "probs.jsonl", *D), 2,
                                        "expected 2 probabilities", short_probs_all),
    "score_full_disk": Case(("score", "p.jsonl", *D, "--out", "r.json"), 2,
                            "r.json: cannot write it (No space left on device)", fault="enospc"),
    "score_read_only": Case(("score", "p.jsonl", *D, "--out", "r.json"), 2,
                            "r.json: cannot write it (Permission denied)", fault="eacces"),
    "score_missing_file": Case(("score", "nope.jsonl", *D), 2, "nope.jsonl: file not found"),
    "score_missing_data": Case(("score", "p.jsonl", "--data", "nodata"), 2,
                               "not a built suite folder"),
    # convert-becel
    "convert_out_is_input": Case(("convert-becel", "b.json", "--suite", "rte_semantic", *D,
                                  "--out", "b.json"), 2, "is the input file", becel_json),
    "convert_out_folder": Case(("convert-becel", "b.json", "--suite", "rte_semantic", *D,
                                "--out", "data"), 2, "is a folder", becel_json),
    # submit
    "submit_impossible_date": Case(("submit", "p.jsonl", "--name", "x", "--meta", "meta.yaml",
                                    *D, "--submissions", "subs"), 2, "dates are YYYY-MM-DD",
                                   bad_date),
    "submit_meta_not_utf8": Case(("submit", "p.jsonl", "--name", "x", "--meta", "meta.yaml",
                                  *D, "--submissions", "subs"), 2, "not valid UTF-8",
                                 latin1_meta),
    "submit_submissions_is_file": Case(("submit", "p.jsonl", "--name", "x", "--meta",
                                        "meta.yaml", *D, "--submissions", "subs"), 2,
                                       "--submissions subs: is a file", submissions_file),
    "submit_no_suite_complete": Case(("submit", "partial.jsonl", "--name", "x", "--meta",
                                      "meta.yaml", *D, "--submissions", "subs"), 2,
                                     "no suite is covered completely", partial),
    "submit_probs_short": Case(("submit", "probs.jsonl", "--name", "x", "--meta", "meta.yaml",
                                *D, "--submissions", "subs"), 2, "expected 2 probabilities",
                               short_probs_one),
    "submit_name_taken": Case(("submit", "p.jsonl", "--name", "alpha", "--meta", "meta.yaml",
                               *D, "--submissions", "subs"), 2, "pass --replace", stored),
    # rescore
    "rescore_corrupt_gz": Case(("rescore", *D, "--submissions", "subs"), 2,
                               "beta/predictions.jsonl.gz: not a valid gzip file",
                               stale_and_corrupt_gz),
    "rescore_corrupt_results": Case(("rescore", *D, "--submissions", "subs"), 2,
                                    "beta/results.json: not valid JSON", corrupt_results),
    # leaderboard
    "leaderboard_out_file": Case(("leaderboard", "--submissions", "subs", "--out", "p.jsonl"),
                                 2, "is a file", stored),
    "leaderboard_out_other_folder": Case(("leaderboard", "--submissions", "subs", "--out",
                                          "other"), 2, "Pass --overwrite",
                                         lambda t: (stored(t), other_folder(t))),
    "leaderboard_full_disk": Case(("leaderboard", "--submissions", "subs", "--out", "site"), 2,
                                  "No space left on device", site, fault="enospc"),
    "leaderboard_corrupt_results": Case(("leaderboard", "--submissions", "subs", "--out",
                                         "site"), 0, "beta/results.json: not valid JSON",
                                        corrupt_results, unchanged=False),
    "leaderboard_bad_meta": Case(("leaderboard", "--submissions", "subs", "--out", "site"), 0,
                                 "beta/meta.yaml: not valid YAML", bad_meta, unchanged=False),
    # train (all rejected before anything is loaded)
    "train_max_steps_zero": Case((*T, "--out", "m", "--max-steps", "0"), 2, "--max-steps 0"),
    "train_batch_size_zero": Case((*T, "--out", "m", "--batch-size", "0"), 2, "--batch-size 0"),
    "train_learning_rate_nan": Case((*T, "--out", "m", "--learning-rate", "nan"), 2,
                                    "--learning-rate nan"),
    "train_threads_zero": Case((*T, "--out", "m", "--threads", "0"), 2, "--threads 0"),
    "train_missing_base": Case((*T, "--out", "m", "--base", "./no-such-model"), 2,
                               "no such model folder"),
    "train_base_not_a_model": Case((*T, "--out", "m", "--base", "data"), 2,
                                   "not a model folder"),
    "train_device_tpu": Case((*T, "--out", "m", "--device", "tpu"), 2,
                             "--device tpu: unknown device"),
    "train_out_existing_folder": Case((*T, "--out", "data"), 2, "Pass --overwrite"),
    "train_out_file": Case((*T, "--out", "p.jsonl"), 2, "is a file"),
    # generate
    "generate_name_registered": Case((*G, "--name", "snli", "--out", "data"), 2,
                                     "collides with the registered snli_negational",
                                     good_corpus),
    "generate_name_registered_overwrite": Case((*G, "--name", "rte", "--types", "semantic",
                                                "--out", "data", "--overwrite"), 2,
                                               "collides with the registered", good_corpus),
    "generate_existing_suite": Case((*G, "--name", "mynli", "--out", "data"), 2,
                                    "already holds mynli_negational", generated_suite),
    "generate_not_utf8": Case((*G, "--name", "mynli", "--out", "new"), 2,
                              "c.csv:2: not valid UTF-8", latin1_corpus),
    "generate_huge_field": Case((*G, "--name", "mynli", "--out", "new"), 2,
                                "field larger than field limit", huge_field),
    "generate_additive_size_negative": Case((*G, "--types", "additive", "--additive-size", "-1",
                                             "--name", "mynli", "--out", "new"), 2,
                                            "--additive-size -1", good_corpus),
    "generate_out_file": Case((*G, "--name", "mynli", "--out", "p.jsonl"), 2, "is a file",
                              good_corpus),
    "generate_out_other_folder": Case((*G, "--name", "mynli", "--out", "other"), 2,
                                      "Pass --overwrite", lambda t: (good_corpus(t),
                                                                     other_folder(t))),
    # baseline
    "baseline_uncovered_suite": Case(("baseline", "vader", *D, "--suites", "rte_semantic",
                                      "--out", "b.jsonl"), 2, "does not cover rte_semantic"),
    "baseline_covers_nothing": Case(("baseline", "vader", "--data", "rte", "--out", "b.jsonl"),
                                    2, "covers none of the chosen suites", rte_only),
    "baseline_out_folder": Case(("baseline", "majority", *D, "--out", "data"), 2,
                                "is a folder"),
    "baseline_unknown": Case(("baseline", "majorty", *D, "--out", "b.jsonl"), 2,
                             "Did you mean: majority"),
    # predict (all rejected before the model is loaded)
    "predict_out_folder": Case(("predict", "--model", "./no-such-model", *D, "--out", "data"),
                               2, "--out data: is a folder"),
    "predict_missing_model": Case(("predict", "--model", "./no-such-model", *D, "--out",
                                   "x.jsonl"), 2, "--model ./no-such-model: no such model folder"),
    "predict_device_tpu": Case(("predict", "--model", "./no-such-model", *D, "--out", "x.jsonl",
                                "--device", "tpu"), 2, "--device tpu: unknown device"),
    "predict_max_length_zero": Case(("predict", "--model", "./no-such-model", *D, "--out",
                                     "x.jsonl", "--max-length", "0"), 2, "--max-length 0"),
    # export-lm-eval, convert-lm-eval (issue 10's commands)
    "export_lm_eval_out_file": Case(("export-lm-eval", *D, "--out", "p.jsonl"), 2, "is a file"),
    "export_lm_eval_out_other_folder": Case(("export-lm-eval", *D, "--out", "other"), 2,
                                            "Pass --overwrite", other_folder),
    "export_lm_eval_unknown_suite": Case(("export-lm-eval", *D, "--out", "t", "--suites",
                                          "rte_semantik"), 2, "rte_semantik"),
    "export_lm_eval_bad_hub": Case(("export-lm-eval", *D, "--out", "t", "--hub", "cb"), 2,
                                   "--hub 'cb': use ORG/NAME"),
    "convert_lm_eval_out_folder": Case(("convert-lm-eval", "lm-out", *D, "--out", "data"), 2,
                                       "is a folder", _lm_eval_samples),
    "convert_lm_eval_out_is_input": Case(("convert-lm-eval", "p.jsonl", *D, "--out",
                                          "p.jsonl"), 2, "is the input file"),
    "convert_lm_eval_no_samples": Case(("convert-lm-eval", "data", *D, "--out", "x.jsonl"), 2,
                                       "no samples_*.jsonl under data"),
    "convert_lm_eval_other_build": Case(("convert-lm-eval", "lm-out", *D, "--out", "x.jsonl"),
                                        2, "exported from a suite with sha256 000",
                                        samples_other_build),
    "convert_lm_eval_partial": Case(("convert-lm-eval", "lm-out", *D, "--out", "x.jsonl"), 2,
                                    "samples cover 10 of 496 rows", samples_partial),
}


class _FullDisk:
    """``os`` for consistency_bench.bench.io.write and consistency_bench.bench.io.staged_folder: a rename fails as on a full disk."""  # noqa: E501

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def replace(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _read_only(*args, **kwargs):
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), kwargs.get("dir"))


@pytest.fixture
def case_dir(small_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with ``data/`` (four built suites), ``p.jsonl`` (RTE + WiC) and ``meta.yaml``."""
    shutil.copytree(small_folder, tmp_path / "data")
    write_predictions(tmp_path / "data", tmp_path / "p.jsonl", ["rte_semantic", "wic_semantic"])
    (tmp_path / "meta.yaml").write_text(META)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(name, case_dir, capsys, monkeypatch):
    import consistency_bench.bench.io.staged_folder
    import consistency_bench.bench.io.write

    case = CASES[name]
    if case.setup:
        case.setup(case_dir)
    capsys.readouterr()
    before = snapshot(case_dir)
    if case.fault == "enospc":
        monkeypatch.setattr(consistency_bench.bench.io.write, "os", _FullDisk())
        monkeypatch.setattr(consistency_bench.bench.io.staged_folder, "os", _FullDisk())
    elif case.fault == "eacces":
        monkeypatch.setattr(consistency_bench.bench.io.write.tempfile, "mkstemp", _read_only)
        monkeypatch.setattr(consistency_bench.bench.io.staged_folder.tempfile, "mkdtemp",
                            _read_only)
    code = main(list(case.argv))
    err = capsys.readouterr().err
    assert code == case.code, err
    assert case.fragment in err, err
    assert "Traceback" not in err
    after = snapshot(case_dir)
    if case.unchanged:
        assert err.count("\n") == 1, err  # one line
        assert after == before
    else:
        assert {k: after.get(k) for k in before} == before  # nothing that existed changed


def test_case_counts():
    """The counts docs/errors.md reports."""
    commands = {c.argv[0] for c in CASES.values()}
    clean = sum(1 for c in CASES.values() if c.code == 2)
    print(f"\nBAD INPUT: {len(CASES)} cases over {len(commands)} commands, {clean} exit 2")
    assert len(CASES) == 66 and clean == 64 and len(commands) == 11


def test_leaderboard_skips_a_bad_entry_and_ranks_the_rest(case_dir, capsys):
    corrupt_results(case_dir)
    assert main(["leaderboard", "--submissions", "subs", "--out", "site"]) == 0
    board = json.loads((case_dir / "site" / "leaderboard.json").read_text())
    assert "alpha" in json.dumps(board) and "beta" not in json.dumps(board)
    assert "entry skipped" in capsys.readouterr().err


def test_rescore_rewrites_only_when_every_entry_reads(case_dir, capsys):
    stored(case_dir, ("alpha",))
    results = case_dir / "subs" / "alpha" / "results.json"
    good = json.loads(results.read_text())
    stale = {**good, "suites": {**good["suites"], "rte_semantic": {
        **good["suites"]["rte_semantic"], "main_score": 0.5}}}
    results.write_text(json.dumps(stale))
    assert main(["rescore", *D, "--submissions", "subs"]) == 0
    assert json.loads(results.read_text())["suites"] == good["suites"]
    assert "1 change(s)" in capsys.readouterr().out


# --------------------------------------------------------------------------- accepted input


def _labels_as(tmp: Path, name: str, values: list[object]) -> Path:
    rows = _rows(tmp / "data", "rte_semantic")
    path = tmp / name
    _jsonl(path, [{"id": r["id"], "label": values[i % len(values)]} for i, r in enumerate(rows)])
    return path


def _score(path: Path, *extra: str) -> dict:
    out = path.with_suffix(".results.json")
    assert main(["score", str(path), *D, "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_index_strings_and_loose_names_match_indices(case_dir, capsys):
    by_index = _score(_labels_as(case_dir, "i.jsonl", [0, 1, 1]))
    loose = _score(_labels_as(case_dir, "s.jsonl", ["0", "1.0", " Not Entailment "]))
    mixed_case = _score(_labels_as(case_dir, "n.jsonl", ["ENTAILMENT", "not_entailment",
                                                         "not-entailment"]))
    assert loose["suites"] == by_index["suites"] == mixed_case["suites"]
    assert loose["predictions"]["invalid_answers"]["count"] == 0
    assert "warning" not in capsys.readouterr().out


def test_invalid_answers_warn_with_the_count(case_dir, capsys):
    results = _score(_labels_as(case_dir, "v.jsonl", [0, "maybe"]))
    out = capsys.readouterr().out
    assert "warning: 248 invalid answer(s)" in out and "rte_semantic 248" in out
    assert "v.jsonl:2 value 'maybe'" in out
    assert results["predictions"]["invalid_answers"]["count"] == 248


def test_csv_float_labels_score_as_indices(case_dir):
    rows = _rows(case_dir / "data", "rte_semantic")
    (case_dir / "f.csv").write_text("id,label\n" + "".join(
        f"{r['id']},{['0.0', '1.0', '1'][i % 3]}\n" for i, r in enumerate(rows)))
    by_index = _score(_labels_as(case_dir, "i.jsonl", [0, 1, 1]))
    assert _score(case_dir / "f.csv")["suites"] == by_index["suites"]


def _formats(tmp: Path) -> dict[str, Path]:
    """The same predictions (index strings, names, probs) as JSONL, CSV and Parquet."""
    rows = _rows(tmp / "data", "rte_semantic") + _rows(tmp / "data", "wic_semantic")
    labels = ["1", "entailment", "NOT ENTAILMENT", "0", "true", "False"]
    records = []
    for i, r in enumerate(rows):
        p = round(0.1 + 0.8 * ((i * 37) % 10) / 10, 2)
        records.append({"id": r["id"], "label": labels[i % len(labels)], "probs": [p, 1 - p]})
    out = {"jsonl": tmp / "f.jsonl", "csv": tmp / "f.csv", "parquet": tmp / "f.parquet"}
    _jsonl(out["jsonl"], records)
    out["csv"].write_text("id,label,probs\n" + "".join(
        f'{r["id"]},{r["label"]},"{json.dumps(r["probs"])}"\n' for r in records))
    table = pa.Table.from_pylist(records).append_column(
        "when", pa.array([0] * len(records), pa.timestamp("s")))
    pq.write_table(table, out["parquet"])
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_submit_stores_what_score_computes(case_dir, fmt):
    path = _formats(case_dir)[fmt]
    scored = _score(path)
    assert main(["submit", str(path), "--name", f"e-{fmt}", "--meta", "meta.yaml", *D,
                 "--submissions", "subs"]) == 0
    entry = case_dir / "subs" / f"e-{fmt}"
    stored_results = json.loads((entry / "results.json").read_text())
    assert stored_results["suites"] == scored["suites"]
    assert oct(entry.stat().st_mode & 0o777) == oct(0o777 & ~bench_umask())
    # the stored JSONL re-scores to the same scores and to its own hash
    rescored = _score(entry / "predictions.jsonl.gz")
    assert rescored["suites"] == scored["suites"]
    plain = gzip.decompress((entry / "predictions.jsonl.gz").read_bytes())
    digest = hashlib.sha256(plain).hexdigest()
    assert rescored["predictions"]["sha256"] == stored_results["predictions"]["sha256"] == digest
    assert main(["rescore", *D, "--submissions", "subs"]) == 0


def bench_umask() -> int:
    from consistency_bench.bench.io.write import _umask

    return _umask()


def test_results_record_provenance(case_dir):
    results = _score(case_dir / "p.jsonl", "--seed", "3")
    prov = results["provenance"]
    assert prov["command"] == "score" and prov["harness_version"]
    assert prov["arguments"]["seed"] == 3 and prov["arguments"]["predictions"].endswith("p.jsonl")
    assert prov["date"].endswith("+00:00")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    assert prov["git_commit"] == (commit or None)


def test_suites_without_predictions_are_one_line(case_dir, capsys):
    _score(case_dir / "p.jsonl")
    out = capsys.readouterr().out
    assert "2 suite(s) without predictions not scored (--verbose lists them)" in out
    assert "skipped" not in out
    _score(case_dir / "p.jsonl", "--verbose")
    out = capsys.readouterr().out
    assert "skipped mrpc_semantic: no predictions" in out
    assert "skipped sst2_semantic: no predictions" in out


def test_partly_covered_suite_is_named(case_dir, capsys):
    mixed(case_dir)
    _score(case_dir / "mixed.jsonl")
    assert "incomplete, not scored: rte_semantic: 486 of 496" in capsys.readouterr().out


def test_train_overwrite_passes_the_checks(case_dir):
    from consistency_bench.cli import make_parser
    from consistency_bench.commands.train import check_args

    args = make_parser().parse_args([*T, "--out", "data", "--overwrite"])
    check_args(args)  # no error: the folder would be replaced atomically


def test_export_lm_eval_replaces_its_own_earlier_export(case_dir):
    assert main(["export-lm-eval", *D, "--out", "t"]) == 0
    assert main(["export-lm-eval", *D, "--out", "t", "--suites", "rte_semantic"]) == 0
    assert sorted(p.name for p in (case_dir / "t").iterdir()) == [
        ".consistency-bench-owned.json",  # the record of what the export wrote
        "consistency_bench.yaml", "consistency_bench_rte_semantic.yaml"]  # no stale tasks
    other_folder(case_dir)
    assert main(["export-lm-eval", *D, "--out", "other", "--overwrite"]) == 0
    assert (case_dir / "other" / "notes.txt").read_text() == "mine"  # not ours: kept


def test_convert_lm_eval_of_complete_samples_scores(case_dir):
    _lm_eval_samples(case_dir)
    assert main(["convert-lm-eval", "lm-out", *D, "--out", "x.jsonl"]) == 0
    assert _score(case_dir / "x.jsonl")["suites"]["rte_semantic"]


# --------------------------------------------------------------------------- output


def test_broken_pipe_is_quiet(case_dir):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: like `| head -0`
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "consistency_bench", "score", "p.jsonl", *D,
                           "--out", "r.json"],
                          stdout=write, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=case_dir, check=False)
    os.close(write)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == 141
    assert json.loads((case_dir / "r.json").read_text())["suites"]  # written before printing


#: Commands whose options other developers own (issue 11 gives their --help to them).
OTHERS: set[str] = set()


def test_every_option_has_help_with_defaults(capsys):
    import argparse

    from consistency_bench.cli import make_parser

    parser = make_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, sub in commands.choices.items():
        if name in OTHERS:
            continue
        assert sub.description, name
        missing += [f"{name} {a.dest}" for a in sub._actions if not a.help]
    assert not missing
    with pytest.raises(SystemExit):
        main(["rescore", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: submissions)" in out and "(default: consistency-bench)" in out
    with pytest.raises(SystemExit):
        main(["leaderboard", "--help"])
    assert "(default: leaderboard/site)" in " ".join(capsys.readouterr().out.split())


def test_known_params_are_the_ones_scorers_read():
    import re

    from consistency_bench.bench.scorers.params import KNOWN_PARAMS

    read = set()
    for path in sorted((ROOT / "bench" / "scorers").glob("*.py")):
        text = path.read_text()
        read |= set(re.findall(r"params(?:\.get\(|\[)\s*\"(\w+)\"", text))
        read |= set(re.findall(r"\"(\w+)\" in params", text))
    assert read and read <= set(KNOWN_PARAMS), read - set(KNOWN_PARAMS)


def test_out_of_range_index_string_is_an_invalid_answer(case_dir, capsys):
    results = _score(_labels_as(case_dir, "r.jsonl", [1, "7"]))
    assert results["predictions"]["invalid_answers"]["first"] == {"line": 2, "value": "7"}
    assert "warning: 248 invalid answer(s)" in capsys.readouterr().out
    _labels_as(case_dir, "e.jsonl", [1, 7])  # an integer out of range is a bug: an error
    assert main(["score", "e.jsonl", *D]) == 2
    assert "e.jsonl:2: field 'label' value 7: label index out of range" in capsys.readouterr().err


IMPORT = "import datasets, transformers.utils.logging as tl, huggingface_hub.utils as hu\n"
SILENCE = "from consistency_bench.cli import silence_progress_bars\nsilence_progress_bars()\n"
SHOW = ("print(tl.is_progress_bar_enabled(), hu.are_progress_bars_disabled(), "
        "datasets.is_progress_bar_enabled())\n")


@pytest.mark.parametrize("code", [IMPORT + SILENCE + SHOW, SILENCE + IMPORT + SHOW],
                         ids=["imported_before", "imported_after"])
def test_no_progress_silences_library_bars(code):
    """``--no-progress`` reaches transformers, huggingface_hub and datasets bars."""
    quiet = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS", "TQDM_DISABLE")
    env = {k: v for k, v in os.environ.items() if k not in quiet}
    out = python_stdout(code, env=env).split()
    assert out == ["False", "True", "False"], out
