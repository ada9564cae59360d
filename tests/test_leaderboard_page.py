"""The page at scale (issue 33, item 3) and what it explains (issue 27, "Page", items 5-7).

The first page carries the first view's first 50 rows and the heatmap's first 25 entries;
everything else is a lazily loaded file (``data/``) built into the page by its script. These
tests check, on boards of 120 and 240 entries made with the ranking's own test helpers, that
the first page does not grow, that paging, sorting, search, filters and the CSV cover every
entry, that the first page and the files render alike, that the page works from ``file://``
and served over HTTP, and the displays of partial rows, view notes, parameters, setups and
reproduction records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry, Row
from consistency_bench.leaderboard.webpage.entries import (
    details_node,
    entry_content,
    reproduced_text,
)
from consistency_bench.leaderboard.webpage.nodes import text_of
from consistency_bench.leaderboard.webpage.page import HEAT_ROWS, SUBMIT_STEPS, view_ids
from consistency_bench.leaderboard.webpage.render import render_all, render_html, render_page
from consistency_bench.leaderboard.webpage.tables import PAGE_ROWS
from tests.page_probe import needs_chromium, probe, probe_page, run, served
from tests.synthetic_entries import REPRODUCED, SETUPS
from tests.test_leaderboard_ranking import res, suite
from tests.test_leaderboard_render import DEGENERATE, payload, view_html

ROOT = Path(__file__).resolve().parents[1]


def big_board(n: int) -> list[Entry]:
    """``n`` entries whose order is known (``e000`` best), one degenerate, every tenth partial.

    Every seventh entry has no parameter count; the others 100M, 200M, ...; setups and
    reproduction records cycle through ``tests.synthetic_entries``' examples.
    """
    entries = []
    for i in range(n):
        g = 0.95 - 0.9 * i / n
        suites = {"s1": suite(1 - g), "s2": suite(g, hib=True, kind="cr")}
        if i % 10 != 9:
            suites["r1"] = suite(g, hib=True, task="rte", kind="cr")
        meta = {"model": f"org/model-{i}", "setup": SETUPS[i % len(SETUPS)],
                "reproduced": REPRODUCED[i % len(REPRODUCED)]}
        if i % 7:
            meta["parameters"] = (i + 1) * 100_000_000
        entries.append(Entry(f"e{i:03d}", res(**suites), meta))
    entries.append(Entry("ref", res(s1=suite(0.01, metrics=DEGENERATE),
                                    s2=suite(0.99, hib=True, kind="cr", metrics=DEGENERATE),
                                    r1=suite(0.01, hib=True, task="rte", kind="cr",
                                             metrics=DEGENERATE))))
    return entries


@pytest.fixture(scope="module")
def board120():
    return rank(big_board(120), best_near=None)


@pytest.fixture(scope="module")
def site120(board120, tmp_path_factory):
    site = tmp_path_factory.mktemp("site120")
    render_all(board120, site)
    return site


def test_first_page_does_not_grow_with_the_board(board120):
    """The first page holds 50 rows and 25 heatmap entries whatever the board's size."""
    small = render_html(rank(big_board(10), best_near=None))
    page = render_page(board120)
    bigger = render_html(rank(big_board(240), best_near=None))
    html = page.html
    assert html.count('<tr class="ranked') == PAGE_ROWS  # the first view's first rows
    assert "e049" in html and 'data-entry="e050"' not in html.split('id="heat-table"')[0]
    heat = html.split('id="heat-table"')[1]
    assert heat.count("<tr") == 1 + HEAT_ROWS  # head + the first 25 entries
    # 240 entries: the same first page but for the counts it prints ("of 121" -> "of 241")
    assert abs(len(bigger) - len(html)) < 100, (len(bigger), len(html))
    assert len(small) < len(html) < 300_000
    # every row, suite and entry is in a file the page loads on demand
    files = page.files
    rows = payload(files["data/view/view-task-snli.js"])["rows"]
    assert len(rows) == 121 and rows[-1]["entry"] == "ref"
    index = payload(files["data/index/entries.js"])["entries"]
    assert len(index) == 121 and {e["name"] for e in index} == {e.name for e in big_board(120)}
    assert len([p for p in files if p.startswith("data/entry/")]) == 121
    assert len(payload(files["data/suite/suite-r1.js"])["rows"]) == 109  # 108 models + ref


