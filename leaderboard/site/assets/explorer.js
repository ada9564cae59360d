(function () {
  'use strict';
  var cb = window.consistencyBench;
  var SVG = 'http://www.w3.org/2000/svg';
  var INDEX = 'data/index/entries.js';
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, kids) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    (kids || []).forEach(function (k) {
      if (k === null || k === undefined) { return; }
      e.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
    });
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function pct(x, d) { return x === null || x === undefined ? 'n/a' : (100 * x).toFixed(d || 1); }
  function status(id, text) { var n = $(id); if (n) { n.textContent = text; } }

  /* ---- explorer: one entry's file, filters by kind and gold label ---- */
  var files = null, current = null;
  function entries() {
    return cb.load(INDEX).then(function (data) {
      if (!files) {
        files = new Map();
        var list = $('ex-names');
        data.entries.forEach(function (e) {
          files.set(e.name, e.file);
          if (list) {
            var o = document.createElement('option');
            o.value = e.name;
            list.appendChild(o);
          }
        });
      }
      return files;
    });
  }
  function options(select, values, all) {
    clear(select);
    [''].concat(values).forEach(function (v) {
      var o = document.createElement('option');
      o.value = v;
      o.textContent = v === '' ? all : v;
      select.appendChild(o);
    });
  }
  function ops(list) {  /* a word diff: kept text, removed [-…-], added {+…+} */
    var span = el('span');
    list.forEach(function (op) {
      var t = String(op[1]);
      var add = op[0] === '+';
      if (op[0] === '=') {
        span.appendChild(document.createTextNode(t));
      } else {
        span.appendChild(el(add ? 'ins' : 'del', add ? 'ex-ins' : 'ex-del', [t]));
      }
    });
    return span;
  }
  function field(row, name, key) {  /* a text, or the diff that makes it */
    var e = row.edit;
    var diff = e && (e.type === 'diff' || e.type === 'merge');
    if (diff && Array.isArray(e[name])) { return ops(e[name]); }
    var v = row[key];
    return v === null || v === undefined ? null : el('span', null, [String(v)]);
  }
  function editText(e) {
    if (!e) { return ''; }
    if (e.type === 'swap') { return 'the two texts swapped'; }
    if (e.type === 'salad') { return 'word salad (' + e.transform + ') of the original'; }
    if (e.type === 'rule') { return 'inferred by ' + e.rule + ' (must be ' + e.constraint + ')'; }
    if (e.type === 'span') { return 'sub-span ' + e.start + '–' + e.end; }
    if (e.type === 'merge') { return 'merged with the second item (added text marked)'; }
    return 'edit' + (e.tag ? ' (' + e.tag + ')' : '') + ': removed and added words marked';
  }
  function answer(row) {
    if (row.pred === null) { return '(invalid answer)'; }
    return row.pred + (row.probs ? ' ' + Math.max.apply(null, row.probs).toFixed(2) : '');
  }
  function groupNode(suite, g) {
    var conf = g.confidence === null ? 'n/a' : g.confidence.toFixed(3);
    var head = el('p', null, [el('strong', null, [g.group]),
      ' · gold ' + (g.gold === null ? 'none' : g.gold) + ' · confidence ' + conf
      + (g.broke ? ' · broke: ' + g.broke : '')
      + (g.reference ? ' · compared with: ' + g.reference : '')]);
    var body = el('tbody');
    g.rows.forEach(function (r) {
      var text = el('td', null, [field(r, 'text', 'text')]);
      var pair = field(r, 'text_pair', 'pair');
      if (pair) { text.appendChild(el('br')); text.appendChild(pair); }
      var how = editText(r.edit);
      if (how) { text.appendChild(el('br')); text.appendChild(el('small', null, [how])); }
      var tr = el('tr', r.x ? 'ex-x' : null, [
        el('td', null, [(r.anchor ? '● ' : r.x ? '✗ ' : '') + r.variant]),
        el('td', null, [answer(r)]),
        el('td', null, ['gold ' + (r.gold === null ? '–' : r.gold)]), text]);
      body.appendChild(tr);
    });
    var box = el('div', 'ex-group', [head, el('table', null, [body])]);
    box.setAttribute('data-group', g.group);
    box.setAttribute('data-suite', suite.suite);
    return box;
  }
  function render() {
    var out = $('ex-out');
    if (!out || !current) { return; }
    clear(out);
    var kind = $('ex-kind').value, label = $('ex-label').value, shown = 0;
    current.suites.forEach(function (s) {
      if (kind && s.kind !== kind) { return; }
      var groups = s.groups.filter(function (g) { return !label || g.gold === label; });
      var summary = el('summary', null, [el('strong', null, [s.suite]), ' (' + s.kind + '): '
        + groups.length + ' shown of a sample of ' + s.groups.length + ' from ' + s.inconsistent
        + ' inconsistent of ' + s.units + ' (' + s.relation + ')']);
      var d = el('details', 'ex-suite', [summary]);
      d.setAttribute('data-suite', s.suite);
      d.open = true;
      groups.forEach(function (g) { d.appendChild(groupNode(s, g)); shown += 1; });
      out.appendChild(d);
    });
    status('ex-status', current.entry + ': ' + shown + ' groups');
  }
  function open(name) {
    return cb.track(entries().then(function (map) {
      var file = map.get(name);
      if (!file) {
        status('ex-status', 'No entry is named "' + String(name).slice(0, 80) + '".');
        return null;
      }
      return cb.load('data/explorer/' + file + '.js').then(function (data) {
        current = data;
        var kinds = [], labels = [];
        data.suites.forEach(function (s) {
          if (kinds.indexOf(s.kind) < 0) { kinds.push(s.kind); }
          s.labels.forEach(function (l) { if (labels.indexOf(l) < 0) { labels.push(l); } });
        });
        options($('ex-kind'), kinds, 'all kinds');
        options($('ex-label'), labels.sort(), 'all gold labels');
        render();
      }, function () {
        status('ex-status', name + ' has no explorer file (rendered without --data)');
      });
    }));
  }
  if ($('ex-open')) {
    $('ex-open').addEventListener('click', function () { open($('ex-entry').value.trim()); });
    $('ex-entry').addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { e.preventDefault(); open($('ex-entry').value.trim()); }
    });
    $('ex-entry').addEventListener('focus', function () { cb.track(entries()); });
    ['ex-kind', 'ex-label'].forEach(function (id) { $(id).addEventListener('change', render); });
  }

  /* ---- plots: inline SVG from the view's plot file ---- */
  var plot = null;
  var W = 560, H = 420, L = 52, T = 18, R = 150, B = 46;
  function x(v) { return L + (W - L - R) * v; }
  function y(v) { return H - B - (H - T - B) * v; }
  function label(px, py, text, size, anchor, fill) {
    return sv('text', {x: px, y: py, 'font-size': size, 'text-anchor': anchor || 'start',
                       fill: fill || '#111'}, text);
  }
  function svg(w, h, title) {
    var s = sv('svg', {'class': 'plot', viewBox: '0 0 ' + w + ' ' + h, width: w, height: h,
                       role: 'img'});
    s.appendChild(sv('title', {}, title));
    return s;
  }
  function bar(g, x1, y1, x2, y2, c) {
    g.appendChild(sv('line', {x1: x1, y1: y1, x2: x2, y2: y2, stroke: c}));
  }
  function point(p) {
    var g = sv('g', {'class': 'point', 'data-entry': p.name});
    var ranked = p.status === 'ranked', c = ranked ? '#1f5fa8' : '#888';
    var px = x(p.cons), py = y(p.acc);
    var h = p.cons_half;
    if (h !== null) { bar(g, x(p.cons - h), py, x(p.cons + h), py, c); }
    if (p.acc_half !== null) { bar(g, px, y(p.acc - p.acc_half), px, y(p.acc + p.acc_half), c); }
    g.appendChild(ranked ? sv('circle', {cx: px, cy: py, r: 5, fill: c})
      : sv('rect', {x: px - 4, y: py - 4, width: 8, height: 8, fill: 'none', stroke: c}));
    var name = (ranked ? '#' + p.rank + ' ' : '') + p.name + (ranked ? '' : ' (reference)');
    g.appendChild(label(px + 7, py - 6, name, 10, 'start', ranked ? '#111' : '#666'));
    g.appendChild(sv('title', {}, p.name + ': accuracy ' + pct(p.acc) + '% ± ' + pct(p.acc_half)
      + ', consistency ' + pct(p.cons) + '% ± ' + pct(p.cons_half) + ', score ' + pct(p.score)));
    g.addEventListener('click', function () { $('pl-entry').value = p.name; profile(); });
    return g;
  }
  function scatter(data) {
    var box = $('pl-scatter');
    clear(box);
    var s = svg(W, H, data.title + ': accuracy against consistency');
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      bar(s, x(t), y(0), x(t), y(1), '#ddd');
      bar(s, x(0), y(t), x(1), y(t), '#ddd');
      s.appendChild(label(x(t), H - B + 14, String(100 * t), 10, 'middle'));
      s.appendChild(label(L - 6, y(t) + 3, String(100 * t), 10, 'end'));
    });
    s.appendChild(label(x(0.5), H - 8, "consistency % (papers' metrics)", 11, 'middle'));
    var side = label(12, y(0.5), 'accuracy on the originals %', 11, 'middle');
    side.setAttribute('transform', 'rotate(-90 12 ' + y(0.5) + ')');
    s.appendChild(side);
    data.points.forEach(function (p) { s.appendChild(point(p)); });
    box.appendChild(s);
  }
  function profile() {
    var box = $('pl-profile');
    clear(box);
    if (!plot || !plot.profiles.length) { return; }
    var top = plot.profiles[0], other = null, want = $('pl-entry').value;
    plot.profiles.forEach(function (p) { if (p.name === want) { other = p; } });
    var rows = other && other !== top ? [top, other] : [top];
    var kinds = plot.kinds, PW = 560, PH = 260, PL = 40, PB = 40;
    var bw = (PW - PL - 10) / Math.max(1, kinds.length), lo = -0.5, hi = 1;
    var colours = ['#1f5fa8', '#e08a1e'];
    function py(v) { return 10 + (PH - PB - 10) * (hi - v) / (hi - lo); }
    var s = svg(PW, PH, plot.title + ': per-kind profile');
    bar(s, PL, py(0), PW, py(0), '#333');
    kinds.forEach(function (k, i) {
      s.appendChild(label(PL + bw * (i + 0.5), PH - PB + 14, k, 10, 'middle'));
      rows.forEach(function (r, j) {
        var v = r.kinds[k], w = bw * 0.8 / rows.length, x0 = PL + bw * i + bw * 0.1 + w * j;
        if (v === null || v === undefined) {
          s.appendChild(label(x0 + w / 2, py(0) - 3, 'n/c', 9, 'middle'));
          return;
        }
        var top = py(Math.max(lo, Math.min(hi, v)));
        var rect = sv('rect', {x: x0, width: w, y: Math.min(top, py(0)),
                               height: Math.abs(top - py(0)), fill: colours[j],
                               'data-entry': r.name, 'data-kind': k});
        rect.appendChild(sv('title', {}, r.name + ' · ' + k + ': ' + pct(v) + '%'));
        s.appendChild(rect);
      });
    });
    rows.forEach(function (r, j) {
      var name = (r.rank ? '#' + r.rank + ' ' : r.status + ': ') + r.name;
      s.appendChild(label(PL + 4 + 200 * j, PH - 6, name, 10, 'start', colours[j]));
    });
    box.appendChild(s);
  }
  function drawView(id) {
    return cb.track(cb.load('data/plot/' + id + '.js').then(function (data) {
      plot = data;
      var sel = $('pl-entry'), keep = sel.value;
      options(sel, data.profiles.slice(1).map(function (p) { return p.name; }), '(the #1 alone)');
      if (keep) { sel.value = keep; }
      if (!sel.value && data.profiles.length > 1) { sel.value = data.profiles[1].name; }
      scatter(data);
      profile();
      status('pl-status', data.points.length + ' entries cover ' + data.title);
    }));
  }
  var view = $('pl-view');
  if (view) {
    document.querySelectorAll('.tabs button').forEach(function (b) {
      var o = document.createElement('option');
      o.value = b.getAttribute('data-view');
      o.textContent = b.textContent;
      view.appendChild(o);
    });
    view.addEventListener('change', function () { drawView(view.value); });
    $('pl-entry').addEventListener('change', profile);
    if ($('plots').open && view.value) { drawView(view.value); }
    $('plots').addEventListener('toggle', function () {
      if ($('plots').open && !plot) { drawView(view.value); }
    });
  }
  cb.explorer = {open: open, render: render, drawView: drawView, profile: profile};
})();
