"""Few-shot pools: built from the mirror, never a test row, the same demonstrations both routes.

The leak and prompt checks run over every suite the mirror builds (``all_folder``); the pool
and export checks over a small folder.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import yaml

from consistency_bench.bench.errors import ConfigError, DataError
from consistency_bench.bench.io.manifest import parquet_path, read_manifest
from consistency_bench.bench.prompting.demonstrations import (
    demonstrations,
    load_pool,
    prompt_key,
    read_pools,
    seed_order,
    suite_pool,
)
from consistency_bench.bench.prompting.prompts import lookup, render
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.bench.runner.options import RunnerOptions
from consistency_bench.bench.runner.unique_inputs import collect_causal_inputs, suite_task
from consistency_bench.builders.overlap.folder_texts import folder_index, suites_digest
from consistency_bench.builders.overlap.words import word_sets
from tests.helpers import CORPORA, build_suites

#: Suites whose task has no labelled rows in the mirror that are not test rows.
NO_POOL = {"kornli_calm", "kornli_test_calm", "klue_nli_calm", "qnli_calm", "qnli_calm_t2t"}
#: In a full build also the suites of the pools whose every candidate is a test row there:
#: rte, snli and calm_rte (MultiNLI dev-matched: mnli_calm, mnli_salad_*), mnli and calm_mnli
#: (SNLI dev: snli_salad_*).
NO_POOL_FULL = NO_POOL | {
    *(f"snli_{k}" for k in ("semantic", "negational", "symmetric", "transitive")),
    *(f"rte_{k}" for k in ("semantic", "negational", "symmetric", "calm", "calm_t2t")),
    *(f"{t}_salad_{x}" for t in ("snli", "mnli")
      for x in ("sort", "reverse", "shuffle", "copysort", "pbsmt")),
    "mnli_calm", "mnli_calm_t2t"}
_RESOLVER = SourceResolver(CORPORA, download=False)
SMALL = ["sst2_semantic", "boolq_semantic", "kornli_calm"]


def leaks(pool: list[dict], rows: list[dict], all_ids: set[str]) -> list[str]:
    """Every way a pool's demonstration is a row of the suite ``rows`` (or any suite's id)."""
    found = []
    cells = {(r["source_file"], r["source_row"]) for r in rows}
    texts = {str(r[c]).strip() for r in rows
             for c in ("text", "text_pair", "raw_text", "raw_text_pair") if r.get(c)}
    for demo in pool:
        if demo["id"] in all_ids:
            found.append(f"{demo['id']}: id of a test row")
        if (demo["source_file"], demo["source_row"]) in cells:
            found.append(f"{demo['id']}: source row {demo['source_file']}#{demo['source_row']}")
        for column in ("text", "text_pair"):
            if demo[column] and demo[column].strip() in texts:
                found.append(f"{demo['id']}: {column} {demo[column][:40]!r} is a test text")
    return found


def test_leaks_finds_a_test_row_put_in_a_pool():
    row = {"id": "s/r1", "source_file": "f.tsv", "source_row": 3, "text": "A cat.",
           "text_pair": "A dog.", "label": 0}
    clean = {"id": "fewshot/p/000001", "source_file": "g.tsv", "source_row": 3,
             "text": "Other.", "text_pair": None, "label": 1}
    assert leaks([clean], [row], {"s/r1"}) == []
    assert len(leaks([{**clean, "id": "s/r1"}], [row], {"s/r1"})) == 1
    assert len(leaks([{**clean, "source_file": "f.tsv"}], [row], {"s/r1"})) == 1
    assert len(leaks([{**clean, "text_pair": " A dog."}], [row], {"s/r1"})) == 1


def test_no_demonstration_is_a_test_row_of_any_suite_of_the_build(all_folder):
    """Issue 32, item 9: not the suites that use the pool only; exact and near duplicates."""
    manifest, pools = read_manifest(all_folder), read_pools(all_folder)
    loaded = {name: load_pool(all_folder, name, entry) for name, entry in pools.items()}
    rows = {s: pq.read_table(parquet_path(all_folder, s)).to_pylist() for s in manifest}
    every = [r for suite_rows in rows.values() for r in suite_rows]
    all_ids = {r["id"] for r in every}
    without, used = set(), set()
    for suite, entry in manifest.items():
        name = suite_pool(pools, entry)
        if name is None:
            without.add(suite)
            continue
        used.add(name)
        task = suite_task(entry)
        spec = lookup(entry["family"], task.name, task.label_names)
        prompts = {render(spec.template, r) for r in rows[suite]}
        assert not prompts & {render(spec.template, d) for d in loaded[name]}, suite
    assert leaks([d for pool in loaded.values() for d in pool], every, all_ids) == []
    index = folder_index(all_folder, manifest)
    for name, pool in loaded.items():
        raw = _raw_texts(name)
        for demo in pool:
            sets = word_sets(raw(demo))
            for unit in [*sets, frozenset().union(*sets)]:
                assert index.find(unit) is None, (name, demo["id"], index.find(unit))
    assert without == NO_POOL_FULL & set(manifest)
    assert used == set(pools)  # every pool serves a built suite
    assert {n: e["checked_against"] for n, e in pools.items()} == dict.fromkeys(
        pools, suites_digest(manifest))


def _raw_texts(name: str):
    """A pool's demonstration -> its sentences (a CALM pool row holds them rendered)."""
    if not name.startswith("calm_"):
        return lambda demo: [t for t in (demo["text"], demo["text_pair"]) if t is not None]
    from consistency_bench.builders.fewshot import POOLS, candidates

    source = {c.row: c for c in candidates(POOLS[name], _RESOLVER)}
    return lambda demo: [t for t in (source[demo["source_row"]].text,
                                     source[demo["source_row"]].text_pair) if t is not None]