@needs_chromium
def test_paging_sorting_search_csv_and_heatmap_cover_every_entry(site120):
    body = (
        "var t=table(),cb=window.consistencyBench,$=function(id){"
        "return document.getElementById(id);};"
        "function pager(){return document.querySelector('p.pager[data-table='+t.id+']');}"
        "function col(name){var hs=t.tHead.rows[0].cells;for(var i=0;i<hs.length;i++){"
        "if(hs[i].textContent.indexOf(name)==0){return hs[i];}}}"
        "out.first=names(t).split(',').length;out.count=pager().querySelector('.count')"
        ".textContent;out.scripts0=document.querySelectorAll('script[src]').length;"
        "return click(pager().querySelector('.page-more')).then(function(){"
        "out.more=names(t).split(',').length;return click(pager().querySelector('.page-all'));})"
        ".then(function(){var n=names(t).split(',');out.all=n.length;out.last=n[n.length-1];"
        "out.hidden=pager().querySelector('.page-all').hidden;"
        "return click(col('Score %'));}).then(function(){return click(col('Score %'));})"
        ".then(function(){out.ascending=names(t).split(',').slice(0,2).join(',');"
        "$('f-search').value='e110';return cb.applyFilters();}).then(function(){"
        "out.search=names(t);out.searchCount=pager().querySelector('.count').textContent;"
        "$('f-search').value='';$('f-reproduced').checked=true;return cb.applyFilters();})"
        ".then(function(){out.repro=names(t).split(',');return cb.csv(t.id);})"
        ".then(function(c){out.csvRepro=c.split('\\r\\n').length;"
        "$('f-reproduced').checked=false;return cb.applyFilters();})"
        ".then(function(){return cb.csv(t.id);}).then(function(c){out.csv=c.split('\\r\\n');"
        "return cb.addHeat('e100');}).then(function(){"
        "var rows=document.querySelectorAll('#heat-table tbody tr');out.heat=rows.length;"
        "out.heatLast=rows[rows.length-1].getAttribute('data-entry');"
        "out.heatStatus=$('heat-status').textContent;return cb.addHeat('nobody');})"
        ".then(function(){out.heatMissing=$('heat-status').textContent;});"
    )
    out, _ = probe(site120, body)
    assert "exception" not in out, out
    assert out["first"] == 50 and out["count"] == "rows 1–50 of 121"
    assert out["scripts0"] == 0  # the first page loads nothing until the reader asks
    assert out["more"] == 100 and out["all"] == 121 and out["last"] == "ref"
    assert out["hidden"] is True
    # sorting covers every row, not the first page's: worst ranked first, ref stays below
    assert out["ascending"] == "e119,e118"
    assert out["search"] == "e110" and out["searchCount"] == "rows 1–1 of 1 (121 before filters)"
    # status "passed" only, still sorted by score ascending (the sort stays)
    assert out["repro"] == [f"e{i:03d}" for i in range(117, 0, -4)]
    assert out["csvRepro"] == 1 + 30 + 1  # header, the 30 reproduced entries, final newline
    csv = out["csv"]
    assert len(csv) == 1 + 121 + 1 and csv[-1] == ""  # the whole view, not the shown page
    # in the order shown (Score ascending): the worst ranked entry first, the reference last
    assert csv[1].startswith("120,e119,") and csv[120].startswith("1,e000,")
    assert csv[121].startswith("reference,ref,")
    assert out["heat"] == HEAT_ROWS + 1 and out["heatLast"] == "e100"
    assert out["heatStatus"] == "e100 added."
    assert out["heatMissing"] == 'No entry is named "nobody".'
    assert out["errors"] == [] and out["csp"] == []


