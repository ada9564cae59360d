"""Rank the stored submissions and render the site: what ``consistency-bench leaderboard`` does.

The site (leaderboard.md, index.html, heatmap.png, leaderboard.json, each entry's meta.yaml)
is written into a temporary folder that replaces ``out`` only when every file is written. An
unreadable entry is skipped with a warning naming its file; with ``data`` every entry is
checked against what its stored predictions score and one whose hash or any stored score
differs is left out (named in a warning). What scoring an entry again gives is cached beside
the submissions and recomputed only when the predictions, suites, parameters or code change
(:mod:`leaderboard.cache`), so a render scores only new or changed entries. The maintainer's
review renders the site with this function too (:func:`leaderboard.review.render_site`), so
both write the same files, and a review's render scores only the merged entries.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SiteReport:
    """What :func:`build_site` wrote.

    Attributes:
        entries: Entries ranked.
        suites: Suites on the leaderboard.
        files: Files written.
        out: The site folder.
        recomputed: With ``data``: the entries scored again (the others were verified from
            the cache); ``None`` without ``data``.

    """

    entries: int
    suites: int
    files: list[Path]
    out: Path
    recomputed: list[str] | None = None


def build_site(submissions: str | os.PathLike, out: str | os.PathLike,
               data: str | os.PathLike | None = None, *, overwrite: bool = False,
               warn: Callable[[str], None] = lambda message: None,
               cache: bool = True) -> SiteReport:
    """Rank the entries of ``submissions`` and render the site into ``out``.

    Args:
        submissions: Folder of stored entries.
        out: Site folder; the files an earlier run wrote there are replaced, any other file is
            kept.
        data: Built suite folder to score every entry against again (None: trust the stored
            results).
        overwrite: Write into a non-empty ``out`` that is not an earlier site.
        warn: Called with one line per entry left out.
        cache: With ``data``, use the verified-cells cache (``False``: score every entry
            again and leave the cache as it is).

    Raises:
        BenchError: ``out`` lies inside a built suite folder, or is a non-empty folder that
            is not an earlier site (without ``overwrite``).

    """
    from bench.atomic import atomic_dir, built_folder_of, check_output_dir
    from bench.errors import BenchError
    from leaderboard.ranking import Entry, rank
    from leaderboard.render import HEATMAP, HTML, JSON, MARKDOWN, render_all
    from leaderboard.submissions import load_all, site_record

    built = built_folder_of(Path(out) / "suites.json")  # itself or one above it
    if built is not None:  # a site there is a stray folder of the build (publish-suites)
        raise BenchError(f"--out {out}: is inside the built suite folder {built} (it "
                         "holds suites.json); name a folder outside it")
    if data:
        from bench.manifest import read_manifest

        # A --data that is not a built folder stops here: else every entry fails its check,
        # "not ranked", and the site is rewritten with no entry at all.
        read_manifest(Path(data))
    folder = check_output_dir(out, overwrite=overwrite, replaceable=JSON, owner="leaderboard")
    subs = load_all(submissions, on_error=warn)
    samples = recomputed = None
    if data:
        from leaderboard.cache.verified import verify_entries

        verified = verify_entries(subs, data, submissions, cache=cache, warn=warn)
        subs, samples, recomputed = verified.kept, verified.samples, verified.recomputed
    lb = rank([Entry(s.slug, s.results, s.meta) for s in subs], samples=samples)
    record = site_record(submissions, subs)
    legacy = (JSON, MARKDOWN, HTML, HEATMAP, "submissions/*/meta.yaml")  # sites before the record
    with atomic_dir(folder, owner="leaderboard", record=record, legacy=legacy) as tmp:
        written = render_all(lb, tmp, submissions)
    return SiteReport(len(subs), len(lb.suites), list(written), folder, recomputed)
