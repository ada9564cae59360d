"""The page's tables as data: a head (a ``tr`` node) and rows of cells, for views and suites.

A row is a dict with fixed keys (no value from a results or meta file is ever a key):
``entry`` (the name), ``cls`` (``ranked``, ``reference``, ``partial``; ``reference`` for a
degenerate suite cell), ``block`` (0 ranked, 1 reference, 2 partial: sorting never mixes
blocks), ``contaminated`` (0/1, the row's own flag in this view or suite), ``file`` (the
entry's lazily loaded file), ``cells``, ``flags`` (the flags' reasons, a node shown on a row
under the entry's) and, in a view, ``csv`` (the fields of the table's ``data-csv-extra``
columns: ``Coverage``). A cell is a list
``[content, value, csv, cls]`` (trailing ``None`` dropped): ``content`` a node
(``consistency_bench.leaderboard.webpage.nodes``), ``value`` the sort key (a number or a string;
``None`` sorts
last), ``csv`` the CSV text when it is not the content's text (a flag's full reason, never the
folded one), ``cls`` the ``td`` class.
:func:`row_nodes` turns a row into ``tr`` nodes; the page's script does the same (``rowNodes``
in ``page_assets.JS``), and a Chromium test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from consistency_bench.leaderboard.paired import PairedResult
from consistency_bench.leaderboard.ranking.model import Cell, Leaderboard, Row, View
from consistency_bench.leaderboard.webpage.entries import entry_content
from consistency_bench.leaderboard.webpage.formatting import clean, humanize, p_text, pct
from consistency_bench.leaderboard.webpage.nodes import Node, el, frag

#: Views with at most this many suites show one column per suite in their table.
MAX_SUITE_COLUMNS = 6
BLOCK = {"ranked": 0, "reference": 1, "partial": 2}
#: Rows a table shows before "show more" (the first page carries this many of the default view).
PAGE_ROWS = 50
#: The mark each flag word carries in the tables.
FLAG_MARKS = {"degenerate": "⚠", "failing": "✗", "contaminated": "☣"}


def sort_value(x: float | int | str | None) -> float | int | str | None:
    """A sort key: floats to 6 significant digits (enough to order scores, short in a file)."""
    if isinstance(x, float):
        return float(f"{x:.6g}")
    return x


def cell(content: Node, value: float | int | str | None = None, csv: str | None = None,
         cls: str | None = None) -> list:
    """A table cell ``[content, value, csv, cls]`` without its trailing ``None``s."""
    out: list = [content, sort_value(value), None if csv is None else clean(csv), cls]
    while len(out) > 1 and out[-1] is None:
        out.pop()
    return out


def th(content: Node, best: str | None = None, cls: str | None = None,
       title: str | None = None, csv: str | None = None) -> list:
    """A header cell; ``best`` (``asc``/``desc``) makes the column sortable, best first."""
    return el("th", {"class": cls, "data-best": best, "title": title, "data-csv": csv}, content)


def _flag(kind: str, reason: str | None, long: int = 240) -> Node | None:
    """A flag with its reason as visible text; past ``long`` characters the rest folds.

    The text is there once: the start, then the rest inside a ``details`` whose ``summary``
    reads "more" (the CSV leaves the ``summary`` out, so it holds the reason once, in full).
    """
    if not reason:
        return None
    text = humanize(reason)
    for lead in (kind + " ", "fails "):  # "degenerate on 8 of 8 suites" under "⚠ degenerate"
        if text.startswith(lead):
            text = text[len(lead):]
            break
    cls = "flag failing" if kind == "failing" else "flag"
    head = el("b", None, f"{FLAG_MARKS[kind]} {kind}")
    if len(text) <= long:
        return el("div", {"class": cls}, head, ": " + text)
    cut = text.rfind(" ", 0, long) + 1 or long  # at a space, so the two parts read as one
    return el("div", {"class": cls}, head, ": " + text[:cut],
              el("details", None, el("summary", None, "more"), text[cut:]))


def flags(degenerate: str | None, failing: str | None,
          contaminated: str | None) -> tuple[list, Node | None]:
    """The Flags cell (the marks) and the reasons, shown on a row under the entry's.

    The CSV's Flags column is the reasons' text (``flagsText`` in the script): each reason
    once, in full.
    """
    reasons = {"degenerate": degenerate, "failing": failing, "contaminated": contaminated}
    shown = [node for kind, reason in reasons.items() if (node := _flag(kind, reason))]
    words = [k for k, r in reasons.items() if r]
    marks = el("span", {"title": ", ".join(words) + " (reasons under the row)"},
               " ".join(FLAG_MARKS[k] for k in words)) if words else ""
    return (cell(marks, " ".join(words) or None, None, "flags"),
            el("div", {"class": "reasons"}, *shown) if shown else None)


def with_unjudged(reasons: Node | None, unjudged: str | None) -> Node | None:
    """The reasons, then a note when the word-salad confidence could not be judged.

    A file without probabilities is judged on agreement alone (issue 27, item 1): the row
    says so under it, as its flags' reasons are (``Row.unjudged`` / ``Cell.unjudged``).
    """
    if not unjudged:
        return reasons
    note = el("div", {"class": "flag unjudged"}, el("b", None, "ⓘ confidence"),
              ": " + humanize(unjudged))
    if isinstance(reasons, list):
        return [*reasons, note]
    return el("div", {"class": "reasons"}, note)


def _rank(row: Row) -> Node:
    if row.status == "reference":
        return el("span", {"class": "status reference"}, "reference")
    if row.status == "partial" or row.rank is None:
        return el("span", {"class": "status partial"}, "partial")
    if row.rank_low is None:
        return str(row.rank)
    return frag(f"{row.rank} ", el("small", None, f"[{row.rank_low}–{row.rank_high}]"))


def _vs(test: PairedResult | None) -> str:
    """``> p < 0.001``; it may wrap after the mark only (no-break spaces in the p-value)."""
    if test is None:
        return ""
    return ("> " if test.distinguishable else "≈ ") + p_text(test.p_value).replace(" ", "\u00a0")


def _num_cell(x: float | None) -> list:
    return cell(pct(x), x)


def view_head(lb: Leaderboard, v: View, per_suite: Sequence[str],
              kinds: Sequence[str]) -> list:
    """The head row of a view's table (the same columns as :func:`view_row`)."""
    return el(
        "tr", None,
        th(frag("Rank ", el("small", None, "[95%]")), "asc", "nowrap", csv="Rank"),
        th("Entry", "asc", "name"),
        th("Score %", "desc", title="ranked score: mean over the view's kinds of the mean over "
           "each kind's suites; a partial row shows its coverage here instead"),
        th("± 95%", "asc", title="half width of the score's 95% interval"),
        *(th(f"{k} %", "desc", title=f"mean score on kind {clean(k)}") for k in kinds),
        th("Flags", None, "flags"),
        th("Acc %", "desc"),
        th("Consis\u00adtency %", "desc", csv="Consistency %"),  # a soft hyphen: may break
        th("Borda", "desc", title="per suite, one point per entry beaten (ranked rows only)"),
        th("Win rate %", "desc", title="per suite, share of entries beaten (ranked rows only)"),
        th("vs next"),
        *(th(frag(clean(s).replace("_", "_\u200b"), el("br"), el("small", None, "score / acc")),
             "desc", title=f"{clean(s)} (kind: {clean(lb.suites[s].kind)})",
             csv=f"{clean(s)} score %")  # a zero-width space after "_": the name may wrap
          for s in per_suite),
    )


