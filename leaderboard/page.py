"""The static HTML page of a ranked ``Leaderboard`` (``index.html``).

Self-contained: inline CSS and script, both allowed by hash in the page's Content-Security-Policy
(``page_assets.csp``), so no other script (an injected ``<script>``, an ``on...=`` handler, a
``javascript:`` link) can run even if a value escaped its escaping. Every value from results,
``meta.yaml`` or entry names is escaped (``render_format``); ids are sanitised, the raw key is a
``data-key`` attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from leaderboard.page_assets import CSS, JS, csp, heat_class
from leaderboard.paired import PairedResult
from leaderboard.ranking.model import Cell, Leaderboard, Row, View
from leaderboard.render_format import (
    FLAG_LEGEND,
    STATUS_LEGEND,
    clean,
    dom_id,
    html_attr,
    html_text,
    humanize,
    model_url,
    p_text,
    parameters,
    pct,
)

#: Views with at most this many suites show one column per suite in their table.
MAX_SUITE_COLUMNS = 6
BLOCK = {"ranked": 0, "reference": 1, "partial": 2}

SCORE_NOTE = (
    "Score: chance-corrected consistent accuracy in % (0 = a uniform random predictor, "
    "100 = right on every original and consistent on every perturbation; docs/metrics.md), "
    "mean over the consistency kinds of the view of the mean over each kind's suites; "
    "ranked on it. Acc: accuracy on the originals (%). "
    "Consistency: the papers' own metric, direction-normalised (%). "
    "On word salad, consistent means no signal of the original answer left in the salad "
    "answer (agreement near its chance level, or the salad rejected by confidence): always "
    "keeping the answer and always changing it both score 0."
)


def view_ids(lb: Leaderboard) -> dict[str, str]:
    """Safe, unique section id of every view (``view-task-snli``, ``view-all``)."""
    taken: set[str] = set()
    return {key: dom_id("view", key, taken) for key in lb.views}


def _attrs(**attrs: object) -> str:
    """HTML attributes, every value escaped; ``None`` and ``False`` leave the attribute out."""
    out = []
    for k, v in attrs.items():
        if v is None or v is False:
            continue
        name = k.rstrip("_").replace("_", "-")
        out.append(f' {name}="{html_attr(v)}"')
    return "".join(out)


def _num(x: float | None) -> str:
    """A sort key: 6 significant digits (enough to order scores, short in the page)."""
    return "" if x is None else f"{float(x):.6g}"


def _td(text: str, value: object = None, cls: str | None = None, csv: object = None) -> str:
    """A cell: ``text`` is already HTML; ``value`` (sort key) and ``csv`` are escaped here."""
    return (f"<td{_attrs(class_=cls, data_value='' if value is None else value, data_csv=csv)}>"
            f"{text}</td>")


def _th(text: str, best: str | None = None, cls: str | None = None, title: str | None = None,
        csv: str | None = None) -> str:
    return f"<th{_attrs(class_=cls, data_best=best, title=title, data_csv=csv)}>{text}</th>"


def _flag_html(kind: str, mark: str, reason: str | None, long: int = 140) -> str:
    """A flag with its reason as visible text; long reasons fold (tap to open, works on touch)."""
    if not reason:
        return ""
    text = humanize(reason)
    for lead in (kind + " ", "fails "):  # "degenerate on 8 of 8 suites" under "⚠ degenerate"
        if text.startswith(lead):
            text = text[len(lead):]
            break
    cls = "flag failing" if kind == "failing" else "flag"
    if len(text) <= long:
        return f'<div class="{cls}"><b>{mark} {kind}</b>: {html_text(text)}</div>'
    return (f'<div class="{cls}"><b>{mark} {kind}</b>: {html_text(text[:long].rstrip())}… '
            f"<details><summary>more</summary>{html_text(text)}</details></div>")


def _row_flags(row: Row) -> str:
    return (_flag_html("degenerate", "⚠", row.degenerate)
            + _flag_html("failing", "✗", row.failing)
            + _flag_html("contaminated", "☣", row.contaminated))


def _rank_html(row: Row) -> str:
    if row.status == "reference":
        return '<span class="status reference">reference</span>'
    if row.status == "partial" or row.rank is None:
        return '<span class="status partial">partial</span>'
    if row.rank_low is None:
        return str(row.rank)
    return f"{row.rank} <small>[{row.rank_low}–{row.rank_high}]</small>"


def _vs(test: PairedResult | None) -> str:
    if test is None:
        return ""
    return ("&gt; " if test.distinguishable else "≈ ") + html_text(p_text(test.p_value))


def _entry_cells(name: str, meta: Mapping) -> tuple[str, dict[str, object]]:
    """The entry cell (name, link to its meta.yaml) and the row's filter attributes."""
    href = "submissions/" + quote(clean(name), safe="") + "/meta.yaml"
    cell = f'<a href="{html_attr(href)}">{html_text(name)}</a>'
    _, count = parameters(meta)
    search = " ".join(clean(x) for x in (name, meta.get("model", "")) if x).lower()
    return cell, {"data_params": _num(count), "data_search": search}


def _count(n: float) -> str:
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:g}"


def _meta_cells(meta: Mapping) -> str:
    short, count = parameters(meta)
    shown = (_count(count) if count is not None
             else f"<small>{html_text(short[:16] + ('…' if len(short) > 16 else ''))}</small>")
    url = model_url(meta)
    link = ("" if url is None else
            f'<a href="{html_attr(url)}" rel="noopener noreferrer nofollow">model page</a>')
    date = clean(meta.get("date", ""))[:10]
    return (_td(shown, _num(count), "meta nowrap", short)
            + _td(link, url or "", "meta nowrap", url or "")
            + _td(html_text(date), date, "meta nowrap"))


_META_HEAD = (_th("Params", "desc", "meta") + _th("Model", "asc", "meta")
              + _th("Date", "desc", "meta"))


def _view_table(lb: Leaderboard, v: View, table_id: str) -> str:
    per_suite = list(v.suites) if len(v.suites) <= MAX_SUITE_COLUMNS else []
    kinds = list(v.kinds) if len(v.kinds) > 1 else []  # one kind: its mean is the score
    head = (
        "<tr>" + _th("Rank <small>[95%]</small>", "asc", "nowrap", csv="Rank")
        + _th("Entry", "asc", "name")
        + _th("Score %", "desc", title="ranked score: mean over the view's kinds or suites")
        + _th("± 95%", "asc", title="half width of the score's 95% interval")
        + "".join(_th(f"{html_text(k)} %", "desc", title=f"mean score on kind {clean(k)}",
                      csv=f"{clean(k)} %") for k in kinds)
        + _th("Flags", cls="flags")
        + _th("Acc %", "desc") + _th("Consistency %", "desc") + _th("Borda", "desc")
        + _th("Win rate %", "desc") + _th("vs next") + _th("Coverage", "desc")
        + _META_HEAD
        + "".join(_th(f"{html_text(s)}<br><small>score / acc</small>", "desc",
                      title=f"kind: {clean(lb.suites[s].kind)}", csv=f"{clean(s)} score %")
                  for s in per_suite)
        + "</tr>"
    )
    body = [_view_row(lb, row, per_suite, kinds) for row in v.rows if row.covered]
    return (f'<div class="scroll"><table class="sortable view-table" id="{html_attr(table_id)}">'
            f"<thead>{head}</thead><tbody>" + "".join(body) + "</tbody></table></div>")


def _suite_cell(c: Cell | None) -> str:
    if c is None:
        return _td("–", None, csv="")
    marks = ("⚠" if c.degenerate else "") + ("✗" if c.failing else "") + (
        "☣" if c.contaminated else "")
    return _td(f"{pct(c.goodness)} <small>/ {pct(c.accuracy)}</small>{marks}", _num(c.goodness),
               csv=pct(c.goodness))


def _view_row(lb: Leaderboard, row: Row, per_suite: Sequence[str], kinds: Sequence[str]) -> str:
    meta = lb.meta.get(row.name, {})
    entry, attrs = _entry_cells(row.name, meta)
    half = None if row.sd_mean is None else 1.96 * row.sd_mean
    tr = _attrs(class_=row.status, data_entry=row.name, data_block=BLOCK[row.status],
                data_contaminated="1" if row.contaminated else "0", **attrs)
    rank_csv = row.rank if row.status == "ranked" else row.status
    return (
        f"<tr{tr}>"
        + _td(_rank_html(row), row.rank, "nowrap", rank_csv)
        + _td(entry, row.name, "name")
        + _td(pct(row.mean), _num(row.mean))
        + _td(pct(half), _num(half))
        + "".join(_td(pct(row.kind_means.get(k)), _num(row.kind_means.get(k))) for k in kinds)
        + _td(_row_flags(row), " ".join(row.flags), "flags")
        + _td(pct(row.accuracy), _num(row.accuracy))
        + _td(pct(row.consistency), _num(row.consistency))
        + _td(f"{row.borda:g}", row.borda)
        + _td(pct(row.win_rate), _num(row.win_rate))
        + _td(_vs(row.vs_next), None, "nowrap")
        + _td(f"{row.covered}/{row.total}", row.covered)
        + _meta_cells(meta)
        + "".join(_suite_cell(lb.cells[s].get(row.name)) for s in per_suite)
        + "</tr>"
    )


def _cell_block(c: Cell) -> tuple[int, str]:
    if c.goodness is None:
        return 2, "not ranked"
    return (0, str(c.rank)) if c.rank is not None else (1, "reference")


def _interval(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{pct(ci[0])}, {pct(ci[1])}]"


def _score_interval(c: Cell) -> tuple[float, float] | None:
    """The ranked score's 95% interval: the ranking's own, else ±1.96 binomial standard errors."""
    if c.goodness_ci95 is not None:
        return c.goodness_ci95
    if c.goodness is None or c.sd_goodness is None:
        return None
    return (c.goodness - 1.96 * c.sd_goodness, c.goodness + 1.96 * c.sd_goodness)


def _suite_table(lb: Leaderboard, suite: str, table_id: str) -> str:
    info = lb.suites[suite]
    metric = html_text(info.main_metric)
    head = (
        "<tr>" + _th("Rank", "asc") + _th("Entry", "asc", "name")
        + _th("Score %", "desc", title="ranked score (chance-corrected consistent accuracy)")
        + _th("Score 95% CI", "asc", "nowrap", title="interval of the ranked score")
        + _th("Score n", "desc", title="units of the ranked score")
        + _th("Consistent acc. %", "desc") + _th("Chance %", "desc") + _th("Acc %", "desc")
        + _th(f"{metric} % <small>({html_text(info.direction)})</small>", "desc",
              title="the paper's metric; sorts by its direction-normalised value, best first",
              csv=f"{clean(info.main_metric)} %")
        + _th(f"{metric} 95% CI", cls="nowrap", csv=f"{clean(info.main_metric)} 95% CI")
        + _th(f"{metric} n", "desc", csv=f"{clean(info.main_metric)} n")
        + _th("vs next") + _th("Flags", cls="flags") + "</tr>"
    )
    order = lb.suite_order[suite]
    tests = lb.suite_tests[suite] + [None] * (len(order) - len(lb.suite_tests[suite]))
    body = []
    for name, test in zip(order, tests, strict=True):
        c = lb.cells[suite][name]
        block, rank_text = _cell_block(c)
        meta = lb.meta.get(name, {})
        _, attrs = _entry_cells(name, meta)
        tr = _attrs(class_="reference" if block == 1 else None, data_entry=name,
                    data_block=block, data_contaminated="1" if c.contaminated else "0", **attrs)
        flags = (_flag_html("degenerate", "⚠", c.degenerate)
                 + _flag_html("failing", "✗", c.failing)
                 + _flag_html("contaminated", "☣", c.contaminated))
        body.append(
            f"<tr{tr}>" + _td(html_text(rank_text), c.rank, None, rank_text)
            + _td(html_text(name), name, "name")
            + _td(pct(c.goodness), _num(c.goodness))
            + _td(_interval(_score_interval(c)), None, "nowrap")
            + _td("–" if c.goodness_n is None else html_text(c.goodness_n), c.goodness_n)
            + _td(pct(c.consistent_accuracy), _num(c.consistent_accuracy))
            + _td(pct(c.chance), _num(c.chance))
            + _td(pct(c.accuracy), _num(c.accuracy))
            + _td(pct(c.score), _num(c.consistency))
            + _td(_interval(c.ci95), None, "nowrap")
            + _td("–" if c.n is None else html_text(c.n), c.n)
            + _td(_vs(test), None, "nowrap") + _td(flags, None, "flags") + "</tr>"
        )
    return (
        f"<h4>{html_text(suite)} <small>{html_text(info.family)} · {html_text(info.task)} · "
        f"{html_text(info.kind)} · {metric}: {html_text(info.direction)} is better</small></h4>"
        f'<div class="scroll"><table class="sortable suite" id="{html_attr(table_id)}">'
        f"<thead>{head}</thead><tbody>" + "".join(body) + "</tbody></table></div>"
    )


def _heat_table(lb: Leaderboard, names: Sequence[str], references: set[str]) -> str:
    """The heatmap as an HTML table (scrolls sideways, entry column sticky): readable on a phone."""
    suites = list(lb.suites)
    head = ('<tr><th class="entry">Entry</th>'
            + "".join(f'<th class="suite"{_attrs(title=s)}>{html_text(s)}</th>' for s in suites)
            + "</tr>")
    rows = []
    for n in names:
        ref = n in references
        label = html_text(n) + (' <span class="status reference">reference</span>' if ref else "")
        cells = []
        for s in suites:
            c = lb.cells[s].get(n)
            if c is None:
                cells.append("<td></td>")
            elif c.goodness is None:
                cells.append('<td class="nr" title="not ranked">n.r.</td>')
            else:
                v = 100 * c.goodness
                cls = heat_class(v) + (" ref" if c.degenerate else "")
                tip = f"{clean(n)} · {clean(s)}: {pct(c.goodness)}" + (
                    " (reference: degenerate)" if c.degenerate else "")
                cells.append(f"<td{_attrs(class_=cls, title=tip)}>{v:.0f}</td>")
        rows.append(f'<tr{_attrs(class_="reference" if ref else None)}>'
                    f'<th class="entry">{label}</th>' + "".join(cells) + "</tr>")
    return ('<div class="scroll"><table class="heat" id="heat-table"><thead>' + head
            + "</thead><tbody>" + "".join(rows) + "</tbody></table></div>")


def _plural(n: int, word: str) -> str:
    """``1 kind``, ``4 kinds``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def _legend(words: Mapping[str, str], marks: Mapping[str, str] | None = None) -> str:
    """A ``<dl>`` of the status or flag words (the Markdown's legend uses the same words)."""
    marks = marks or {}
    items = "".join(f"<dt>{(marks[k] + ' ') if k in marks else ''}{k}</dt><dd>{html_text(v)}</dd>"
                    for k, v in words.items())
    return f'<dl class="legend">{items}</dl>'


#: The mark each flag word carries in the tables.
FLAG_MARKS = {"degenerate": "⚠", "failing": "✗", "contaminated": "☣"}


def _filters() -> str:
    return (
        '<div class="filters" role="search">'
        '<label><input type="checkbox" id="f-contaminated"> hide contaminated</label>'
        '<label>parameters from <input type="number" id="f-pmin" min="0" step="any"> to '
        '<input type="number" id="f-pmax" min="0" step="any"> million</label>'
        '<label>search <input type="search" id="f-search" placeholder="entry or model"></label>'
        "</div>"
    )


def render_page(lb: Leaderboard, *, heatmap_png: str | None, names: Sequence[str],
                references: set[str]) -> str:
    """The whole ``index.html``.

    Args:
        lb: The ranked leaderboard.
        heatmap_png: File name of the PNG heatmap next to the page, or ``None``.
        names: Entries in heatmap order.
        references: Entries marked as references in the heatmap.

    """
    ids = view_ids(lb)
    keys = list(lb.views)
    buttons, group = [], None
    for i, key in enumerate(keys):
        kind = key.partition(":")[0]
        if group is not None and kind != group:
            buttons.append('<span class="sep"></span>')
        group = kind
        buttons.append(f'<button type="button"{_attrs(role="tab", data_view=ids[key], data_key=key, class_="active" if i == 0 else None)}>'  # noqa: E501
                       f"{html_text(lb.views[key].title)}</button>")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp()}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>consistency-bench leaderboard</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>consistency-bench leaderboard</h1>",
        "<details class=\"intro\"><summary>How to read this page</summary>",
        f"<p>{html_text(SCORE_NOTE)} Rank [95%]: the rank and its 95% interval from a paired "
        "bootstrap over the units the ranked entries share. <em>vs next</em>: &gt; "
        "distinguishable from the next entry (p &lt; 0.05), ≈ not. "
        "Each view has its own address "
        "(<code>#task:snli</code>). The first click on a column sorts best first; rows are "
        "sorted within their block (ranked, reference, partial), so a baseline never moves "
        "into the ranking. Filters hide rows; they do not re-rank.</p>",
        "<p>Row status:</p>" + _legend(STATUS_LEGEND),
        "<p>Flags, shown with their reason:</p>" + _legend(FLAG_LEGEND, FLAG_MARKS), "</details>",
        '<nav class="tabs" role="tablist">' + "".join(buttons) + "</nav>",
        _filters(),
    ]
    for i, key in enumerate(keys):
        v = lb.views[key]
        sid = ids[key]
        active = " active" if i == 0 else ""
        scored = f"{_plural(len(v.kinds), 'kind')}, " if v.kinds else ""
        scored += _plural(len(v.suites), "suite")
        parts.append(
            f'<section class="view{active}"{_attrs(id=sid, data_key=key)}>'
            f"<h2>{html_text(v.title)} <small>{scored}</small></h2>"
            f'<p><button type="button" class="csv"{_attrs(data_table="table-" + sid, data_file=sid + ".csv")}>'  # noqa: E501
            "Download CSV</button> <small>(this table, rows the filters leave)</small></p>")
        parts.append(_view_table(lb, v, "table-" + sid))
        parts.append("<details><summary>per suite</summary>")
        taken: set[str] = set()
        parts.extend(_suite_table(lb, s, dom_id("suite-" + sid, s, taken)) for s in v.suites)
        if v.unranked_suites:
            parts.append("<p><small>Not ranked (the originals have a single gold class, so a "
                         "constant predictor is right on all of them): "
                         + ", ".join(html_text(s) for s in v.unranked_suites) + "</small></p>")
            parts.extend(_suite_table(lb, s, dom_id("suite-" + sid, s, taken))
                         for s in v.unranked_suites)
        parts.append("</details></section>")
    if lb.suites:
        parts.append("<h2>All suites at a glance</h2>")
        parts.append("<p><small>Score % per entry and suite (0 = chance); dashed cells and "
                     "<em>reference</em> entries are degenerate (baselines); n.r. = not ranked; "
                     "blank = not covered. The table scrolls sideways.</small></p>")
        parts.append(_heat_table(lb, names, references))
        if heatmap_png:
            parts.append(f'<p><img class="heatmap"{_attrs(src=heatmap_png)} '
                         'alt="heatmap of entries by suite (score %)"></p>')
    parts.append(f"<script>{JS}</script></body></html>")
    return "\n".join(parts) + "\n"
