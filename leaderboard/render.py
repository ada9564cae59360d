"""Render a ranked ``Leaderboard``: Markdown, static HTML, PNG heatmap, JSON.

All outputs are deterministic for the same input (sorted keys, no timestamps; the PNG is
written with the Agg backend and no date metadata). Every score is printed in %, as in
``consistency-bench score``.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

from bench.atomic import atomic_path, write_text
from leaderboard.paired import PairedResult, format_p
from leaderboard.ranking import Cell, Leaderboard, Row, View

MARKDOWN = "leaderboard.md"
HTML = "index.html"
HEATMAP = "heatmap.png"
JSON = "leaderboard.json"

#: Views with at most this many suites show one column per suite in their table.
MAX_SUITE_COLUMNS = 6

SCORE_NOTE = (
    "Score: chance-corrected consistent accuracy in % (0 = a uniform random predictor, "
    "100 = right on every original and consistent on every perturbation; docs/metrics.md), "
    "mean over the suites of the view; ranked on it. Acc: accuracy on the originals (%). "
    "Consistency: the papers' own metric, direction-normalised (%)."
)


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}"


def _sep(test: PairedResult | None) -> str:
    """Marker for a neighbour test: '>' distinguishable from the next entry, '≈' not."""
    if test is None:
        return ""
    return ">" if test.distinguishable else "≈"


def _vs(test: PairedResult | None) -> str:
    if test is None:
        return ""
    return f"{_sep(test)} p {_p(test.p_value)}"


def _p(p: float) -> str:
    text = format_p(p)
    return text if text.startswith("<") or text == "n/a" else f"= {text}"


def _rank_text(row: Row) -> str:
    if row.status == "reference":
        return "ref"
    if row.rank is None:
        return "unranked"
    if row.rank_low is None:
        return str(row.rank)
    return f"{row.rank} [{row.rank_low}–{row.rank_high}]"


def _flags_text(row: Row) -> str:
    return " ".join({"degenerate": "⚠ degenerate", "contaminated": "☣ contaminated"}[f]
                    for f in row.flags)


def task_summary(lb: Leaderboard) -> tuple[list[str], list[str]]:
    """The per-task views, and the entries: ranked in most task views first, references last.

    An entry's order key is (number of task views where it is a degenerate reference, minus
    the number where it is ranked, mean rank there, name): real models come before the
    constant and random baselines whatever their coverage.
    """
    tasks = [k for k in lb.views if k.startswith("task:")]
    key: dict[str, tuple] = {}
    for row in lb.views["all"].rows:
        rows = [r for k in tasks for r in lb.views[k].rows if r.name == row.name]
        ranks = [r.rank for r in rows if r.rank is not None]
        refs = sum(r.status == "reference" for r in rows)
        key[row.name] = (refs > len(ranks), -len(ranks),
                         sum(ranks) / len(ranks) if ranks else 0.0, row.name)
    return tasks, sorted(key, key=key.__getitem__)


def render_markdown(lb: Leaderboard) -> str:
    """The per-task summary (README and Hub card): one column per task, then all suites."""
    tasks, names = task_summary(lb)
    keys = tasks + ["all"]
    rows_by = {k: {r.name: r for r in lb.views[k].rows} for k in keys}
    lines = [
        "| Entry | " + " | ".join(lb.views[k].title for k in keys) + " | Flags |",
        "|---|" + "---|" * (len(keys) + 1),
    ]
    for name in names:
        cells = []
        for k in keys:
            row = rows_by[k].get(name)
            if row is None or row.covered == 0:
                cells.append("–")
            elif row.status == "reference":
                cells.append(f"ref {_pct(row.mean)} / {_pct(row.accuracy)}")
            elif row.rank is None:
                cells.append(f"partial {row.covered}/{row.total}")
            else:
                cells.append(f"#{row.rank} {_pct(row.mean)} / {_pct(row.accuracy)}")
        flags = rows_by["all"][name].flags if name in rows_by["all"] else []
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {', '.join(flags)} |")
    lines += [
        "",
        "Each cell: `#rank score / acc`. " + SCORE_NOTE + " An entry is ranked in a view only "
        "when it covers every suite of it (`partial k/n` otherwise) and is not degenerate there "
        "(`ref`: shown for reference, never ranked). Flags: `degenerate` "
        "(accuracy on the originals not significantly above the majority-class rate, or "
        "near-constant predictions), `contaminated` (declared training on a file a suite draws "
        "from). Full tables, rank intervals and paired tests: index.html / leaderboard.json.",
    ]
    return "\n".join(lines) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
td.name, th.name, td.flags { text-align: left; }
tr.partial td { color: #888; font-style: italic; }
tr.reference td { color: #666; background: #fafafa; }
th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
small { color: #666; }
.tabs { display: flex; flex-wrap: wrap; gap: 0.3em; margin: 1em 0; }
.tabs button { border: 1px solid #bbb; background: #f7f7f7; padding: 0.3em 0.7em;
  cursor: pointer; border-radius: 4px; }
.tabs button.active { background: #2a5db0; color: white; border-color: #2a5db0; }
.tabs .sep { width: 1px; background: #ccc; margin: 0 0.4em; }
section.view { display: none; }
section.view.active { display: block; }
.flag { color: #a33; cursor: help; }
img.heatmap { max-width: 100%; height: auto; }
.scroll { overflow-x: auto; }
td.nowrap { white-space: nowrap; }
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
  var buttons = document.querySelectorAll('.tabs button');
  function show(id) {
    document.querySelectorAll('section.view').forEach(function (s) {
      s.classList.toggle('active', s.id === id);
    });
    buttons.forEach(function (b) {
      b.classList.toggle('active', b.getAttribute('data-view') === id);
    });
  }
  buttons.forEach(function (b) {
    b.addEventListener('click', function () { show(b.getAttribute('data-view')); });
  });
  var wanted = window.location.hash.slice(1);
  if (wanted && document.getElementById(wanted)) { show(wanted); }
})();
"""


