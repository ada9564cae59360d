"""Render a ranked ``Leaderboard``: Markdown, static HTML, PNG heatmap, JSON.

All outputs are deterministic for the same input (sorted keys, no timestamps; the PNG is
written with the Agg backend and no date metadata). Every score is printed in %, as in
``consistency-bench score``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from consistency_bench.bench.io.write import atomic_path, write_text
from consistency_bench.leaderboard.dataset.records import RESULTS_FILE, parquet_bytes
from consistency_bench.leaderboard.explorer.assets import EXPLORER_JS
from consistency_bench.leaderboard.explorer.panel import ASSET as EXPLORER_ASSET
from consistency_bench.leaderboard.ranking.model import Leaderboard, Row
from consistency_bench.leaderboard.webpage.formatting import (
    FLAG_LEGEND,
    STATUS_LEGEND,
    clean,
    dom_id,
    md_text,
    pct,
)
from consistency_bench.leaderboard.webpage.page import (
    HEAT_ROWS,
    SCORE_NOTE,
    Explorer,
    Page,
    render_site,
)

MARKDOWN = "leaderboard.md"
HTML = "index.html"
HEATMAP = "heatmap.png"
JSON = "leaderboard.json"
#: Entry names whose ``meta.yaml`` is copied next to the page (a slug: no path separators).
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

__all__ = ["HEATMAP", "HTML", "JSON", "MARKDOWN", "reference_entries", "render_all",
           "render_heatmap", "render_html", "render_markdown", "render_page", "task_summary",
           "view_id"]


def view_id(key: str) -> str:
    """HTML id of a view's section (``view-task-snli``, ``view-all``); unsafe keys are hashed."""
    return dom_id("view", key, set())


def _summary_keys(lb: Leaderboard) -> dict[str, tuple]:
    tasks = [k for k in lb.views if k.startswith("task:")]
    key: dict[str, tuple] = {}
    in_tasks: dict[str, list[Row]] = {}  # one pass over the task views, not one per entry
    for k in tasks:
        for r in lb.views[k].rows:
            in_tasks.setdefault(r.name, []).append(r)
    for row in lb.views["all"].rows:
        rows = in_tasks.get(row.name, [])
        ranks = [r.rank for r in rows if r.rank is not None]
        refs = sum(r.status == "reference" for r in rows)
        if not tasks:
            refs = int(row.status == "reference")
        key[row.name] = (refs > len(ranks), -len(ranks),
                         sum(ranks) / len(ranks) if ranks else 0.0, row.name)
    return key


def task_summary(lb: Leaderboard) -> tuple[list[str], list[str]]:
    """The per-task views, and the entries: ranked in most task views first, references last.

    An entry's order key is (number of task views where it is a degenerate reference, minus
    the number where it is ranked, mean rank there, name): real models come before the
    constant and random baselines whatever their coverage.
    """
    tasks = [k for k in lb.views if k.startswith("task:")]
    key = _summary_keys(lb)
    return tasks, sorted(key, key=key.__getitem__)


def reference_entries(lb: Leaderboard) -> set[str]:
    """Entries that are ``reference`` rows in more task views than they are ranked in."""
    return {name for name, k in _summary_keys(lb).items() if k[0]}


def _md_cell(row: Row | None) -> str:
    if row is None or row.covered == 0:
        return "–"
    if row.status == "reference":
        return f"reference {pct(row.mean)} / {pct(row.accuracy)}"
    if row.status == "partial" or row.rank is None:
        return f"partial {row.covered}/{row.total}"
    mark = " ✗" if row.failing else ""
    return f"#{row.rank} {pct(row.mean)} / {pct(row.accuracy)}{mark}"