@needs_chromium
def test_first_page_and_lazily_built_section_render_alike(site120):
    """The first view's HTML (Python) equals the same section built from its file (script)."""
    body = (
        "var sec=document.querySelector('section.view.active'),cb=window.consistencyBench;"
        "var before=sec.innerHTML;var heat0=document.querySelector("
        "'#heat-table tr[data-entry=e000]').outerHTML;"
        "while(sec.firstChild){sec.removeChild(sec.firstChild);}"
        "return cb.show('task:snli').then(function(){out.same=sec.innerHTML===before;"
        "out.lenBefore=before.length;out.lenAfter=sec.innerHTML.length;"
        "if(!out.same){var a=sec.innerHTML,i=0;while(a[i]===before[i]){i++;}"
        "out.diff=[before.slice(i-80,i+80),a.slice(i-80,i+80)];}"
        "return cb.load('data/entry/entry-e000.js');}).then(function(d){"
        "out.heatSame=cb.build(d.heat).outerHTML===heat0;});"
    )
    out, _ = probe(site120, body)
    assert "exception" not in out, out
    assert out["same"], out.get("diff")
    assert out["lenBefore"] > 30_000  # 50 rows, their flags, the per-suite list
    assert out["heatSame"]
    assert out["errors"] == []


@needs_chromium
def test_page_served_over_http_loads_its_files(site120):
    """Served (as the Space serves it), the same files load the same way as from file://."""
    body = (
        "out.view=document.querySelector('section.view.active').getAttribute('data-key');"
        "var t=table();out.rows=names(t).split(',').length;"
        "return click(t.querySelector('tr[data-entry=e001] button.more')).then(function(){"
        "out.details=t.querySelector('tr.details-row').textContent;"
        "out.protocol=location.protocol;});"
    )
    page = probe_page(site120, body)
    with served(site120) as base:
        out, _ = run(base + page.name + "#task:rte")
    assert "exception" not in out, out
    assert out["protocol"] == "http:" and out["view"] == "task:rte" and out["rows"] == 50
    assert "log-likelihood · no chat · 0-shot" in out["details"]
    assert "reproduced (label agreement 99.7%" in out["details"]
    assert out["errors"] == [] and out["csp"] == []


@needs_chromium
def test_lazy_files_need_strict_dynamic(site120, tmp_path):
    """Control: without 'strict-dynamic' the CSP blocks the data files, and the probe sees it."""
    page = (site120 / "index.html").read_text()
    (tmp_path / "site").mkdir()
    for p in site120.rglob("*"):
        if p.is_file():
            (tmp_path / "site" / p.relative_to(site120)).parent.mkdir(parents=True,
                                                                       exist_ok=True)
            (tmp_path / "site" / p.relative_to(site120)).write_bytes(p.read_bytes())
    (tmp_path / "site" / "index.html").write_text(page.replace(" 'strict-dynamic'", "", 1))
    body = ("return window.consistencyBench.show('task:rte').catch(function(e){"
            "out.rejected=String(e);}).then(function(){"
            "out.notice=document.getElementById('view-notice').textContent;});")
    out, _ = probe(tmp_path / "site", body)
    assert any(v.startswith("script-src") for v in out["csp"]), out["csp"]
    assert out["notice"].startswith("Could not load the data: data/view/view-task-rte.js")
    assert "view-task-rte.js" in out["rejected"]