def _td(text: str, value: object = "", cls: str = "", title: str = "") -> str:
    v = "" if value is None else str(value)
    c = f' class="{cls}"' if cls else ""
    t = f' title="{html.escape(title)}"' if title else ""
    return f'<td{c}{t} data-value="{html.escape(v)}">{text}</td>'


def view_id(key: str) -> str:
    """HTML id of a view's section (``view-task-snli``, ``view-all``)."""
    return "view-" + key.replace(":", "-").replace("_", "-")


def _cell_text(c: Cell | None) -> tuple[str, str]:
    """A per-suite cell of a view table: score and accuracy side by side, and its tooltip."""
    if c is None:
        return "–", "not covered"
    marks = ("⚠" if c.degenerate else "") + ("☣" if c.contaminated else "")
    tip = "; ".join(x for x in (c.degenerate, c.contaminated) if x)
    return f"{_pct(c.goodness)} <small>/ {_pct(c.accuracy)}</small>{marks}", tip


def _view_table(lb: Leaderboard, v: View, table_id: str) -> str:
    per_suite = list(v.suites) if len(v.suites) <= MAX_SUITE_COLUMNS else []
    head = (
        "<tr><th>Rank [95%]</th><th class=\"name\">Entry</th><th>Flags</th><th>Coverage</th>"
        "<th>Score %</th><th>± 95%</th><th>Acc %</th><th>Consistency %</th><th>Borda</th>"
        "<th>Win rate %</th><th>vs next</th>"
        + "".join(
            f'<th title="{html.escape(lb.suites[s].kind)}">{html.escape(s)}<br>'
            "<small>score / acc</small></th>" for s in per_suite
        )
        + "</tr>"
    )
    body = [_view_row(lb, row, per_suite) for row in v.rows if row.covered]
    return (
        f'<div class="scroll"><table class="sortable" id="{table_id}"><thead>{head}</thead>'
        "<tbody>" + "".join(body) + "</tbody></table></div>"
    )


def _view_row(lb: Leaderboard, row: Row, per_suite: list[str]) -> str:
    link = f'<a href="submissions/{html.escape(row.name)}/meta.yaml">{html.escape(row.name)}</a>'
    half = None if row.sd_mean is None else 1.96 * row.sd_mean
    tips = "\n".join(x for x in (row.degenerate, row.contaminated) if x)
    flags = f'<span class="flag">{html.escape(_flags_text(row))}</span>' if row.flags else ""
    cls = {"ranked": "", "reference": ' class="reference"', "partial": ' class="partial"'}[
        row.status]
    cells = []
    for s in per_suite:
        text, tip = _cell_text(lb.cells[s].get(row.name))
        c = lb.cells[s].get(row.name)
        cells.append(_td(text, None if c is None else c.goodness, title=tip))
    return (
        f"<tr{cls}>"
        + _td(_rank_text(row), row.rank if row.rank is not None else "", "nowrap")
        + _td(link, row.name, "name")
        + _td(flags, " ".join(row.flags), "flags", tips)
        + _td(f"{row.covered}/{row.total}", row.covered)
        + _td(_pct(row.mean), row.mean)
        + _td(_pct(half), half)
        + _td(_pct(row.accuracy), row.accuracy)
        + _td(_pct(row.consistency), row.consistency)
        + _td(f"{row.borda:g}", row.borda)
        + _td(_pct(row.win_rate), row.win_rate)
        + _td(html.escape(_vs(row.vs_next)), "", "nowrap",
              title="" if row.vs_next is None else row.vs_next.method)
        + "".join(cells)
        + "</tr>"
    )


def _cell_rank_text(c: Cell) -> str:
    if c.goodness is None:
        return "not ranked"
    return "ref" if c.rank is None else str(c.rank)


def _suite_table(lb: Leaderboard, suite: str, prefix: str) -> str:
    info = lb.suites[suite]
    metric = html.escape(info.main_metric)
    head = (
        "<tr><th>Rank</th><th class=\"name\">Entry</th><th>Score %</th>"
        "<th>Consistent acc. %</th><th>Chance %</th><th>Acc %</th>"
        f"<th>{metric} % ({html.escape(info.direction)})</th><th>95% CI</th><th>n</th>"
        "<th>vs next</th><th>Flags</th></tr>"
    )
    order = lb.suite_order[suite]
    tests = lb.suite_tests[suite] + [None] * (len(order) - len(lb.suite_tests[suite]))
    body = []
    for name, test in zip(order, tests, strict=True):
        c = lb.cells[suite][name]
        ci = "–" if c.ci95 is None else f"[{_pct(c.ci95[0])}, {_pct(c.ci95[1])}]"
        flags = " ".join(x for x in ("⚠" if c.degenerate else "", "☣" if c.contaminated else "")
                         if x)
        tip = "; ".join(x for x in (c.degenerate, c.contaminated) if x)
        body.append(
            "<tr>" + _td(_cell_rank_text(c), "" if c.rank is None else c.rank)
            + _td(html.escape(name), name, "name")
            + _td(_pct(c.goodness), c.goodness)
            + _td(_pct(c.consistent_accuracy), c.consistent_accuracy)
            + _td(_pct(c.chance), c.chance)
            + _td(_pct(c.accuracy), c.accuracy)
            + _td(_pct(c.score), c.score) + _td(ci, "") + _td(str(c.n or ""), c.n)
            + _td(html.escape(_vs(test)), "") + _td(flags, flags, "flags", tip) + "</tr>"
        )
    return (
        f'<h4>{html.escape(suite)} '
        f"<small>{html.escape(info.family)} · {html.escape(info.task)} · "
        f"{html.escape(info.kind)} · {metric}: {html.escape(info.direction)} is better</small></h4>"
        f'<table class="sortable suite" id="{prefix}--{html.escape(suite)}"><thead>{head}'
        "</thead><tbody>"
        + "".join(body) + "</tbody></table>"
    )


