"""Issue 19: input the audit found wrongly accepted, or crashing (table-driven, like issue 11's).

Each case of ``CASES`` runs in the folder of ``tests/test_bad_input.py``'s ``case_dir``
(``data/`` with four built suites, ``p.jsonl``, ``meta.yaml``): exit 2, one ``error:`` line
holding the fragment (file, line, field and value where there is one), no traceback, and every
file under the folder unchanged. Inputs that crashed the process itself (a JSONL line nested
30,000 deep segfaulted pyarrow) run in a subprocess. The accepted-input tests at the end pin
what is *not* an error (a UTF-8 BOM, ``"1e0"`` as an invalid answer, a long label cut short).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from consistency_bench.cli import main
from tests.helpers import ROOT, write_predictions
from tests.test_bad_input import (
    META,
    SMALL,
    _jsonl,
    _lm_eval_samples,
    _rows,
    _subset,
    snapshot,
    stored,
)

D = ("--data", "data")
DEEP = 30_000
SUB = ("--submissions", "subs")


@pytest.fixture(scope="session")
def small_data(becel_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four small BECEL suites in their own built folder (as tests/test_bad_input.py's)."""
    return _subset(becel_folder, tmp_path_factory.mktemp("small19") / "data", SMALL)


@pytest.fixture
def case_dir(small_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with ``data/`` (four built suites), ``p.jsonl`` (RTE + WiC) and ``meta.yaml``."""
    shutil.copytree(small_data, tmp_path / "data")
    write_predictions(tmp_path / "data", tmp_path / "p.jsonl", ["rte_semantic", "wic_semantic"])
    (tmp_path / "meta.yaml").write_text(META)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _records(tmp: Path, suite: str = "rte_semantic") -> list[dict]:
    return [{"id": r["id"], "label": 0} for r in _rows(tmp / "data", suite)]


def _deep(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def _lines(tmp: Path, name: str, records: list, raw: dict[int, str] | None = None) -> None:
    """``name``: one JSON line per record; ``raw`` replaces lines (0-based) by raw text."""
    lines = [json.dumps(r) for r in records]
    for i, text in (raw or {}).items():
        lines[i] = text
    (tmp / name).write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")


# --------------------------------------------------------------------------- setups


def deep_line(tmp: Path) -> None:
    """``deep.jsonl``: line 6 has an extra field nested 30,000 deep (pyarrow: SIGSEGV)."""
    records = _records(tmp)
    text = json.dumps(records[5])[:-1] + f', "x": {_deep()}}}'
    _lines(tmp, "deep.jsonl", records, {5: text})


def deep_gz(tmp: Path) -> None:
    deep_line(tmp)
    (tmp / "deep.jsonl.gz").write_bytes(gzip.compress((tmp / "deep.jsonl").read_bytes()))
    (tmp / "deep.jsonl").unlink()


def deep_csv(tmp: Path) -> None:
    rows = _records(tmp)
    body = "".join(f'{r["id"]},0,"[0.5, 0.5]"\n' for r in rows[1:])
    (tmp / "deep.csv").write_text(f'id,label,probs\n{rows[0]["id"]},0,"{_deep(5000)}"\n' + body)


def deep_becel(tmp: Path) -> None:
    (tmp / "b.json").write_text('{"original_preds": ' + _deep() + "}")


def deep_samples(tmp: Path) -> None:
    _lm_eval_samples(tmp)
    path = next((tmp / "lm-out").rglob("samples_*.jsonl"))
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-1] + f', "x": {_deep()}}}'
    path.write_text("\n".join(lines) + "\n")


def samples_edit(line: int, change: Callable[[dict], None]) -> Callable[[Path], None]:
    """lm-eval samples for rte_semantic with sample ``line`` (1-based) changed."""

    def setup(tmp: Path) -> None:
        _lm_eval_samples(tmp)
        path = next((tmp / "lm-out").rglob("samples_*.jsonl"))
        samples = [json.loads(x) for x in path.read_text().splitlines()]
        change(samples[line - 1])
        path.write_text("".join(json.dumps(s) + "\n" for s in samples))  # NaN as NaN

    return setup


def _set(key: str, value: object) -> Callable[[dict], None]:
    def change(sample: dict) -> None:
        if key == "doc.id":
            sample["doc"]["id"] = value
        else:
            sample[key] = value

    return change


BOMB = """model: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
revision: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
license: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
link: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
contact: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
notes: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
parameters: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


def meta(text: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "meta.yaml").write_text(text)

    return setup


def surrogate_id(tmp: Path) -> None:
    records = _records(tmp)
    _lines(tmp, "s.jsonl", records, {2: '{"id": "rte_semantic/\\udc80", "label": 0}'})


def manifest_as(change: Callable[[dict], object]) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        path = tmp / "data" / "suites.json"
        path.write_text(json.dumps(change(json.loads(path.read_text()))))

    return setup


def _no_sha(manifest: dict) -> dict:
    del manifest["suites"]["rte_semantic"]["sha256"]
    return manifest


def duplicate_key(tmp: Path) -> None:
    records = _records(tmp)
    _lines(tmp, "k.jsonl", records, {2: f'{{"id": "{records[2]["id"]}", "label": 0, '
                                        '"label": 1}'})


def duplicate_column(tmp: Path) -> None:
    rows = _records(tmp)
    (tmp / "c.csv").write_text("id,label,label\n" + "".join(f"{r['id']},0,1\n" for r in rows))


def becel_duplicate_key(tmp: Path) -> None:
    (tmp / "b.json").write_text('{"original_preds": [0], "original_preds": [1], '
                                '"paraphrase_preds": [0]}')


def fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "pipe.jsonl")


