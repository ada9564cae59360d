"""Open the leaderboard page in headless Chromium and read what a script finds in it.

The probe inserts a head script before the page's CSP tag (it records ``error`` events,
``console.error`` and CSP violations) and a tail script whose hash it adds to the page's CSP;
the tail runs BODY on the ``load`` event, waits for the promise BODY returns and for the page's
lazily loaded files (``consistencyBench.idle()``), then writes ``out`` as JSON into the DOM,
which ``--dump-dom`` prints. BODY sees ``out``, ``names(t)`` (the entries of a table's shown
rows), ``table()`` (the active view's table), ``idle()``, ``click(el)`` (a click, then
idle) and ``until(f)`` (waits until ``f()`` is truthy).
"""

from __future__ import annotations

import functools
import html as html_mod
import http.server
import json
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from consistency_bench.leaderboard.webpage.static import csp_hash

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/system-deps.sh installs it)")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom",
]
# Inserted before the page's CSP meta tag, so it runs: records errors and CSP violations.
PROBE_HEAD = (
    "<script>window.__errors=[];window.__csp=[];window.addEventListener('error',function(e){"
    "window.__errors.push(String(e.message||(e.target&&(e.target.src||e.target.href))||e.type));"
    "},true);window.addEventListener('unhandledrejection',function(e){"
    "window.__errors.push('unhandled: '+String(e.reason));});"
    "document.addEventListener('securitypolicyviolation',function(e){"
    "window.__csp.push(e.violatedDirective+' '+e.blockedURI);});"
    "var __ce=console.error;console.error=function(){"
    "window.__errors.push(Array.prototype.join.call(arguments,' '));"
    "__ce.apply(console,arguments);};</script>"
)
# Runs on the load event; BODY fills `out` and may return a promise. It is a function of the
# page's globals, so that it can also inspect a page in a frame.
PROBE_TAIL = (
    "window.addEventListener('load',function(){var out={};"
    "var frame=document.getElementById('probe-frame');"
    "function finish(){out.errors=window.__errors;out.csp=window.__csp;"
    "var pre=document.createElement('pre');pre.id='probe-result';"
    "pre.textContent=JSON.stringify(out);document.body.appendChild(pre);}"
    "(function(document,window,location){"
    "function names(t){return Array.prototype.map.call(t.tBodies[0].querySelectorAll("
    "'tr[data-entry]'),function(r){return r.getAttribute('data-entry');}).join(',');}"
    "function table(){return document.querySelector('section.view.active table.view-table');}"
    "function idle(){return window.consistencyBench?window.consistencyBench.idle():"
    "Promise.resolve();}"
    "function click(el){el.click();return idle();}"
    "function until(f){return new Promise(function(ok,no){var n=0;(function go(){"
    "var v=f();if(v){ok(v);}else if(++n>200){no(new Error('timed out'));}"
    "else{setTimeout(go,10);}})();}).then(function(v){return idle().then(function(){"
    "return v;});});}"
    "var p;try{p=(function(){BODY})();}catch(e){out.exception=String(e);}"
    "Promise.resolve(p).then(idle).catch(function(e){out.exception=String(e);})"
    ".then(function(){out.pwned=window.pwned===undefined?null:String(window.pwned);"
    "out.title=document.title;}).then(finish);"
    "})(frame?frame.contentDocument:document,frame?frame.contentWindow:window,"
    "frame?frame.contentWindow.location:location);});"
)


def run(url: str, *flags: str, width: int = 1400) -> tuple[dict, str]:
    """Open ``url`` in headless Chromium; the probe's result and Chromium's stderr."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, *flags, f"--window-size={width},1000",
             f"--user-data-dir={profile}", url],
            capture_output=True, text=True, timeout=120,
        )
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"no probe result; rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    return json.loads(html_mod.unescape(m.group(1))), proc.stderr


def probe_page(site: Path, body: str, *, keep_csp: bool = True) -> Path:
    """Write ``site/probe.html``: the page with the probe (its tail allowed by the CSP)."""
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
    return site / "probe.html"


def probe(site: Path, body: str, *, fragment: str = "", keep_csp: bool = True,
          width: int = 1400) -> tuple[dict, str]:
    """Open ``site/index.html`` (plus the probe) from ``file://``; return what BODY found."""
    return run(probe_page(site, body, keep_csp=keep_csp).as_uri() + fragment, width=width)


def probe_framed(site: Path, body: str, *, fragment: str, width: int) -> dict:
    """Open the page unchanged in a ``width`` px wide frame (a phone's viewport) and probe it.

    Headless Chromium's window is at least 500 px wide, so the frame sets the viewport.
    """
    wrapper = site / "frame.html"
    wrapper.write_text(
        f'<!DOCTYPE html><html><head>{PROBE_HEAD}</head><body>'
        f'<iframe id="probe-frame" src="index.html{fragment}" width="{width}" height="900">'
        f"</iframe><script>{PROBE_TAIL.replace('BODY', body)}</script></body></html>")
    # the frame's document is readable from the wrapper only with file access between files
    return run(wrapper.as_uri(), "--allow-file-access-from-files")[0]


@contextmanager
def served(site: Path) -> Iterator[str]:
    """Serve ``site`` over HTTP on localhost (as the Space does); yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass
