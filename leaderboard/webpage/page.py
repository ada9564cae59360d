"""The static HTML page of a ranked ``Leaderboard`` (``index.html``) and its lazily loaded files.

The first page does not grow with the board: it carries the first view's first
:data:`~consistency_bench.leaderboard.webpage.tables.PAGE_ROWS` rows and the heatmap's first
:data:`HEAT_ROWS`
entries; every other view, the remaining rows, the per-suite tables, each entry's details and
heatmap row, and the index the filters search are files under ``data/`` that the page's
script loads when the reader asks for them (``consistency_bench.leaderboard.webpage.lazy``). Those
files hold
the same nodes this module writes as HTML (``consistency_bench.leaderboard.webpage.nodes``), so both
render
alike.

Self-contained otherwise: inline CSS and script, allowed by hash in the page's
Content-Security-Policy (``page_assets.csp``), so no other script (an injected ``<script>``, an
``on...=`` handler, a ``javascript:`` link) can run even if a value escaped its escaping. Every
value from results, ``meta.yaml`` or entry names is escaped (``render_format``); ids are
sanitised, the raw key is a ``data-key`` attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.leaderboard.explorer import panel
from consistency_bench.leaderboard.ranking.model import Leaderboard, View
from consistency_bench.leaderboard.ranking.views import format_slots
from consistency_bench.leaderboard.webpage.entries import (
    CSV_HEAD,
    details_node,
    heat_row,
    index_record,
)
from consistency_bench.leaderboard.webpage.formatting import (
    FLAG_LEGEND,
    STATUS_LEGEND,
    clean,
    dom_id,
    html_attr,
    html_text,
)
from consistency_bench.leaderboard.webpage.lazy import INDEX, data_path, data_script
from consistency_bench.leaderboard.webpage.nodes import el, frag, to_html
from consistency_bench.leaderboard.webpage.static import CSS, JS, csp
from consistency_bench.leaderboard.webpage.tables import (
    FLAG_MARKS,
    PAGE_ROWS,
    body_nodes,
    suite_head,
    suite_rows,
    view_columns,
    view_head,
    view_row,
)

#: Entries in the first page's heatmap (and the PNG); the reader can add any other.
HEAT_ROWS = 25

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
#: The steps of docs/submit.md, shown on the page (a test keeps the commands in step).
SUBMIT_STEPS = (
    ("the published suites, exactly as the leaderboard scores them",
     "hf download ORG/consistency-bench --repo-type dataset --local-dir consistency-bench"),
    ("your model's predictions: one JSON line per suite row (docs/predictions.md)",
     "consistency-bench predict --model YOUR/MODEL --data consistency-bench --out "
     "predictions.jsonl"),
    ("a pull request to the leaderboard",
     "consistency-bench submit predictions.jsonl --meta meta.yaml --name my-model "
     "--hub ORG/leaderboard"),
)


@dataclass(frozen=True)
class Page:
    """The page and its lazily loaded files.

    Attributes:
        html: ``index.html``.
        files: Path (relative to the page, ``data/...``) -> text of each lazily loaded file,
            in path order (the explorer's texts are made when read, or linked from the
            earlier render when unchanged: :class:`LazyFiles`).

    """

    html: str
    files: LazyFiles


def view_ids(lb: Leaderboard) -> dict[str, str]:
    """Safe, unique section id of every view (``view-task-snli``, ``view-all``)."""
    taken: set[str] = set()
    return {key: dom_id("view", key, taken) for key in lb.views}


def _stems(prefix: str, keys: Sequence[str]) -> dict[str, str]:
    """A unique file stem per key (sorted first, so a stem does not depend on the order)."""
    taken: set[str] = set()
    return {k: dom_id(prefix, k, taken) for k in sorted(keys)}


def _plural(n: int, word: str) -> str:
    """``1 kind``, ``4 kinds``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def _scored(v: View) -> str:
    """The header count: kinds and suites as the Coverage column counts them (one per slot)."""
    slots, variant = format_slots(v.suites)
    text = (f"{_plural(len(v.kinds), 'kind')}, " if v.kinds else "") + _plural(len(slots), "suite")
    if len(variant) == 1:
        (slot, alt), = variant.items()
        text += f" ({alt} counted as {slot}: the same items, another format)"
    elif variant:
        text += f" ({len(variant)} text-to-text formats counted with their suite)"
    return text


def _suite_details(lb: Leaderboard, suite: str, table_id: str, stem: str) -> list:
    info = lb.suites[suite]
    about = (f"{info.family} · {info.task} · {info.kind} · {info.main_metric}: "
             f"{info.direction} is better")
    return el("details", {"class": "suite", "data-file": data_path("suite", stem),
                          "data-table": table_id},
              el("summary", None, el("h4", None, suite, " ", el("small", None, about))))


