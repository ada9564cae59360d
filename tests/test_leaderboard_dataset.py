"""The leaderboard dataset repo loads with ``datasets`` (issue 27 item 10).

Its card declared ``configs: [{config_name: results, data_files: leaderboard.json}]``, and
``load_dataset("ORG/leaderboard")`` failed (``ArrowInvalid: JSON parse error: Column() changed
from object to string``): leaderboard.json is one nested object. ``publish`` now sends
``results.parquet``, flat records (one row per view and entry), as the ``results`` config;
the real ``datasets`` client loads it through the stand-in Hub in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import yaml

from consistency_bench.bench.io.output_checks import OWNED
from consistency_bench.leaderboard.dataset.records import RESULTS_FILE, kinds_of, records
from consistency_bench.leaderboard.publish.plans import leaderboard_card
from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry
from consistency_bench.leaderboard.submissions.meta import Submission
from consistency_bench.leaderboard.submissions.reader import site_record
from consistency_bench.leaderboard.webpage.render import render_all
from tests.hub_standin import TOKEN, Hub
from tests.test_hub_reads import hub_env
from tests.test_leaderboard_ranking import res, suite

GOOD = {"accuracy": 0.9, "n_original": 200, "n_original_correct": 180, "majority_rate": 0.5,
        "top_prediction_share": 0.5, "consistent_accuracy_n": 200}
CONST = {**GOOD, "n_original_correct": 100, "top_prediction_share": 1.0}


def _board():
    def entry(name, cc, metrics, salad=True):
        suites = {"snli_semantic": suite(0.1, task="snli", kind="semantic", cc=cc,
                                         metrics=metrics),
                  "rte_semantic": suite(0.1, task="rte", kind="semantic", cc=cc / 2,
                                        metrics=metrics)}
        if salad:
            suites["snli_negational"] = suite(0.1, task="snli", kind="negational", cc=cc,
                                              metrics=metrics)
        return Entry(name, res(**suites), {"model": name, "parameters": 7, "variant": None})

    return rank([entry("good", 0.6, GOOD), entry("weak", 0.2, GOOD),
                 entry("constant", 0.1, CONST), entry("part", 0.5, GOOD, salad=False)])


def _site(tmp_path):
    lb = _board()
    subs, site = tmp_path / "subs", tmp_path / "site"
    for name in lb.meta:
        (subs / name).mkdir(parents=True)
        (subs / name / "meta.yaml").write_text(f"model: {name}\n")
        (subs / name / "results.json").write_text("{}")
    render_all(lb, site, subs)
    stored = [Submission(n, subs / n, {}, {}) for n in lb.meta]
    written = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    (site / OWNED).write_text(json.dumps(
        {"command": "leaderboard", "files": written, **site_record(subs, stored)}))
    return lb, site


def test_records_are_one_row_per_view_and_entry(tmp_path):
    lb, site = _site(tmp_path)
    table = pq.read_table(site / RESULTS_FILE)
    assert table.num_rows == sum(len(v.rows) for v in lb.views.values())
    rows = table.to_pylist()
    assert rows == records(lb)
    assert table.schema.field("kind_means").type.names == kinds_of(lb) == ["semantic",
                                                                         "negational"]
    by = {(r["view"], r["entry"]): r for r in rows}
    assert by[("all", "good")]["rank"] == 1 and by[("all", "good")]["status"] == "ranked"
    assert by[("all", "constant")]["status"] == "reference"
    assert by[("all", "constant")]["degenerate_tasks"] == ["snli", "rte"]
    assert by[("all", "part")]["status"] == "partial" and by[("all", "part")]["covered"] == 2
    assert by[("task:rte", "good")]["kind_means"] == {"semantic": 0.3, "negational": None}
    assert by[("all", "part")]["coverage_weight"] == 0.5  # semantic only, of two kinds
    # deterministic: the same board gives the same bytes
    again = tmp_path / "again"
    render_all(lb, again)
    assert (again / RESULTS_FILE).read_bytes() == (site / RESULTS_FILE).read_bytes()


def test_card_declares_one_configs_list_with_results(tmp_path):
    render_all(_board(), tmp_path)
    card = leaderboard_card(tmp_path, "org/board")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["configs"] == [{"config_name": "results", "default": True,
                                  "data_files": [{"split": "train", "path": RESULTS_FILE}]}]
    assert "leaderboard.json" not in json.dumps(header["configs"])


LOAD = """
import json, sys
import datasets
ds = datasets.load_dataset("org/board", "results", split="train")
default = datasets.load_dataset("org/board", split="train")
print(json.dumps({"rows": ds.to_list(), "default_rows": default.num_rows,
                  "features": sorted(ds.features)}))
"""


def test_load_dataset_results_config_through_the_hub(tmp_path):
    lb, _ = _site(tmp_path)
    with Hub() as hub:
        env = hub_env(hub.url, tmp_path, TOKEN)
        proc = subprocess.run([sys.executable, "-m", "consistency_bench", "publish", "--repo",
                               "org/board", "--site", "site", "--submissions", "subs"],
                              env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert RESULTS_FILE in hub.files_at("org/board")
        proc = subprocess.run([sys.executable, "-c", LOAD], env=hub_env(hub.url, tmp_path),
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["rows"] == records(lb)  # every value as ranked, nested kind means included
    assert got["default_rows"] == len(got["rows"])  # `results` is the default config
    assert {"view", "entry", "rank", "status", "score", "rank_low", "rank_high", "kind_means",
            "covered", "total", "flags"} <= set(got["features"])
