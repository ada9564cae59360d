"""The page's explorer and interactive plots in headless Chromium (issue 31, items 2, 4, 5).

Two entries are submitted (real scorer) on two built suites whose texts were made hostile
(markup, a closing script tag, a ``javascript:`` link, an event handler), and the site
rendered with ``--data``. In the page: the explorer of an entry lists exactly the seeded
sample of each suite's inconsistent groups (``consistency_bench.bench.inconsistent.sample``, drawn
when the
page is rendered), each of them inconsistent by ``inspect``; the kind and gold-label filters
keep exactly the sample's groups of that kind and label; the negation is shown as an edit;
hostile texts are shown as text, nothing runs, the CSP is untouched and reports nothing; the
plots draw one point per entry covering the view; at 390 px the groups fit the screen.
The first page grows by less than 10%.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from consistency_bench.bench.inconsistent.inspect import InspectRequest, inspect_predictions
from consistency_bench.bench.inconsistent.sample import entry_samples
from consistency_bench.leaderboard.explorer.payload import DEFAULT_GROUPS
from consistency_bench.leaderboard.plots.points import view_points
from consistency_bench.leaderboard.webpage.static import CSS, JS, csp
from tests.helpers import build_suites
from tests.page_probe import needs_chromium, probe, probe_framed, run, served

REPO = Path(__file__).resolve().parents[1]
SUITES = ["snli_negational", "rte_semantic"]
HOSTILE = (' <img src=x onerror="window.pwned=1"></script><script>window.pwned=2</script>'
           ' <a href="javascript:window.pwned=3">x</a> " onmouseover="window.pwned=4')


def _poison(folder: Path, name: str) -> None:
    """Append hostile markup to every hypothesis of a built suite, keeping it a valid build."""
    path = folder / name / "test.parquet"
    table = pq.read_table(path)
    column = table.column("text_pair").to_pylist()
    table = table.set_column(table.column_names.index("text_pair"), "text_pair",
                             pa.array([None if t is None else t + HOSTILE for t in column]))
    pq.write_table(table, path, compression="zstd")
    manifest = json.loads((folder / "suites.json").read_text())
    manifest["suites"][name]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (folder / "suites.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _write(folder: Path, out: Path, flip_every: int) -> Path:
    """Gold answers with probabilities; every ``flip_every``-th group ignores the negation or
    flips the paraphrase."""
    manifest = json.loads((folder / "suites.json").read_text())["suites"]
    with open(out, "w") as handle:
        for name in SUITES:
            n = len(manifest[name]["label_names"])
            for row in pq.read_table(folder / name / "test.parquet").to_pylist():
                label = row["label"] if row["label"] is not None else 0
                if row["source_row"] % flip_every == 0 and row["variant"] != "original":
                    label = 0 if row["variant"] == "negated" else (label + 1) % n
                probs = [0.85 if i == label else 0.15 / (n - 1) for i in range(n)]
                handle.write(json.dumps({"id": row["id"], "label": label, "probs": probs})
                             + "\n")
    return out


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "consistency_bench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def board(corpora, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("explorer")
    data = build_suites(corpora, root / "cb", SUITES)
    _poison(data, "snli_negational")
    for name, every in (("alpha", 3), ("beta", 4)):
        preds = _write(data, root / f"{name}.jsonl", every)
        (root / f"{name}.yaml").write_text(
            f"model: org/{name}\nrevision: main\nlicense: mit\nlink: https://example.org\n"
            "contact: me@example.org\n")
        done = _cli(["submit", str(preds), "--name", name, "--meta", f"{name}.yaml", "--data",
                     "cb", "--submissions", "subs"], root)
        assert done.returncode == 0, done.stderr
    done = _cli(["leaderboard", "--data", "cb", "--submissions", "subs", "--out", "site"], root)
    assert done.returncode == 0, done.stderr
    return root


EXPLORE = """
var cb = window.consistencyBench;
function listed() {
  return Array.prototype.map.call(document.querySelectorAll('#ex-out .ex-group'),
    function (g) { return g.getAttribute('data-suite') + '|' + g.getAttribute('data-group'); });
}
function choose(id, value) {
  var s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event('change'));
}
document.querySelector('#explorer summary').click();
return until(function () { return cb.explorer; }).then(function () {
  return cb.explorer.open('alpha');
}).then(function () {
  out.all = listed();
  out.kinds = Array.prototype.map.call(document.getElementById('ex-kind').options,
    function (o) { return o.value; });
  choose('ex-kind', 'negational');
  out.neg = listed();
  choose('ex-label', 'entailment');
  out.negEnt = listed();
  out.text = document.getElementById('ex-out').textContent;
  out.imgs = document.querySelectorAll('#ex-out img, #ex-out script, #ex-out a').length;
  out.ins = Array.prototype.map.call(document.querySelectorAll('#ex-out .ex-ins'),
    function (e) { return e.textContent; });
  choose('ex-kind', ''); choose('ex-label', '');
  document.querySelector('#plots summary').click();
  return until(function () { return document.querySelectorAll('#pl-scatter g.point').length; });
}).then(function () {
  out.points = Array.prototype.map.call(document.querySelectorAll('#pl-scatter g.point'),
    function (g) { return g.getAttribute('data-entry'); });
  out.bars = document.querySelectorAll('#pl-profile rect').length;
  out.view = document.getElementById('pl-view').value;
});
"""


def _expected(board: Path) -> dict[str, list[tuple[str, str | None]]]:
    samples = entry_samples("alpha", board / "subs/alpha/predictions.jsonl.gz", board / "cb",
                            DEFAULT_GROUPS)
    return {s.suite: [(g.group, g.gold) for g in s.groups] for s in samples}


@needs_chromium
def test_explorer_lists_the_sample_filters_it_and_escapes_hostile_texts(board):
    out, _ = probe(board / "site", EXPLORE)
    assert out.get("exception") is None, out
    assert out["errors"] == [] and out["csp"] == [] and out["pwned"] is None
    expected = _expected(board)
    every = [f"{s}|{g}" for s in sorted(expected) for g, _ in expected[s]]
    assert out["all"] == every and len(every) == 2 * DEFAULT_GROUPS  # both suites, 10 each
    # every listed group is inconsistent by inspect (the scorer's definition)
    report = inspect_predictions(InspectRequest(board / "subs" / "alpha", board / "cb",
                                                limit=None))
    inconsistent = {f"{g.suite}|{g.group}" for g in report.groups}
    assert set(out["all"]) <= inconsistent
    # the filters keep exactly the sample's groups of that kind, then of that gold label
    assert out["neg"] == [f"snli_negational|{g}" for g, _ in expected["snli_negational"]]
    assert out["negEnt"] == [f"snli_negational|{g}" for g, gold in expected["snli_negational"]
                             if gold == "entailment"] and out["negEnt"]
    assert sorted(out["kinds"]) == ["", "negational", "semantic"]
    # hostile texts are text: shown literally, no element made of them, nothing ran
    assert "onerror=\"window.pwned=1\"></script><script>window.pwned=2</script>" in out["text"]
    assert out["imgs"] == 0
    assert out["ins"]  # the edit that makes the negation is marked
    # the plots: one point per entry covering the first view
    assert sorted(out["points"]) == ["alpha", "beta"] and out["bars"] > 0


@needs_chromium
def test_explorer_works_served_over_http(board):
    from tests.page_probe import probe_page

    page = probe_page(board / "site", EXPLORE)
    with served(board / "site") as base:
        out, _ = run(base + page.name)
    assert out.get("exception") is None and out["errors"] == [] and out["csp"] == []
    assert len(out["all"]) == 2 * DEFAULT_GROUPS


NARROW = """
var cb = window.consistencyBench;
document.querySelector('#explorer summary').click();
return until(function () { return cb.explorer; }).then(function () {
  return cb.explorer.open('alpha');
}).then(function () {
  var width = window.innerWidth;
  var boxes = document.querySelectorAll('#ex-out .ex-group');
  out.width = width;
  out.groups = boxes.length;
  out.overflow = Array.prototype.filter.call(boxes, function (b) {  /* box or content wider */
    var table = b.querySelector('table');
    return b.getBoundingClientRect().right > width + 1 || b.scrollWidth > b.clientWidth + 1
      || table.getBoundingClientRect().right > width + 1;
  }).length;
  var td = document.querySelector('#ex-out .ex-group td');
  out.font = parseFloat(window.getComputedStyle(td).fontSize);
  out.pageWidth = document.documentElement.scrollWidth;
});
"""


@needs_chromium
def test_explorer_readable_at_390_px(board):
    out = probe_framed(board / "site", NARROW, fragment="", width=390)
    assert out.get("exception") is None, out
    assert out["width"] <= 390 and out["groups"] == 2 * DEFAULT_GROUPS
    assert out["overflow"] == 0  # every group fits the screen: no sideways scrolling to read
    assert out["font"] >= 11


def test_plot_files_hold_the_views_points(board):
    from consistency_bench.leaderboard.ranking.board import rank
    from consistency_bench.leaderboard.ranking.model import Entry
    from consistency_bench.leaderboard.submissions.reader import load_all

    subs = load_all(board / "subs")
    lb = rank([Entry(s.slug, s.results, s.meta) for s in subs])
    site = board / "site"
    for path in sorted((site / "data" / "plot").glob("*.js")):
        text = path.read_text()
        payload = json.loads(json.loads(text[text.index(",") + 1:text.rindex(")")]))
        points = {p["name"]: p for p in payload["points"]}
        want = {p.name: p for p in view_points(lb, payload["key"])}
        assert set(points) == set(want)
        for name, p in want.items():
            assert points[name]["acc"] == pytest.approx(p.accuracy, abs=1e-5)
            assert points[name]["cons"] == pytest.approx(p.consistency, abs=1e-5)


def test_first_page_within_ten_percent_and_csp_unchanged(board):
    from consistency_bench.leaderboard.explorer import panel

    page = (board / "site" / "index.html").read_text()
    assert f'content="{csp(JS + panel.BOOT_JS, CSS + panel.CSS)}"' in page
    assert "'unsafe-inline'" not in page and "'unsafe-eval'" not in page
    without = len(page.encode()) - len(panel.BOOT_JS.encode()) - len(panel.CSS.encode()) \
        - len(panel.sections(True).encode())
    assert len(page.encode()) <= 1.10 * without
    assert (board / "site" / panel.ASSET).is_file()
    assert len(list((board / "site" / "data" / "explorer").glob("*.js"))) == 2


def test_explorer_files_are_reused_when_nothing_changed(board, tmp_path):
    import shutil

    site = tmp_path / "site"
    shutil.copytree(board / "site", site)
    target = next((site / "data" / "explorer").glob("entry-alpha*.js"))
    marked = target.read_text().replace('\\"n\\":10', '\\"n\\":10,\\"reused\\":1')
    target.write_text(marked)
    done = _cli(["leaderboard", "--data", str(board / "cb"), "--submissions",
                 str(board / "subs"), "--out", str(site)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == marked  # the same key: the earlier file, not recomputed
    done = _cli(["leaderboard", "--data", str(board / "cb"), "--submissions",
                 str(board / "subs"), "--out", str(site), "--explorer-groups", "3"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "reused" not in target.read_text()  # another sample size: made again


def test_explorer_files_share_one_suite_folder_and_are_made_when_read(board, monkeypatch):
    """Issue 33 item 5: a render's explorer opens one suite folder for every entry (it opened
    one per entry: every suite loaded and hash-checked again per entry; at 40 entries over
    every suite the render's peak went from 0.7 to 2 GB there), makes each file when it is
    read, and gives the same bytes as one entry at a time with its own folder."""
    from consistency_bench.bench.scoring import engine
    from consistency_bench.leaderboard.explorer.payload import explorer_files, file_key, payload
    from consistency_bench.leaderboard.webpage.lazy import data_path, data_script

    entries = {name: (board / "subs" / name / "predictions.jsonl.gz",
                      json.loads((board / "subs" / name / "results.json").read_text()))
               for name in ("alpha", "beta")}
    stems = {"alpha": "entry-alpha", "beta": "entry-beta"}
    expected = {}
    for name, (preds, results) in entries.items():  # one entry, its own folder
        path = data_path("explorer", stems[name])
        samples = entry_samples(name, preds, board / "cb", DEFAULT_GROUPS,
                                sorted(results["suites"]))
        expected[path] = data_script(path, payload(name, samples, DEFAULT_GROUPS,
                                                   file_key(results, DEFAULT_GROUPS)))
    opened, loaded = [], []
    real_init, real_load = engine.SuiteFolder.__init__, engine.SuiteFolder._load_uncached
    monkeypatch.setattr(engine.SuiteFolder, "__init__",
                        lambda self, root: opened.append(root) or real_init(self, root))
    monkeypatch.setattr(engine.SuiteFolder, "_load_uncached",
                        lambda self, name: loaded.append(name) or real_load(self, name))
    files = explorer_files(entries, stems, board / "cb", None)
    assert sorted(files) == sorted(expected) and opened == []  # nothing made yet
    assert {p: files[p] for p in files} == expected
    assert len(opened) == 1  # one folder for both entries
    assert sorted(loaded) == sorted(SUITES)  # each suite loaded once, not once per entry


def test_a_reused_explorer_file_is_read_by_its_head(board, tmp_path):
    """Issue 33 item 5: a warm render takes an earlier file on its head (path, entry, key)
    without parsing its payload; a file cut short, renamed or of another key is not taken."""
    from consistency_bench.leaderboard.explorer.payload import _old_key, reused_text

    site = board / "site"
    rel = next(p.relative_to(site).as_posix() for p in (site / "data" / "explorer").glob("*.js"))
    text = (site / rel).read_text()
    key = _old_key(text)
    assert key is not None and reused_text(site / rel, rel, key) == text
    assert reused_text(site / rel, rel, "0" * 64) is None
    assert reused_text(site / rel, rel.replace("entry-", "entry-x"), key) is None
    cut = tmp_path / "cut.js"
    cut.write_text(text[: len(text) // 2])  # the head is there, the payload is not whole
    assert reused_text(cut, rel, key) is None
    (tmp_path / "link.js").symlink_to(site / rel)
    assert reused_text(tmp_path / "link.js", rel, key) is None
    assert reused_text(tmp_path / "absent.js", rel, key) is None


def test_a_reusable_explorer_file_is_judged_by_its_head_and_tail(board, tmp_path):
    """Issue 33 item 5: the file a warm render links (not reads and writes) is the one
    :func:`reused_text` would take: same path, key and a whole ``receive`` call."""
    from consistency_bench.leaderboard.explorer.payload import _old_key, reusable_file

    site = board / "site"
    rel = next(p.relative_to(site).as_posix() for p in (site / "data" / "explorer").glob("*.js"))
    text = (site / rel).read_text()
    key = _old_key(text)
    assert reusable_file(site / rel, rel, key)
    assert not reusable_file(site / rel, rel, "0" * 64)
    assert not reusable_file(site / rel, rel.replace("entry-", "entry-x"), key)
    cut = tmp_path / "cut.js"
    cut.write_text(text[: len(text) // 2])
    assert not reusable_file(cut, rel, key)
    (tmp_path / "link.js").symlink_to(site / rel)
    assert not reusable_file(tmp_path / "link.js", rel, key)
    assert not reusable_file(tmp_path / "absent.js", rel, key)


def test_a_warm_render_links_unchanged_explorer_files_and_never_through_a_link(board,
                                                                              tmp_path):
    """An unchanged explorer file is hard-linked into the new site (the same inode, the same
    bytes); an earlier site whose ``data/explorer`` is a symbolic link out of it is not read
    through: the files are made again and nothing is written where the link points."""
    import shutil

    site = tmp_path / "site"
    shutil.copytree(board / "site", site)
    files = sorted((site / "data" / "explorer").glob("*.js"))
    before = {p.name: (p.stat().st_ino, p.read_bytes()) for p in files}
    args = ["leaderboard", "--data", str(board / "cb"), "--submissions", str(board / "subs"),
            "--out", str(site)]
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    after = {p.name: (p.stat().st_ino, p.read_bytes())
             for p in sorted((site / "data" / "explorer").glob("*.js"))}
    assert after == before and len(after) == 2
    outside = tmp_path / "outside"
    shutil.move(str(site / "data" / "explorer"), outside)
    for p in outside.glob("*.js"):  # a link's target marked: taken through it, it would show
        p.write_text(p.read_text().replace('\\"n\\":10', '\\"n\\":10,\\"through\\":1'))
    marked = {p.name: p.read_bytes() for p in outside.glob("*.js")}
    (site / "data" / "explorer").symlink_to(outside, target_is_directory=True)
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    made = site / "data" / "explorer"
    assert not made.is_symlink()
    assert {p.name: p.read_bytes() for p in made.glob("*.js")} == {
        name: data for name, (_, data) in before.items()}
    assert {p.name: p.read_bytes() for p in outside.glob("*.js")} == marked
