"""The page's own CSS and JavaScript (inlined into ``index.html``, allowed by hash in its CSP).

The script builds every table row, section and panel that is not in the first page from data
(the node format of ``consistency_bench.leaderboard.webpage.nodes``, files of
``consistency_bench.leaderboard.webpage.lazy``): views
are ``section.view[data-key][data-file]``, tables ``table.sortable[data-file]`` whose rows
(``consistency_bench.leaderboard.webpage.tables``) are kept as data, filtered, sorted within their
block (0
ranked, 1 reference, 2 partial) by the header ``th[data-best]`` (``asc`` or ``desc``: the
best-first direction of the first click) and shown
:data:`~consistency_bench.leaderboard.webpage.tables.PAGE_ROWS`
at a time. It never builds HTML from strings (``createElement``/``textContent`` only), so no
value can become markup, and it loads only ``data/<kind>/<stem>.js`` paths.
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
table { border-collapse: collapse; margin-bottom: 0.4em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.35em; text-align: right; vertical-align: top; }
th { background: #f3f3f3; user-select: none; }
th[data-best] { cursor: pointer; }
td.name, th.name, td.flags, th.flags { text-align: left; }
td.name { min-width: 7em; max-width: 13em; overflow-wrap: anywhere; }
td.flags { font-size: 0.85em; }
.covered-mean { font-size: 0.8em; color: #666; }
table.view-table th { font-size: 0.85em; }
.reasons { position: sticky; left: 0.3em; max-width: min(75em, calc(100vw - 5em)); }
tr.partial td, tr.unranked td { color: #777; font-style: italic; }
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
.flag details[open] summary { display: none; }
.sub { font-size: 0.8em; color: #555; display: flex; flex-wrap: wrap; gap: 0 0.5em; }
.params-unknown { display: none; }
tr.unknown-params .params-unknown { display: inline; color: #7a4b00; }
.badge { border-radius: 3px; padding: 0 0.3em; white-space: nowrap; }
.badge.repro-passed { background: #dff0d8; color: #24572a; }
.badge.repro-failed { background: #f8dcdc; color: #8a1f1f; }
.badge.repro-none, .badge.repro-other { background: #eee; color: #555; }
button.more { border: 1px solid #bbb; background: #fff; border-radius: 3px; padding: 0 0.25em;
  font-size: 0.8em; cursor: pointer; line-height: 1.2; }
tr.flagrow td, tr.details-row td { text-align: left; font-size: 0.85em; }
tr.flagrow td { border-top: none; }
tbody tr:has(+ tr.flagrow) td { border-bottom: none; }
tr.details-row td { background: #fafafa; }
.entry-details dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.15em 0.8em;
  margin: 0.3em 0; max-width: 60em; }
.entry-details dt { font-weight: 600; }
.entry-details dd { margin: 0; overflow-wrap: anywhere; }
.entry-details ul { margin: 0.2em 0; padding-left: 1.2em; }
p.note { background: #fff6dc; border-left: 4px solid #d9a400; padding: 0.4em 0.6em; }
#view-notice:empty { display: none; }
#view-notice { background: #fde8e8; border-left: 4px solid #b2182b; padding: 0.4em 0.6em; }
.pager { font-size: 0.9em; color: #444; margin: 0 0 1em; }
details.suite summary h4 { display: inline; margin: 0.4em 0; }
details.suite { margin: 0.3em 0 0.3em 0.5em; }
img.heatmap { max-width: 100%; height: auto; }
.scroll { overflow-x: auto; max-width: 100%; }
td.nowrap, th.nowrap { white-space: nowrap; }
.filters { display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; align-items: center;
  margin: 0.5em 0 1em; padding: 0.5em; background: #f7f7f7; border: 1px solid #ddd; }
.filters input[type=number] { width: 6em; }
.filters input[type=search] { width: 12em; }
.legend dt { font-weight: 600; float: left; clear: left; width: 6.5em; }
.legend dd { margin: 0 0 0.3em 7em; }
.links a { margin-right: 1em; }
table.heat { font-size: 0.8em; }
table.heat th, table.heat td { padding: 0.15em 0.3em; min-width: 2.2em; text-align: center; }
table.heat th.entry { position: sticky; left: 0; background: #fff; text-align: left;
  white-space: nowrap; z-index: 1; }
table.heat th.suite { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
  font-weight: normal; }
table.heat tr.reference th.entry { font-style: italic; color: #555; }
table.heat td.ref { outline: 1px dashed #333; outline-offset: -3px; font-style: italic; }
table.heat td.nr { color: #888; }
table.heat button.heat-remove { margin-left: 0.3em; font-size: 0.8em; }
@media (max-width: 600px) {
  body { margin: 0.6em; }
  th, td { padding: 0.15em 0.3em; font-size: 0.85em; }
  h1 { font-size: 1.4em; }
  td.flags, th.flags { display: none; }
  img.heatmap { display: none; }
}
""" + _heat_css() + "\n"