def binary_card(tmp: Path) -> None:
    stored(tmp)
    (tmp / "card.md").write_bytes(bytes(range(256)) * 4)


def bomb_card(tmp: Path) -> None:
    stored(tmp)
    (tmp / "card.md").write_text("---\n" + BOMB + "---\nmy model\n")


def part(*lines: str, header: dict | None = None) -> Callable[[Path], None]:
    """``p0.part``: a `predict --shard 0/1` header (or ``header``), then ``lines`` as written."""
    def setup(tmp: Path) -> None:
        head = header if header is not None else {
            "format": "consistency-bench-part", "version": 1, "shard": [0, 1], "rows": 2,
            "run": {}}
        (tmp / "p0.part").write_text("\n".join([json.dumps(head), *lines]) + "\n")

    return setup


def fifo_part(tmp: Path) -> None:
    os.mkfifo(tmp / "pipe.part")


@dataclass(frozen=True)
class Case:
    """One bad input: command line (run in the case folder), message fragment, setup."""

    argv: tuple[str, ...]
    fragment: str
    setup: Callable[[Path], None] | None = None


S = ("submit", "p.jsonl", "--name", "x", "--meta", "meta.yaml", *D, *SUB)
CL = ("convert-lm-eval", "lm-out", *D, "--out", "x.jsonl")
CB = ("convert-becel", "b.json", "--suite", "rte_semantic", *D, "--out", "x.jsonl")
PR = ("publish-results", "--entry", "alpha", "--model", "org/m", "--dataset", "org/d", *SUB,
      "--setup", "plain", "--force", "--dry-run")
