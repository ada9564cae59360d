import json
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.model import Entry
from consistency_bench.leaderboard.webpage.formatting import (
    FLAG_LEGEND,
    humanize,
    md_text,
    model_url,
    parameters,
    safe_url,
)
from consistency_bench.leaderboard.webpage.nodes import to_html
from consistency_bench.leaderboard.webpage.page import view_ids
from consistency_bench.leaderboard.webpage.render import (
    render_all,
    render_html,
    render_markdown,
    render_page,
)
from consistency_bench.leaderboard.webpage.tables import FLAG_MARKS, body_nodes
from tests.page_probe import needs_chromium, probe, probe_framed
from tests.test_leaderboard_ranking import res, suite


def payload(text: str) -> dict:
    """The data of a lazily loaded file (``receive(path, json_text)``)."""
    m = re.fullmatch(r'window\.consistencyBench\.receive\(("[^"]*"),(".*")\);\n', text, re.S)
    assert m, text[:200]
    return json.loads(json.loads(m.group(2)))


def find(node, tag: str, **attrs):
    """The first node of ``tag`` (with these attribute values) under ``node``."""
    if isinstance(node, str):
        return None
    if node[0] == tag and all(node[1].get(k) == v for k, v in attrs.items()):
        return node
    for child in node[2:]:
        hit = find(child, tag, **attrs)
        if hit is not None:
            return hit
    return None


def view_html(lb, key: str) -> str:
    """A view's section as the page's script builds it: its shell, then every row."""
    files = render_page(lb, heatmap=False).files
    path = next(p for p in files if p.startswith("data/view/") and
                payload(files[p])["key"] == key)
    data = payload(files[path])
    table = find(data["shell"], "table")
    head = find(table, "tr")
    find(table, "tbody").extend(body_nodes(data["rows"], head, limit=10**9))
    return to_html(data["shell"])


def suite_html(lb, suite_name: str) -> str:
    """A suite's table as the page's script builds it from the suite's file."""
    data = payload(render_page(lb, heatmap=False).files[f"data/suite/suite-{suite_name}.js"])
    body = body_nodes(data["rows"], data["head"], limit=10**9)
    return to_html(["table", {"id": "s"}, ["thead", {}, data["head"]], ["tbody", {}, *body]])


DEGENERATE = {"accuracy": 0.5, "consistent_accuracy_n": 100, "n_original": 100,
              "n_original_correct": 50, "majority_rate": 0.5, "top_prediction_share": 0.99}


@pytest.fixture
def board():
    """Two ranked entries, a reference (degenerate) and a partial one, both scoring higher."""
    src = {"source_files": ["becel/snli/test.tsv"]}
    return rank([
        Entry("alpha", res(s1=suite(0.1, **src), s2=suite(0.9, hib=True, kind="cr"),
                           r1=suite(0.2, task="rte", kind="cr")),
              {"model": "org/alpha-110m", "parameters": 110_000_000, "date": "2026-01-02",
               "link": "https://example.org/alpha"}),
        Entry("beta", res(s1=suite(0.2, **src), s2=suite(0.95, hib=True, kind="cr"),
                          r1=suite(0.1, task="rte", kind="cr")),
              {"model": "Beta model", "parameters": 7_000_000_000, "date": "2026-02-03",
               "link": "https://example.org/beta", "training_data": ["becel/snli/test.tsv"]}),
        Entry("ref", res(s1=suite(0.01, metrics=DEGENERATE, **src),
                         s2=suite(0.99, hib=True, kind="cr", metrics=DEGENERATE),
                         r1=suite(0.01, task="rte", kind="cr", metrics=DEGENERATE))),
        Entry("gamma", res(s1=suite(0.0, **src))),
    ], best_near=None)


