import html as html_mod
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from leaderboard.page import FLAG_MARKS
from leaderboard.page_assets import csp_hash
from leaderboard.ranking import Entry, rank
from leaderboard.render import render_all, render_html, render_markdown
from leaderboard.render_format import (
    FLAG_LEGEND,
    humanize,
    md_text,
    model_url,
    parameters,
    safe_url,
)
from tests.test_leaderboard_ranking import res, suite

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/system-deps.sh installs it)")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000", "--dump-dom",
]
# Inserted before the page's CSP meta tag, so it runs: records errors and CSP violations.
PROBE_HEAD = (
    "<script>window.__errors=[];window.__csp=[];window.addEventListener('error',function(e){"
    "window.__errors.push(String(e.message||(e.target&&(e.target.src||e.target.href))||e.type));"
    "},true);document.addEventListener('securitypolicyviolation',function(e){"
    "window.__csp.push(e.violatedDirective+' '+e.blockedURI);});"
    "var __ce=console.error;console.error=function(){"
    "window.__errors.push(Array.prototype.join.call(arguments,' '));"
    "__ce.apply(console,arguments);};</script>"
)
# Runs on the load event (after the page's script and the heatmap image); BODY fills `out`.
# It is a function of the page's globals, so that it can also inspect a page in a frame.
PROBE_TAIL = (
    "window.addEventListener('load',function(){var out={};"
    "var frame=document.getElementById('probe-frame');"
    "(function(document,window,location){"
    "function names(t){return Array.prototype.filter.call(t.tBodies[0].rows,function(r){"
    "return !r.classList.contains('filtered');}).map(function(r){"
    "return r.getAttribute('data-entry');}).join(',');}"
    "function table(){return document.querySelector('section.view.active table.view-table');}"
    "try{BODY}catch(e){out.exception=String(e);}"
    "out.pwned=window.pwned===undefined?null:String(window.pwned);out.title=document.title;"
    "})(frame?frame.contentDocument:document,frame?frame.contentWindow:window,"
    "frame?frame.contentWindow.location:location);"
    "out.errors=window.__errors;out.csp=window.__csp;"
    "var pre=document.createElement('pre');pre.id='probe-result';"
    "pre.textContent=JSON.stringify(out);document.body.appendChild(pre);});"
)


def _run(page: Path, fragment: str = "", *flags: str) -> tuple[dict, str]:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, *flags, f"--user-data-dir={profile}", page.as_uri() + fragment],
            capture_output=True, text=True, timeout=120,
        )
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"no probe result; rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    return json.loads(html_mod.unescape(m.group(1))), proc.stderr


def _probe(site: Path, body: str, *, fragment: str = "", keep_csp: bool = True) -> tuple[dict, str]:
    """Open ``site/index.html`` (plus the probe) in headless Chromium; return what BODY found.

    The probe's own tail script is allowed by adding its hash to the page's CSP, which is
    otherwise kept as rendered (``keep_csp=False`` removes the CSP meta tag).
    """
    page = (site / "index.html").read_text()
    tail = PROBE_TAIL.replace("BODY", body)
    if keep_csp:
        assert "script-src 'sha256-" in page
        page = page.replace("script-src ", f"script-src {csp_hash(tail)} ", 1)
    else:
        page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page, count=1)
    page = page.replace("<head>", "<head>" + PROBE_HEAD, 1)
    page = page.replace("</body>", f"<script>{tail}</script></body>")
    (site / "probe.html").write_text(page)
    return _run(site / "probe.html", fragment)


