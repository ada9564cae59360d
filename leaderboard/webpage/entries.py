"""What the page shows of one entry: its Entry cell, details panel, index record and heatmap row.

Everything here reads ``Leaderboard.meta[name]`` (the entry's ``meta.yaml`` plus what the
renderers add: ``parameters``, ``variant``, ``setup``, ``reproduced``; TEAM contracts) and
renders what is present: a missing or malformed field shows nothing, or "unknown", and never
stops the page. ``setup`` is the run record's setup (mode, chat, few-shot K, dtype, ...);
``reproduced`` is ``None`` or ``{"status": "passed" | "failed" | "not-reproducible",
"label_agreement", "max_prob_diff", "groups", "rows", "reason", "date", ...}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from urllib.parse import quote

from consistency_bench.leaderboard.ranking.model import Leaderboard
from consistency_bench.leaderboard.webpage.formatting import clean, model_url, parameters, pct
from consistency_bench.leaderboard.webpage.nodes import Node, el, frag
from consistency_bench.leaderboard.webpage.static import heat_class

#: How a run record's ``mode`` reads on the page (log-likelihood and generated answers measure
#: different things, so the mode is part of the entry's setup).
MODES = {"loglikelihood": "log-likelihood", "generate": "generated",
         "classifier": "classifier", "text-to-text": "text-to-text"}
#: Spellings of the few-shot count in a run record's setup (the first one present is shown).
FEWSHOT_KEYS = ("num_fewshot", "fewshot", "few_shot", "fewshot_k", "k_shot", "n_shot")
#: Reproduction statuses (``reproduced.status``) and their CSS class.
REPRO_CLASS = {"passed": "repro-passed", "failed": "repro-failed",
               "not-reproducible": "repro-none"}
#: The entry-level CSV columns, after a view's own columns (:func:`csv_fields`).
CSV_HEAD = ("Params", "Model", "Model page", "Revision", "Variant", "Date", "Setup",
            "Reproduced")


def meta_href(name: str) -> str:
    """The link to an entry's ``meta.yaml`` next to the page."""
    return "submissions/" + quote(clean(name), safe="") + "/meta.yaml"


def count_text(n: float) -> str:
    """``22.7M``, ``7B``, ``110``."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:g}"


def _mapping(value: object) -> Mapping | None:
    return value if isinstance(value, Mapping) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def setup_of(meta: Mapping) -> Mapping | None:
    """The entry's setup (``meta.setup``), or ``None``."""
    return _mapping(meta.get("setup"))


def _setting(setup: Mapping, keys: Sequence[str]) -> object:
    """The first of ``keys`` in the setup or its ``settings`` object."""
    for where in (setup, _mapping(setup.get("settings")) or {}):
        for k in keys:
            if where.get(k) is not None:
                return where[k]
    return None


def setup_summary(setup: Mapping | None) -> str:
    """``generated · chat · 5-shot`` (mode, chat, few-shot K): empty without a setup."""
    if setup is None:
        return ""
    parts = []
    mode = _setting(setup, ("mode",))
    if mode is not None:
        parts.append(MODES.get(clean(mode), clean(mode)))
    chat = _setting(setup, ("chat", "apply_chat_template"))
    if isinstance(chat, bool):
        parts.append("chat" if chat else "no chat")
    k = _setting(setup, FEWSHOT_KEYS)
    if isinstance(k, int) and not isinstance(k, bool):
        parts.append(f"{k}-shot")
    return " · ".join(parts)


def _setup_items(setup: Mapping) -> list[str]:
    """Every scalar of the setup as ``key: value`` (one level of nested objects as ``a.b``)."""
    out = []
    for k, v in setup.items():
        if isinstance(v, Mapping):
            out += [f"{clean(k)}.{clean(k2)}: {clean(v2)}" for k2, v2 in v.items()
                    if not isinstance(v2, Mapping | list)]
        elif isinstance(v, list):
            out.append(f"{clean(k)}: " + ", ".join(clean(x) for x in v))
        elif v is not None:
            out.append(f"{clean(k)}: {clean(v)}")
    return out


def reproduced_of(meta: Mapping, row_value: object = None) -> Mapping | None:
    """The entry's reproduction record: ``meta.reproduced``, else the row's, else ``None``."""
    return _mapping(meta.get("reproduced")) or _mapping(row_value)


def reproduced_text(rep: Mapping | None) -> str:
    """The reproduction in words, with its figures: empty when there is no record."""
    if rep is None:
        return ""
    status = clean(rep.get("status", ""))
    agree, diff = _number(rep.get("label_agreement")), _number(rep.get("max_prob_diff"))
    figures = []
    if agree is not None:
        figures.append(f"label agreement {pct(agree)}%")
    if diff is not None:
        figures.append(f"largest probability difference {diff:.3g}")
    for key in ("groups", "rows"):
        if _number(rep.get(key)) is not None:
            figures.append(f"{rep[key]:g} {key}")
    words = {"passed": "reproduced", "failed": "reproduction failed",
             "not-reproducible": "not reproducible"}.get(status, f"reproduction: {status}")
    text = words + (f" ({', '.join(figures)})" if figures else "")
    if rep.get("reason"):
        text += f": {clean(rep['reason'])}"
    if rep.get("date"):
        text += f" [{clean(rep['date'])}]"
    return text