def _suite_cell(c: Cell | None) -> list:
    if c is None:
        return cell("–", None, "")
    marks = ("⚠" if c.degenerate else "") + ("✗" if c.failing else "") + (
        "☣" if c.contaminated else "")
    return cell(frag(f"{pct(c.goodness)} ", el("small", None, f"/ {pct(c.accuracy)}"), marks),
                c.goodness, pct(c.goodness))


def _score_cells(row: Row) -> list[list]:
    """Score and ± 95%: a partial row shows its coverage, and its mean labelled as such."""
    if row.status != "partial":
        half = None if row.sd_mean is None else 1.96 * row.sd_mean
        return [_num_cell(row.mean), _num_cell(half)]
    covered = f"covers {row.covered}/{row.total}"
    mean = (None if row.mean is None else
            el("div", {"class": "covered-mean",
                       "title": f"mean over the {row.covered} suites it covers; not ranked"},
               f"covered mean {pct(row.mean)}"))
    return [cell(frag(el("span", {"class": "coverage"}, covered), mean), row.covered, ""),
            cell("–", None, "")]


def view_row(lb: Leaderboard, row: Row, per_suite: Sequence[str], kinds: Sequence[str],
             entry_file: str) -> dict:
    """An entry's row in a view's table (columns as :func:`view_head`)."""
    meta = lb.meta.get(row.name, {})
    partial = row.status == "partial"
    rank_csv = str(row.rank) if row.status == "ranked" else row.status
    flag_cell, reasons = flags(row.degenerate, row.failing, row.contaminated)
    cells = [
        cell(_rank(row), row.rank, rank_csv, "nowrap"),
        cell(entry_content(row.name, meta, getattr(row, "reproduced", None)), row.name,
             row.name, "name"),
        *_score_cells(row),
        *(_num_cell(row.kind_means.get(k)) for k in kinds),
        flag_cell,
        _num_cell(row.accuracy), _num_cell(row.consistency),
        cell("–", None, "") if partial else cell(f"{row.borda:g}", row.borda),
        cell("–", None, "") if partial else _num_cell(row.win_rate),
        cell(_vs(row.vs_next)),
        *(_suite_cell(lb.cells[s].get(row.name)) for s in per_suite),
    ]
    return {"entry": row.name, "cls": row.status, "block": BLOCK[row.status],
            "contaminated": 1 if row.contaminated else 0, "file": entry_file, "cells": cells,
            "flags": with_unjudged(reasons, row.unjudged), "csv": [f"{row.covered}/{row.total}"]}


