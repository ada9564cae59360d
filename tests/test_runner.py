"""The prediction runner: tiny random models built in the test, suites built from the mirror."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from consistency_bench.bench.errors import ConfigError  # noqa: E402
from consistency_bench.bench.modeling.label_map import (  # noqa: E402
    map_probs,
    match_generated,
    parse_label_map,
    resolve_label_mapping,
)
from consistency_bench.bench.modeling.loading import load_classifier  # noqa: E402
from consistency_bench.bench.prompting.row_inputs import classifier_input, t5_prompt  # noqa: E402
from consistency_bench.bench.registries.tasks import get_task  # noqa: E402
from consistency_bench.bench.runner.batching import OutOfMemory, run_batches  # noqa: E402
from consistency_bench.bench.runner.forward import make_forward  # noqa: E402
from consistency_bench.bench.runner.options import RunnerOptions  # noqa: E402
from consistency_bench.bench.runner.run import predict  # noqa: E402
from consistency_bench.cli import main  # noqa: E402
from tests.helpers import build_suites  # noqa: E402
from tests.tiny_models import tiny_bert, tiny_t5  # noqa: E402

SUITES = ["rte_semantic", "rte_negational", "wic_semantic"]
WIC_MAP = "wic:false=not_entailment,true=entailment"


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("runner") / "cb", SUITES)


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("bert") / "m", labels=("entailment", "not_entailment"))


def rows_of(folder: Path, suite: str) -> list[dict]:
    return pq.read_table(folder / suite / "test.parquet").to_pylist()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def opts(**kw) -> RunnerOptions:
    kw.setdefault("progress", False)
    kw.setdefault("label_map", parse_label_map(WIC_MAP))
    return RunnerOptions(**kw)


def test_end_to_end_matches_unbatched_forward_and_scores(folder, bert, tmp_path):
    loaded = load_classifier(bert, device="cpu")
    out = tmp_path / "pred.jsonl"
    stats = predict(loaded, str(bert), folder, SUITES, out, opts())
    records = read_jsonl(out)
    expected_ids = [r["id"] for s in SUITES for r in rows_of(folder, s)]
    assert [r["id"] for r in records] == expected_ids
    assert stats.rows == len(expected_ids)
    for record in records:
        assert abs(sum(record["probs"]) - 1) < 1e-3
        assert record["label"] == max(range(2), key=record["probs"].__getitem__)
    # batched + padded + sorted results equal a one-at-a-time forward
    rows = {r["id"]: r for s in SUITES for r in rows_of(folder, s)}
    by_id = {r["id"]: r for r in records}
    for row_id in list(rows)[:5] + [i for i in rows if i.startswith("wic")][:5]:
        row = rows[row_id]
        text, pair = classifier_input(row, row["task"])
        enc = loaded.tokenizer(text, pair, return_tensors="pt")
        with torch.inference_mode():
            probs = torch.softmax(loaded.model(**enc).logits, -1)[0].tolist()
        if row["task"] == "wic":  # false=not_entailment(1), true=entailment(0)
            probs = [probs[1], probs[0]]
        assert by_id[row_id]["probs"] == pytest.approx(probs, abs=1e-4)
    # the scorer accepts the file
    from consistency_bench.bench.scoring.engine import score_file

    results = score_file(out, folder, n_boot=10)
    assert set(results["suites"]) == set(SUITES)


def test_dedup_runs_each_distinct_input_once(folder, bert, tmp_path):
    loaded = load_classifier(bert, device="cpu")
    seen: list[int] = []

    def counting_factory(loaded, encoded, options):
        forward = make_forward(loaded, encoded, options)

        def wrapped(batch):
            seen.extend(batch)
            return forward(batch)

        return wrapped

    suites = ["rte_semantic", "rte_negational"]
    stats = predict(loaded, str(bert), folder, suites, tmp_path / "p.jsonl", opts(),
                    forward_factory=counting_factory)
    distinct = {(r["text"], r["text_pair"]) for s in suites for r in rows_of(folder, s)}
    assert stats.unique == len(distinct) < stats.rows
    assert len(seen) == len(set(seen)) == len(distinct)


def test_resume_after_interruption_skips_done_inputs(folder, bert, tmp_path):
    loaded = load_classifier(bert, device="cpu")
    out = tmp_path / "pred.jsonl"
    calls = {"n": 0}

    def interrupting_factory(loaded, encoded, options):
        forward = make_forward(loaded, encoded, options)

        def wrapped(batch):
            calls["n"] += 1
            if calls["n"] > 3:
                raise KeyboardInterrupt
            return forward(batch)

        return wrapped

    options = opts(batch_size=16, chunk_size=16)
    with pytest.raises(KeyboardInterrupt):
        predict(loaded, str(bert), folder, SUITES, out, options,
                forward_factory=interrupting_factory)
    assert not out.exists()
    parts = out.with_name(out.name + ".parts")
    assert len(list(parts.glob("shard-*.jsonl"))) == 3
    stats = predict(loaded, str(bert), folder, SUITES, out, options)
    assert stats.resumed == 48 and stats.computed == stats.unique - 48
    assert not parts.exists()
    fresh = tmp_path / "fresh.jsonl"
    predict(loaded, str(bert), folder, SUITES, fresh, options)
    # the batch plan does not depend on what was done: the same batches, the same bytes
    assert out.read_bytes() == fresh.read_bytes()


def test_resume_refuses_parts_of_another_run(folder, bert, tmp_path):
    loaded = load_classifier(bert, device="cpu")
    out = tmp_path / "pred.jsonl"
    parts = out.with_name(out.name + ".parts")
    parts.mkdir()
    (parts / "run.json").write_text(json.dumps({"model": "other"}))
    (parts / "shard-0-000000.jsonl").write_text('{"k": "x", "v": [0.5, 0.5]}\n')
    with pytest.raises(ConfigError, match="different run"):
        predict(loaded, str(bert), folder, ["rte_semantic"], out, opts())


def test_resume_refuses_parts_computed_in_another_dtype(folder, bert, tmp_path):
    """float32 results and bfloat16 ones must not be joined in one file."""
    out = tmp_path / "pred.jsonl"
    options = opts(batch_size=16, chunk_size=16)

    def interrupting_factory(loaded, encoded, options):
        forward = make_forward(loaded, encoded, options)
        calls = []

        def wrapped(batch):
            calls.append(batch)
            if len(calls) > 1:
                raise KeyboardInterrupt
            return forward(batch)

        return wrapped

    with pytest.raises(KeyboardInterrupt):
        predict(load_classifier(bert, device="cpu"), str(bert), folder, ["rte_semantic"], out,
                options, forward_factory=interrupting_factory)
    assert list(out.with_name(out.name + ".parts").glob("shard-*.jsonl"))
    with pytest.raises(ConfigError, match="different run"):
        predict(load_classifier(bert, device="cpu", dtype="bfloat16"), str(bert), folder,
                ["rte_semantic"], out, options)


def test_stale_parts_without_results_do_not_block_the_rerun(folder, bert, tmp_path):
    """A run refused before its first batch left run.json only: the corrected run goes on."""
    loaded = load_classifier(bert, device="cpu")
    out = tmp_path / "pred.jsonl"
    parts = out.with_name(out.name + ".parts")
    parts.mkdir()
    (parts / "run.json").write_text(json.dumps({"model": "other", "max_length": 1}))
    predict(loaded, str(bert), folder, ["rte_semantic"], out, opts())
    assert out.is_file() and not parts.exists()


def test_unmatched_labels_error_names_them(folder, bert, tmp_path):
    loaded = load_classifier(bert, device="cpu")
    with pytest.raises(ConfigError, match=r"task wic: false, true match no model label"):
        predict(loaded, str(bert), folder, ["wic_semantic"], tmp_path / "p.jsonl",
                opts(label_map={}))
    assert not (tmp_path / "p.jsonl").exists()


def test_label_matching_rules(tmp_path):
    snli = get_task("snli")
    upper = {0: "CONTRADICTION", 1: "Neutral", 2: "ENTAILMENT"}
    assert resolve_label_mapping(upper, snli) == ((2,), (1,), (0,))
    rte = get_task("rte")
    assert resolve_label_mapping({0: "entailment", 1: "Not Entailment"}, rte) == ((0,), (1,))
    nli3 = {0: "entailment", 1: "neutral", 2: "contradiction"}
    merged = resolve_label_mapping(nli3, rte, parse_label_map("rte:not_entailment=neutral+2"))
    assert merged == ((0,), (1, 2))
    assert map_probs([0.5, 0.3, 0.2], merged) == pytest.approx([0.5, 0.5])
    generic = {0: "LABEL_0", 1: "LABEL_1"}
    with pytest.raises(ConfigError, match="not_equivalent, equivalent match no model label"):
        resolve_label_mapping(generic, get_task("mrpc"))
    by_index = parse_label_map("mrpc:not_equivalent=0,equivalent=LABEL_1")
    assert resolve_label_mapping(generic, get_task("mrpc"), by_index) == ((0,), (1,))
    with pytest.raises(ConfigError, match="not a label of task mrpc"):
        resolve_label_mapping(generic, get_task("mrpc"), parse_label_map("mrpc:yes=0"))
    with pytest.raises(ConfigError, match="no such label or index"):
        resolve_label_mapping(generic, get_task("mrpc"), parse_label_map("mrpc:equivalent=7"))
    with pytest.raises(ConfigError, match="expected TASK:label=model_label"):
        parse_label_map("entailment=0")
    with pytest.raises(ConfigError, match="bad pair"):
        parse_label_map("rte:entailment")
    spec = tmp_path / "map.json"
    spec.write_text(json.dumps({"rte": {"not_entailment": ["neutral", "contradiction"]}}))
    assert parse_label_map(str(spec)) == {"rte": {"not_entailment": ("neutral", "contradiction")}}
    spec.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="expected"):
        parse_label_map(str(spec))


def test_oom_fallback_halves_and_finishes():
    sizes: list[int] = []

    def forward(batch):
        sizes.append(len(batch))
        if len(batch) > 4:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return [i * 10 for i in batch]

    done: dict[int, int] = {}
    lengths = {i: 10 for i in range(20)}
    retries = run_batches(list(range(20)), lengths, forward,
                          lambda b, r: done.update(zip(b, r, strict=True)),
                          batch_size=None, token_budget=10_000, max_rows=16)
    assert done == {i: i * 10 for i in range(20)}
    assert retries == 2 and sizes[:3] == [16, 8, 4]
    assert max(s for s in sizes[2:]) <= 4
    # fixed batch size: same fallback; RuntimeError("... out of memory") counts too
    sizes.clear()

    def forward_rt(batch):
        sizes.append(len(batch))
        if len(batch) > 3:
            raise RuntimeError("CUDA error: out of memory")
        return batch

    run_batches(list(range(9)), lengths, forward_rt, lambda b, r: None, batch_size=8,
                token_budget=0, max_rows=0)
    assert sizes[:3] == [8, 4, 2]


def test_oom_on_single_input_and_other_errors_raise():
    def oom(batch):
        raise torch.cuda.OutOfMemoryError("out of memory")

    with pytest.raises(OutOfMemory, match="single input of 7 tokens"):
        run_batches([0], {0: 7}, oom, lambda b, r: None, batch_size=None, token_budget=100,
                    max_rows=4)

    def broken(batch):
        raise ValueError("shape mismatch")

    with pytest.raises(ValueError, match="shape mismatch"):
        run_batches([0, 1], {0: 7, 1: 7}, broken, lambda b, r: None, batch_size=2,
                    token_budget=0, max_rows=0)


def test_t5_generates_and_keeps_free_text(folder, tmp_path):
    path = tiny_t5(tmp_path / "t5")
    loaded = load_classifier(path, device="cpu")
    assert loaded.is_seq2seq and loaded.id2label == {}
    out = tmp_path / "t5.jsonl"
    stats = predict(loaded, str(path), folder, ["rte_semantic"], out, opts())
    records = read_jsonl(out)
    assert len(records) == stats.rows == len(rows_of(folder, "rte_semantic"))
    for record in records:
        assert isinstance(record["label"], int | str) and "probs" not in record
        if isinstance(record["label"], int):
            assert record["label"] in (0, 1)
    from consistency_bench.bench.scoring.engine import score_file

    scored = score_file(out, folder, n_boot=10)["suites"]["rte_semantic"]
    free_text = sum(isinstance(r["label"], str) for r in records)
    assert scored["metrics"]["n_invalid"] == free_text


def test_prompts_and_generated_answers():
    row = {"text": "A man sleeps.", "text_pair": "A person rests.", "word": "rest"}
    assert t5_prompt(row, "snli") == "mnli hypothesis: A person rests. premise: A man sleeps."
    assert t5_prompt(row, "rte") == "rte sentence1: A man sleeps. sentence2: A person rests."
    assert t5_prompt(row, "wic").endswith("sentence2: A person rests. word: rest")
    assert classifier_input(row, "wic") == ("rest: A man sleeps.", "A person rests.")
    assert classifier_input(row, "wic", "pair") == ("A man sleeps.", "A person rests.")
    rte = get_task("rte")
    assert match_generated("not_entailment", rte) == 1
    assert match_generated(" Entailment", rte) == 0
    assert match_generated("maybe so", rte) == "maybe so"
    boolq = get_task("boolq")
    assert match_generated("yes", boolq, parse_label_map("boolq:true=yes,false=no")) == 1


def test_cli_predict_and_errors(folder, bert, tmp_path, capsys):
    out = tmp_path / "cli.jsonl"
    code = main(["predict", "--model", str(bert), "--data", str(folder), "--out", str(out),
                 "--batch-size", "8", "--no-progress", "--device", "cpu"])
    assert code == 0
    captured = capsys.readouterr()
    assert "skipping 1 suites" in captured.err and "wic_semantic" in captured.err
    ids = {r["id"] for r in read_jsonl(out)}
    assert {i.split("/")[0] for i in ids} == {"rte_semantic", "rte_negational"}
    code = main(["predict", "--model", str(bert), "--data", str(folder), "--out", str(out),
                 "--suites", "wic_semantic", "--no-progress", "--device", "cpu"])
    assert code == 2 and "match no model label" in capsys.readouterr().err
    code = main(["predict", "--model", str(bert), "--data", str(folder), "--out", str(out),
                 "--batch-size", "0"])
    assert code == 2 and "--batch-size" in capsys.readouterr().err


@pytest.mark.gpu
def test_cuda_autocast_matches_cpu(folder, bert, tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    cpu, gpu = tmp_path / "cpu.jsonl", tmp_path / "gpu.jsonl"
    predict(load_classifier(bert, device="cpu"), str(bert), folder, SUITES, cpu, opts())
    loaded = load_classifier(bert, device="cuda")
    assert loaded.device.type == "cuda"
    predict(loaded, str(bert), folder, SUITES, gpu, opts())
    for a, b in zip(read_jsonl(cpu), read_jsonl(gpu), strict=True):
        assert a["probs"] == pytest.approx(b["probs"], abs=2e-2)


def test_cuda_request_without_cuda_is_a_clear_error(bert):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(ConfigError, match="CUDA is not available"):
        load_classifier(bert, device="cuda")


def test_runner_modules_import_light():
    import subprocess
    import sys

    code = ("import sys, consistency_bench.bench.runner, consistency_bench.bench.modeling, consistency_bench.bench.prompting.row_inputs, consistency_bench.bench.baselines, "  # noqa: E501
            "consistency_bench.bench.baselines.training, consistency_bench.commands.predict, consistency_bench.commands.train, "  # noqa: E501
            "consistency_bench.commands.baseline; "
            "heavy = [m for m in ('torch', 'transformers', 'sklearn') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
