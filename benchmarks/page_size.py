"""Sizes of the leaderboard page at N entries: the first page, and the files it loads later.

The first page (``index.html``) must stay under 1 MB whatever the number of entries (issue 33,
item 3). Boards of N entries are made from the five scored synthetic entries
(``tests.synthetic_entries.many_entries``: real scorer outputs over every suite of the built
folder, mixed per entry and suite, a fifth of the entries partial), ranked without per-unit
outcomes (no rank intervals: a few characters per row) and rendered with
``leaderboard.render.render_all``; ``--committed`` renders the committed submissions instead.

    PYTHONPATH=. .venv/bin/python benchmarks/page_size.py --data consistency-bench \\
        --entries 100 500 --committed
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def _sizes(site: Path) -> dict[str, float]:
    def kb(paths) -> float:
        return sum(p.stat().st_size for p in paths) / 1000

    data = site / "data"
    views = sorted((data / "view").glob("*.js"), key=lambda p: p.stat().st_size)
    suites = sorted((data / "suite").glob("*.js"), key=lambda p: p.stat().st_size)
    entries = list((data / "entry").glob("*.js"))
    return {
        "index.html": kb([site / "index.html"]),
        "heatmap.png": kb([site / "heatmap.png"]),
        "data/ (all)": kb(data.rglob("*.js")),
        "largest view file": kb(views[-1:]),
        "largest suite file": kb(suites[-1:]),
        "index file": kb([data / "index" / "entries.js"]),
        "entry file (mean)": kb(entries) / max(1, len(entries)),
        "files": float(len(list(data.rglob("*.js")))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="consistency-bench", help="built suite folder")
    parser.add_argument("--entries", type=int, nargs="*", default=[100, 500])
    parser.add_argument("--committed", action="store_true",
                        help="also render the committed submissions/")
    parser.add_argument("--submissions", default="submissions")
    args = parser.parse_args()

    from leaderboard.ranking import Entry, rank
    from leaderboard.render import render_all
    from leaderboard.submissions import load_all
    from tests.synthetic_entries import many_entries, score_entries

    boards = []
    if args.committed:
        subs = load_all(args.submissions)
        boards.append((f"{len(subs)} (committed)",
                       [Entry(s.slug, s.results, s.meta) for s in subs]))
    if args.entries:
        base, _ = score_entries(args.data)
        boards += [(str(n), many_entries(base, n)) for n in args.entries]
    for label, entries in boards:
        t0 = time.perf_counter()
        lb = rank(entries)
        t1 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            render_all(lb, tmp)
            t2 = time.perf_counter()
            sizes = _sizes(Path(tmp))
        print(f"entries {label}: rank {t1 - t0:.1f} s, render {t2 - t1:.1f} s; "
              + "; ".join(f"{k} {v:.0f}" + ("" if k == "files" else " kB")
                          for k, v in sizes.items()), flush=True)


if __name__ == "__main__":
    main()
