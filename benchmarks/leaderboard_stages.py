"""Profile: ``consistency-bench leaderboard`` in this process, with each step's time and memory.

Prints, on stderr, the wall and CPU seconds since the start, the resident and peak resident
memory (``VmRSS``, ``VmHWM``) when each step starts and ends: reading the entries, the
verification (and each chunk of entries scored again), the ranking, the page (the explorer's
files are made while ``render_all`` writes them), ``leaderboard.json``, the dataset file, the
heatmap and the plots. The arguments are ``leaderboard``'s. Run it under ``/usr/bin/time -v``
for the whole process's figures (docs/benchmarks.md, "At 500 entries").

``CB_ROOT=DIR`` runs the code of another checkout of this repository (e.g. ``git archive
COMMIT | tar -x -C DIR``) with this virtual environment: the editable install's finder is
pointed at ``DIR``'s layer folders before anything is imported.

Usage::

    CONSISTENCY_BENCH_CACHE_KEY=/tmp/cells.key /usr/bin/time -v python \\
        benchmarks/leaderboard_stages.py --submissions WORK/submissions --out WORK/site \\
        --data consistency-bench
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _point_at(root: str) -> None:
    """Make the editable install's finder load the layers from ``root``."""
    for name in list(sys.modules):
        if name.startswith("__editable__") and name.endswith("_finder"):
            mapping = sys.modules[name].MAPPING
            for key, value in list(mapping.items()):
                mapping[key] = value.replace(str(ROOT), root)


def _memory() -> dict[str, int]:
    found = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) // 1024
    return found


START, CPU = time.perf_counter(), time.process_time()


def log(message: str) -> None:
    """One line: time since the start, memory now and at its peak, the message."""
    mem = _memory()
    print(f"[{time.perf_counter() - START:7.1f}s wall {time.process_time() - CPU:7.1f}s cpu "
          f"rss {mem['VmRSS']:5d} hwm {mem['VmHWM']:5d} MiB] {message}", file=sys.stderr,
          flush=True)


def wrap(module: str, attr: str) -> None:
    """Log the start and the end of ``module.attr`` (``Class.method`` allowed)."""
    owner = importlib.import_module(module)
    *parents, name = attr.split(".")
    for part in parents:
        owner = getattr(owner, part)
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        log(f"> {attr}")
        out = fn(*args, **kwargs)
        log(f"< {attr} ({time.perf_counter() - wall:.1f}s wall, "
            f"{time.process_time() - cpu:.1f}s cpu)")
        return out

    setattr(owner, name, timed)


STEPS = [
    ("submissions.reader", "load_all"),
    ("cache.verified", "verify_entries"),
    ("cache.verified", "_Run.finish"),
    ("ranking.board", "rank"),
    ("explorer.payload", "explorer_files"),
    ("webpage.render", "render_markdown"),
    ("webpage.render", "render_page"),
    ("webpage.render", "render_heatmap"),
    ("webpage.render", "parquet_bytes"),
    ("webpage.render", "_plots"),
    ("ranking.model", "Leaderboard.to_dict"),
]


def main() -> None:
    """Wrap the steps, then run ``leaderboard`` with this script's arguments."""
    if os.environ.get("CB_ROOT"):
        _point_at(os.environ["CB_ROOT"])
    for module, attr in STEPS:
        wrap(f"consistency_bench.leaderboard.{module}", attr)
    from consistency_bench import cli

    sys.argv = ["consistency-bench", "leaderboard", *sys.argv[1:]]
    try:
        cli.main()
    except SystemExit as exc:
        log(f"exit {exc.code}")
    log("end")


if __name__ == "__main__":
    main()