def render_html(lb: Leaderboard, *, heatmap: bool = True) -> str:
    """Render a self-contained static page (inline CSS and JS, no network)."""
    keys = list(lb.views)
    buttons, group = [], None
    for i, key in enumerate(keys):
        kind = key.partition(":")[0]
        if group is not None and kind != group:
            buttons.append('<span class="sep"></span>')
        group = kind
        active = ' class="active"' if i == 0 else ""
        buttons.append(f'<button type="button" data-view="{view_id(key)}"{active}>'
                       f"{html.escape(lb.views[key].title)}</button>")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>consistency-bench leaderboard</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>consistency-bench leaderboard</h1>",
        f"<p>{html.escape(SCORE_NOTE)} Rank [95%]: the rank and its 95% interval from a paired "
        "bootstrap over the units the ranked entries share. <em>vs next</em>: &gt; "
        "distinguishable from the next entry (p &lt; 0.05), ≈ not. Only entries covering every "
        "suite of a view are ranked; partial entries are grey. ⚠ degenerate (accuracy on the "
        "originals not significantly above the majority rate, or near-constant predictions): "
        "such an entry (a constant or random baseline) is shown as <em>ref</em> below the "
        "ranked entries and never ranked; "
        "☣ contaminated (declared training on a file the suite draws from): hover for the "
        "reason. Views: per task, per consistency kind, per family, all suites. Click a "
        "column header to sort.</p>",
        '<nav class="tabs">' + "".join(buttons) + "</nav>",
    ]
    for i, key in enumerate(keys):
        v = lb.views[key]
        active = " active" if i == 0 else ""
        parts.append(f'<section class="view{active}" id="{view_id(key)}">'
                     f"<h2>{html.escape(v.title)} <small>{len(v.suites)} suites</small></h2>")
        parts.append(_view_table(lb, v, "table-" + view_id(key)))
        parts.append("<details><summary>per suite</summary>")
        parts.extend(_suite_table(lb, s, "suite-" + view_id(key)) for s in v.suites)
        if v.unranked_suites:
            parts.append("<p><small>Not ranked (the originals have a single gold class, so a "
                         "constant predictor is right on all of them): "
                         + ", ".join(html.escape(s) for s in v.unranked_suites) + "</small></p>")
            parts.extend(_suite_table(lb, s, "suite-" + view_id(key)) for s in v.unranked_suites)
        parts.append("</details></section>")
    if heatmap:
        parts.append("<h2>All suites at a glance</h2>")
        parts.append(f'<p><img class="heatmap" src="{HEATMAP}" '
                     'alt="heatmap of entries by suite (score %)"></p>')
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts) + "\n"


def render_heatmap(lb: Leaderboard, target: Path) -> None:
    """PNG heatmap of entries x suites, 1400 px wide, suites grouped by family and kind.

    Colour and printed value: chance-corrected consistent accuracy in % (0 = chance); the
    colour bar is centred on chance.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm

    names = task_summary(lb)[1]
    suites = list(lb.suites)
    grid = np.full((len(names), len(suites)), np.nan)
    not_ranked = np.zeros(grid.shape, dtype=bool)
    for i, n in enumerate(names):
        for j, s in enumerate(suites):
            c = lb.cells[s].get(n)
            if c is not None and c.goodness is not None:
                grid[i, j] = 100 * c.goodness
            not_ranked[i, j] = c is not None and c.goodness is None
    width = 14.0  # inches at 100 dpi: 1400 px
    fig = plt.figure(figsize=(width, 3.2 + 0.32 * len(names)), dpi=100)
    ax = fig.add_axes((0.11, 0.36, 0.80, 0.50))
    cax = fig.add_axes((0.925, 0.36, 0.012, 0.50))
    norm = TwoSlopeNorm(vmin=-50, vcenter=0, vmax=100)
    im = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", norm=norm, aspect="auto")
    font = 6 if len(suites) > 30 else 8
    for i in range(len(names)):
        for j in range(len(suites)):
            if not np.isnan(grid[i, j]):
                v = grid[i, j]
                dark = abs(norm(v) - 0.5) > 0.3
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=font,
                        color="white" if dark else "black")
            elif not_ranked[i, j]:
                ax.text(j, i, "n.r.", ha="center", va="center", fontsize=font - 1,
                        color="#777")
    ax.set_xticks(range(len(suites)), suites, rotation=60, ha="right", fontsize=font + 1)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    groups: list[tuple[str, int, int]] = []
    for j, s in enumerate(suites):
        label = f"{lb.suites[s].family}: {lb.suites[s].kind}"
        if groups and groups[-1][0] == label:
            groups[-1] = (label, groups[-1][1], j)
        else:
            groups.append((label, j, j))
    for k, (label, a, b) in enumerate(groups):
        if a > 0:
            ax.axvline(a - 0.5, color="black", linewidth=1.2)
        ax.text((a + b) / 2, -0.6 - 0.6 * (k % 2), label.split(": ")[1], ha="center",
                va="bottom", fontsize=font + 1, clip_on=False)
    fig.colorbar(im, cax=cax, label="score % (0 = chance)")
    ax.set_title("consistency-bench: chance-corrected consistent accuracy, entries × suites "
                 "(blank = not covered, n.r. = not ranked)", pad=34, fontsize=10)
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
            if src.is_file() and not src.is_symlink() and not src.parent.is_symlink():
                dst = out / "submissions" / name / "meta.yaml"
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                written.append(dst)
    return written