def reproduced_badge(rep: Mapping | None) -> Node | None:
    """A short badge: ``reproduced 99.7%``, ``reproduction failed 71.2%``, ``not reproducible``."""
    if rep is None:
        return None
    status = clean(rep.get("status", ""))
    agree = _number(rep.get("label_agreement"))
    if status == "passed":
        text = "✓ reproduced" + (f" {pct(agree)}%" if agree is not None else "")
    elif status == "failed":
        diff = _number(rep.get("max_prob_diff"))
        figures = [f"{pct(agree)}% agree"] if agree is not None else []
        figures += [f"Δp {diff:.2g}"] if diff is not None else []
        text = "✗ reproduction failed" + (f" ({', '.join(figures)})" if figures else "")
    elif status == "not-reproducible":
        text = "not reproducible"
    else:
        text = f"reproduction: {status}"
    return el("span", {"class": "badge " + REPRO_CLASS.get(status, "repro-other"),
                       "title": reproduced_text(rep)}, text)


def entry_content(name: str, meta: Mapping, row_reproduced: object = None) -> Node:
    """The Entry cell: the name (link to its ``meta.yaml``) and one more line.

    The line holds the parameter count (or a "parameters unknown" mark that a range filter
    shows), the setup (mode, chat, few-shot K) and the reproduction badge.
    """
    _, count = parameters(meta)
    setup = setup_summary(setup_of(meta))
    sub = [el("span", {"class": "params"}, count_text(count) + " params")
           if count is not None else
           el("span", {"class": "params-unknown"}, "parameters unknown"),
           el("span", {"class": "setup"}, setup) if setup else None,
           reproduced_badge(reproduced_of(meta, row_reproduced))]
    return frag(el("a", {"href": meta_href(name)}, name), el("div", {"class": "sub"}, *sub))


def _dd(term: str, *value: Node | None) -> list[Node]:
    return [el("dt", None, term), el("dd", None, *value)]


def details_node(name: str, meta: Mapping, row_reproduced: object = None) -> Node:
    """The entry's details panel (shown in an expandable row under the entry's rows)."""
    short, count = parameters(meta)
    url = model_url(meta)
    model = clean(meta.get("model", ""))
    setup, rep = setup_of(meta), reproduced_of(meta, row_reproduced)
    items: list[Node] = []
    items += _dd("Model", el("a", {"href": url, "rel": "noopener noreferrer nofollow"}, model)
                 if url else model,
                 f" (revision {clean(meta['revision'])})" if meta.get("revision") else None)
    items += _dd("Parameters", count_text(count) if count is not None else "unknown",
                 f" ({short})" if short and count is None else None)
    if meta.get("variant"):
        items += _dd("Variant", clean(meta["variant"]))
    if setup is not None:
        items += _dd("Setup", setup_summary(setup) or "recorded",
                     el("ul", None, *(el("li", None, t) for t in _setup_items(setup))))
    else:
        items += _dd("Setup", "no run record (predictions made elsewhere)")
    items += _dd("Reproduced", reproduced_text(rep) or "not tried")
    for key, term in (("date", "Date"), ("license", "License")):
        if meta.get(key):
            items += _dd(term, clean(meta[key]))
    data = meta.get("training_data")
    if isinstance(data, list) and data:
        items += _dd("Declared training data", ", ".join(clean(x) for x in data))
    if meta.get("notes"):
        items += _dd("Notes", clean(meta["notes"]))
    items += _dd("Files", el("a", {"href": meta_href(name)}, "meta.yaml"))
    return el("div", {"class": "entry-details"}, el("dl", None, *items))


def csv_fields(meta: Mapping, row_reproduced: object = None) -> list[str]:
    """The entry's CSV fields (:data:`CSV_HEAD`), each in full."""
    raw = meta.get("parameters")
    params = "" if raw is None else clean(raw)
    return [params, clean(meta.get("model", "")), model_url(meta) or "",
            clean(meta.get("revision", "")), clean(meta.get("variant") or ""),
            clean(meta.get("date", "")), setup_summary(setup_of(meta)),
            reproduced_text(reproduced_of(meta, row_reproduced))]


def index_record(name: str, meta: Mapping, file: str, row_reproduced: object = None) -> dict:
    """The entry in the index file: what search, filters, CSV and the heatmap picker need."""
    _, count = parameters(meta)
    rep = reproduced_of(meta, row_reproduced)
    search = " ".join(clean(x) for x in (name, meta.get("model", ""), meta.get("variant") or "")
                      if x).lower()
    return {"name": name, "file": file, "search": search, "params": count,
            "reproduced": None if rep is None else clean(rep.get("status", "")),
            "csv": csv_fields(meta, row_reproduced)}


def heat_row(lb: Leaderboard, name: str, reference: bool) -> Node:
    """The entry's heatmap row: one coloured cell per suite (dashed: degenerate)."""
    cells: list[Node] = []
    for s in lb.suites:
        c = lb.cells[s].get(name)
        if c is None:
            cells.append(el("td"))
        elif c.goodness is None:
            cells.append(el("td", {"class": "nr", "title": "not ranked"}, "n.r."))
        else:
            v = 100 * c.goodness
            tip = f"{clean(s)}: {pct(c.goodness)}" + (
                " (reference: degenerate)" if c.degenerate else "")
            cells.append(el("td", {"class": heat_class(v) + (" ref" if c.degenerate else ""),
                                   "title": tip}, f"{v:.0f}"))
    label = frag(name, " ", el("span", {"class": "status reference"}, "reference")) \
        if reference else name
    return el("tr", {"class": "reference" if reference else None, "data-entry": name},
              el("th", {"class": "entry"}, label), *cells)