def _per_suite(lb: Leaderboard, v: View, sid: str, stems: Mapping[str, str]) -> list:
    """The per-suite list of a view: one folded table per suite, loaded when opened."""
    taken: set[str] = set()
    items = [_suite_details(lb, s, dom_id("suite-" + sid, s, taken), stems[s]) for s in v.suites]
    if v.unranked_suites:
        items.append(el("p", None, el(
            "small", None, "Not ranked (the originals have a single gold class, so a constant "
            "predictor is right on all of them): " + ", ".join(v.unranked_suites))))
        items += [_suite_details(lb, s, dom_id("suite-" + sid, s, taken), stems[s])
                  for s in v.unranked_suites]
    return el("details", {"class": "per-suite"},
              el("summary", None, f"per suite ({len(v.suites) + len(v.unranked_suites)})"),
              *items)


def _pager(table_id: str, total: int | None) -> list:
    """The line under a table: how many rows are shown, "show more", "show all".

    ``total`` ``None``: left for the script to fill (a view file's section).
    """
    shown = None if total is None else min(PAGE_ROWS, total)
    count = "" if total is None else ("no rows" if total == 0 else
                                      f"rows 1–{shown} of {total}")
    hidden = "" if total is not None and shown is not None and shown >= total else None
    return el("p", {"class": "pager", "data-table": table_id},
              el("span", {"class": "count"}, count), " ",
              el("button", {"type": "button", "class": "page-more", "hidden": hidden},
                 f"show {PAGE_ROWS} more"), " ",
              el("button", {"type": "button", "class": "page-all", "hidden": hidden}, "show all"))


def _shell(lb: Leaderboard, v: View, sid: str, head: list, rows: Sequence[dict] | None,
           stems: Mapping[str, str]) -> list:
    """A view section's content: title, note, CSV button, table, pager, per-suite list.

    ``rows`` ``None``: an empty body (the view's file; the script fills it from its rows).
    """
    table_id = "table-" + sid
    note = getattr(v, "note", None)  # issue 27, item 5 (rank): why the view ranks nobody
    body = [] if rows is None else body_nodes(rows, head)
    return frag(
        el("h2", None, v.title, " ", el("small", None, _scored(v))),
        el("p", {"class": "note", "role": "note"}, clean(note)) if note else None,
        el("p", None, el("button", {"type": "button", "class": "csv", "data-table": table_id,
                                    "data-download": sid + ".csv"}, "Download CSV"), " ",
           el("small", None, "(every row of the view as the filters leave it, each cell in "
              "full, with the entries' metadata)")),
        el("div", {"class": "scroll"},
           el("table", {"class": "sortable view-table", "id": table_id,
                        "data-file": data_path("view", sid), "data-csv-extra": "Coverage"},
              el("thead", None, head), el("tbody", None, *body))),
        _pager(table_id, None if rows is None else len(rows)),
        _per_suite(lb, v, sid, stems),
    )


def _legend(words: Mapping[str, str], marks: Mapping[str, str] | None = None) -> str:
    """A ``<dl>`` of the status or flag words (the Markdown's legend uses the same words)."""
    marks = marks or {}
    items = "".join(f"<dt>{(marks[k] + ' ') if k in marks else ''}{k}</dt><dd>{html_text(v)}</dd>"
                    for k, v in words.items())
    return f'<dl class="legend">{items}</dl>'


def _filters() -> str:
    return (
        '<div class="filters" role="search">'
        '<label><input type="checkbox" id="f-contaminated"> hide contaminated '
        "<small>(rows of entries that declared training on a file a suite of the view draws "
        "from)</small></label>"
        '<label><input type="checkbox" id="f-reproduced"> reproduced only '
        "<small>(entries whose predictions a maintainer re-ran and matched)</small></label>"
        '<label>parameters from <input type="number" id="f-pmin" min="0" step="any"> to '
        '<input type="number" id="f-pmax" min="0" step="any"> million '
        "<small>(entries without a count stay, marked “parameters unknown”)</small></label>"
        '<label>search <input type="search" id="f-search" placeholder="entry or model"></label>'
        "</div>"
    )


def _how_to_submit() -> str:
    steps = "".join(f"<li>{html_text(what)}:<br><code>{html_text(cmd)}</code></li>"
                    for what, cmd in SUBMIT_STEPS)
    return (
        '<details class="intro" id="how-to-submit"><summary>How to submit</summary>'
        f"<ol>{steps}</ol><p><code>meta.yaml</code> describes the entry (required: "
        "<code>model</code>, <code>revision</code>, <code>license</code>, <code>link</code>, "
        "<code>contact</code>; optional: <code>parameters</code> (an integer), "
        "<code>date</code>, <code>notes</code>, <code>training_data</code>). "
        "<code>ORG/consistency-bench</code> is the suites repo and "
        "<code>ORG/leaderboard</code> the leaderboard's dataset repo. The maintainers score "
        "the pull request again against the published suites and comment on it "
        "(docs/submit.md in the consistency-bench repository).</p></details>"
    )


