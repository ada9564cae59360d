"""Render a ranked ``Leaderboard``: Markdown, static HTML, PNG heatmap, JSON.

All outputs are deterministic for the same input (sorted keys, no timestamps; the PNG is
written with the Agg backend and no date metadata).
"""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

from bench.atomic import atomic_path, write_text
from leaderboard.paired import PairedResult
from leaderboard.ranking import Leaderboard, Row, View

MARKDOWN = "leaderboard.md"
HTML = "index.html"
HEATMAP = "heatmap.png"
JSON = "leaderboard.json"


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _sep(test: PairedResult | None) -> str:
    """Marker for a neighbour test: '>' distinguishable from the next entry, '≈' not."""
    if test is None:
        return ""
    return ">" if test.distinguishable else "≈"


def render_markdown(lb: Leaderboard, view: str = "all") -> str:
    """Render the overall table (and per-suite main scores) as Markdown."""
    v = lb.views[view]
    suites = list(v.suites)
    lines = [
        "| Rank | Entry | Coverage | Mean (norm.) | Borda | Win rate | vs next | "
        + " | ".join(f"{s} ({lb.suites[s].direction})" for s in suites)
        + " |",
        "|" + "---|" * (7 + len(suites)),
    ]
    for row in v.rows:
        cells = []
        for s in suites:
            c = lb.cells[s].get(row.name)
            cells.append("–" if c is None else _f(c.score))
        lines.append(
            f"| {row.rank if row.rank is not None else 'unranked'} | {row.name} | "
            f"{row.covered}/{row.total} | {_f(row.mean)} | {row.borda:g} | "
            f"{_f(row.win_rate)} | {_sep(row.vs_next)} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "Mean: mean of direction-normalised main scores over covered suites. Borda: points "
        "for entries beaten per suite (MTEB). Win rate: mean share of entries beaten (HELM). "
        "Only entries covering every suite are ranked; `unranked` rows are partial. "
        "`vs next`: `>` the entry is distinguishable from the next one (p < 0.05), `≈` it is "
        "not.",
    ]
    return "\n".join(lines) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
