"""Rank the stored submissions and render the site: what ``consistency-bench leaderboard`` does.

The site (leaderboard.md, index.html, heatmap.png, leaderboard.json, each entry's meta.yaml)
is written into a temporary folder that replaces ``out`` only when every file is written. An
unreadable entry is skipped with a warning naming its file; with ``data`` every entry is
checked against what its stored predictions score and one whose hash or any stored score
differs is left out (named in a warning). What scoring an entry again gives is cached beside
the submissions and recomputed only when the predictions, suites, parameters or code change
(:mod:`consistency_bench.leaderboard.cache`), so a render scores only new or changed entries. The
maintainer's
review renders the site with this function too
(:func:`consistency_bench.leaderboard.review.loop.render_site`), so
both write the same files, and a review's render scores only the merged entries.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from consistency_bench.bench.scoring.engine import SuiteFolder
    from consistency_bench.leaderboard.ranking.model import Leaderboard
    from consistency_bench.leaderboard.submissions.meta import Submission


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


# One piece (over 60 lines): every check before the one atomic write of the site.
def build_site(submissions: str | os.PathLike, out: str | os.PathLike,
               data: str | os.PathLike | None = None, *, overwrite: bool = False,
               warn: Callable[[str], None] = lambda message: None,
               cache: bool = True, profile: str | None = None,
               explorer_groups: int | None = None) -> SiteReport:
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
        profile: The entry whose per-kind profile is drawn beside the #1 (default: the
            runner-up of "all suites"); it must be an entry of the board.
        explorer_groups: Inconsistent groups sampled per entry and suite for the page's
            explorer (issue 31; default
            ``consistency_bench.leaderboard.explorer.payload.DEFAULT_GROUPS``, 0:
            no explorer); needs ``data`` (the texts).

    Raises:
        BenchError: ``out`` lies inside a built suite folder, or is a non-empty folder that
            is not an earlier site (without ``overwrite``).

    """
    from consistency_bench.bench.errors import BenchError, shorten
    from consistency_bench.bench.io.output_checks import built_folder_of, check_output_dir
    from consistency_bench.bench.io.staged_folder import atomic_dir
    from consistency_bench.leaderboard.submissions.reader import load_all, site_record
    from consistency_bench.leaderboard.webpage.render import (
        HEATMAP,
        HTML,
        JSON,
        MARKDOWN,
        render_all,
    )

    built = built_folder_of(Path(out) / "suites.json")  # itself or one above it
    if built is not None:  # a site there is a stray folder of the build (publish-suites)
        raise BenchError(f"--out {out}: is inside the built suite folder {built} (it "
                         "holds suites.json); name a folder outside it")
    if data:
        from consistency_bench.bench.io.manifest import read_manifest

        # A --data that is not a built folder stops here: else every entry fails its check,
        # "not ranked", and the site is rewritten with no entry at all.
        read_manifest(Path(data))
    folder = check_output_dir(out, overwrite=overwrite, replaceable=JSON, owner="leaderboard",
                              inputs=(submissions, data))
    subs = load_all(submissions, on_error=warn)
    if profile is not None and profile not in {s.slug for s in subs}:
        raise BenchError(f"--profile {shorten(profile)}: not an entry of {submissions}; "
                         "entries: " + ", ".join(sorted(s.slug for s in subs)))
    suites = None
    if data:  # one suite folder for the verification and the explorer: each suite loaded once
        from consistency_bench.bench.scoring.engine import SuiteFolder

        suites = SuiteFolder(Path(data))
    lb, subs, recomputed = _rank_loaded(subs, submissions, data, warn=warn, cache=cache,
                                        folder=suites)
    record = site_record(submissions, subs)
    legacy = (JSON, MARKDOWN, HTML, HEATMAP, "submissions/*/meta.yaml")  # sites before the record
    explorer = _explorer(subs, data, folder, explorer_groups, suites) if data else None
    with atomic_dir(folder, owner="leaderboard", record=record, legacy=legacy) as tmp:
        written = render_all(lb, tmp, submissions, profile, explorer)
    return SiteReport(len(subs), len(lb.suites), list(written), folder, recomputed)