def _intro() -> list[str]:
    return [
        "<details class=\"intro\"><summary>How to read this page</summary>",
        f"<p>{html_text(SCORE_NOTE)} Rank [95%]: the rank and its 95% interval from a paired "
        "bootstrap over the units the ranked entries share. <em>vs next</em>: &gt; "
        "distinguishable from the next entry (p &lt; 0.05), ≈ not. "
        "Each view has its own address "
        "(<code>#task:snli</code>). The first click on a column sorts best first; rows are "
        "sorted within their block (ranked, reference, partial), so a baseline never moves "
        "into the ranking. A partial row shows its coverage instead of a score; its mean "
        "over the suites it covers is labelled as such. Filters hide rows; they do not "
        f"re-rank. Tables show {PAGE_ROWS} rows at a time; ▸ opens an entry's details "
        "(model, parameters, setup, reproduction).</p>",
        "<p>Row status:</p>" + _legend(STATUS_LEGEND),
        "<p>Flags, shown with their reason:</p>" + _legend(FLAG_LEGEND, FLAG_MARKS), "</details>",
    ]


def _heatmap(lb: Leaderboard, names: Sequence[str], references: set[str],
             heatmap_png: str | None) -> list[str]:
    """The heatmap's first :data:`HEAT_ROWS` entries, and the picker that adds any other."""
    shown = list(names[:HEAT_ROWS])
    head = el("tr", None, el("th", {"class": "entry"}, "Entry"),
              *(el("th", {"class": "suite", "title": s}, s) for s in lb.suites))
    table = el("div", {"class": "scroll"}, el(
        "table", {"class": "heat", "id": "heat-table"}, el("thead", None, head),
        el("tbody", None, *(heat_row(lb, n, n in references) for n in shown))))
    more = (f"The first {len(shown)} of {len(names)} entries (the order of the per-task "
            "summary); add any other below. " if len(names) > len(shown) else "")
    parts = [
        "<h2>All suites at a glance</h2>",
        f"<p><small>{html_text(more)}Score % per entry and suite (0 = chance); dashed cells "
        "and <em>reference</em> entries are degenerate (baselines); n.r. = not ranked; "
        "blank = not covered. The table scrolls sideways.</small></p>",
        '<p class="heat-picker"><label>add an entry <input type="search" id="heat-pick" '
        'list="heat-names" placeholder="entry name"></label> '
        '<button type="button" id="heat-add">add to the heatmap</button> '
        '<span id="heat-status" role="status"></span><datalist id="heat-names"></datalist></p>',
        to_html(table),
    ]
    if heatmap_png:
        parts.append(f'<p><img class="heatmap" src="{html_attr(heatmap_png)}" loading="lazy" '
                     f'alt="heatmap of the first {len(shown)} entries by suite (score %)"></p>')
    return parts


def _tabs(lb: Leaderboard, ids: Mapping[str, str]) -> str:
    buttons, group = [], None
    for i, (key, v) in enumerate(lb.views.items()):
        kind = key.partition(":")[0]
        if group is not None and kind != group:
            buttons.append('<span class="sep"></span>')
        group = kind
        active = ' class="active"' if i == 0 else ""
        buttons.append(f'<button type="button" role="tab" data-view="{html_attr(ids[key])}" '
                       f'data-key="{html_attr(key)}"{active}>{html_text(v.title)}</button>')
    return '<nav class="tabs" role="tablist">' + "".join(buttons) + "</nav>"


def _data_files(lb: Leaderboard, names: Sequence[str], references: set[str],
                files: Mapping[str, str], stems: Mapping[str, str]) -> dict[str, str]:
    """The suite, entry and index files (the view files are made with their sections)."""
    # the rows' own reproduction record, for an entry whose meta has none (TEAM contracts)
    rows = {r.name: getattr(r, "reproduced", None) for v in lb.views.values() for r in v.rows}
    out = {}
    for s in lb.suites:
        path = data_path("suite", stems[s])
        out[path] = data_script(path, {"head": suite_head(lb, s), "rows": suite_rows(lb, s)})
    for name in names:
        meta = lb.meta.get(name, {})
        path = data_path("entry", files[name])
        out[path] = data_script(path, {"name": name,
                                       "details": details_node(name, meta, rows.get(name)),
                                       "heat": heat_row(lb, name, name in references)})
    out[INDEX] = data_script(INDEX, {
        "csv_head": list(CSV_HEAD),
        "entries": [index_record(n, lb.meta.get(n, {}), files[n], rows.get(n)) for n in names]})
    return out