def test_markdown_vocabulary_and_order(board):
    md = render_markdown(board)
    assert md.splitlines()[0] == "| Entry | SNLI | RTE | all suites | Flags | Reproduced |"
    assert "| – |" in md.splitlines()[2]  # no reproduction recorded: a dash (issue 28)
    assert "| gamma | partial 1/2 | – | partial 1/3 |" in md
    assert "| alpha | #1 90.0 / 90.0 |" in md  # % units
    assert "| ref | reference " in md and "ref " not in md.replace("| ref |", "")
    assert "unranked" not in md
    assert md.index("| alpha |") < md.index("| beta |") < md.index("| ref |")
    for word in ("`ranked`", "`reference`", "`partial`"):  # the legend
        assert word in md


def test_one_vocabulary_for_flags_and_the_salad_score_explained(board):
    """Issue 18, item 5: the flag words of the page are the Markdown's and leaderboard.json's.

    And both legends say how word salad is scored (item 1), which "consistent on every
    perturbation" alone would get backwards.
    """
    views = {}
    for key, v in board.views.items():
        rows = tuple(replace(r, failing="fails cr: never flips under negation (s2)")
                     if r.name == "alpha" else r for r in v.rows)
        views[key] = replace(v, rows=rows)
    lb = replace(board, views=views)
    page, md = render_html(lb, heatmap=False), render_markdown(lb)
    shown = set(re.findall(r'<div class="flag[^"]*"><b>\S+ (\w+)</b>', page))
    assert shown == {"degenerate", "failing", "contaminated"} == set(FLAG_LEGEND)
    assert "<b>✗ failing</b>: cr: never flips under negation (s2)" in page
    legend = md.split("Flags, the same words as on the page:")[1]
    for word in FLAG_LEGEND:
        assert f"`{word}`" in legend
        assert f"<dt>{FLAG_MARKS[word]} {word}</dt>" in page
    listed = {w for line in md.splitlines()[2:] if line.startswith("| ")
              for w in line.split("|")[-3].strip().split(", ") if w}  # the Flags column
    json_flags = {f for v in lb.to_dict()["views"].values() for r in v["rows"] for f in r["flags"]}
    assert "failing" in listed and listed <= set(FLAG_LEGEND) and json_flags <= set(FLAG_LEGEND)
    for text in (page, md):
        assert "always keeping the answer and always changing it both score 0" in text