def _explorer(subs, data, old_site: Path, groups: int | None, suites=None):
    """The page's explorer files, made from the entries' file stems (issue 31), or ``None``."""
    from consistency_bench.leaderboard.explorer.payload import DEFAULT_GROUPS, explorer_files
    from consistency_bench.leaderboard.submissions.meta import PREDICTIONS

    n = DEFAULT_GROUPS if groups is None else groups
    if n <= 0:
        return None
    entries = {s.slug: (s.path / PREDICTIONS, s.results) for s in subs}

    def make(stems):
        return explorer_files(entries, stems, data, old_site, n, folder=suites)

    return make


def stored_board(submissions: str | os.PathLike, data: str | os.PathLike | None = None, *,
                 warn: Callable[[str], None] | None = None) -> Leaderboard:
    """The board of :func:`rank_submissions` (the body of ``cb.leaderboard``, docs/api.md).

    Entries left out are named by ``warn`` (default: a ``UserWarning``).
    """
    if warn is None:
        import warnings

        def warn(message: str) -> None:
            warnings.warn(message, stacklevel=4)

    board, _, _ = rank_submissions(submissions, data, warn=warn)
    return board


def rank_submissions(submissions: str | os.PathLike, data: str | os.PathLike | None = None, *,
                     warn: Callable[[str], None] = lambda message: None, cache: bool = True
                     ) -> tuple[Leaderboard, list[Submission], list[str] | None]:
    """Rank the readable entries of ``submissions``: the board, the entries, the recomputed.

    The last item is, with ``data``, the entries scored again rather than verified from the
    cache (None without ``data``). The ranking :func:`build_site` renders, without a site.
    With ``data`` every entry is checked against what its stored predictions score (through
    the verified-cells cache unless ``cache`` is False), and one whose hash or any stored
    score differs is left out, named in a ``warn`` line.
    """
    from consistency_bench.leaderboard.submissions.reader import load_all

    if data:
        from consistency_bench.bench.io.manifest import read_manifest

        read_manifest(Path(data))  # not a built folder: stop before any entry is read
    subs = load_all(submissions, on_error=warn)
    return _rank_loaded(subs, submissions, data, warn=warn, cache=cache)


def _rank_loaded(subs: list[Submission], submissions: str | os.PathLike,
                 data: str | os.PathLike | None, *, warn: Callable[[str], None], cache: bool,
                 folder: SuiteFolder | None = None
                 ) -> tuple[Leaderboard, list[Submission], list[str] | None]:
    """Verify the loaded entries against ``data`` (when given), add their extras, rank them.

    The step :func:`build_site` and :func:`rank_submissions` share; returns the board, the
    entries kept and the entries scored again (None without ``data``).
    """
    from consistency_bench.leaderboard.ranking.board import rank
    from consistency_bench.leaderboard.ranking.model import Entry

    samples = recomputed = None
    if data:
        from consistency_bench.leaderboard.cache.verified import verify_entries

        verified = verify_entries(subs, data, submissions, cache=cache, warn=warn,
                                  folder=folder)
        subs, samples, recomputed = verified.kept, verified.samples, verified.recomputed
    subs, extras = _with_extras(subs, warn)
    board = rank([Entry(s.slug, s.results, {**s.meta, **extras[s.slug]}) for s in subs],
                 samples=samples)
    return board, subs, recomputed


def _with_extras(subs: list, warn: Callable[[str], None]) -> tuple[list, dict[str, dict]]:
    """Each entry's ``setup`` and ``reproduced`` (:mod:`consistency_bench.leaderboard.reproduce.shown`).

    An entry whose ``run.json`` or ``reproduction.json`` cannot be read is left out, named in
    a warning.
    """  # noqa: E501
    from consistency_bench.bench.errors import BenchError
    from consistency_bench.leaderboard.reproduce.shown import entry_extras

    kept, extras = [], {}
    for s in subs:
        try:
            extras[s.slug] = entry_extras(s.path, s.results)
        except BenchError as exc:
            warn(f"{exc}; not ranked")
            continue
        kept.append(s)
    return kept, extras
