"""Few-shot pools: built from the mirror, never a test row, the same demonstrations both routes.

The leak and prompt checks run over every suite the mirror builds (``all_folder``); the pool
and export checks over a small folder.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from bench.errors import ConfigError, DataError
from bench.fewshot import (
    demonstrations,
    load_pool,
    prompt_key,
    read_pools,
    seed_order,
    suite_pool,
)
from bench.manifest import parquet_path, read_manifest
from bench.prompts import lookup, render
from bench.runner import RunnerOptions, collect_causal_inputs, suite_task
from tests.helpers import build_suites

#: Suites whose task has no labelled rows in the mirror that are not test rows.
NO_POOL = {"kornli_calm", "kornli_test_calm", "klue_nli_calm", "qnli_calm", "qnli_calm_t2t"}
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


def test_no_demonstration_is_a_test_row_of_any_suite_that_uses_it(all_folder):
    manifest, pools = read_manifest(all_folder), read_pools(all_folder)
    loaded = {name: load_pool(all_folder, name, entry) for name, entry in pools.items()}
    rows = {s: pq.read_table(parquet_path(all_folder, s)).to_pylist() for s in manifest}
    all_ids = {r["id"] for suite_rows in rows.values() for r in suite_rows}
    without, used = set(), set()
    for suite, entry in manifest.items():
        name = suite_pool(pools, entry)
        if name is None:
            without.add(suite)
            continue
        used.add(name)
        assert leaks(loaded[name], rows[suite], all_ids) == [], suite
        task = suite_task(entry)
        spec = lookup(entry["family"], task.name, task.label_names)
        prompts = {render(spec.template, r) for r in rows[suite]}
        assert not prompts & {render(spec.template, d) for d in loaded[name]}, suite
    assert without == NO_POOL & set(manifest)
    assert used == set(pools)  # every pool serves a built suite


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
    from bench.sources import SourceResolver
    from builders.fewshot import POOL_SIZE, POOLS, build_pools

    pools = read_pools(small)
    assert set(pools) == set(POOLS)
    again = build_pools(SourceResolver(corpora, download=False), tmp_path, log=lambda _: None)
    for name, entry in pools.items():
        assert again[name]["sha256"] == entry["sha256"], name  # byte-identical rebuild
        data = (small / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert entry["rows"] == POOL_SIZE and entry["sources"]
    broken = tmp_path / "fewshot" / "sst2.parquet"
    broken.write_bytes(broken.read_bytes()[:-10])
    with pytest.raises(DataError, match="sha256"):
        load_pool(tmp_path, "sst2", again["sst2"])


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