def _probe_framed(site: Path, body: str, *, fragment: str, width: int) -> dict:
    """Open the page unchanged in a ``width`` px wide frame (a phone's viewport) and probe it.

    Headless Chromium's window is at least 500 px wide, so the frame sets the viewport.
    """
    wrapper = site / "frame.html"
    wrapper.write_text(
        f'<!DOCTYPE html><html><head>{PROBE_HEAD}</head><body>'
        f'<iframe id="probe-frame" src="index.html{fragment}" width="{width}" height="900">'
        f"</iframe><script>{PROBE_TAIL.replace('BODY', body)}</script></body></html>")
    # the frame's document is readable from the wrapper only with file access between files
    return _run(wrapper, "", "--allow-file-access-from-files")[0]


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
    assert md.splitlines()[0] == "| Entry | SNLI | RTE | all suites | Flags |"
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
              for w in line.split("|")[-2].strip().split(", ") if w}  # the Flags column
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
    assert names == ["heatmap.png", "index.html", "leaderboard.json", "leaderboard.md",
                     "results.parquet", "submissions/alpha/meta.yaml"]
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
    assert parameters({"parameters": "22.7M; AdamW lr 1e-4"}) == ("22.7M", pytest.approx(2.27e7))
    assert parameters({"parameters": 7_000_000_000}) == ("7B", 7e9)
    assert parameters({"parameters": "unknown"}) == ("unknown", None)
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
    tables = _tables(render_html(replace(board, cells=cells, views=views), heatmap=False))
    suite = tables["suite-view-task-snli-s1"]
    head = dict(zip(suite[0], range(len(suite[0])), strict=True))
    alpha = next(r for r in suite if r[1] == "alpha")
    assert alpha[head["Score %"]] == "90.0"
    assert alpha[head["Score 95% CI"]] == "[85.0, 95.0]" and alpha[head["Score n"]] == "2375"
    assert alpha[head["m % (lower)"]] == "10.0"  # the paper's metric, labelled by name
    assert alpha[head["m 95% CI"]] == "[8.0, 12.0]" and alpha[head["m n"]] == "100"
    main = tables["table-view-task-snli"]
    assert main[0][:6] == ["Rank [95%]", "Entry", "Score %", "± 95%", "transitive %", "cr %"]
    assert main[1][1] == "alpha" and main[1][4:6] == ["90.0", "–"]


def test_kind_columns_only_where_a_view_has_several_kinds(board):
    """A one-kind view's kind mean is its score: no second column repeating it; "1 kind"."""
    page = render_html(board, heatmap=False)
    tables = _tables(page)
    assert tables["table-view-task-rte"][0][:5] == ["Rank [95%]", "Entry", "Score %", "± 95%",
                                                    "Flags"]
    assert tables["table-view-all"][0][4:6] == ["transitive %", "cr %"]
    assert "<h2>RTE <small>1 kind, 1 suite</small></h2>" in page
    assert "<h2>all suites <small>2 kinds, 3 suites</small></h2>" in page


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
        "out.initial=names(t);var hs=t.tHead.rows[0].cells;"
        "function col(name){for(var i=0;i<hs.length;i++){if(hs[i].textContent.indexOf(name)==0)"
        "{return hs[i];}}}"
        "var score=col('Score %');score.click();out.score1=names(t);"
        "out.score1dir=score.getAttribute('aria-sort');score.click();out.score2=names(t);"
        "var rk=col('Rank');rk.click();out.rank1=names(t);"
        "out.rank1dir=rk.getAttribute('aria-sort');"
        "var en=col('Entry');en.click();out.entry1=names(t);"
        "var acc=col('Acc %');acc.click();out.acc1dir=acc.getAttribute('aria-sort');"
        "out.links=Array.prototype.map.call(t.querySelectorAll('td.name a'),"
        "function(a){return a.getAttribute('href');});"
        "out.models=Array.prototype.map.call(t.querySelectorAll('td.meta a'),"
        "function(a){return a.getAttribute('href');});"
        "out.flagText=t.querySelector('tr[data-entry=ref] td.flags').innerText;"
        "out.heatRefs=Array.prototype.map.call(document.querySelectorAll("
        "'table.heat tr.reference th'),function(h){return h.textContent;});"
        "out.heatDashed=document.querySelectorAll('table.heat td.ref').length;"
        "var img=document.querySelector('img.heatmap');out.img=img?img.naturalWidth:-1;"
        "out.suiteHead=Array.prototype.map.call(document.querySelector('section.view.active "
        "table.suite').tHead.rows[0].cells,function(h){return h.textContent;}).join('|');"
    )
    out, stderr = _probe(site, body)
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
    assert out["models"] == ["https://huggingface.co/org/alpha-110m", "https://example.org/beta"]
    assert "degenerate" in out["flagText"] and "near-constant" in out["flagText"]  # as text
    assert out["heatRefs"] == ["ref reference"] and out["heatDashed"] == 3
    assert out["img"] > 0  # heatmap loaded under the CSP (img-src 'self')
    # per-suite table: CI and n next to the score they belong to, the paper's metric labelled
    assert "Score %|Score 95% CI|Score n|" in out["suiteHead"]
    assert "m 95% CI|m n|" in out["suiteHead"]
    assert out["errors"] == [] and out["csp"] == [] and out["pwned"] is None
    assert "Uncaught" not in stderr


@needs_chromium
def test_html_view_fragment_tabs_and_phone_layout(board, tmp_path):
    site = tmp_path / "site"
    render_all(board, site)
    body = (
        "out.view=document.querySelector('section.view.active').getAttribute('data-key');"
        "out.tab=document.querySelector('.tabs button.active').textContent;"
        "var b=document.querySelector('.tabs button[data-key=all]');b.click();"
        "out.hash=location.hash;out.after=document.querySelector('section.view.active').id;"
        "var t=table();var hs=t.tHead.rows[0].cells;var w=document.documentElement.clientWidth;"
        "out.width=w;out.pageWidth=document.documentElement.scrollWidth;"
        "out.right={};['Rank','Entry','Score %'].forEach(function(n){"
        "for(var i=0;i<hs.length;i++){if(hs[i].textContent.indexOf(n)==0){"
        "out.right[n]=hs[i].getBoundingClientRect().right;}}});"
        "var heat=document.querySelector('table.heat').parentNode;"
        "out.heatScroll=getComputedStyle(heat).overflowX;"
        "out.heatFits=heat.getBoundingClientRect().right<=w;"
    )
    out = _probe_framed(site, body, fragment="#task:rte", width=390)
    assert "exception" not in out, out
    assert out["view"] == "task:rte" and out["tab"] == "RTE"  # opened by its URL
    assert out["hash"] == "#all" and out["after"] == "view-all"  # switching tabs sets the URL
    assert 370 <= out["width"] <= 390  # 390 less a scroll bar
    assert out["pageWidth"] <= out["width"]  # nothing pushes the page sideways; tables scroll
    for col in ("Rank", "Entry", "Score %"):  # the first columns are on screen
        assert 0 < out["right"][col] <= out["width"], (col, out["right"])
    assert out["heatScroll"] == "auto" and out["heatFits"]
    assert out["errors"] == [] and out["csp"] == []
    # the old id form still opens a view
    out, _ = _probe(site, "out.view=document.querySelector('section.view.active').id;",
                    fragment="#view-task-rte")
    assert out["view"] == "view-task-rte"


@needs_chromium
def test_html_filters_and_csv(board, tmp_path):
    site = tmp_path / "site"
    render_all(board, site)
    body = (
        "var t=table();var $=function(id){return document.getElementById(id);};"
        "out.csvAll=window.consistencyBench.csv(t.id);"
        "$('f-contaminated').checked=true;window.consistencyBench.applyFilters();"
        "out.noContam=names(t);$('f-contaminated').checked=false;"
        "$('f-pmin').value='100';$('f-pmax').value='1000';window.consistencyBench.applyFilters();"
        "out.params=names(t);$('f-pmin').value='';$('f-pmax').value='';"
        "$('f-search').value='GAM';window.consistencyBench.applyFilters();out.search=names(t);"
        "out.csvSearch=window.consistencyBench.csv(t.id);"
    )
    out, _ = _probe(site, body)
    assert "exception" not in out, out
    lines = out["csvAll"].split("\r\n")
    head = lines[0].split(",")
    assert head[:4] == ["Rank", "Entry", "Score %", "± 95%"]
    assert "Params" in head and "Model" in head and "Date" in head
    assert len(lines) == 6 and lines[-1] == ""  # header, 4 rows, final newline
    assert lines[1].startswith("1,alpha,90.0,")
    assert lines[3].startswith("reference,ref,")
    assert out["noContam"] == "alpha,ref,gamma"  # beta declared training on an snli file
    assert out["params"] == "alpha"  # 110M in [100M, 1000M]; beta 7B out; unknown hidden
    assert out["search"] == "gamma"
    assert out["csvSearch"].split("\r\n")[1].startswith("partial,gamma,")


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
    body = (
        "Array.prototype.forEach.call(document.querySelectorAll('.tabs button'),"
        "function(b){b.click();});"
        "document.querySelectorAll('details').forEach(function(d){d.open=true;});"
        "out.scripts=document.scripts.length;out.handlers=[];"
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
        "return e.id;});"
    )
    for keep_csp in (True, False):  # escaping alone holds, and so does the CSP
        out, _ = _probe(site, body, keep_csp=keep_csp)
        assert "exception" not in out, out
        assert out["pwned"] is None, keep_csp
        assert out["title"] == "consistency-bench leaderboard"
        assert out["scripts"] == 3  # the probe's two and the page's own
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
    out, _ = _probe(site, "")
    assert out["pwned"] is None
    assert any(v.startswith("script-src") for v in out["csp"]), out["csp"]
    out, _ = _probe(site, "", keep_csp=False)
    assert out["pwned"] in ("1", "2")  # the probe does see a script that runs


@needs_chromium
def test_probe_catches_console_errors(board, tmp_path):
    """Negative control: the probe does see errors, so an empty list means something."""
    render_all(board, tmp_path / "site")
    out, _ = _probe(tmp_path / "site", "console.error('boom');")
    assert out["errors"] == ["boom"]