T = ("train", "--task", "rte", "--out", "m")
MP = ("merge-predictions", "p0.part", "--out", "m.jsonl")
CASES: dict[str, Case] = {
    # security 4: deep JSON, refused before any parser sees it
    "score_deep_gz": Case(("score", "deep.jsonl.gz", *D),
                          "deep.jsonl.gz:6: JSON nested 30001 levels deep", deep_gz),
    "score_deep_csv_probs": Case(("score", "deep.csv", *D),
                                 "deep.csv:2: field 'probs': JSON nested 5000 levels", deep_csv),
    "convert_becel_deep": Case(CB, "b.json: JSON nested 30001 levels deep", deep_becel),
    "convert_lm_eval_deep": Case(CL, ".jsonl:3: JSON nested 30001 levels deep", deep_samples),
    "publish_results_deep_results": Case(PR, "alpha/results.json: JSON nested 30001 levels",
                                         lambda t: (stored(t), (t / "subs" / "alpha" /
                                                                "results.json").write_text(
                                             '{"suites": ' + _deep() + "}"))),
    "score_huge_integer": Case(("score", "n.jsonl", *D), "n.jsonl:4: not valid JSON (an "
                               "integer of more than 4,300 digits)",
                               lambda t: _lines(t, "n.jsonl", _records(t), {
                                   3: '{"id": "x", "label": ' + "1" * 5000 + "}"})),
    "convert_becel_huge_integer": Case(CB, "b.json: not valid JSON (an integer of more "
                                       "than 4,300 digits)",
                                       lambda t: (t / "b.json").write_text(
                                           '{"original_preds": [' + "1" * 5000 + "]}")),
    "rescore_deep_results": Case(("rescore", *D, *SUB), "alpha/results.json: JSON nested 100001",
                                 lambda t: (stored(t), (t / "subs" / "alpha" /
                                                        "results.json").write_text(
                                     '{"suites": ' + _deep(100_000) + "}"))),
    "score_manifest_deep": Case(("score", "p.jsonl", *D), "suites.json: JSON nested 30001",
                                lambda t: (t / "data" / "suites.json").write_text(
                                    '{"suites": {}, "x": ' + _deep() + "}")),
    # security 3: YAML alias bomb, size, depth
    "submit_yaml_alias_bomb": Case(S, "meta.yaml:1: YAML anchor &a refused", meta(BOMB)),
    "submit_yaml_alias": Case(S, "meta.yaml:2: YAML alias *m refused",
                              meta("model: toy\nrevision: *m\n")),
    "submit_yaml_too_large": Case(S, "meta.yaml: 300,104 bytes; a metadata file may have at "
                                  "most 262,144", meta(META + "notes: " + "x" * 300_000)),
    "submit_yaml_too_deep": Case(S, "YAML nested more than 20 levels deep",
                                 meta(META + "notes: " + "[" * 60 + "]" * 60 + "\n")),
    "publish_results_card_alias_bomb": Case((*PR, "--model-card", "card.md"),
                                            "card.md (YAML header):1: YAML anchor &a refused",
                                            bomb_card),
    # tracebacks
    "score_lone_surrogate_id": Case(("score", "s.jsonl", *D),
                                    "s.jsonl:3: field 'id' value 'rte_semantic/\\udc80': not "
                                    "valid Unicode", surrogate_id),
    "score_n_boot_huge": Case(("score", "p.jsonl", *D, "--n-boot", "1000000000000"),
                              "--n-boot 1000000000000: must be 1 to 1,000,000"),
    "score_manifest_list": Case(("score", "p.jsonl", *D), "data/suites.json: not a valid suite "
                                "manifest (expected an object with a 'suites' object, got list)",
                                manifest_as(lambda m: [1, 2])),
    "score_manifest_no_sha256": Case(("score", "p.jsonl", *D),
                                     "suites.json: suite 'rte_semantic' has no sha256",
                                     manifest_as(_no_sha)),
    "score_param_grid_not_list": Case(("score", "p.jsonl", *D, "--param",
                                       "coherence_theta_grid=5"),
                                      "--param 'coherence_theta_grid=5': coherence_theta_grid "
                                      "must be a JSON list"),
    "score_param_salad_tolerance_negative": Case(
        ("score", "p.jsonl", *D, "--param", "salad_tolerance=-5"),
        "--param 'salad_tolerance=-5': salad_tolerance must be a number in [0, 1]"),
    "score_param_salad_theta_text": Case(("score", "p.jsonl", *D, "--param", "salad_theta=abc"),
                                         "salad_theta must be a number in [0, 1]"),
    "convert_lm_eval_doc_id_list": Case(CL, ".jsonl:4: field doc.id value ['a', 'b']: expected "
                                        "a row id string", samples_edit(4, _set("doc.id",
                                                                              ["a", "b"]))),
    "publish_results_binary_card": Case((*PR, "--model-card", "card.md"),
                                        "--model-card card.md: not a UTF-8 text file",
                                        binary_card),
    # wrongly accepted
    "convert_lm_eval_nan": Case(CL, ".jsonl:2: field filtered_resps value [nan, False]: not a "
                                "log-likelihood", samples_edit(2, _set(
                                    "filtered_resps", [[float("nan"), False], [-1.0, False]]))),
    "convert_lm_eval_inf": Case(CL, ".jsonl:5: field filtered_resps value [inf, False]",
                                samples_edit(5, _set("filtered_resps",
                                                     [[-1.0, False], [float("inf"), False]]))),
    "convert_lm_eval_three_choices": Case(
        CL, ".jsonl:7: field filtered_resps has 3 choices; the suite has 2 labels",
        samples_edit(7, _set("filtered_resps", [[-1.0, False]] * 3))),
    "submit_date_with_time": Case(S, "field 'date' value datetime.datetime(2026, 1, 1, 10, 0): "
                                  "expected a date YYYY-MM-DD",
                                  meta(META + "date: 2026-01-01T10:00:00\n")),
    "submit_date_compact": Case(S, "field 'date' value '20260101': expected a date YYYY-MM-DD",
                                meta(META + "date: '20260101'\n")),
    "score_duplicate_json_key": Case(("score", "k.jsonl", *D),
                                     "k.jsonl:3: field 'label': key given twice", duplicate_key),
    "score_duplicate_csv_column": Case(("score", "c.csv", *D),
                                       "c.csv:1: field 'label': column given twice in the header "
                                       "(columns 2 and 3", duplicate_column),
    "convert_becel_duplicate_key": Case(CB, "b.json: field 'original_preds': key given twice",
                                        becel_duplicate_key),
    "score_param_coherence_unscored": Case(("score", "p.jsonl", *D, "--param",
                                            "coherence_theta=2"),
                                           "coherence_theta must be a number in [0, 1]"),
    "score_param_nan": Case(("score", "p.jsonl", *D, "--param", "calm_theta=NaN"),
                            "calm_theta must be a number in [0, 1]"),
    "score_param_twice": Case(("score", "p.jsonl", *D, "--param", "calm_theta=0.5", "--param",
                               "calm_theta=0.7"), "calm_theta is given twice"),
    "baseline_seed_negative": Case(("baseline", "random", *D, "--out", "b.jsonl", "--seed",
                                    "-1"), "--seed -1: must be 0 to 4294967295"),
    "train_seed_negative": Case((*T, "--seed", "-1"), "--seed -1: must be 0 to 4294967295"),
    "publish_results_revision_injection": Case(
        (*PR, "--dataset-revision", "main; rm -rf /"),
        "--dataset-revision 'main; rm -rf /': not a git revision"),
    "publish_results_revision_dotdot": Case((*PR, "--dataset-revision", "refs/../x"),
                                            "not a git revision"),
    "score_input_folder": Case(("score", "data", *D), "data: is a folder, not a prediction file"),
    "score_input_fifo": Case(("score", "pipe.jsonl", *D), "pipe.jsonl: is a FIFO (named pipe)",
                             fifo),
    "score_input_dash": Case(("score", "-", *D),
                             "-: reading predictions from standard input is not supported"),
    "submit_input_folder": Case(("submit", "data", "--name", "x", "--meta", "meta.yaml", *D,
                                 *SUB), "data: is a folder"),
    "convert_becel_input_folder": Case(("convert-becel", "data", "--suite", "rte_semantic", *D,
                                        "--out", "x.jsonl"), "data: is a folder"),
    "score_long_unknown_suite_value": Case(
        ("score", "long.jsonl", *D), "... (5,000,003 characters): unknown suite 'zz'",
        lambda t: _lines(t, "long.jsonl", [{"id": "zz/" + "x" * 5_000_000, "label": 0}])),
    "score_long_id_without_suite": Case(
        ("score", "long.jsonl", *D), "(5,000,000 characters): unknown suite 'xxxx",
        lambda t: _lines(t, "long.jsonl", [{"id": "x" * 5_000_000, "label": 0}])),
    "submit_meta_lone_surrogate": Case(S, "meta.yaml: field 'model' value 'a\\ud800': not valid "
                                       "Unicode", meta(META.replace("model: toy",
                                                                    'model: "a\\ud800"'))),
    "submit_meta_duplicate_key": Case(S, "meta.yaml:6: key 'model' given twice",
                                      meta(META + "model: another\n")),
    # merge-predictions (added after the issue-19 work): part files are user input too
    "merge_part_deep": Case(MP, "p0.part:2: JSON nested 30001 levels deep",
                            part('[0, {"id": "a", "label": ' + _deep(29_999) + "}]")),
    "merge_part_duplicate_key": Case(MP, "p0.part:2: key 'label' given twice",
                                     part('[0, {"id": "a", "label": 0, "label": 1}]')),
    "merge_part_lone_surrogate": Case(MP, "p0.part:2: not valid Unicode (a lone surrogate",
                                      part('[0, {"id": "a\\udc80", "label": 0}]')),
    "merge_part_record_not_object": Case(MP, "p0.part:2: expected [row position, record]",
                                         part("[0, 5]", "[1, 6]")),
    "merge_part_header_without_shard": Case(
        MP, "p0.part:1: field 'shard' value None: expected [i, n]",
        part(header={"format": "consistency-bench-part", "version": 1})),
    "merge_part_header_rows_text": Case(
        MP, "p0.part:1: field 'rows' value 'x': expected a count",
        part(header={"format": "consistency-bench-part", "version": 1, "shard": [0, 1],
                     "rows": "x", "run": {}})),
    "merge_part_fifo": Case(("merge-predictions", "pipe.part", "--out", "m.jsonl"),
                            "pipe.part: is a FIFO (named pipe)", fifo_part),
    "merge_part_folder": Case(("merge-predictions", "data", "--out", "m.jsonl"),
                              "data: is a folder"),
}