@needs_chromium
def test_layout_at_1400_px_kind_columns_visible_metadata_in_details(tmp_path):
    """Issue 27, "Page": at 1400 px the kind columns are on screen, the metadata is a panel."""
    kinds = ["semantic", "negational", "symmetric", "transitive", "additive", "calm", "salad",
             "coherence"]
    reason = ("never flips under negation on 2.1% of pairs, score -30.6% not significantly "
              "above chance (z = -27.43 < 1.645) (rte_negational); ") * 3
    entries = []
    for i, name in enumerate(("a-rather-long-entry-name", "b", "c")):
        suites = {f"{k}_suite": suite(0.3 + 0.1 * i, hib=True, kind=k, task=f"t{j}")
                  for j, k in enumerate(kinds)}
        entries.append(Entry(name, res(**suites), {
            "model": "org/" + name, "parameters": 22_700_000, "notes": "x " * 300,
            "setup": SETUPS[2], "reproduced": REPRODUCED[1]}))
    lb = rank(entries, best_near=None)
    views = {k: replace(v, rows=tuple(replace(r, failing=reason) for r in v.rows))
             for k, v in lb.views.items()}
    site = tmp_path / "site"
    render_all(replace(lb, views=views), site)
    body = (
        "return window.consistencyBench.show('all').then(function(){var t=table();"
        "var box=t.parentNode.getBoundingClientRect();out.box=box.right;"
        "out.kinds=Array.prototype.filter.call(t.tHead.rows[0].cells,function(h){"
        "return h.title.indexOf('mean score on kind')===0;}).map(function(h){"
        "return h.getBoundingClientRect().right;});"
        "out.heads=Array.prototype.map.call(t.tHead.rows[0].cells,function(h){"
        "return h.textContent;});var r=t.querySelector('tr[data-entry=b]');"
        "out.rowHeight=r.getBoundingClientRect().height;"
        "out.flagCell=r.querySelector('td.flags').textContent;"
        "out.reasons=r.nextElementSibling.getBoundingClientRect().width;"
        "out.table=t.getBoundingClientRect().right;"
        "return click(t.querySelector('tr[data-entry=b] button.more'));}).then(function(){"
        "var d=table().querySelector('tr.details-row');out.details=d.innerText;"
        "out.detailsWidth=d.getBoundingClientRect().width;});"
    )
    out, _ = probe(site, body, width=1400)
    assert "exception" not in out, out
    assert len(out["kinds"]) == 8 and max(out["kinds"]) <= out["box"], out
    for gone in ("Params", "Model", "Date"):  # in the details panel now
        assert gone not in out["heads"]
    assert out["table"] <= out["box"] + 1  # the whole table fits its box here
    # the reasons are on a row of their own under the entry's, as wide as the table, so they
    # do not stretch the row; the Flags column holds the marks
    assert out["flagCell"] == "✗" and out["reasons"] > 1000 and out["rowHeight"] < 100
    for text in ("Model", "org/b", "Parameters", "22.7M", "generated · chat · 5-shot",
                 "reproduced (label agreement 99.7%"):
        assert text in out["details"], text
    assert out["errors"] == []


def test_partial_rows_show_coverage_not_a_score(board120):
    """Issue 27, item 6: a partial row's Score, Borda and Win rate columns show its coverage."""
    page = render_html(board120)
    rte = view_html(board120, "all")
    cells = re.search(r'<tr class="partial[^"]*" data-entry="e009"[^>]*>(.*?)</tr>', rte).group(1)
    tds = re.findall(r"<td[^>]*>(.*?)</td>", cells)
    assert "covers 2/3" in tds[2] and "covered mean" in tds[2]  # labelled as such
    assert tds[3] == "–"  # no ± for a partial row
    heads = re.findall(r"<th[^>]*>(.*?)</th>", rte.split("<tbody>")[0])
    borda = next(i for i, h in enumerate(heads) if h.startswith("Borda"))
    assert tds[borda] == "–" and tds[borda + 1] == "–"  # Borda, Win rate
    assert "covered mean" not in page.split('id="heat-table"')[0].split(
        'data-entry="e008"')[0]  # ranked rows above it carry scores


def test_header_counts_suites_as_coverage_does():
    """RTE said "4 suites" while coverage read 3/3: a format variant is one suite."""
    lb = rank([Entry("a", res(r1=suite(0.2, task="rte", kind="calm"),
                              r2=suite(0.2, task="rte", kind="semantic"))),
               Entry("b", res(r1_t2t=suite(0.2, task="rte", kind="calm"))),
               Entry("c", res(r1=suite(0.2, task="rte", kind="calm")))], best_near=None)
    rte = view_html(lb, "task:rte")
    assert "2 kinds, 2 suites (r1_t2t counted as r1" in rte
    assert rte.count("covers 1/2") == 2  # b (on the variant) and c: 1 of the same 2


