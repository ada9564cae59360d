"""The two sections the explorer adds to the first page, their style and their boot script.

Both sections are folded (``<details>``) and nearly empty: the explorer (an entry picker and
the kind and gold-label filters) and the plots (a view picker and a profile picker, filled
from the page's tabs and the view's plot file). Opening either loads the panels' code,
``assets/explorer.js`` (:mod:`consistency_bench.leaderboard.explorer.assets`), once: a script
element that the
page's own script creates, which the page's CSP allows with ``'strict-dynamic'`` as it allows
the lazily loaded data files, and nothing else. The first page grows by these sections, the
boot script and the style only (docs/leaderboard.md, "Page sizes").
"""

from __future__ import annotations

#: The panels' code beside ``index.html`` (written by ``render_all``).
ASSET = "assets/explorer.js"

#: Appended to the page's inline script (so its CSP hash covers it).
BOOT_JS = r"""
(function () {
  'use strict';
  var started = null;
  function start() {
    if (!started) {
      started = new Promise(function (ok, no) {
        var s = document.createElement('script');
        s.src = 'assets/explorer.js';
        s.addEventListener('load', ok);
        s.addEventListener('error', function () {
          var n = document.getElementById('ex-status');
          if (n) { n.textContent = 'Could not load assets/explorer.js'; }
          no(new Error('assets/explorer.js'));
        });
        document.head.appendChild(s);
      });
      window.consistencyBench.track(started);
    }
    return started;
  }
  ['explorer', 'plots'].forEach(function (id) {
    var d = document.getElementById(id);
    if (d) { d.addEventListener('toggle', function () { if (d.open) { start(); } }); }
  });
  window.consistencyBench.startPanels = start;
})();
"""

#: Added to the page's inline style (so its CSP hash covers it).
CSS = """
details.panel > summary h2 { display: inline; }
.ex-del { text-decoration: line-through; color: #9b1c1c; background: #fde8e8; }
.ex-ins { color: #14532d; background: #dcf2dc; font-weight: 600; }
.ex-group { border: 1px solid #ddd; margin: 0.4em 0; padding: 0.3em 0.5em;
  overflow-wrap: anywhere; }
.ex-group table { width: 100%; font-size: 0.85em; }
.ex-group td, .ex-group th { text-align: left; }
.ex-group tr.ex-x td { background: #fff1f1; }
.ex-pick { display: flex; flex-wrap: wrap; gap: 0.4em 1em; align-items: center; }
svg.plot { max-width: 100%; height: auto; }
@media (max-width: 600px) { .ex-group td { display: block; border: none; } }
"""


def sections(explorer: bool) -> str:
    """The first page's explorer section (when the site has explorer files) and plots section."""
    parts = []
    if explorer:
        parts.append(
            '<details class="panel" id="explorer"><summary><h2>Where models contradict '
            "themselves</h2></summary><p><small>Per entry and suite, a sample (drawn when "
            "the page was rendered, seeded per entry and suite) of the groups where the "
            "entry is inconsistent by the suite's own definition, the most confident "
            "contradiction first; each variant with the edit that makes it. "
            "<code>consistency-bench inspect</code> lists them all.</small></p>"
            '<p class="ex-pick"><label>entry <input type="search" id="ex-entry" '
            'list="ex-names" placeholder="entry name"></label> <button type="button" '
            'id="ex-open">show</button> <label>kind <select id="ex-kind"></select></label> '
            '<label>gold label <select id="ex-label"></select></label> '
            '<span id="ex-status" role="status"></span><datalist id="ex-names"></datalist>'
            '</p><div id="ex-out"></div></details>')
    parts.append(
        '<details class="panel" id="plots"><summary><h2>Accuracy against consistency'
        "</h2></summary><p><small>Each entry covering the view at its accuracy on the "
        "originals and its consistency (the papers' metrics), with 95% intervals; hollow grey: "
        "reference rows (degenerate baselines). Below, the per-kind profile of an entry beside "
        'the #1.</small></p><p class="ex-pick"><label>view <select id="pl-view"></select>'
        '</label> <label>profile of <select id="pl-entry"></select></label> '
        '<span id="pl-status" role="status"></span></p><div id="pl-scatter"></div>'
        '<div id="pl-profile"></div></details>')
    return "".join(parts)