def check_refused(case: Case, case_dir: Path, capsys) -> None:
    """Run ``case``: exit 2, one ``error:`` line with its fragment, nothing changed."""
    if case.setup:
        case.setup(case_dir)
    capsys.readouterr()
    before = snapshot(case_dir)
    code = main(list(case.argv))
    err = capsys.readouterr().err
    assert code == 2, err[-2000:]
    assert case.fragment in err, err[-2000:]
    assert err.startswith("error: ") and err.count("\n") == 1, err[-2000:]  # one line
    assert "Traceback" not in err and len(err) < 1000, err[-2000:]
    assert snapshot(case_dir) == before  # nothing written, nothing changed


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input(name, case_dir, capsys):
    check_refused(CASES[name], case_dir, capsys)


def test_case_counts():
    """The counts docs/errors.md reports."""
    commands = {c.argv[0] for c in CASES.values()}
    print(f"\nBAD INPUT (issue 19): {len(CASES)} cases over {len(commands)} commands")
    assert len(CASES) == 55 and len(commands) == 9


def _cli(case_dir: Path, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "consistency_bench", *argv], capture_output=True,
                          text=True, env=environ, cwd=case_dir, check=False)


@pytest.mark.parametrize("split", [False, True], ids=["one parse", "two halves"])
def test_deep_jsonl_line_is_refused_not_a_segfault(case_dir, split):
    """Security 4: pyarrow's reader crashed the process (exit 139) on a 30,000-deep line."""
    deep_line(case_dir)
    before = snapshot(case_dir)
    if split:  # the large-file path: two halves on two threads, the deep line in the second
        code = ("import sys; import consistency_bench.bench.predictions.fast as p; p.SPLIT_PARSE_BYTES = 1; "  # noqa: E501
                "from consistency_bench.cli import main; sys.exit(main(sys.argv[1:]))")
        environ = {**os.environ, "PYTHONPATH": str(ROOT)}
        lines = (case_dir / "deep.jsonl").read_text().splitlines()
        lines.append(lines.pop(5))  # after the middle
        (case_dir / "deep.jsonl").write_text("\n".join(lines) + "\n")
        before = snapshot(case_dir)
        done = subprocess.run([sys.executable, "-c", code, "score", "deep.jsonl", *D, "--out",
                               "r.json"], capture_output=True, text=True, env=environ,
                              cwd=case_dir, check=False)
        line = len(lines)
    else:
        done = _cli(case_dir, "score", "deep.jsonl", *D, "--out", "r.json")
        line = 6
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr == (f"error: deep.jsonl:{line}: JSON nested 30001 levels deep; at most "
                           "100 are read (refused before parsing: deep nesting crashes JSON "
                           "parsers)\n")
    assert snapshot(case_dir) == before


