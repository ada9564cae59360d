import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from leaderboard.ranking import Entry, rank  # noqa: E402
from leaderboard.render import render_all, render_markdown  # noqa: E402
from tests.test_leaderboard_ranking import res, suite

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000", "--dump-dom",
]
PROBE_HEAD = (
    "<script>window.__errors=[];window.addEventListener('error',function(e){"
    "window.__errors.push(String(e.message||(e.target&&(e.target.src||e.target.href))||e.type));"
    "},true);var __ce=console.error;console.error=function(){"
    "window.__errors.push(Array.prototype.join.call(arguments,' '));"
    "__ce.apply(console,arguments);};</script>"
)
PROBE_TAIL = (
    # Runs on the load event, i.e. after the heatmap image has loaded.
    "<script>window.addEventListener('load',function(){"
    "var t=document.getElementById('table-view-all');"
    "function names(){return Array.prototype.map.call(t.tBodies[0].rows,"
    "function(r){return r.cells[1].textContent;}).join(',');}"
    "var out={initial:names(),heading:document.querySelector('h1').textContent,"
    "suiteTables:document.querySelectorAll('table.suite').length,"
    "tabs:Array.prototype.map.call(document.querySelectorAll('.tabs button'),"
    "function(b){return b.textContent;}).join(','),"
    "visible:document.querySelector('section.view.active').id,"
    "links:Array.prototype.map.call(t.querySelectorAll('a'),function(a){"
    "return a.getAttribute('href');})};"
    "var th=t.tHead.rows[0].cells[COL];th.click();out.first=names();"
    "out.firstSort=th.getAttribute('aria-sort');th.click();out.second=names();"
    "var img=document.querySelector('img');out.img=img?img.naturalWidth:-1;"
    "out.errors=window.__errors;var pre=document.createElement('pre');"
    "pre.id='probe-result';pre.textContent=JSON.stringify(out);"
    "document.body.appendChild(pre);});</script>"
)


@pytest.fixture
def board():
    return rank([
        Entry("alpha", res(s1=suite(0.1), s2=suite(0.9, hib=True, kind="cr"))),
        Entry("beta", res(s1=suite(0.2), s2=suite(0.95, hib=True, kind="cr"))),
        Entry("gamma", res(s1=suite(0.05))),
    ], best_near=None)


def test_markdown_marks_partial_and_direction(board):
    md = render_markdown(board)
    header = md.splitlines()[0]
    assert header == "| Entry | SNLI | all suites | Flags |"  # per-task summary, all last
    assert "| gamma | partial 1/2 | partial 1/2 |" in md
    assert "| alpha | #1 90.0 / 90.0 | #1 90.0 / 90.0 |" in md  # % units
    assert md.index("| alpha |") < md.index("| beta |") < md.index("| gamma |")


def test_render_all_outputs_deterministic(board, tmp_path):
    subs = tmp_path / "subs"
    (subs / "alpha").mkdir(parents=True)
    (subs / "alpha" / "meta.yaml").write_text("model: a\n")
    files = render_all(board, tmp_path / "a", subs)
    names = sorted(str(p.relative_to(tmp_path / "a")) for p in files)
    assert names == ["heatmap.png", "index.html", "leaderboard.json", "leaderboard.md",
                     "submissions/alpha/meta.yaml"]
    render_all(board, tmp_path / "b", subs)
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n
    assert (tmp_path / "a" / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((tmp_path / "a" / "leaderboard.json").read_text())
    assert data["views"]["all"]["rows"][2]["complete"] is False


def _probe(site: Path, col: int, extra: str = "") -> tuple[dict, str]:
    page = (site / "index.html").read_text()
    page = page.replace("<head>", "<head>" + PROBE_HEAD + extra, 1)
    page = page.replace("</body>", PROBE_TAIL.replace("COL", str(col)) + "</body>")
    probe = site / "probe.html"
    probe.write_text(page)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", probe.as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"no probe result; rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    import html as html_mod

    return json.loads(html_mod.unescape(m.group(1))), proc.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                    "(scripts/system-deps.sh installs it)")
def test_html_in_headless_chromium(board, tmp_path):
    subs = tmp_path / "subs"
    for n in ("alpha", "beta", "gamma"):
        (subs / n).mkdir(parents=True)
        (subs / n / "meta.yaml").write_text(f"model: {n}\n")
    site = tmp_path / "site"
    render_all(board, site, subs)
    # column 4 = score: first click sorts descending, second ascending
    out, stderr = _probe(site, 4)
    assert out["heading"] == "consistency-bench leaderboard"
    assert out["initial"] == "alpha,beta,gamma"
    assert out["first"] == "gamma,alpha,beta" and out["firstSort"] == "descending"
    assert out["second"] == "beta,alpha,gamma"
    # per-suite tables in every view: task snli (2), kinds (1 + 1), family (2), English (2),
    # all (2)
    assert out["suiteTables"] == 10
    assert out["tabs"] == ("SNLI,kind: transitive,kind: cr,family: becel,English suites,"
                           "all suites")
    assert out["visible"] == "view-task-snli"  # the page opens on the first task
    assert out["links"] == [f"submissions/{n}/meta.yaml" for n in ("alpha", "beta", "gamma")]
    assert out["img"] > 0  # heatmap loaded
    assert out["errors"] == []
    assert "Uncaught" not in stderr
    # the links point at files that exist
    for link in out["links"]:
        assert (site / link).is_file()
    # column 1 = entry name (text sort)
    out, _ = _probe(site, 1)
    assert out["first"] == "gamma,beta,alpha" and out["second"] == "alpha,beta,gamma"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_probe_catches_console_errors(board, tmp_path):
    """Negative control: the probe does see errors, so an empty list means something."""
    render_all(board, tmp_path / "site")
    out, _ = _probe(tmp_path / "site", 4, extra="<script>console.error('boom');</script>")
    assert out["errors"] == ["boom"]