def test_a_view_that_ranks_nobody_says_why_above_its_table(board120):
    note = "RTE ranks no entry: every entry is degenerate on RTE <b>(p = 0.071)</b>."
    views = dict(board120.views)
    v = views["task:snli"]
    views["task:snli"] = replace(v, note=note)  # View.note: issue 27, item 5
    page = render_html(replace(board120, views=views))
    section = page.split('id="view-task-snli"')[1]
    assert section.index('<p class="note" role="note">RTE ranks no entry') < section.index(
        "<table")
    assert "&lt;b&gt;(p = 0.071)&lt;/b&gt;" in section  # escaped
    assert '<p class="note"' not in render_html(board120)  # no note, no paragraph


def test_setup_and_reproduced_render_when_present_and_never_crash():
    meta = {"model": "org/m", "setup": SETUPS[2], "reproduced": REPRODUCED[2]}
    cell = text_of(entry_content("m", meta))
    assert "generated · chat · 5-shot" in cell
    assert "✗ reproduction failed (71.2% agree, Δp 0.41)" in cell
    details = text_of(details_node("m", meta))
    assert "reproduction failed (label agreement 71.2%, largest probability difference 0.41, " \
           "320 groups, 1440 rows): salad rows differ [2026-12-01]" in details
    assert "mode: generate" in details and "dtype: bfloat16" in details
    assert reproduced_text(REPRODUCED[3]) == "not reproducible: closed model"
    assert "✓ reproduced 99.7%" in text_of(entry_content("m", {"reproduced": REPRODUCED[1]}))
    # absent: nothing shown, the panel says so; malformed: shown as text, no crash
    assert text_of(entry_content("m", {})) == "mparameters unknown"
    assert "no run record" in text_of(details_node("m", {}))
    odd = {"setup": "generate", "reproduced": {"status": "<odd>", "label_agreement": "x"},
           "parameters": "7B-ish", "variant": 5}
    assert "reproduction: <odd>" in text_of(entry_content("m", odd))
    assert "Parametersunknown (7B-ish)" in text_of(details_node("m", odd))
    nested = {"setup": {"settings": {"mode": "loglikelihood", "num_fewshot": 3},
                        "api": {"host": "api.example.org", "model": "x"}}}
    assert "log-likelihood · 3-shot" in text_of(entry_content("m", nested))
    assert "api.host: api.example.org" in text_of(details_node("m", nested))


@dataclass(frozen=True)
class _ReproRow(Row):
    """A row with the ``reproduced`` field of the TEAM contracts (engineer ``repro``)."""

    reproduced: dict | None = None


def test_reproduced_read_from_the_rows_when_meta_has_none():
    lb = rank([Entry("a", res(s1=suite(0.2))), Entry("b", res(s1=suite(0.3)))],
              best_near=None)
    views = {k: replace(v, rows=tuple(
        _ReproRow(**{f: getattr(r, f) for f in r.__dataclass_fields__},
                  reproduced=REPRODUCED[1] if r.name == "a" else None) for r in v.rows))
        for k, v in lb.views.items()}
    page = render_page(replace(lb, views=views))
    index = {e["name"]: e for e in payload(page.files["data/index/entries.js"])["entries"]}
    assert index["a"]["reproduced"] == "passed" and index["b"]["reproduced"] is None
    assert index["a"]["csv"][-1].startswith("reproduced (label agreement 99.7%")
    assert "✓ reproduced 99.7%" in page.html
    details = payload(page.files["data/entry/entry-a.js"])["details"]
    assert "reproduced (label agreement 99.7%" in text_of(details)


def test_how_to_submit_steps_follow_docs_submit():
    """The page's "How to submit" gives docs/submit.md's commands, and links to itself."""
    doc = (ROOT / "docs" / "submit.md").read_text()
    block = re.search(r"```bash\n(.*?)```", doc, re.S).group(1)
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert [cmd for _, cmd in SUBMIT_STEPS] == commands
    page = render_html(rank([Entry("a", res(s1=suite(0.2)))]))
    assert '<a href="#how-to-submit">How to submit</a>' in page
    assert '<details class="intro" id="how-to-submit">' in page
    for _, cmd in SUBMIT_STEPS:
        assert cmd in page