td.name, th.name { text-align: left; }
tr.partial td { color: #888; font-style: italic; }
th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
small { color: #666; }
"""

_JS = """
(function () {
  function cellValue(td) {
    var v = td.getAttribute('data-value');
    if (v === null || v === '') { return null; }
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function sortTable(table, col, th) {
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var dir = th.getAttribute('aria-sort') === 'descending' ? 'ascending' : 'descending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', dir);
    var sign = dir === 'ascending' ? 1 : -1;
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
      if (x === null && y === null) { return 0; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      if (x < y) { return -sign; }
      if (x > y) { return sign; }
      return 0;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener('click', function () { sortTable(table, col, th); });
    });
  });
})();
"""


def _td(text: str, value: object = "", cls: str = "") -> str:
    v = "" if value is None else str(value)
    c = f' class="{cls}"' if cls else ""
    return f'<td{c} data-value="{html.escape(v)}">{text}</td>'


def _overall_table(lb: Leaderboard, v: View, table_id: str) -> str:
    head = (
        "<tr><th>Rank</th><th class=\"name\">Entry</th><th>Coverage</th>"
        "<th>Mean (norm.)</th><th>± 95%</th><th>Borda</th><th>Win rate</th><th>vs next</th></tr>"
    )
    body = []
    for row in v.rows:
        body.append(_overall_row(row))
    return (
        f'<table class="sortable" id="{table_id}"><thead>{head}</thead><tbody>'
        + "".join(body)
        + "</tbody></table>"
    )


def _overall_row(row: Row) -> str:
    link = f'<a href="submissions/{html.escape(row.name)}/meta.yaml">{html.escape(row.name)}</a>'
    half = None if row.sd_mean is None else 1.96 * row.sd_mean
    test = row.vs_next
    vs = ""
    if test is not None:
        p = "n/a" if test.p_value != test.p_value else f"{test.p_value:.3g}"
        vs = f'{_sep(test)} <small>p={p} ({test.method})</small>'
    cls = "" if row.complete else ' class="partial"'
    return (
        f"<tr{cls}>"
        + _td(str(row.rank) if row.rank is not None else "unranked",
              row.rank if row.rank is not None else "")
        + _td(link, row.name, "name")
        + _td(f"{row.covered}/{row.total}", row.covered)
        + _td(_f(row.mean), row.mean)
        + _td(_f(half), half)
        + _td(f"{row.borda:g}", row.borda)
        + _td(_f(row.win_rate), row.win_rate)
        + _td(vs, "")
        + "</tr>"
    )


def _suite_table(lb: Leaderboard, suite: str) -> str:
    info = lb.suites[suite]
    head = (
        "<tr><th>Rank</th><th class=\"name\">Entry</th>"
        f"<th>{html.escape(info.main_metric)}</th><th>95% CI</th><th>n</th><th>vs next</th></tr>"
    )
    order = lb.suite_order[suite]
    tests = lb.suite_tests[suite] + [None]
    body = []
    for name, test in zip(order, tests, strict=True):
        c = lb.cells[suite][name]
        ci = "–" if c.ci95 is None else f"[{c.ci95[0]:.3f}, {c.ci95[1]:.3f}]"
        body.append(
            "<tr>" + _td(str(c.rank), c.rank) + _td(html.escape(name), name, "name")
            + _td(_f(c.score), c.score) + _td(ci, "") + _td(str(c.n or ""), c.n)
            + _td(_sep(test), "") + "</tr>"
        )
    return (
        f'<h3 id="suite-{html.escape(suite)}">{html.escape(suite)} '
        f"<small>{html.escape(info.family)} · {html.escape(info.task)} · "
        f"{html.escape(info.kind)} · {html.escape(info.direction)} is better</small></h3>"
        f'<table class="sortable" id="table-{html.escape(suite)}"><thead>{head}</thead><tbody>'
        + "".join(body)
        + "</tbody></table>"
    )


def render_html(lb: Leaderboard, *, heatmap: bool = True) -> str:
    """Render a self-contained static page (inline CSS and JS, no network)."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>consistency-bench leaderboard</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>consistency-bench leaderboard</h1>",
        "<p>Mean: mean of direction-normalised main scores over the suites an entry covers; "
        "Borda (as MTEB); mean win rate (as HELM). Only entries covering every suite of a "
        "view are ranked; partial entries are shown in grey with their coverage. "
        "<em>vs next</em>: &gt; distinguishable from the next entry (p &lt; 0.05), ≈ not. "
        "Click a column header to sort.</p>",
        "<h2>Overall</h2>",
        _overall_table(lb, lb.views["all"], "overall"),
    ]
    if heatmap:
        parts.append(f'<p><img src="{HEATMAP}" alt="heatmap of entries by suite"></p>')
    others = [k for k in lb.views if k != "all"]
    if others:
        parts.append("<h2>Views</h2>")
        for key in others:
            parts.append(f"<h3>{html.escape(key)}</h3>")
            parts.append(_overall_table(lb, lb.views[key], "view-" + key.replace(":", "-")))
    parts.append("<h2>Per suite</h2>")
    for suite in lb.suites:
        parts.append(_suite_table(lb, suite))
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts) + "\n"


def render_heatmap(lb: Leaderboard, target: Path) -> None:
    """PNG heatmap of entries x suites (direction-normalised, higher is better)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [r.name for r in lb.views["all"].rows]
    suites = list(lb.suites)
    grid = np.full((len(names), len(suites)), np.nan)
    for i, n in enumerate(names):
        for j, s in enumerate(suites):
            c = lb.cells[s].get(n)
            if c is not None:
                grid[i, j] = c.goodness
    fig, ax = plt.subplots(
        figsize=(max(4.0, 0.5 * len(suites) + 3), max(2.5, 0.4 * len(names) + 1.5))
    )
    im = ax.imshow(np.ma.masked_invalid(grid), vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(suites)), suites, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    fig.colorbar(im, ax=ax, label="normalised score (higher is better)")
    ax.set_title("consistency-bench: entries × suites (blank = not covered)")
    fig.tight_layout()
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)


def render_all(
    lb: Leaderboard, out: str | os.PathLike, submissions: str | os.PathLike | None = None
) -> list[Path]:
    """Write Markdown, HTML, PNG and JSON into ``out``; copy each entry's ``meta.yaml``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    write_text(out / MARKDOWN, render_markdown(lb))
    write_text(out / HTML, render_html(lb, heatmap=bool(lb.suites)))
    write_text(
        out / JSON, json.dumps(lb.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
    written += [out / MARKDOWN, out / HTML, out / JSON]
    if lb.suites:
        render_heatmap(lb, out / HEATMAP)
        written.append(out / HEATMAP)
    if submissions is not None:
        for name in lb.meta:
            src = Path(submissions) / name / "meta.yaml"
            if src.is_file():
                dst = out / "submissions" / name / "meta.yaml"
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                written.append(dst)
    return written
