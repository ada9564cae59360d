"""Sizes of the leaderboard page at N entries: the first page, and the files it loads later.

The first page (``index.html``) must stay under 1 MB whatever the number of entries (issue 33,
item 3). Boards of N entries are made from the five scored synthetic entries
(``tests.synthetic_entries.many_entries``: real scorer outputs over every suite of the built
folder, mixed per entry and suite, a fifth of the entries partial), ranked without per-unit
outcomes (no rank intervals: a few characters per row) and rendered with
``consistency_bench.leaderboard.webpage.render.render_all``; ``--committed`` renders the committed
submissions instead.

With the explorer (issue 31, the default; ``--no-explorer`` leaves it out) the page carries
its section, and each entry an explorer file: the committed board's are the real ones (a
sample of ``--explorer-groups`` inconsistent groups per suite from the entries' prediction
files and the built suites), the synthetic entries have no prediction files, so theirs hold
no groups. ``index.html`` does not depend on what the explorer files hold (only on whether
there are any), which the ``--committed`` run checks by rendering the committed board both
ways.

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
        "explorer files": kb((data / "explorer").glob("*.js")),
        "plot files": kb((data / "plot").glob("*.js")),
        "files": float(len(list(data.rglob("*.js")))),
    }


def _real_explorer(submissions, data: str, n: int):
    """The committed entries' explorer files, as ``leaderboard --data`` makes them."""
    from consistency_bench.leaderboard.explorer.payload import explorer_files
    from consistency_bench.leaderboard.submissions.meta import PREDICTIONS

    entries = {s.slug: (s.path / PREDICTIONS, s.results) for s in submissions}
    return lambda stems: explorer_files(entries, stems, data, None, n)


def _empty_explorer(stems):
    """One explorer file per entry holding no groups (synthetic entries have no predictions)."""
    from consistency_bench.leaderboard.explorer.payload import payload
    from consistency_bench.leaderboard.webpage.lazy import data_path, data_script

    return {data_path("explorer", stem): data_script(data_path("explorer", stem),
                                                      payload(name, [], 0, ""))
            for name, stem in stems.items()}


def _render(lb, explorer) -> tuple[float, dict[str, float], bytes]:
    from consistency_bench.leaderboard.webpage.render import render_all

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        render_all(lb, tmp, explorer=explorer)
        seconds = time.perf_counter() - t0
        return seconds, _sizes(Path(tmp)), (Path(tmp) / "index.html").read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="consistency-bench", help="built suite folder")
    parser.add_argument("--entries", type=int, nargs="*", default=[100, 500])
    parser.add_argument("--committed", action="store_true",
                        help="also render the committed submissions/")
    parser.add_argument("--submissions", default="submissions")
    parser.add_argument("--no-explorer", action="store_true",
                        help="render without the explorer section and files (issue 31)")
    parser.add_argument("--explorer-groups", type=int, default=10, metavar="N",
                        help="groups sampled per suite for the committed board's explorer")
    args = parser.parse_args()

    from consistency_bench.leaderboard.ranking.board import rank
    from consistency_bench.leaderboard.ranking.model import Entry
    from consistency_bench.leaderboard.submissions.reader import load_all
    from tests.synthetic_entries import many_entries, score_entries

    boards = []
    if args.committed:
        subs = load_all(args.submissions)
        boards.append((f"{len(subs)} (committed)", [Entry(s.slug, s.results, s.meta) for s in subs],
                       _real_explorer(subs, args.data, args.explorer_groups)))
    if args.entries:
        base, _ = score_entries(args.data)
        boards += [(str(n), many_entries(base, n), _empty_explorer) for n in args.entries]
    for label, entries, explorer in boards:
        t0 = time.perf_counter()
        lb = rank(entries)
        ranked = time.perf_counter() - t0
        seconds, sizes, page = _render(lb, None if args.no_explorer else explorer)
        print(f"entries {label}: rank {ranked:.1f} s, render {seconds:.1f} s; "
              + "; ".join(f"{k} {v:.0f}" + ("" if k == "files" else " kB")
                          for k, v in sizes.items())
              + f"; index.html {len(page)} bytes", flush=True)
        if explorer is not _empty_explorer and not args.no_explorer:
            same = _render(lb, _empty_explorer)[2] == page
            verdict = "the same" if same else "DIFFERENT"
            print(f"  index.html with empty explorer files is {verdict}", flush=True)


if __name__ == "__main__":
    main()