def test_view_files_and_ids_are_safe_names(board120):
    files = render_page(board120).files
    assert all(re.fullmatch(r"data/[a-z]+/[a-z0-9][a-z0-9-]*\.js", p) for p in files)
    assert {f"data/view/{sid}.js" for sid in view_ids(board120).values()} <= set(files)


def test_a_label_only_row_says_its_salad_confidence_was_not_judged(board120):
    """Issue 27 item 1: a file without probabilities is judged on agreement alone, and the
    page says so under its row (in a view and in a suite's table)."""
    from consistency_bench.leaderboard.ranking.flags import UNJUDGED
    from consistency_bench.leaderboard.webpage.nodes import to_html
    from consistency_bench.leaderboard.webpage.tables import suite_rows

    first = "task:snli"  # the default view: its first rows are in the page
    views = dict(board120.views)
    rows = list(views[first].rows)
    rows[0] = replace(rows[0], unjudged="confidence could not be judged on 2 of 5 word-salad "
                      "suites (no probabilities)")
    views[first] = replace(views[first], rows=tuple(rows))
    page = render_html(replace(board120, views=views))
    section = page.split(f'id="view-{first.replace(":", "-")}"')[1]
    assert section.count('class="flag unjudged"') == 1
    assert "confidence could not be judged on 2 of 5 word-salad suites" in section
    assert 'class="flag unjudged"' not in render_html(board120)
    suite = next(iter(board120.cells))
    name = board120.suite_order[suite][0]
    cells = {**board120.cells[suite], name: replace(board120.cells[suite][name],
                                                    unjudged=UNJUDGED)}
    out = suite_rows(replace(board120, cells={**board120.cells, suite: cells}), suite)
    assert UNJUDGED.split(":")[0] in to_html(out[0]["flags"])
    assert all("unjudged" not in to_html(r["flags"] or "") for r in out[1:])


class _Counted(dict):
    """Path -> text, counting the texts read (the explorer's files: made when read)."""

    def __init__(self, texts):
        super().__init__(texts)
        self.read: list[str] = []

    def __getitem__(self, path):
        self.read.append(path)
        return super().__getitem__(path)

    def items(self):  # dict.update() and dict(...) of a dict subclass skip __getitem__
        raise AssertionError("the explorer's files were read all at once")


def test_the_explorer_files_are_written_one_at_a_time(board120, tmp_path):
    """Issue 33 item 5: the page does not hold every entry's explorer file (about 1.3 MB each
    over every suite; 650 MB at 500 entries); ``render_all`` reads each once, as it writes it,
    and writes the same files as from a plain dict."""
    made: list[_Counted] = []

    def explorer(stems):
        texts = {f"data/explorer/{stems[n]}.js": f"// {n}\n" for n in sorted(stems)}
        made.append(_Counted(texts))
        return made[-1]

    page = render_page(board120, explorer=explorer)
    assert made and made[-1].read == []  # nothing made yet
    assert [p for p in page.files if p.startswith("data/explorer/")] == sorted(made[-1])
    assert list(page.files) == sorted(page.files)  # path order, as before
    render_all(board120, tmp_path / "lazy", explorer=explorer)
    assert sorted(made[-1].read) == sorted(made[-1])  # each read once
    render_all(board120, tmp_path / "plain", explorer=lambda stems: dict(explorer(stems)))
    lazy, plain = (sorted(p.relative_to(tmp_path / s).as_posix()
                          for p in (tmp_path / s).rglob("*") if p.is_file())
                   for s in ("lazy", "plain"))
    assert lazy == plain and any(p.startswith("data/explorer/") for p in lazy)
    for p in lazy:
        assert (tmp_path / "lazy" / p).read_bytes() == (tmp_path / "plain" / p).read_bytes(), p