def test_what_the_test_text_index_leaves_out_is_covered(all_folder):
    """CALM inputs add only indicator words to their sentences; a merged text is its parts."""
    manifest = read_manifest(all_folder)
    indicators = {"premise", "hypothesis", "sentence", "sentence1", "sentence2", "question",
                  "mnli", "qnli", "rte", "mrpc", "qqp", "전제", "가설", "문장1", "문장2"}
    for suite, entry in manifest.items():
        table = pq.read_table(parquet_path(all_folder, suite))
        if "raw_text" in table.column_names:
            formatted = [a | b for a, b in zip(word_sets(table["text"].to_pylist()),
                                               word_sets(table["text_pair"].to_pylist()),
                                               strict=True)]
            raw = [a | b for a, b in zip(word_sets(table["raw_text"].to_pylist()),
                                         word_sets(table["raw_text_pair"].to_pylist()),
                                         strict=True)]
            extra = set().union(*(f - r for f, r in zip(formatted, raw, strict=True)))
            assert extra <= indicators, (suite, extra - indicators)
        if entry["kind"] == "additive":
            text = dict(zip(table["id"].to_pylist(), table["text"].to_pylist(), strict=True))
            for row in table.filter(pc.equal(table["variant"], "merged")).to_pylist():
                first, second = (text[i] for i in row["antecedent_ids"])
                assert row["text"] == f"{first.strip()} {second.strip()}", row["id"]


def test_no_prompt_of_any_built_row_doubles_punctuation(all_folder):
    """BoolQ wrote ``{{text}}?`` after questions that end in "?" (2,143 of 2,152 rows)."""
    double = re.compile(r"[?!.][?!]")
    manifest = read_manifest(all_folder)
    checked = 0
    for suite, entry in manifest.items():
        task = suite_task(entry)
        table = pq.read_table(parquet_path(all_folder, suite))
        spec = lookup(entry["family"], task.name, task.label_names,
                      table.column("text_pair").null_count < table.num_rows)
        for row in table.to_pylist():
            fields = sum(len(double.findall(str(v))) for v in row.values() if isinstance(v, str))
            assert len(double.findall(render(spec.template, row))) <= fields, (suite, row["id"])
            checked += 1
    assert checked == sum(e["rows"] for e in manifest.values())


def test_boolq_prompt_has_one_question_mark():
    spec = lookup("becel", "boolq", ["false", "true"])
    for question in ("is it true?", "is it true", "is it true ?? ", "is it true."):
        prompt = render(spec.template, {"text": question, "text_pair": "P."})
        assert prompt == "P.\nQuestion: is it true?\nAnswer:"