def render_markdown(lb: Leaderboard) -> str:
    """The per-task summary (README and Hub card): one column per task, then all suites.

    Every value (entry names, view titles, flags) is escaped (:func:`md_text`): no pipe, HTML
    or link syntax from a results or meta file reaches the card.
    """
    tasks, names = task_summary(lb)
    keys = [*tasks, "all"]
    rows_by = {k: {r.name: r for r in lb.views[k].rows} for k in keys}
    from consistency_bench.leaderboard.reproduce.shown import MD_LEGEND, md_cell

    lines = [
        "| Entry | " + " | ".join(md_text(lb.views[k].title) for k in keys)
        + " | Flags | Reproduced |",
        "|---|" + "---|" * (len(keys) + 2),
    ]
    for name in names:
        cells = [md_text(_md_cell(rows_by[k].get(name))) for k in keys]
        flags = rows_by["all"][name].flags if name in rows_by["all"] else []
        shown = md_cell(lb.meta.get(name, {}).get("reproduced"))
        lines.append(f"| {md_text(name)} | " + " | ".join(cells)
                     + f" | {md_text(', '.join(flags))} | {md_text(shown)} |")
    lines += _markdown_notes(lb, keys)
    legend = "; ".join(f"`{k}`: {v}" for k, v in STATUS_LEGEND.items())
    flag_words = ", ".join(f"`{k}` ({v})" for k, v in FLAG_LEGEND.items())
    lines += [
        "",
        "Each cell: `#rank score / acc` (✗: ranked, but `failing` a kind; reason on the page). "
        + SCORE_NOTE + " The salad answer's confidence counts too (word-salad paper l. 158: "
        "\"at random\" and \"with low confidence\"): a confident answer keeps at most half "
        "of the credit; files without probabilities are judged on agreement alone (said "
        "below). Row status, the same words as on the page: " + legend
        + ". Flags, the same words as on the page: " + flag_words
        + ". Full tables, rank intervals and paired tests: index.html / leaderboard.json. "
        + MD_LEGEND,
    ]
    return "\n".join(lines) + "\n"


def _markdown_notes(lb: Leaderboard, keys: list[str]) -> list[str]:
    """Lines below the table: why a view ranks nobody, whose salad confidence is unjudged.

    Each note once, every value escaped (:func:`md_text`).
    """
    lines = []
    for key in keys:
        note = lb.views[key].note
        if note:
            lines.append(f"- **{md_text(lb.views[key].title)}**: {md_text(note)}")
    for row in lb.views["all"].rows:
        if row.unjudged:
            lines.append(f"- `{md_text(row.name)}`: {md_text(row.unjudged)}")
    return ["", *lines] if lines else []


def render_page(lb: Leaderboard, *, heatmap: bool = True,
                explorer: Explorer | None = None, points: Mapping | None = None) -> Page:
    """The page (inline CSS and JS allowed by hash in its CSP) and its lazily loaded files.

    ``explorer``: makes the explorer's files from the entries' file stems (issue 31).
    """
    return render_site(lb, heatmap_png=HEATMAP if heatmap else None,
                       names=task_summary(lb)[1], references=reference_entries(lb),
                       explorer=explorer, points=points)


def render_html(lb: Leaderboard, *, heatmap: bool = True) -> str:
    """``index.html`` alone (:func:`render_page` gives its lazily loaded files too)."""
    return render_page(lb, heatmap=heatmap).html


def _plain(text: str) -> str:
    """A label for matplotlib: one line, ``$`` escaped (no mathtext from a results value)."""
    return clean(text).replace("$", r"\$")