def view_columns(v: View) -> tuple[list[str], list[str]]:
    """The per-suite columns (views of at most 6 suites) and kind columns (several kinds)."""
    per_suite = list(v.suites) if len(v.suites) <= MAX_SUITE_COLUMNS else []
    kinds = list(v.kinds) if len(v.kinds) > 1 else []  # one kind: its mean is the score
    return per_suite, kinds


#: The button that opens an entry's details (added to the Entry cell of a row with a file).
DETAILS_BUTTON = el("button", {"type": "button", "class": "more", "aria-expanded": "false",
                               "title": "details: model, parameters, setup, reproduction"}, "▸")


def row_nodes(row: Mapping, *, block_start: bool, ncols: int) -> list[list]:
    """A row as ``tr`` nodes: the row, then its flags' reasons on a row of their own.

    The page's script has the same function (``rowNodes``); keep the two in step.
    """
    cls = row["cls"] + (" block-start" if block_start else "")
    tds = []
    for c in row["cells"]:
        tcls = c[3] if len(c) > 3 else None
        content = (frag(DETAILS_BUTTON, " ", c[0]) if tcls == "name" and row.get("file")
                   else c[0])
        tds.append(el("td", {"class": tcls}, content))
    out = [el("tr", {"class": cls, "data-entry": row["entry"], "data-file": row.get("file")},
              *tds)]
    if row.get("flags") is not None:
        out.append(el("tr", {"class": "flagrow"}, el("td", {"colspan": ncols}, row["flags"])))
    return out


def body_nodes(rows: Sequence[Mapping], head: list, limit: int = PAGE_ROWS) -> list[list]:
    """The first ``limit`` rows as ``tr`` nodes, with the block separators."""
    out: list[list] = []
    last = None
    for row in rows[:limit]:
        out += row_nodes(row, block_start=last is not None and row["block"] != last,
                         ncols=len(head) - 2)
        last = row["block"]
    return out


def suite_head(lb: Leaderboard, suite: str) -> list:
    """The head row of a suite's table."""
    info = lb.suites[suite]
    metric = clean(info.main_metric)
    return el(
        "tr", None,
        th("Rank", "asc"), th("Entry", "asc", "name"),
        th("Score %", "desc", title="ranked score (chance-corrected consistent accuracy)"),
        th("Score 95% CI", "asc", "nowrap", title="interval of the ranked score"),
        th("Score n", "desc", title="units of the ranked score"),
        th("Consistent acc. %", "desc"), th("Chance %", "desc"), th("Acc %", "desc"),
        th(frag(f"{metric} % ", el("small", None, f"({info.direction})")), "desc",
           title="the paper's metric; sorts by its direction-normalised value, best first",
           csv=f"{metric} %"),
        th(f"{metric} 95% CI", None, "nowrap"),
        th(f"{metric} n", "desc"),
        th("vs next"), th("Flags", None, "flags"),
    )


def _interval(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{pct(ci[0])}, {pct(ci[1])}]"


def _score_interval(c: Cell) -> tuple[float, float] | None:
    """The ranked score's 95% interval: the ranking's own, else ±1.96 binomial standard errors."""
    if c.goodness_ci95 is not None:
        return c.goodness_ci95
    if c.goodness is None or c.sd_goodness is None:
        return None
    return (c.goodness - 1.96 * c.sd_goodness, c.goodness + 1.96 * c.sd_goodness)


def suite_rows(lb: Leaderboard, suite: str) -> list[dict]:
    """The rows of a suite's table, in the ranking's order (ranked, reference, not ranked)."""
    order = lb.suite_order[suite]
    tests = lb.suite_tests[suite] + [None] * (len(order) - len(lb.suite_tests[suite]))
    rows = []
    for name, test in zip(order, tests, strict=True):
        c = lb.cells[suite][name]
        flag_cell, reasons = flags(c.degenerate, c.failing, c.contaminated)
        block, rank_text = ((2, "not ranked") if c.goodness is None else
                            (0, str(c.rank)) if c.rank is not None else (1, "reference"))
        rows.append({
            "entry": name, "cls": ("ranked", "reference", "unranked")[block], "block": block,
            "contaminated": 1 if c.contaminated else 0,
            "cells": [
                cell(rank_text, c.rank), cell(name, name, None, "name"),
                _num_cell(c.goodness), cell(_interval(_score_interval(c)), None, None, "nowrap"),
                cell("–" if c.goodness_n is None else str(c.goodness_n), c.goodness_n),
                _num_cell(c.consistent_accuracy), _num_cell(c.chance), _num_cell(c.accuracy),
                cell(pct(c.score), sort_value(c.consistency)),
                cell(_interval(c.ci95), None, None, "nowrap"),
                cell("–" if c.n is None else str(c.n), c.n),
                cell(_vs(test)), flag_cell,
            ],
            "flags": with_unjudged(reasons, c.unjudged),
        })
    return rows