def test_render_all_outputs_deterministic(board, tmp_path):
    subs = tmp_path / "subs"
    (subs / "alpha").mkdir(parents=True)
    (subs / "alpha" / "meta.yaml").write_text("model: a\n")
    files = render_all(board, tmp_path / "a", subs)
    names = sorted(str(p.relative_to(tmp_path / "a")) for p in files)
    assert [n for n in names if not n.startswith("data/")] == [
        "assets/explorer.js", "heatmap.png", "index.html", "leaderboard.json", "leaderboard.md",
        "plots/accuracy-consistency.png", "plots/profile.png", "results.parquet",
        "submissions/alpha/meta.yaml"]
    # the lazily loaded files: one per view, suite and entry, and the index
    assert [n for n in names if n.startswith("data/")] == sorted(
        [f"data/view/{sid}.js" for sid in view_ids(board).values()]
        + [f"data/suite/suite-{s}.js" for s in ("s1", "s2", "r1")]
        + [f"data/entry/entry-{e}.js" for e in ("alpha", "beta", "gamma", "ref")]
        + [f"data/plot/{sid}.js" for sid in view_ids(board).values()]  # issue 31
        + ["data/index/entries.js"])
    render_all(board, tmp_path / "b", subs)
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n
    assert (tmp_path / "a" / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((tmp_path / "a" / "leaderboard.json").read_text())
    assert [r["status"] for r in data["views"]["all"]["rows"]] == [
        "ranked", "ranked", "reference", "partial"]


def test_meta_copied_only_for_slug_names(tmp_path):
    """An entry name with a path in it never makes render_all read or write outside."""
    subs = tmp_path / "subs"
    for name in ("ok", "../outside"):
        (subs / name).mkdir(parents=True, exist_ok=True)
        (subs / name / "meta.yaml").write_text("model: m\n")
    lb = rank([Entry("ok", res(s1=suite(0.1))), Entry("../outside", res(s1=suite(0.2)))])
    files = render_all(lb, tmp_path / "site" / "a", subs)
    copied = sorted(str(p.relative_to(tmp_path)) for p in files if p.name == "meta.yaml")
    assert copied == ["site/a/submissions/ok/meta.yaml"]
    assert not (tmp_path / "site" / "outside").exists()


def test_formatting_helpers():
    assert humanize("score -4.1% not significantly above chance (z = -5216308.71 < 1.645)") == (
        "score -4.1% not significantly above chance (z < −100 < 1.645)")
    assert humanize("(z = 1.2345 < 1.645)") == "(z = 1.23 < 1.645)"
    assert model_url({"model": "org/name", "link": "https://x.org"}) == (
        "https://huggingface.co/org/name")
    assert model_url({"model": "a fine-tuned thing", "link": "https://x.org/a"}) == (
        "https://x.org/a")
    for bad in ("javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "//x.org",
                "https://x.org/\nx", "https://x .org", "vbscript:x", "/local"):
        assert safe_url(bad) is None, bad
        assert model_url({"model": "x y", "link": bad}) is None
    assert model_url({"model": "../../etc", "link": None}) is None
    # issue 27, item 7: only a number is a count; prose is kept as text, never parsed
    assert parameters({"parameters": "22.7M; AdamW lr 1e-4"}) == ("22.7M; AdamW lr 1e-4", None)
    assert parameters({"parameters": "1 threshold per task"}) == ("1 threshold per task", None)
    assert parameters({"parameters": 22_700_000}) == ("22.7M", pytest.approx(2.27e7))
    assert parameters({"parameters": 7_000_000_000}) == ("7B", 7e9)
    assert parameters({"parameters": 0}) == ("0", 0.0)
    assert parameters({}) == ("", None) and parameters({"parameters": True}) == ("", None)
    assert md_text("a|b <img src=x> [x](javascript:y) `c` *d*") == (
        r"a\|b &lt;img src=x&gt; \[x\]\(javascript:y\) \`c\` \*d\*")


class _Tables(HTMLParser):
    """Tables of a page by id: rows of cell texts (header row first)."""

    def __init__(self):
        super().__init__()
        self.tables, self.stack, self.cell = {}, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.stack.append(dict(attrs).get("id"))
            self.tables[self.stack[-1]] = []
        elif tag == "tr" and self.stack:
            self.tables[self.stack[-1]].append([])
        elif tag in ("td", "th") and self.stack:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self.stack.pop()
        elif tag in ("td", "th") and self.cell is not None:
            self.tables[self.stack[-1]][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _tables(page: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def test_per_suite_intervals_belong_to_their_score_and_kind_columns(board):
    cells = dict(board.cells)
    cells["s1"] = dict(cells["s1"])
    cells["s1"]["alpha"] = replace(cells["s1"]["alpha"], goodness_ci95=(0.85, 0.95),
                                   goodness_n=2375)
    view = board.views["task:snli"]
    rows = tuple(replace(r, kind_means={"transitive": 0.9, "cr": None}) for r in view.rows)
    views = {**board.views, "task:snli": replace(view, kinds=["transitive", "cr"], rows=rows)}
    lb = replace(board, cells=cells, views=views)
    tables = _tables(render_html(lb, heatmap=False))
    suite = _tables(suite_html(lb, "s1"))["s"]
    head = dict(zip(suite[0], range(len(suite[0])), strict=True))
    alpha = next(r for r in suite if r[1] == "alpha")
    assert alpha[head["Score %"]] == "90.0"
    assert alpha[head["Score 95% CI"]] == "[85.0, 95.0]" and alpha[head["Score n"]] == "2375"
    assert alpha[head["m % (lower)"]] == "10.0"  # the paper's metric, labelled by name
    assert alpha[head["m 95% CI"]] == "[8.0, 12.0]" and alpha[head["m n"]] == "100"
    main = tables["table-view-task-snli"]
    assert main[0][:6] == ["Rank [95%]", "Entry", "Score %", "± 95%", "transitive %", "cr %"]
    assert main[1][1] == "▸ alpha110M params" and main[1][4:6] == ["90.0", "–"]


def test_kind_columns_only_where_a_view_has_several_kinds(board):
    """A one-kind view's kind mean is its score: no second column repeating it; "1 kind"."""
    rte, everything = view_html(board, "task:rte"), view_html(board, "all")
    assert _tables(rte)["table-view-task-rte"][0][:5] == ["Rank [95%]", "Entry", "Score %",
                                                          "± 95%", "Flags"]
    assert _tables(everything)["table-view-all"][0][4:6] == ["transitive %", "cr %"]
    assert "<h2>RTE <small>1 kind, 1 suite</small></h2>" in rte
    assert "<h2>all suites <small>2 kinds, 3 suites</small></h2>" in everything


@needs_chromium
def test_html_sorting_keeps_blocks_and_sorts_best_first(board, tmp_path):
    subs = tmp_path / "subs"
    for n in ("alpha", "beta", "gamma", "ref"):
        (subs / n).mkdir(parents=True)
        (subs / n / "meta.yaml").write_text(f"model: {n}\n")
    site = tmp_path / "site"
    render_all(board, site, subs)
    body = (
        "var t=table();out.view=document.querySelector('section.view.active').id;"
        "out.initial=names(t);"
        "function col(name){var hs=t.tHead.rows[0].cells;for(var i=0;i<hs.length;i++){"
        "if(hs[i].textContent.indexOf(name)==0){return hs[i];}}}"
        "function row(n){return t.querySelector('tr[data-entry='+n+']');}"
        "var suiteTable=null;"
        "return click(col('Score %')).then(function(){out.score1=names(t);"
        "out.score1dir=col('Score %').getAttribute('aria-sort');return click(col('Score %'));})"
        ".then(function(){out.score2=names(t);return click(col('Rank'));})"
        ".then(function(){out.rank1=names(t);out.rank1dir=col('Rank').getAttribute('aria-sort');"
        "return click(col('Entry'));})"
        ".then(function(){out.entry1=names(t);return click(col('Acc %'));})"
        ".then(function(){out.acc1dir=col('Acc %').getAttribute('aria-sort');"
        "out.links=Array.prototype.map.call(t.querySelectorAll('td.name a'),"
        "function(a){return a.getAttribute('href');});"
        "return click(row('alpha').querySelector('button.more'));})"
        ".then(function(){return click(row('beta').querySelector('button.more'));})"
        ".then(function(){"
        "out.models=Array.prototype.map.call(t.querySelectorAll('tr.details-row a[rel]'),"
        "function(a){return a.getAttribute('href');});"
        "out.detailsAfter=row('alpha').nextElementSibling.className;"
        "out.detailsText=row('alpha').nextElementSibling.textContent;"
        "out.flagText=row('ref').nextElementSibling.innerText;"
        "out.flagCell=row('ref').querySelector('td.flags').textContent;"
        "out.heatRefs=Array.prototype.map.call(document.querySelectorAll("
        "'table.heat tr.reference th'),function(h){return h.textContent;});"
        "out.heatDashed=document.querySelectorAll('table.heat td.ref').length;"
        "var per=document.querySelector('section.view.active details.per-suite');per.open=true;"
        "var s=per.querySelector('details.suite');s.open=true;"
        "return until(function(){return s.querySelector('table.suite');});})"
        ".then(function(st){var img=document.querySelector('img.heatmap');"
        "img.scrollIntoView();suiteTable=st;"
        "return until(function(){return img.complete&&img.naturalWidth;});})"
        ".then(function(w){out.img=w;var st=suiteTable;"
        "out.suiteHead=Array.prototype.map.call(st.tHead.rows[0].cells,"
        "function(h){return h.textContent;}).join('|');out.suiteRows=names(st);"
        "out.scripts=Array.prototype.map.call(document.scripts,function(s){"
        "return s.getAttribute('src');}).filter(function(s){return s;});});"
    )
    out, stderr = probe(site, body)
    assert "exception" not in out, out
    assert out["view"] == "view-task-snli"  # the page opens on the first task
    assert out["initial"] == "alpha,beta,ref,gamma"
    # ranked block stays on top in best-first order; ref (99) and gamma (100) stay below
    assert out["score1"] == "alpha,beta,ref,gamma" and out["score1dir"] == "descending"
    assert out["score2"] == "beta,alpha,ref,gamma"  # second click: reversed within blocks
    assert out["rank1"] == "alpha,beta,ref,gamma" and out["rank1dir"] == "ascending"
    assert out["entry1"] == "alpha,beta,ref,gamma"
    assert out["acc1dir"] == "descending"
    assert out["links"] == [f"submissions/{n}/meta.yaml" for n in ("alpha", "beta", "ref",
                                                                    "gamma")]
    for link in out["links"]:
        assert (site / link).is_file()
    # entry metadata in an expandable row under the entry (issue 27, "Page")
    assert out["models"] == ["https://huggingface.co/org/alpha-110m", "https://example.org/beta"]
    assert out["detailsAfter"] == "details-row"
    assert "Parameters110M" in out["detailsText"] and "Date2026-01-02" in out["detailsText"]
    # flags: the marks in their column, each reason as text on a row under the entry's
    assert out["flagCell"] == "⚠"
    assert "degenerate" in out["flagText"] and "near-constant" in out["flagText"]
    assert out["heatRefs"] == ["ref reference"] and out["heatDashed"] == 3
    assert out["img"] > 0  # heatmap loaded under the CSP (img-src 'self')
    # per-suite table (its own file): CI and n next to the score they belong to
    assert "Score %|Score 95% CI|Score n|" in out["suiteHead"]
    assert "m 95% CI|m n|" in out["suiteHead"]
    assert out["suiteRows"] == "gamma,alpha,beta,ref"  # gamma covers s1 and is best there
    # loaded from file:// as scripts the page's own script created (CSP 'strict-dynamic')
    assert sorted(out["scripts"]) == ["data/entry/entry-alpha.js", "data/entry/entry-beta.js",
                                      "data/suite/suite-s1.js", "data/view/view-task-snli.js"]
    assert out["errors"] == [] and out["csp"] == [] and out["pwned"] is None
    assert "Uncaught" not in stderr


@needs_chromium
def test_html_view_fragment_tabs_and_phone_layout(board, tmp_path):
    site = tmp_path / "site"
    render_all(board, site)
    body = (
        "out.view=document.querySelector('section.view.active').getAttribute('data-key');"
        "out.tab=document.querySelector('.tabs button.active').textContent;"
        "out.notice=document.getElementById('view-notice').textContent;"
        "return click(document.querySelector('.tabs button[data-key=all]')).then(function(){"
        "out.hash=location.hash;out.after=document.querySelector('section.view.active').id;"
        "var t=table();var hs=t.tHead.rows[0].cells;var w=document.documentElement.clientWidth;"
        "out.width=w;out.pageWidth=document.documentElement.scrollWidth;"
        "out.right={};['Rank','Entry','Score %'].forEach(function(n){"
        "for(var i=0;i<hs.length;i++){if(hs[i].textContent.indexOf(n)==0){"
        "out.right[n]=hs[i].getBoundingClientRect().right;}}});"
        "var flags=t.querySelector('th.flags');out.flagsShown=getComputedStyle(flags).display;"
        "var fr=t.querySelector('tr[data-entry=ref]').nextElementSibling;"
        "out.flagRow=fr.className+' '+getComputedStyle(fr).display;"
        "out.flagRowText=fr.textContent;"
        "out.rowHeight=t.querySelector('tr[data-entry=ref]').getBoundingClientRect().height;"
        "var heat=document.querySelector('table.heat').parentNode;"
        "out.heatScroll=getComputedStyle(heat).overflowX;"
        "out.heatFits=heat.getBoundingClientRect().right<=w;});"
    )
    out = probe_framed(site, body, fragment="#task:rte", width=390)
    assert "exception" not in out, out
    assert out["view"] == "task:rte" and out["tab"] == "RTE"  # opened by its URL
    assert out["notice"] == ""
    assert out["hash"] == "#all" and out["after"] == "view-all"  # switching tabs sets the URL
    assert 370 <= out["width"] <= 390  # 390 less a scroll bar
    assert out["pageWidth"] <= out["width"]  # nothing pushes the page sideways; tables scroll
    for col in ("Rank", "Entry", "Score %"):  # the first columns are on screen
        assert 0 < out["right"][col] <= out["width"], (col, out["right"])
    # 390 px: no Flags column; the flag text is on a row of its own under the entry's row
    assert out["flagsShown"] == "none" and out["flagRow"] == "flagrow table-row"
    assert "⚠ degenerate" in out["flagRowText"] and out["rowHeight"] < 60
    assert out["heatScroll"] == "auto" and out["heatFits"]
    assert out["errors"] == [] and out["csp"] == []
    # the old id form still opens a view
    out, _ = probe(site, "out.view=document.querySelector('section.view.active').id;",
                   fragment="#view-task-rte")
    assert out["view"] == "view-task-rte"
    # an unknown view says so and shows the default (issue 27, "Page")
    body = ("out.view=document.querySelector('section.view.active').getAttribute('data-key');"
            "out.notice=document.getElementById('view-notice').textContent;"
            "out.noticeShown=getComputedStyle(document.getElementById('view-notice')).display;")
    out, _ = probe(site, body, fragment="#task:nope")
    assert out["view"] == "task:snli"
    assert out["notice"] == ('There is no view "task:nope" on this leaderboard; '
                             "showing SNLI instead.")
    assert out["noticeShown"] == "block" and out["errors"] == []
    # the "How to submit" link opens its panel, and is not taken for a view
    out, _ = probe(site, body + "out.open=document.getElementById('how-to-submit').open;",
                   fragment="#how-to-submit")
    assert out["view"] == "task:snli" and out["notice"] == "" and out["open"] is True


@needs_chromium
def test_html_filters_and_csv(board, tmp_path):
    site = tmp_path / "site"
    render_all(board, site)
    body = (
        "var t=table();var $=function(id){return document.getElementById(id);};"
        "var cb=window.consistencyBench;"
        "return cb.csv(t.id).then(function(c){out.csvAll=c;"
        "$('f-contaminated').checked=true;return cb.applyFilters();})"
        ".then(function(){out.noContam=names(t);$('f-contaminated').checked=false;"
        "$('f-pmin').value='100';$('f-pmax').value='1000';return cb.applyFilters();})"
        ".then(function(){out.params=names(t);"
        "out.unknown=Array.prototype.filter.call(t.querySelectorAll('tr.unknown-params'),"
        "function(r){return getComputedStyle(r.querySelector('.params-unknown')).display"
        "!=='none';}).map(function(r){return r.getAttribute('data-entry');}).join(',');"
        "$('f-pmin').value='';$('f-pmax').value='';"
        "$('f-search').value='GAM';return cb.applyFilters();})"
        ".then(function(){out.search=names(t);return cb.csv(t.id);})"
        ".then(function(c){out.csvSearch=c;$('f-search').value='';"
        "$('f-reproduced').checked=true;return cb.applyFilters();})"
        ".then(function(){out.repro=names(t);out.pager=document.querySelector("
        "'p.pager[data-table='+t.id+'] .count').textContent;});"
    )
    out, _ = probe(site, body)
    assert "exception" not in out, out
    lines = out["csvAll"].split("\r\n")
    head = lines[0].split(",")
    assert head[:4] == ["Rank", "Entry", "Score %", "± 95%"]
    assert head[-9:] == ["Coverage", "Params", "Model", "Model page", "Revision", "Variant",
                         "Date", "Setup", "Reproduced"]
    assert len(lines) == 6 and lines[-1] == ""  # header, 4 rows, final newline
    assert lines[1].startswith("1,alpha,90.0,")
    assert lines[1].endswith(",2/2,110000000,org/alpha-110m,https://huggingface.co/org/alpha-110m"
                             ",,,2026-01-02,,")
    assert lines[3].startswith("reference,ref,")
    # the flag reason once, in full (not the folded text, "more", then the full text again)
    assert "degenerate: " in lines[3] and "more" not in lines[3]
    assert out["noContam"] == "alpha,ref,gamma"  # beta declared training on an snli file
    # 110M in [100M, 1000M]; beta 7B out; entries without a count stay, marked (issue 27.7)
    assert out["params"] == "alpha,ref,gamma" and out["unknown"] == "ref,gamma"
    assert out["search"] == "gamma"
    assert out["csvSearch"].split("\r\n")[1].startswith("partial,gamma,")
    assert out["repro"] == "" and out["pager"] == "no rows"  # nobody is reproduced here


PAYLOAD = '"><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
IMG = "<img src=x onerror=window.pwned=3>"
JS_LINK = "javascript:window.pwned=4"


@pytest.fixture
def hostile():
    """Every field that reaches the page carries a payload."""
    def s(score, **kw):
        return suite(score, family=PAYLOAD + "fam", task=IMG + "task|x", kind=PAYLOAD + "kind",
                     main_metric=IMG + "m", source_files=["a/b.tsv"], **kw)
    meta = {"model": PAYLOAD, "link": JS_LINK, "parameters": IMG + "7B", "date": PAYLOAD,
            "notes": PAYLOAD, "training_data": ["a/b.tsv"]}
    lb = rank([
        Entry(PAYLOAD + "|[x](javascript:y)", res(**{PAYLOAD: s(0.1), IMG: s(0.2, n=IMG)}), meta),
        Entry(IMG, res(**{PAYLOAD: s(0.3)}), {"model": "x", "link": "JAVASCRIPT:window.pwned=5"}),
    ])
    views = {}
    for key, v in lb.views.items():
        rows = tuple(replace(r, kind_means={IMG + "k": 0.5}, failing=PAYLOAD) for r in v.rows)
        views[key] = replace(v, kinds=[IMG + "k"], rows=rows)
    cells = {s: {e: replace(c, failing=IMG) for e, c in cs.items()} for s, cs in lb.cells.items()}
    return replace(lb, views=views, cells=cells)


def test_markdown_escapes_every_value(hostile):
    md = render_markdown(hostile)
    assert "<" not in md and "](" not in md
    table = [line for line in md.splitlines() if line.startswith("|")]
    cols = table[0].count("|") - table[0].count("\\|")
    for line in table:  # no value adds a column
        assert line.count("|") - line.count("\\|") == cols, line


@needs_chromium
def test_no_payload_runs_in_chromium(hostile, tmp_path):
    site = tmp_path / "site"
    render_all(hostile, site)
    page = (site / "index.html").read_text()
    assert "<script>window.pwned" not in page and "<img src=x" not in page
    body = (  # every view, per-suite table and entry panel loaded; the heatmap picker used
        "var tabs=Array.prototype.slice.call(document.querySelectorAll('.tabs button'));"
        "return tabs.reduce(function(p,b){return p.then(function(){return click(b);});},"
        "Promise.resolve()).then(function(){"
        "document.querySelectorAll('details').forEach(function(d){d.open=true;});"
        "return until(function(){return Array.prototype.every.call("
        "document.querySelectorAll('details.suite'),function(d){return d.querySelector('table');"
        "});});}).then(function(){"
        "document.querySelectorAll('section.view').forEach(function(s){"
        "s.classList.add('active');});"
        "document.querySelectorAll('button.more').forEach(function(b){b.click();});"
        "return idle();}).then(function(){"
        "return window.consistencyBench.addHeat(document.querySelector('#heat-table tbody tr')"
        ".getAttribute('data-entry'));}).then(function(){"
        "out.details=document.querySelectorAll('tr.details-row').length;"
        "out.suiteTables=document.querySelectorAll('table.suite').length;"
        "out.inline=Array.prototype.filter.call(document.scripts,function(s){return !s.src;})"
        ".length;out.loaded=Array.prototype.map.call(document.scripts,function(s){"
        "return s.getAttribute('src');}).filter(function(s){return s;});out.handlers=[];"
        "document.querySelectorAll('*').forEach(function(el){Array.prototype.forEach.call("
        "el.attributes,function(a){if(/^on/i.test(a.name)){out.handlers.push(a.name);}});});"
        "out.imgs=Array.prototype.map.call(document.images,function(i){"
        "return i.getAttribute('src');});"
        "out.hrefs=Array.prototype.map.call(document.querySelectorAll('a[href]'),function(a){"
        "return a.getAttribute('href');});"
        "out.protocols=Array.prototype.map.call(document.querySelectorAll('a[href]'),"
        "function(a){return a.protocol;});"
        "out.text=document.body.textContent.indexOf('<script>window.pwned=1<\\/script>')>=0;"
        "out.ids=Array.prototype.map.call(document.querySelectorAll('[id]'),function(e){"
        "return e.id;});});"
    )
    for keep_csp in (True, False):  # escaping alone holds, and so does the CSP
        out, _ = probe(site, body, keep_csp=keep_csp)
        assert "exception" not in out, out
        assert out["pwned"] is None, keep_csp
        assert out["title"] == "consistency-bench leaderboard"
        assert out["details"] >= 2 and out["suiteTables"] >= 2  # the lazy content is there
        assert out["inline"] == 3  # the probe's two and the page's own
        # the data files, and the explorer's code (issue 31) once a panel is opened
        assert out["loaded"] and all(
            re.fullmatch(r"data/[a-z]+/[a-z0-9-]+\.js|assets/explorer\.js", p)
            for p in out["loaded"]), out["loaded"]
        assert out["handlers"] == []
        assert out["imgs"] == ["heatmap.png"]
        assert all(h.startswith(("submissions/", "https://huggingface.co/", "#"))
                   for h in out["hrefs"]), out["hrefs"]
        assert set(out["protocols"]) <= {"file:", "https:"}, out["protocols"]
        assert out["text"]  # the payload is shown as text
        assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in out["ids"]), out["ids"]
        assert out["errors"] == [], out["errors"]


@needs_chromium
def test_csp_blocks_injected_script_and_handlers(board, tmp_path):
    """Controls: markup injected past the escaping runs without the CSP and not with it."""
    site = tmp_path / "site"
    render_all(board, site)
    inject = ('<img src="x" onerror="window.pwned=2">'
              "<script>window.pwned=1</script>")
    page = (site / "index.html").read_text()
    (site / "index.html").write_text(page.replace("<h1>", inject + "<h1>", 1))
    out, _ = probe(site, "")
    assert out["pwned"] is None
    assert any(v.startswith("script-src") for v in out["csp"]), out["csp"]
    out, _ = probe(site, "", keep_csp=False)
    assert out["pwned"] in ("1", "2")  # the probe does see a script that runs


@needs_chromium
def test_probe_catches_console_errors(board, tmp_path):
    """Negative control: the probe does see errors, so an empty list means something."""
    render_all(board, tmp_path / "site")
    out, _ = probe(tmp_path / "site", "console.error('boom');")
    assert out["errors"] == ["boom"]
