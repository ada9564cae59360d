"""The page's own CSS and JavaScript (inlined into ``index.html``, allowed by hash in its CSP).

The script reads no data but the DOM: views are ``section.view[data-key]``, rows
``tr[data-entry][data-block]`` (0 ranked, 1 reference, 2 partial), sortable headers
``th[data-best]`` (``asc`` or ``desc``: the best-first direction of the first click). It never
builds HTML from strings (``textContent`` only), so no value can become markup.
"""

from __future__ import annotations

import base64
import hashlib

#: Heatmap colour buckets: one class per 10 points of score, -50 (red) .. 0 (white) .. 100 (blue).
HEAT_BUCKETS = range(-5, 11)


def _mix(a: str, b: str, t: float) -> str:
    x = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    y = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(p + (q - p) * t):02x}" for p, q in zip(x, y, strict=True))


def heat_class(value_pct: float) -> str:
    """CSS class of a heatmap cell for a score in % (clamped to -50 .. 100)."""
    b = max(-5, min(10, round(value_pct / 10)))
    return f"h{'m' if b < 0 else 'p'}{abs(b)}"


def _heat_css() -> str:
    rules = []
    for b in HEAT_BUCKETS:
        if b < 0:
            colour = _mix("#fbe3d6", "#b2182b", (-b - 1) / 4)
        elif b == 0:
            colour = "#f7f7f7"
        else:
            colour = _mix("#d8e8f2", "#08306b", (b - 1) / 9)
        ink = "#fff" if b <= -3 or b >= 6 else "#111"
        rules.append(f"table.heat td.h{'m' if b < 0 else 'p'}{abs(b)} "
                     f"{{ background: {colour}; color: {ink}; }}")
    return "\n".join(rules)


CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; vertical-align: top; }
th { background: #f3f3f3; user-select: none; }
th[data-best] { cursor: pointer; }
td.name, th.name, td.flags, th.flags, td.meta, th.meta { text-align: left; }
td.name { min-width: 6.5em; max-width: 11em; overflow-wrap: anywhere; }
td.flags { min-width: 14em; max-width: 24em; font-size: 0.85em; }
tr.partial td { color: #777; font-style: italic; }
tr.reference td { color: #555; background: #f6f6f6; }
tbody tr.block-start td { border-top: 2px solid #888; }
th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
small, .muted { color: #666; }
.status { font-size: 0.8em; border-radius: 3px; padding: 0 0.3em; white-space: nowrap; }
.status.reference { background: #e4e4e4; color: #333; }
.status.partial { background: #eee8d8; color: #5a4a1a; }
.tabs { display: flex; flex-wrap: wrap; gap: 0.3em; margin: 1em 0; }
.tabs button { border: 1px solid #bbb; background: #f7f7f7; padding: 0.3em 0.7em;
  cursor: pointer; border-radius: 4px; }
.tabs button.active { background: #2a5db0; color: white; border-color: #2a5db0; }
.tabs .sep { width: 1px; background: #ccc; margin: 0 0.4em; }
section.view { display: none; }
section.view.active { display: block; }
.flag { margin: 0.1em 0; }
.flag b { color: #a33; font-weight: 600; }
.flag.failing b { color: #7a4b00; }
.flag details { display: inline; }
.flag summary { cursor: pointer; display: inline; color: #2a5db0; }
img.heatmap { max-width: 100%; height: auto; }
.scroll { overflow-x: auto; max-width: 100%; }
td.nowrap, th.nowrap { white-space: nowrap; }
tr.filtered { display: none; }
.filters { display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; align-items: center;
  margin: 0.5em 0 1em; padding: 0.5em; background: #f7f7f7; border: 1px solid #ddd; }
.filters input[type=number] { width: 6em; }
.filters input[type=search] { width: 12em; }
.legend dt { font-weight: 600; float: left; clear: left; width: 6.5em; }
.legend dd { margin: 0 0 0.3em 7em; }
table.heat { font-size: 0.8em; }
table.heat th, table.heat td { padding: 0.15em 0.3em; min-width: 2.2em; text-align: center; }
table.heat th.entry { position: sticky; left: 0; background: #fff; text-align: left;
  white-space: nowrap; z-index: 1; }
table.heat th.suite { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
  font-weight: normal; }
table.heat tr.reference th.entry { font-style: italic; color: #555; }
table.heat td.ref { outline: 1px dashed #333; outline-offset: -3px; font-style: italic; }
table.heat td.nr { color: #888; }
@media (max-width: 600px) {
  body { margin: 0.6em; }
  th, td { padding: 0.15em 0.3em; font-size: 0.85em; }
  h1 { font-size: 1.4em; }
  td.flags { min-width: 16em; }
  img.heatmap { display: none; }
}
""" + _heat_css() + "\n"

JS = """
(function () {
  'use strict';
  var sections = Array.prototype.slice.call(document.querySelectorAll('section.view'));
  var buttons = Array.prototype.slice.call(document.querySelectorAll('.tabs button'));
  function fragment(key) {
    return '#' + encodeURIComponent(key).replace(/%3A/gi, ':');
  }
  function find(wanted) {
    for (var i = 0; i < sections.length; i++) {
      var s = sections[i];
      if (s.getAttribute('data-key') === wanted || s.id === wanted) { return s; }
    }
    return null;
  }
  function show(section, push) {
    if (!section) { return; }
    sections.forEach(function (s) { s.classList.toggle('active', s === section); });
    buttons.forEach(function (b) {
      var on = b.getAttribute('data-view') === section.id;
      b.classList.toggle('active', on);
      b.setAttribute('aria-selected', on ? 'true' : 'false');
    });
    var wanted = fragment(section.getAttribute('data-key'));
    if (push && window.location.hash !== wanted) {
      try { history.pushState(null, '', wanted); } catch (e) { /* file: in some browsers */ }
    }
  }
  function fromHash() {
    var raw = window.location.hash.slice(1);
    if (!raw) { return null; }
    try { raw = decodeURIComponent(raw); } catch (e) { return null; }
    return find(raw);
  }
  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      show(document.getElementById(b.getAttribute('data-view')), true);
    });
  });
  window.addEventListener('hashchange', function () { show(fromHash(), false); });
  window.addEventListener('popstate', function () {
    show(fromHash() || sections[0], false);
  });
  show(fromHash() || sections[0], false);

  function value(td) {
    var v = td ? td.getAttribute('data-value') : null;
    if (v === null || v === '') { return null; }
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function sortTable(table, col, th) {
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var best = th.getAttribute('data-best') || 'desc';
    var now = th.getAttribute('aria-sort');
    var dir = now === null ? (best === 'asc' ? 'ascending' : 'descending')
      : (now === 'ascending' ? 'descending' : 'ascending');
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', dir);
    var sign = dir === 'ascending' ? 1 : -1;
    rows.forEach(function (r, i) { r.__i = i; });
    rows.sort(function (a, b) {
      var ba = Number(a.getAttribute('data-block')), bb = Number(b.getAttribute('data-block'));
      if (ba !== bb) { return ba - bb; }
      var x = value(a.cells[col]), y = value(b.cells[col]);
      if (x === null && y === null) { return a.__i - b.__i; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      if (x < y) { return -sign; }
      if (x > y) { return sign; }
      return a.__i - b.__i;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
    markBlocks(table);
  }
  function markBlocks(table) {
    var last = null;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      var b = r.getAttribute('data-block');
      r.classList.toggle('block-start', last !== null && b !== last);
      last = b;
    });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    markBlocks(table);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      if (!th.hasAttribute('data-best')) { return; }
      th.tabIndex = 0;
      th.addEventListener('click', function () { sortTable(table, col, th); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortTable(table, col, th); }
      });
    });
  });

  var fContam = document.getElementById('f-contaminated');
  var fMin = document.getElementById('f-pmin');
  var fMax = document.getElementById('f-pmax');
  var fSearch = document.getElementById('f-search');
  function number(input) {
    if (!input || input.value === '') { return null; }
    var n = Number(input.value);
    return isNaN(n) ? null : n * 1e6;
  }
  function applyFilters() {
    var hide = fContam && fContam.checked;
    var lo = number(fMin), hi = number(fMax);
    var q = fSearch ? fSearch.value.trim().toLowerCase() : '';
    document.querySelectorAll('tr[data-entry]').forEach(function (r) {
      var p = r.getAttribute('data-params');
      var n = p === null || p === '' ? null : Number(p);
      var out = (hide && r.getAttribute('data-contaminated') === '1')
        || ((lo !== null || hi !== null) && n === null)
        || (lo !== null && n !== null && n < lo)
        || (hi !== null && n !== null && n > hi)
        || (q !== '' && (r.getAttribute('data-search') || '').indexOf(q) < 0);
      r.classList.toggle('filtered', !!out);
    });
  }
  [fContam, fMin, fMax, fSearch].forEach(function (el) {
    if (el) {
      el.addEventListener('input', applyFilters);
      el.addEventListener('change', applyFilters);
    }
  });

  function csvField(text) {
    // One CSV cell, neutralised by OWASP's CSV-injection rule: a cell a spreadsheet would read
    // as a formula, because it or any part of it split off at a separator (, ; tab CR: the
    // separator depends on the locale) starts with = + - @ tab or CR (a plain number such as
    // -1.5, or -1.5] closing an interval, is not one), gets a leading ' and quotes; a cell
    // holding a separator or a quote is quoted, so that no locale splits it.
    var t = text.replace(/\\s+/g, ' ').trim();
    var formula = t.split(/[,;\\t\\r]/).some(function (part) {
      var p = part.replace(/^[\\s"']+/, '');
      return /^[=+@\\-\\t\\r]/.test(p) && isNaN(Number(p.replace(/[\\])%]+$/, '')));
    });
    if (formula) { t = "'" + t; }
    return formula || /[",;\\t\\r\\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }
  function csv(table) {
    var lines = [];
    var head = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
      return csvField(th.getAttribute('data-csv') || th.textContent);
    });
    lines.push(head.join(','));
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      if (r.classList.contains('filtered')) { return; }
      lines.push(Array.prototype.map.call(r.cells, function (td) {
        var raw = td.getAttribute('data-csv');
        return csvField(raw !== null ? raw : td.textContent);
      }).join(','));
    });
    return lines.join('\\r\\n') + '\\r\\n';
  }
  document.querySelectorAll('button.csv').forEach(function (b) {
    b.addEventListener('click', function () {
      var table = document.getElementById(b.getAttribute('data-table'));
      var blob = new Blob([csv(table)], {type: 'text/csv;charset=utf-8'});
      var a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = b.getAttribute('data-file') || 'leaderboard.csv';
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
    });
  });
  window.consistencyBench = {
    csv: function (id) { return csv(document.getElementById(id)); },
    applyFilters: applyFilters
  };
})();
"""


def csp_hash(text: str) -> str:
    """The CSP source expression allowing exactly this inline script or style."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def csp(script: str = JS, style: str = CSS) -> str:
    """Content-Security-Policy of the page: nothing but its own script, style and images.

    No inline handler, no ``javascript:`` URL, no other script (hash-only ``script-src``), no
    plug-ins, no ``<base>``, no form submission, no network but same-origin images.
    """
    return ("default-src 'none'; "
            f"script-src {csp_hash(script)}; "
            f"style-src {csp_hash(style)}; "
            "img-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'")