def test_brackets_inside_strings_are_not_nesting(case_dir):
    """The cheap bound flags a line with many ``[`` in a string; the exact check lets it be."""
    records = _records(case_dir)
    records[4]["label"] = "[" * 500 + "{" * 500
    _lines(case_dir, "b.jsonl", records)
    assert main(["score", "b.jsonl", *D]) == 0


def test_line_scanner_bounds_lines_across_blocks():
    from consistency_bench.bench.io.json_input import (
        DeepJsonError,
        LineScanner,
        depth_above,
        exact_depth,
    )

    scanner = LineScanner(limit=100)
    scanner.feed(b'{"a": [1]}\n' * 1000 + b"[" * 60)
    with pytest.raises(DeepJsonError):  # the same line goes on in the next block
        scanner.feed(b"{" * 60 + b"\n")
    scanner = LineScanner(limit=100)
    scanner.feed(b"[" * 100 + b"\n" + b"{" * 100)  # 100 each: at the limit, fine
    assert exact_depth('{"a": "]]]]", "b": [[[1]]]}') == 4
    assert depth_above('"' + "]" * 300 + '"' + "[" * 150 + "]" * 150) == 150  # no masking
    assert depth_above("[" * 100 + "]" * 100) is None


@pytest.mark.parametrize("env", [{"LC_ALL": "C", "PYTHONUTF8": "0"},
                                 {"PYTHONIOENCODING": "ascii"}], ids=["LC_ALL=C", "ascii"])