#: Makes the explorer's files from the entries' file stems
#: (``consistency_bench.leaderboard.explorer``).
Explorer = Callable[[Mapping[str, str]], Mapping[str, str]]


def _panels(lb: Leaderboard, ids: Mapping[str, str], files: Mapping[str, str],
            explorer: Explorer | None, points: Mapping[str, list] | None = None
            ) -> tuple[dict[str, str], Mapping[str, str]]:
    """The plots' and the explorer's files (issue 31; their code is ``render_all``'s).

    The explorer's are returned as the explorer gives them: a mapping whose texts may be
    made when read (one entry's at a time, :class:`LazyFiles`).
    """
    from consistency_bench.leaderboard.explorer.plots import plot_files

    if not lb.views:
        return {}, {}
    return plot_files(lb, ids, points), explorer(files) if explorer is not None else {}


class LazyFiles(Mapping[str, str]):
    """The page's files in path order: texts made already, and texts made when read.

    Args:
        ready: Path -> text.
        lazy: Path -> text, each text possibly made on lookup and not kept (the explorer's:
            ``render_all`` writes them one at a time instead of holding the board's).

    """

    def __init__(self, ready: Mapping[str, str], lazy: Mapping[str, str]):
        self._ready, self._lazy = ready, lazy
        self._paths = sorted({*ready, *lazy})

    def __len__(self) -> int:
        return len(self._paths)

    def __iter__(self):
        return iter(self._paths)

    def __getitem__(self, path: str) -> str:
        return self._ready[path] if path in self._ready else self._lazy[path]

    def reused(self, path: str) -> Path | None:
        """An earlier render's file that is ``path``'s text byte for byte, to link (or None).

        Asked of the lazy mapping when it can tell (the explorer's files, by their key).
        """
        if path in self._ready:
            return None
        reused = getattr(self._lazy, "reused", None)
        return reused(path) if reused is not None else None


def render_site(lb: Leaderboard, *, heatmap_png: str | None, names: Sequence[str],
                references: set[str], explorer: Explorer | None = None,
                points: Mapping[str, list] | None = None) -> Page:
    """``index.html`` and its lazily loaded files.

    Args:
        lb: The ranked leaderboard.
        heatmap_png: File name of the PNG heatmap next to the page, or ``None``.
        names: Every entry, in heatmap order (the first :data:`HEAT_ROWS` are in the page).
        references: Entries marked as references in the heatmap.
        explorer: Given the entries' file stems, the explorer's files (issue 31); ``None``:
            no explorer section (the plots are there whenever there are views).
        points: Every view's plot points
            (:func:`consistency_bench.leaderboard.plots.points.board_points`), when the
            caller has them already.

    """
    ids = view_ids(lb)
    names = list(names) + sorted(set(lb.meta) - set(names))
    files, stems = _stems("entry", names), _stems("suite", list(lb.suites))
    data: dict[str, str] = {}
    sections = []
    for i, (key, v) in enumerate(lb.views.items()):
        sid = ids[key]
        path = data_path("view", sid)
        per_suite, kinds = view_columns(v)
        head = view_head(lb, v, per_suite, kinds)
        rows = [view_row(lb, r, per_suite, kinds, files[r.name]) for r in v.rows if r.covered]
        data[path] = data_script(path, {"key": key,
                                        "shell": _shell(lb, v, sid, head, None, stems),
                                        "rows": rows})
        attrs = (f'class="view{" active" if i == 0 else ""}" id="{html_attr(sid)}" '
                 f'data-key="{html_attr(key)}" data-file="{html_attr(path)}"')
        inner = (to_html(_shell(lb, v, sid, head, rows, stems)) if i == 0 else
                 f'<h2>{html_text(v.title)}</h2><p class="loading">loading…</p>')
        sections.append(f"<section {attrs}>{inner}</section>")
    data.update(_data_files(lb, names, references, files, stems))
    plots, explored = _panels(lb, ids, files, explorer, points)
    data.update(plots)
    script, style = JS + panel.BOOT_JS, CSS + panel.CSS
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp(script, style)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>consistency-bench leaderboard</title>",
        f"<style>{style}</style></head><body>",
        "<h1>consistency-bench leaderboard</h1>",
        '<p class="links"><a href="#how-to-submit">How to submit</a></p>',
        *_intro(), _how_to_submit(),
        _tabs(lb, ids), '<p id="view-notice" role="status"></p>', _filters(), *sections,
    ]
    if lb.suites:
        parts += _heatmap(lb, names, references, heatmap_png)
    if lb.views:
        parts.append(panel.sections(any(p.startswith("data/explorer/") for p in explored)))
    parts.append(f"<script>{script}</script></body></html>")
    return Page("\n".join(parts) + "\n", LazyFiles(data, explored))