@pytest.fixture(scope="module")
def small(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("fewshot") / "cb", SMALL)


def test_pools_are_declared_deterministic_and_checked(small, corpora, tmp_path):
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.fewshot import POOL_SIZE, POOL_VERSION, POOLS, build_pools

    pools = read_pools(small)
    assert set(pools) == set(POOLS)  # no MultiNLI or SNLI-salad suite here: every pool has rows
    copy = tmp_path / "cb"
    shutil.copytree(small, copy)
    shutil.rmtree(copy / "fewshot")
    again = build_pools(SourceResolver(corpora, download=False), copy, log=lambda _: None)
    for name, entry in pools.items():
        assert again[name]["sha256"] == entry["sha256"], name  # byte-identical rebuild
        data = (small / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert entry["rows"] == POOL_SIZE and entry["sources"], name
        assert entry["version"] == POOL_VERSION
        assert entry["checked_against"] == suites_digest(read_manifest(small))
    broken = copy / "fewshot" / "sst2.parquet"
    broken.write_bytes(broken.read_bytes()[:-10])
    with pytest.raises(DataError, match="sha256"):
        load_pool(copy, "sst2", again["sst2"])


def test_a_near_duplicate_of_a_test_row_is_no_demonstration(small, corpora):
    """BoolQ dev row 925 is a BoolQ test row with other spacing (issue 32, item 9)."""
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.fewshot import POOLS, pool_rows

    pools = read_pools(small)
    kept = {r["source_row"] for r in load_pool(small, "boolq", pools["boolq"])}
    unchecked = {r["source_row"]
                 for r in pool_rows(POOLS["boolq"], SourceResolver(corpora, download=False))}
    assert 925 in unchecked and 925 not in kept
    assert pools["boolq"]["test_rows_dropped"]["near_duplicate"] >= 1
    assert len(kept) == len(unchecked)  # the next candidate in hash order took its place


def test_a_suite_added_without_a_build_drops_the_demonstrations_it_holds(small, tmp_path):
    """``generate`` merges suites into a built folder: its pools are checked again."""
    from consistency_bench.builders.catalog import get_suite
    from consistency_bench.builders.suite.write import save_manifest, write_suite

    root = tmp_path / "cb"
    shutil.copytree(small, root)
    demo = load_pool(root, "sst2", read_pools(root)["sst2"])[5]
    spec = get_suite("sst2_semantic")
    rows = pq.read_table(parquet_path(root, spec.name)).to_pylist()[:2]
    rows[1] = {**rows[1], "text": demo["text"].upper() + " !"}  # a near duplicate of the demo
    manifest = read_manifest(root)
    built = write_suite(spec, rows, root)  # the suite's file, rewritten with the demo in it
    manifest[spec.name] = {**manifest[spec.name], "sha256": built.sha256, "rows": 2}
    save_manifest(root, manifest)
    pools = read_pools(root)
    kept = load_pool(root, "sst2", pools["sst2"])
    assert demo["id"] not in {r["id"] for r in kept} and len(kept) == 63
    assert pools["sst2"]["test_rows_dropped"]["near_duplicate"] == 1
    assert pools["sst2"]["checked_against"] == suites_digest(read_manifest(root))
    assert pools["boolq"] == read_pools(small)["boolq"] | {
        "checked_against": pools["sst2"]["checked_against"]}  # unchanged but the digest


def test_seed_order_and_demonstrations():
    pool = [{"id": f"fewshot/x/{i:06d}", "label": i % 2} for i in range(10)]
    a, b = seed_order(pool, 0), seed_order(pool, 1)
    assert sorted(r["id"] for r in a) == sorted(r["id"] for r in pool) and a != b
    assert seed_order(list(reversed(pool)), 0) == a  # independent of the stored order
    assert demonstrations(pool, 3, 0, "p") == a[:3]
    with pytest.raises(DataError, match="has 10 demonstrations"):
        demonstrations(pool, 11, 0, "p")


def test_export_gives_lm_eval_the_pool_in_the_seed_order(small, tmp_path, capsys):
    from lm_eval.api.samplers import get_sampler

    from consistency_bench.cli import main

    pools = read_pools(small)
    pool = load_pool(small, "sst2", pools["sst2"])
    for seed in (0, 7):
        out = tmp_path / f"t{seed}"
        assert main(["export-lm-eval", "--data", str(small), "--out", str(out),
                     "--fewshot-seed", str(seed)]) == 0
        config = yaml.safe_load((out / "consistency_bench_sst2_semantic.yaml").read_text())
        fewshot = config["fewshot_config"]
        assert fewshot["sampler"] == "first_n" and "num_fewshot" not in config
        assert config["metadata"]["fewshot"]["sha256"] == pools["sst2"]["sha256"]
        sampler = get_sampler(fewshot["sampler"])(fewshot["samples"], rnd=1234)
        for k in (1, 3, 5):
            drawn = sampler.sample(k, eval_doc=None)
            assert [d["id"] for d in drawn] == [
                d["id"] for d in demonstrations(pool, k, seed, "sst2")]
        kornli = yaml.safe_load((out / "consistency_bench_kornli_calm.yaml").read_text())
        assert kornli["num_fewshot"] == 0 and "fewshot_config" not in kornli
    assert "consistency_bench_kornli_calm: num_fewshot pinned to 0" in capsys.readouterr().err


def test_predict_skips_suites_without_a_pool_and_goes_on(small, capsys):
    collected = collect_causal_inputs(small, SMALL, RunnerOptions(num_fewshot=2, progress=False))
    assert [s.suite for s in collected.suites] == ["sst2_semantic", "boolq_semantic"]
    assert all(ctx.count("\nAnswer:") == 3 for ctx, _ in collected.unique)
    err = capsys.readouterr().err
    assert ("skipping suite kornli_calm with --num-fewshot 2: no few-shot pool for calm "
            "kornli" in err)
    with pytest.raises(ConfigError, match="no suite asked for has a few-shot pool"):
        collect_causal_inputs(small, ["kornli_calm"], RunnerOptions(num_fewshot=1))
    with pytest.raises(DataError, match="has 64 demonstrations"):
        collect_causal_inputs(small, ["sst2_semantic"], RunnerOptions(num_fewshot=65))
    assert prompt_key("calm", "mnli") == ("calm", "mnli")
    assert prompt_key("salad", "mnli") == (None, "mnli")


def test_a_pool_not_written_again_leaves_no_earlier_file(small, corpora, tmp_path,
                                                         monkeypatch):
    """A pool that empties (every candidate became a test row) or whose source is gone has
    its earlier file removed from the folder being built: a rebuild kept the old file, which
    ``suites.json`` no longer listed, and ``publish-suites`` then refused the folder."""
    from consistency_bench.bench.errors import SourceUnavailableError
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders import fewshot

    copy = tmp_path / "cb"
    shutil.copytree(small, copy)
    real = fewshot.pool_rows

    def rows(spec, *args, **kwargs):
        if spec.name in ("sst2", "wic"):
            return []
        if spec.name == "boolq":
            raise SourceUnavailableError("boolq dev: not in the mirror; offline")
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(fewshot, "pool_rows", rows)
    (copy / "fewshot" / "wic.parquet").unlink()
    (copy / "fewshot" / "wic.parquet").symlink_to(small / "fewshot" / "wic.parquet")
    lines: list[str] = []
    again = fewshot.build_pools(SourceResolver(corpora, download=False), copy, lines.append)
    assert "sst2" not in again and "boolq" not in again
    assert not (copy / "fewshot" / "sst2.parquet").exists()
    assert not (copy / "fewshot" / "boolq.parquet").exists()
    assert (small / "fewshot" / "sst2.parquet").is_file()  # the copy's source untouched
    assert any("fewshot/sst2.parquet removed" in line for line in lines)
    assert any("fewshot/boolq.parquet removed" in line for line in lines)
    assert "wic" not in again and (copy / "fewshot" / "wic.parquet").is_symlink()  # left alone
    assert (small / "fewshot" / "wic.parquet").is_file()