#: The page's script. Content built from data goes through ``build`` (the node format of
#: ``consistency_bench.leaderboard.webpage.nodes``); lazily loaded files through ``load``
#: (``webpage.lazy``).
#: ``csvField`` is the one function that formats a CSV cell (issue 28, item 8 owns its
#: neutralisation rule): every cell of every CSV goes through it.
JS = r"""
(function () {
  'use strict';
  var PAGE = 50;
  var INDEX = 'data/index/entries.js';
  var TAG = new RegExp('^(a|b|br|button|code|dd|details|div|dl|dt|em|h2|h3|h4|li|p|section|'
    + 'small|span|strong|summary|table|tbody|td|th|thead|tr|ul)$');
  var ATTR = /^(class|id|title|href|rel|type|colspan|role|hidden|open|(data|aria)-[a-z0-9-]+)$/;
  var HREF = /^(https?:\/\/[^\s]+|#[a-z0-9-]+|submissions\/[A-Za-z0-9%._~-]+\/meta\.yaml)$/i;
  var PATH = /^data\/[a-z]+\/[a-z0-9][a-z0-9-]{0,127}\.js$/;

  /* ---- nodes: page content from data, never from an HTML string ---- */
  function build(node) {
    if (typeof node === 'string') { return document.createTextNode(node); }
    if (!Array.isArray(node) || typeof node[0] !== 'string') { return document.createTextNode(''); }
    var out;
    if (node[0] === '') {
      out = document.createDocumentFragment();
    } else if (TAG.test(node[0])) {
      out = document.createElement(node[0]);
      var attrs = node[1] || {};
      Object.keys(attrs).forEach(function (name) {
        var v = String(attrs[name]);
        if (ATTR.test(name) && (name !== 'href' || HREF.test(v))) { out.setAttribute(name, v); }
      });
    } else {
      return document.createTextNode('');
    }
    for (var i = 2; i < node.length; i++) { out.appendChild(build(node[i])); }
    return out;
  }
  function textOf(node) {  /* as textContent, less the "more" of a folded reason */
    if (typeof node === 'string') { return node; }
    if (!Array.isArray(node) || node[0] === 'summary') { return ''; }
    var t = '';
    for (var i = 2; i < node.length; i++) { t += textOf(node[i]); }
    return t;
  }
  function flagsText(reasons) {  /* the CSV's Flags: each reason once, in full */
    return reasons ? reasons.slice(2).map(textOf).join('; ') : '';
  }

  /* ---- lazily loaded files: data/<kind>/<stem>.js, each one receive() call ---- */
  var files = Object.create(null);
  var busy = [];
  function track(promise) {
    busy.push(promise);
    promise.catch(function (e) { notice('Could not load the data: ' + e.message); });
    return promise;
  }
  function idle() {  /* settles when every load and render asked for so far is done */
    return new Promise(function (r) { setTimeout(r, 0); }).then(function () {
      var now = busy;
      busy = [];
      return now.length ? Promise.all(now.map(function (p) {
        return p.catch(function () {});
      })).then(idle) : null;
    });
  }
  function receive(path, text) {
    var f = files[path];
    if (!f || f.done) { return; }
    f.done = true;
    try { f.resolve(JSON.parse(text)); } catch (e) { f.reject(e); }
  }
  var api = window.consistencyBench = {receive: receive};
  function load(path) {
    if (typeof path !== 'string' || !PATH.test(path)) {
      return Promise.reject(new Error('not a data file: ' + String(path).slice(0, 80)));
    }
    if (files[path]) { return files[path].promise; }
    var f = {done: false};
    f.promise = new Promise(function (resolve, reject) { f.resolve = resolve; f.reject = reject; });
    files[path] = f;
    var s = document.createElement('script');
    s.src = path;
    s.addEventListener('error', function () { f.done = true; f.reject(new Error(path)); });
    s.addEventListener('load', function () {
      if (!f.done) { f.done = true; f.reject(new Error(path + ' holds no data')); }
    });
    document.head.appendChild(s);
    return f.promise;
  }
  var index = null;
  function loadIndex() {
    return load(INDEX).then(function (data) {
      if (!index) {
        index = new Map();
        data.entries.forEach(function (e) { index.set(e.name, e); });
        index.csvHead = data.csv_head;
      }
      return index;
    });
  }
  function notice(text) {
    var n = document.getElementById('view-notice');
    if (n) { n.textContent = text; }
  }

  /* ---- tables: rows are data; the first PAGE rows (after filters and sorting) are shown ---- */
  var states = new Map();
  function stateOf(table) {
    if (!states.has(table)) {
      var head = Array.prototype.slice.call(table.tHead.rows[0].cells);
      states.set(table, {table: table, file: table.getAttribute('data-file'), rows: null,
                         ncols: head.length, sort: null, shown: PAGE,
                         open: new Set()});
      head.forEach(function (th) { if (th.hasAttribute('data-best')) { th.tabIndex = 0; } });
    }
    return states.get(table);
  }
  function rowsOf(st) {
    if (st.rows) { return Promise.resolve(st); }
    return load(st.file).then(function (data) { st.rows = data.rows; return st; });
  }
  var DETAILS = ['button', {'type': 'button', 'class': 'more', 'aria-expanded': 'false',
                  'title': 'details: model, parameters, setup, reproduction'}, '▸'];
  function rowNodes(row, blockStart, ncols) {
    var tds = row.cells.map(function (c) {
      var cls = c.length > 3 ? c[3] : null;
      var content = cls === 'name' && row.file ? ['', {}, DETAILS, ' ', c[0]] : c[0];
      return ['td', cls ? {'class': cls} : {}, content];
    });
    var attrs = {'class': row.cls + (blockStart ? ' block-start' : ''), 'data-entry': row.entry};
    if (row.file) { attrs['data-file'] = row.file; }
    var out = [['tr', attrs].concat(tds)];
    if (row.flags) {
      out.push(['tr', {'class': 'flagrow'}, ['td', {'colspan': ncols}, row.flags]]);
    }
    return out;
  }
  var fContam = document.getElementById('f-contaminated');
  var fRepro = document.getElementById('f-reproduced');
  var fMin = document.getElementById('f-pmin');
  var fMax = document.getElementById('f-pmax');
  var fSearch = document.getElementById('f-search');
  function number(input) {
    if (!input || input.value === '') { return null; }
    var n = Number(input.value);
    return isNaN(n) ? null : n * 1e6;
  }
  function filters() {
    return {contam: !!(fContam && fContam.checked), repro: !!(fRepro && fRepro.checked),
            lo: number(fMin), hi: number(fMax),
            q: fSearch ? fSearch.value.trim().toLowerCase() : ''};
  }
  function filtering(f) {
    return f.contam || f.repro || f.lo !== null || f.hi !== null || f.q !== '';
  }
  function keep(row, f) {
    if (f.contam && row.contaminated === 1) { return false; }
    if (!index) { return true; }
    var e = index.get(row.entry) || {params: null, search: '', reproduced: null};
    var n = e.params;
    if (n !== null && ((f.lo !== null && n < f.lo) || (f.hi !== null && n > f.hi))) {
      return false;  // an entry without a count stays, marked "parameters unknown"
    }
    if (f.repro && e.reproduced !== 'passed') { return false; }
    return f.q === '' || e.search.indexOf(f.q) >= 0;
  }
  function value(row, col) {
    var c = row.cells[col];
    var v = c && c.length > 1 ? c[1] : null;
    return typeof v === 'string' ? v.toLowerCase() : (v === undefined ? null : v);
  }
  function ordered(st, f) {
    var rows = st.rows.filter(function (r) { return keep(r, f); });
    if (!st.sort) { return rows; }
    var col = st.sort.col, sign = st.sort.dir === 'ascending' ? 1 : -1;
    var pos = new Map(st.rows.map(function (r, i) { return [r, i]; }));
    return rows.sort(function (a, b) {
      if (a.block !== b.block) { return a.block - b.block; }
      var x = value(a, col), y = value(b, col);
      if (x === null && y === null) { return pos.get(a) - pos.get(b); }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      if (x < y) { return -sign; }
      if (x > y) { return sign; }
      return pos.get(a) - pos.get(b);
    });
  }
  function render(st) {
    var f = filters();
    var rows = ordered(st, f);
    var shown = Math.min(st.shown, rows.length);
    var tbody = st.table.tBodies[0];
    while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
    var last = null;
    var ranged = f.lo !== null || f.hi !== null;
    rows.slice(0, shown).forEach(function (row) {
      rowNodes(row, last !== null && row.block !== last, st.ncols)
        .forEach(function (n) { tbody.appendChild(build(n)); });
      var e = index && index.get(row.entry);
      if (ranged && e && e.params === null) {
        rowElement(tbody, row.entry).classList.add('unknown-params');
      }
      if (st.open.has(row.entry)) { track(openDetails(st, rowElement(tbody, row.entry))); }
      last = row.block;
    });
    var pager = document.querySelector('p.pager[data-table="' + st.table.id + '"]');
    if (pager) {
      var count = pager.querySelector('.count');
      count.textContent = rows.length === 0 ? 'no rows' : 'rows 1–' + shown + ' of ' + rows.length
        + (rows.length < st.rows.length ? ' (' + st.rows.length + ' before filters)' : '');
      pager.querySelectorAll('button').forEach(function (b) { b.hidden = shown >= rows.length; });
    }
  }
  function rowElement(tbody, entry) {
    var found = null;
    Array.prototype.forEach.call(tbody.rows, function (r) {
      if (r.getAttribute('data-entry') === entry) { found = r; }
    });
    return found;
  }
  function refresh(st) {
    var need = [rowsOf(st)];
    if (filtering(filters())) { need.push(loadIndex()); }
    return track(Promise.all(need).then(function () { render(st); }));
  }
  function sortBy(th) {
    var table = th.closest('table');
    var st = stateOf(table);
    var col = Array.prototype.indexOf.call(th.parentNode.cells, th);
    var now = th.getAttribute('aria-sort');
    var best = th.getAttribute('data-best') === 'asc' ? 'ascending' : 'descending';
    var dir = now === null ? best : (now === 'ascending' ? 'descending' : 'ascending');
    Array.prototype.forEach.call(th.parentNode.cells, function (h) {
      h.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', dir);
    st.sort = {col: col, dir: dir};
    return refresh(st);
  }

  /* ---- entry details: an expandable row under the entry's row(s) ---- */
  function openDetails(st, tr) {
    if (!tr) { return Promise.resolve(); }
    var entry = tr.getAttribute('data-entry');
    var button = tr.querySelector('button.more');
    if (button) { button.setAttribute('aria-expanded', 'true'); button.textContent = '▾'; }
    return load('data/entry/' + tr.getAttribute('data-file') + '.js').then(function (data) {
      var after = tr.nextElementSibling && tr.nextElementSibling.classList.contains('flagrow')
        ? tr.nextElementSibling : tr;
      var next = after.nextElementSibling;
      if (next && next.classList.contains('details-row')) { return; }
      var d = build(['tr', {'class': 'details-row', 'data-details': entry},
                     ['td', {'colspan': st.ncols}, data.details]]);
      after.parentNode.insertBefore(d, after.nextSibling);
    });
  }
  function toggleDetails(button) {
    var tr = button.closest('tr');
    var st = stateOf(tr.closest('table'));
    var entry = tr.getAttribute('data-entry');
    if (!st.open.has(entry)) {
      st.open.add(entry);
      return track(openDetails(st, tr));
    }
    st.open.delete(entry);
    button.setAttribute('aria-expanded', 'false');
    button.textContent = '▸';
    Array.prototype.forEach.call(tr.parentNode.querySelectorAll('tr.details-row'), function (r) {
      if (r.getAttribute('data-details') === entry) { r.remove(); }
    });
    return Promise.resolve();
  }

  /* ---- views: one section each, built from its file on first show ---- */
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
  function fill(section) {
    if (section.querySelector('table.view-table')) { return Promise.resolve(null); }
    return load(section.getAttribute('data-file')).then(function (data) {
      if (section.querySelector('table.view-table')) { return null; }
      while (section.firstChild) { section.removeChild(section.firstChild); }
      section.appendChild(build(data.shell));
      stateOf(section.querySelector('table.view-table')).rows = data.rows;
      return null;
    });
  }
  function show(section, push) {
    if (!section) { return Promise.resolve(); }
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
    return track(fill(section).then(function () { return refreshSection(section); }));
  }
  function refreshSection(section) {
    var all = [];
    section.querySelectorAll('table.sortable').forEach(function (table) {
      var st = stateOf(table);
      if (st.rows || filtering(filters())) { all.push(refresh(st)); }
    });
    return Promise.all(all);
  }
  function fromHash() {
    var raw = window.location.hash.slice(1);
    if (!raw) { notice(''); return sections[0]; }
    try { raw = decodeURIComponent(raw); } catch (e) { raw = window.location.hash.slice(1); }
    var found = find(raw);
    if (found) { notice(''); return found; }
    var target = document.getElementById(raw);
    if (target && !target.classList.contains('view')) {  // an anchor of the page: "How to submit"
      if (target.tagName === 'DETAILS') { target.open = true; }
      return null;
    }
    notice('There is no view "' + raw.slice(0, 80) + '" on this leaderboard; showing '
           + (buttons.length ? buttons[0].textContent : 'nothing') + ' instead.');
    return sections[0];
  }
  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      notice('');
      show(document.getElementById(b.getAttribute('data-view')), true);
    });
  });
  window.addEventListener('hashchange', function () { show(fromHash(), false); });
  window.addEventListener('popstate', function () { show(fromHash() || sections[0], false); });

  /* ---- per-suite tables: one file per suite, loaded when its details opens ---- */
  function openSuite(details) {
    if (details.querySelector('table')) { return Promise.resolve(); }
    var path = details.getAttribute('data-file'), id = details.getAttribute('data-table');
    return track(load(path).then(function (data) {
      if (details.querySelector('table')) { return null; }
      details.appendChild(build(['div', {'class': 'scroll'},
        ['table', {'class': 'sortable suite', 'id': id, 'data-file': path},
         ['thead', {}, data.head], ['tbody', {}]]]));
      details.appendChild(build(['p', {'class': 'pager', 'data-table': id},
        ['span', {'class': 'count'}], ' ',
        ['button', {'type': 'button', 'class': 'page-more'}, 'show ' + PAGE + ' more'], ' ',
        ['button', {'type': 'button', 'class': 'page-all'}, 'show all']]));
      var st = stateOf(details.querySelector('table'));
      st.rows = data.rows;
      return refresh(st);
    }));
  }
  document.addEventListener('toggle', function (e) {
    var d = e.target;
    if (d.matches && d.matches('details.suite') && d.open) { openSuite(d); }
  }, true);

  /* ---- clicks: sorting, paging, details, CSV (one listener for every table) ---- */
  function pagerState(button) {
    var id = button.closest('p.pager').getAttribute('data-table');
    var table = document.getElementById(id);
    return table ? stateOf(table) : null;
  }
  document.addEventListener('click', function (e) {
    var t = e.target;
    if (!(t instanceof Element)) { return; }
    var th = t.closest('table.sortable th[data-best]');
    var b = t.closest('button');
    if (th) {
      sortBy(th);
    } else if (b && b.classList.contains('more') && b.closest('table.sortable')) {
      toggleDetails(b);
    } else if (b && (b.classList.contains('page-more') || b.classList.contains('page-all'))) {
      var st = pagerState(b);
      if (st) {
        st.shown = b.classList.contains('page-all') ? Infinity : st.shown + PAGE;
        refresh(st);
      }
    } else if (b && b.classList.contains('csv')) {
      track(csv(b.getAttribute('data-table')).then(function (text) {
        download(text, b.getAttribute('data-download') || 'leaderboard.csv');
      }));
    } else if (b && b.classList.contains('heat-remove')) {
      b.closest('tr').remove();
    }
  });
  document.addEventListener('keydown', function (e) {
    var th = e.target instanceof Element && e.target.closest('table.sortable th[data-best]');
    if (th && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); sortBy(th); }
  });

  /* ---- filters: over every row of every table shown, through the index file ---- */
  function applyFilters() {
    var section = document.querySelector('section.view.active');
    return section ? track(refreshSection(section)) : Promise.resolve();
  }
  [fContam, fRepro, fMin, fMax, fSearch].forEach(function (el) {
    if (el) {
      el.addEventListener('input', applyFilters);
      el.addEventListener('change', applyFilters);
    }
  });

  /* ---- CSV: the whole view as the filters leave it, every cell once and in full ---- */
  function csvField(text) {
    // One CSV cell, neutralised by OWASP's CSV-injection rule: a cell a spreadsheet would read
    // as a formula, because it or any part of it split off at a separator (, ; tab CR: the
    // separator depends on the locale) starts with = + - @ tab or CR (a plain number such as
    // -1.5, or -1.5] closing an interval, is not one), gets a leading ' and quotes; a cell
    // holding a separator or a quote is quoted, so that no locale splits it.
    var t = String(text).replace(/\s+/g, ' ').trim();
    var formula = t.split(/[,;\t\r]/).some(function (part) {
      var p = part.replace(/^[\s"']+/, '');
      return /^[=+@\-\t\r]/.test(p) && isNaN(Number(p.replace(/[\])%]+$/, '')));
    });
    if (formula) { t = "'" + t; }
    return formula || /[",;\t\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }
  function csv(id) {
    var table = document.getElementById(id);
    var st = stateOf(table);
    return Promise.all([rowsOf(st), loadIndex()]).then(function () {
      var head = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
        return th.getAttribute('data-csv') || th.textContent;
      });
      var fcol = Array.prototype.findIndex.call(table.tHead.rows[0].cells, function (th) {
        return th.classList.contains('flags');
      });
      var own = table.getAttribute('data-csv-extra');
      head = head.concat(own ? own.split('|') : []);
      var extra = table.classList.contains('view-table') ? index.csvHead : [];
      var lines = [head.concat(extra).map(csvField).join(',')];
      ordered(st, filters()).forEach(function (row) {
        var cells = row.cells.map(function (c, i) {
          if (i === fcol) { return flagsText(row.flags); }
          return c.length > 2 && c[2] !== null ? c[2] : textOf(c[0]);
        }).concat(row.csv || []);
        var e = index.get(row.entry);
        if (extra.length) {
          cells = cells.concat(e ? e.csv : extra.map(function () { return ''; }));
        }
        lines.push(cells.map(csvField).join(','));
      });
      return lines.join('\r\n') + '\r\n';
    });
  }
  function download(text, name) {
    var blob = new Blob([text], {type: 'text/csv;charset=utf-8'});
    var a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
  }

  /* ---- heatmap: the top entries, plus any entry the reader picks ---- */
  var heatPick = document.getElementById('heat-pick');
  var heatList = document.getElementById('heat-names');
  var heatStatus = document.getElementById('heat-status');
  function fillPicker() {
    return track(loadIndex().then(function () {
      if (!heatList || heatList.options.length) { return; }
      index.forEach(function (e) {
        var o = document.createElement('option');
        o.value = e.name;
        heatList.appendChild(o);
      });
    }));
  }
  function addHeat(name) {
    return track(loadIndex().then(function () {
      var e = index.get(name);
      var body = document.querySelector('#heat-table tbody');
      if (!e) {
        heatStatus.textContent = 'No entry is named "' + name.slice(0, 80) + '".';
        return null;
      }
      if (rowElement(body, name)) {
        heatStatus.textContent = name + ' is already shown.';
        return null;
      }
      return load('data/entry/' + e.file + '.js').then(function (data) {
        var tr = build(data.heat);
        tr.classList.add('picked');
        var rm = document.createElement('button');
        rm.type = 'button';
        rm.className = 'heat-remove';
        rm.textContent = '×';
        rm.title = 'remove from the heatmap';
        tr.cells[0].appendChild(rm);
        body.appendChild(tr);
        heatStatus.textContent = name + ' added.';
      });
    }));
  }
  if (heatPick) {
    heatPick.addEventListener('focus', fillPicker);
    document.getElementById('heat-add').addEventListener('click', function () {
      addHeat(heatPick.value.trim());
    });
    heatPick.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { e.preventDefault(); addHeat(heatPick.value.trim()); }
    });
  }

  document.querySelectorAll('table.sortable').forEach(stateOf);
  var first = fromHash();
  if (first && first !== sections[0]) { show(first, false); }
  /* the page's interface, for a panel added later and for the tests (docs/leaderboard.md) */
  api.load = load;
  api.build = build;
  api.idle = idle;
  api.track = track;
  api.csv = csv;
  api.csvField = csvField;
  api.applyFilters = applyFilters;
  api.addHeat = addHeat;
  api.show = function (key) { return show(find(key), true); };
})();
"""


def csp_hash(text: str) -> str:
    """The CSP source expression allowing exactly this inline script or style."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def csp(script: str = JS, style: str = CSS) -> str:
    """Content-Security-Policy of the page: nothing but its own script, style and images.

    ``script-src`` is the hash of the page's one inline script and ``'strict-dynamic'``: a
    script element that this script creates (the lazily loaded ``data/*.js`` files) may load,
    a ``<script>`` in the HTML (one injected past the escaping) may not, and no inline
    handler or ``javascript:`` URL runs. No plug-ins, no ``<base>``, no form submission, no
    network but same-origin images (``fetch`` is never used: ``connect-src`` stays ``'none'``).
    """
    return ("default-src 'none'; "
            f"script-src {csp_hash(script)} 'strict-dynamic'; "
            f"style-src {csp_hash(style)}; "
            "img-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'")