# One piece (over 60 lines): one matplotlib figure, drawn layer by layer on shared axes.
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
    from matplotlib.patches import Rectangle

    every = task_summary(lb)[1]
    names = every[:HEAT_ROWS]  # the page's heatmap: the first HEAT_ROWS, the reader adds others
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
    ax.set_xticks(range(len(suites)), [_plain(s) for s in suites], rotation=60, ha="right",
                  fontsize=font + 1)
    refs = reference_entries(lb)
    ax.set_yticks(range(len(names)),
                  [_plain(n) + (" (reference)" if n in refs else "") for n in names], fontsize=8)
    for label, n in zip(ax.get_yticklabels(), names, strict=True):
        if n in refs:
            label.set_color("#666")
            label.set_fontstyle("italic")
    for i, n in enumerate(names):  # reference cells (degenerate): hatched
        for j, s in enumerate(suites):
            c = lb.cells[s].get(n)
            if c is not None and c.goodness is not None and c.degenerate:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="////",
                                       edgecolor=(0, 0, 0, 0.35), linewidth=0))
    groups: list[tuple[str, int, int]] = []
    for j, s in enumerate(suites):
        group = f"{lb.suites[s].family}: {lb.suites[s].kind}"
        if groups and groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1], j)
        else:
            groups.append((group, j, j))
    for k, (group, a, b) in enumerate(groups):
        if a > 0:
            ax.axvline(a - 0.5, color="black", linewidth=1.2)
        ax.text((a + b) / 2, -0.6 - 0.6 * (k % 2), _plain(group.split(": ", 1)[1]), ha="center",
                va="bottom", fontsize=font + 1, clip_on=False)
    fig.colorbar(im, cax=cax, label="score % (0 = chance)")
    shown = f"the first {len(names)} of {len(every)} entries" if len(every) > len(names) \
        else "entries"
    ax.set_title(f"consistency-bench: chance-corrected consistent accuracy, {shown} × suites "
                 "(blank = not covered, n.r. = not ranked, hatched = reference: degenerate)",
                 pad=34, fontsize=10)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)


def _plots(lb: Leaderboard, out: Path, profile: str | None,
           points: Mapping | None = None) -> list[Path]:
    """Accuracy against consistency and the per-kind profile (PNG, leaderboard/plots/)."""
    from consistency_bench.leaderboard.plots.png import render_plots

    return render_plots(lb, out, profile, points)


def _link(source: Path | None, target: Path) -> bool:
    """Hard-link an earlier render's unchanged file into the new site; False: not linked.

    ``target`` is in the render's fresh folder (nothing there yet); a file system without
    hard links, or another device, falls back to writing the text.
    """
    if source is None:
        return False
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        return False
    return True


def render_all(
    lb: Leaderboard, out: str | os.PathLike, submissions: str | os.PathLike | None = None,
    profile: str | None = None, explorer: Explorer | None = None,
) -> list[Path]:
    """Write Markdown, HTML, PNG and JSON into ``out``; copy each entry's ``meta.yaml``.

    ``profile``: the entry whose per-kind profile is drawn beside the #1 (leaderboard/plots/);
    ``explorer``: makes the explorer's files (issue 31; ``None``: no explorer section).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    write_text(out / MARKDOWN, render_markdown(lb))
    from consistency_bench.leaderboard.plots.points import board_points

    points = board_points(lb)  # once: the page's plot files and the scatter PNG draw them
    page = render_page(lb, heatmap=bool(lb.suites), explorer=explorer, points=points)
    write_text(out / HTML, page.html)
    for path in page.files:  # data/<kind>/<stem>.js, loaded by the page
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _link(page.files.reused(path), target):
            write_text(target, page.files[path])
        written.append(target)
    if lb.views:  # the explorer's and the plots' code, loaded on first use (issue 31)
        target = out / EXPLORER_ASSET
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text(target, EXPLORER_JS.lstrip("\n"))
        written.append(target)
    write_text(
        out / JSON, json.dumps(lb.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
    with atomic_path(out / RESULTS_FILE) as tmp:  # the dataset repo's `results` config
        Path(tmp).write_bytes(parquet_bytes(lb))
    written += [out / MARKDOWN, out / HTML, out / JSON, out / RESULTS_FILE]
    if lb.suites:
        render_heatmap(lb, out / HEATMAP)
        written.append(out / HEATMAP)
        written += _plots(lb, out, profile, points)
    if submissions is not None:
        for name in lb.meta:
            if not _SAFE_NAME.fullmatch(name):  # only slug-like names name a folder
                continue
            src = Path(submissions) / name / "meta.yaml"
            if src.is_file() and not src.is_symlink() and not src.parent.is_symlink():
                dst = out / "submissions" / name / "meta.yaml"
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                written.append(dst)
    return written