def test_non_ascii_label_in_a_warning_under_an_ascii_locale(case_dir, env):
    records = _records(case_dir)
    records[1]["label"] = "café"
    _jsonl(case_dir / "v.jsonl", records)
    done = _cli(case_dir, "score", "v.jsonl", *D, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "v.jsonl:2 value 'caf\\xe9'" in done.stdout


def test_long_invalid_answer_is_cut_in_the_warning(case_dir, capsys):
    records = _records(case_dir)
    records[1]["label"] = "y" * 5_000_000
    _jsonl(case_dir / "v.jsonl", records)
    assert main(["score", "v.jsonl", *D]) == 0
    warning = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("warning"))
    assert len(warning) < 400 and warning.endswith("... (5,000,000 characters)"), warning[:400]


def test_index_text_is_ascii_digits_only(case_dir, capsys):
    """``"١"`` (Arabic-Indic one), ``"1e0"``, ``"+1"``: invalid answers, not index 1."""
    records = _records(case_dir)
    for i, text in enumerate(["١", "1e0", "+1", "1_0", "0x1"]):
        records[i]["label"] = text
    records[5]["label"] = " 1.0 "  # still an index
    _jsonl(case_dir / "v.jsonl", records)
    out = case_dir / "r.json"
    assert main(["score", "v.jsonl", *D, "--out", str(out)]) == 0
    invalid = json.loads(out.read_text())["predictions"]["invalid_answers"]
    assert invalid["count"] == 5 and invalid["first"] == {"line": 1, "value": "١"}


def test_csv_with_a_utf8_bom_scores_like_without(case_dir):
    rows = _records(case_dir)
    text = "id,label\n" + "".join(f"{r['id']},{i % 2}\n" for i, r in enumerate(rows))
    (case_dir / "plain.csv").write_text(text)
    (case_dir / "bom.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    results = []
    for name in ("plain.csv", "bom.csv"):
        assert main(["score", name, *D, "--out", f"{name}.json"]) == 0
        results.append(json.loads((case_dir / f"{name}.json").read_text())["suites"])
    assert results[0] == results[1]


def test_submitted_date_reads_back_on_the_leaderboard(case_dir):
    """A date submit accepts is one the leaderboard reads (it skipped ``2026-01-01T10:00:00``)."""
    (case_dir / "meta.yaml").write_text(META + "date: 2026-01-01\n")
    assert main(["submit", "p.jsonl", "--name", "d", "--meta", "meta.yaml", *D, *SUB]) == 0
    from consistency_bench.leaderboard.submissions.reader import load_entry

    assert load_entry(case_dir / "subs" / "d").meta["date"] == "2026-01-01"


def test_every_param_is_checked_before_scoring():
    from consistency_bench.bench.scorers.params import KNOWN_PARAMS, PARAM_CHECKS, parse_params

    assert set(PARAM_CHECKS) == set(KNOWN_PARAMS)
    assert parse_params(["calm_theta=0.8", "coherence_theta_grid=[0.5,0.75]",
                         "salad_theta=0.4", "salad_tolerance=0.05"]) == {
        "calm_theta": 0.8, "coherence_theta_grid": [0.5, 0.75], "salad_theta": 0.4,
        "salad_tolerance": 0.05}


@pytest.mark.parametrize("revision", ["main", "v1.0", "refs/pr/3", "0123abc",
                                      "0123456789abcdef0123456789abcdef01234567"])
def test_plain_revisions_pass(revision):
    from consistency_bench.leaderboard.publish.steps import check_revision

    assert check_revision(revision) == revision


def test_gzip_bomb_is_refused_at_the_cap(case_dir, capsys, monkeypatch):
    """A ``.gz`` is decompressed up to ``MAX_DECOMPRESSED_BYTES`` (``review`` reads anyone's):
    one byte over it is refused naming the file, the file at the cap scores."""
    from consistency_bench.bench.predictions import files

    text = (case_dir / "p.jsonl").read_bytes()
    (case_dir / "p.jsonl.gz").write_bytes(gzip.compress(text))
    monkeypatch.setattr(files, "MAX_DECOMPRESSED_BYTES", len(text) - 1)
    capsys.readouterr()
    assert main(["score", "p.jsonl.gz", *D]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: p.jsonl.gz: decompresses to more than ") and "Traceback" \
        not in err, err
    monkeypatch.setattr(files, "MAX_DECOMPRESSED_BYTES", len(text))
    assert main(["score", "p.jsonl.gz", *D]) == 0
