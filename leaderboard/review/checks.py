"""The checks of one review request (:mod:`consistency_bench.leaderboard.review.loop`), pure functions of its data.

The review markers, the request's changed paths and slug, the suites' hashes, the maintainer's
``--data``, and the comments (the results table, the marker): no Hub call here.
"""  # noqa: E501

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from consistency_bench.bench.errors import BenchError
from consistency_bench.bench.runrecord.schema import ENTRY_FILE as RUN_RECORD
from consistency_bench.leaderboard.hub.pull_requests import REQUESTS
from consistency_bench.leaderboard.submissions.meta import META, PREDICTIONS, slug_problem
from consistency_bench.leaderboard.submissions.storage import ScoredFile

MARKER = "<!-- consistency-bench review {verdict} {head} -->"
MARKER_RE = re.compile(r"<!-- consistency-bench review (accepted|refused) ([0-9a-f]{40}) -->")
#: The marker that ends a comment (its last line): a marker quoted inside the text is not one.
FINAL_MARKER_RE = re.compile(r"(?:\A|\n)" + MARKER_RE.pattern + r"[ \t\r\n]*\Z")
#: The files every request adds.
REQUEST_FILES = (META, PREDICTIONS)
#: Files a request may add besides :data:`REQUEST_FILES` (the run record, issue 28 item 13;
#: its size cap is in :data:`consistency_bench.leaderboard.hub.pull_requests.MAX_REQUEST_BYTES` like
#: the
#: others').
OPTIONAL_REQUEST_FILES = (RUN_RECORD,)


class Refused(BenchError):
    """A request that cannot be accepted; the message is the reason commented on it."""


@dataclass
class Review:
    """What the review found for one pull request.

    Attributes:
        num: Pull request number.
        head: Commit the files were read at.
        verdict: ``accepted``, ``refused``, ``unchanged`` (reviewed before at this head
            and nothing left to do), ``other`` (changes no file under ``requests/``: not a
            submission, e.g. a maintainer's edit of the card; never commented or merged),
            ``changed`` (accepted, then pushed to before its merge: not merged, reviewed
            again by the next run) or ``failed`` (a Hub error, a timeout or an unexpected
            error while handling this pull request: ``reason`` says which; the others are
            handled all the same, and the next run takes it again).
        slug: Entry name, when the paths gave one.
        reason: Why it was refused.
        comment: The comment (posted unless ``unchanged`` or reviewed before).
        results: The scores computed here (accepted only).
        files: Local copies of ``meta.yaml``, ``predictions.jsonl.gz`` and ``run.json`` (when
            the request has one) (accepted only).
        posted: Whether this run comments (False when the last marker names this head).
        stored: Whether ``submissions/<slug>`` holds these predictions (stored by an
            earlier, interrupted run or by this one).
        merged: Whether this run merged the pull request.
        replaces: Whether the store replaces an entry stored from an earlier head of this
            pull request that was never merged.
        reproduction: ``review --reproduce``: the passed reproduction stored on merge.
        scored: The review's own scoring of the predictions (accepted only): ``--merge``
            stores these results and the entry's verified cells without scoring it again
            (dropped once the request is handled).

    """

    num: int
    head: str
    verdict: str
    slug: str | None = None
    reason: str = ""
    comment: str = ""
    results: dict | None = None
    files: dict[str, Path] = field(default_factory=dict)
    posted: bool = True
    stored: bool = False
    merged: bool = False
    replaces: bool = False
    reproduction: dict | None = None
    scored: ScoredFile | None = None


def changed_paths(diff: str) -> list[str]:
    """Files a pull request changes, from the ``diff --git a/X b/X`` headers of its diff.

    Raises:
        Refused: A rename or copy (``a/X b/Y``), a deleted file, or a path git quotes
            (``"a/\\303\\251"``), which no request makes
            (a deleted file cannot be downloaded at the pull request's head: refused here, it
            never stops the review of the others).

    """
    out: list[str] = []
    for line in (diff or "").splitlines():
        if line.startswith("deleted file mode") and out:
            raise Refused(f"the pull request deletes {out[-1]!r}; a request only adds files")
        if line.startswith("diff --git ") and not line.startswith("diff --git a/"):
            # git quotes a path with non-ASCII or special characters ("a/..."): never a
            # request's path, and skipping the header would let that file through the merge
            raise Refused(f"the pull request changes a file with a quoted path ({line!r})")
        if not line.startswith("diff --git a/"):
            continue
        rest = line[len("diff --git a/"):]
        path = rest[:max(0, (len(rest) - 3) // 2)]
        if rest != f"{path} b/{path}":
            raise Refused(f"the pull request renames or copies a file ({line!r})")
        out.append(path)
    return out


def request_slug(paths: list[str]) -> str:
    """The slug of a request, from the paths it changes.

    Raises:
        Refused: Files outside ``requests/<slug>/``, more than one slug, a path that could
            leave its folder, or a missing or extra file.

    """
    if not paths:
        raise Refused("the pull request changes no file")
    outside = [p for p in paths if not p.startswith(f"{REQUESTS}/")]
    if outside:
        raise Refused(f"a request may only add files under {REQUESTS}/<name>/; this one "
                      f"changes {outside[:5]}")
    slugs = set()
    for p in paths:
        parts = p.split("/")
        if (len(parts) != 3 or "\\" in p
                or parts[2] not in REQUEST_FILES + OPTIONAL_REQUEST_FILES):
            raise Refused(f"{p!r} is not {REQUESTS}/<name>/meta.yaml, "
                          f"{REQUESTS}/<name>/{PREDICTIONS} or {REQUESTS}/<name>/{RUN_RECORD}")
        problem = slug_problem(parts[1])  # the one name rule of submit (submissions_meta)
        if problem:
            raise Refused(f"{p!r}: the name {parts[1]!r} is not a valid entry name: {problem} "
                          "(the rule of `submit --name`)")
        slugs.add(parts[1])
    if len(slugs) != 1:
        raise Refused(f"one request per pull request; this one adds {sorted(slugs)}")
    slug = slugs.pop()
    missing = [f for f in REQUEST_FILES if f"{REQUESTS}/{slug}/{f}" not in paths]
    if missing:
        raise Refused(f"{REQUESTS}/{slug}/ lacks {missing}")
    return slug


def request_files(slug: str, paths: list[str]) -> tuple[str, ...]:
    """The files request ``slug`` adds: :data:`REQUEST_FILES`, then the optional ones in ``paths``.

    Each is size-checked from the listing, downloaded and checked by the review.
    """
    return (*REQUEST_FILES,
            *(f for f in OPTIONAL_REQUEST_FILES if f"{REQUESTS}/{slug}/{f}" in paths))


def last_review(events, reviewer: str) -> tuple[str, str] | None:
    """(verdict, head) of ``reviewer``'s last review marker among a discussion's comments.

    Only comments written by ``reviewer`` (the account that runs ``review``, from ``whoami``)
    count, and only the marker that ends such a comment: anyone can post a comment holding a
    marker for a pull request's public head commit (the submitter, or a third party against
    someone else's request), which made ``review`` skip the request as "unchanged", and a
    refusal comment quotes the submitter's text, which may hold one too. A hidden comment does
    not count.
    """
    found = None
    for event in events:
        if (event.type != "comment" or getattr(event, "author", None) != reviewer
                or getattr(event, "hidden", False)):
            continue
        m = FINAL_MARKER_RE.search(getattr(event, "content", "") or "")
        if m:
            found = (m.group(1), m.group(2))
    return found


def head_of(events) -> str | None:
    """The pull request's head: the oid of its last commit event."""
    commits = [e.oid for e in events if e.type == "commit"]
    return commits[-1] if commits else None


def check_hashes(results: dict, published: dict[str, str], suites_repo: str) -> None:
    """Every scored suite must be a published suite with the same ``content_hash``.

    Raises:
        Refused: Naming the suite and both hashes.

    """
    problems = []
    for suite, entry in sorted(results.get("suites", {}).items()):
        want = published.get(suite)
        got = entry.get("content_hash")
        if want is None:
            problems.append(f"{suite} is not published in {suites_repo}")
        elif got != want:
            problems.append(f"{suite}: scored on content_hash {str(got)[:12]}..., the "
                            f"published suite is {want[:12]}...")
    if problems:
        raise Refused("the suites do not match the published suites: " + "; ".join(problems))


def check_local_suites(data_dir: str | os.PathLike, published: dict[str, str],
                       suites_repo: str) -> None:
    """The maintainer's ``--data`` must hold the published suites, before any request is judged.

    Otherwise every request would be refused for the maintainer's stale folder.

    Raises:
        ConfigError: Naming each suite whose sha256 differs from the published one.

    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.io.manifest import read_manifest

    local = read_manifest(os.fspath(data_dir))
    stale = sorted(s for s, info in local.items() if s in published
                   and isinstance(info, dict) and info.get("sha256") != published[s])
    if stale:
        raise ConfigError(f"--data {data_dir}: {len(stale)} suite(s) differ from {suites_repo}'s "
                          f"suites.json ({', '.join(stale[:5])}); download the published suites "
                          f"(`hf download {suites_repo} --repo-type dataset --local-dir DIR`); "
                          "nothing was reviewed")


def results_comment(slug: str, results: dict, stored: list) -> str:
    """Markdown: the entry's row in each view of the leaderboard (stored entries + this one)."""
    from consistency_bench.leaderboard.ranking.board import rank
    from consistency_bench.leaderboard.ranking.model import Entry
    from consistency_bench.leaderboard.webpage.formatting import md_text, pct

    entries = [Entry(s.slug, s.results, s.meta) for s in stored if s.slug != slug]
    lb = rank([*entries, Entry(slug, results)])
    lines = [f"**{md_text(slug)}**: accepted by `consistency-bench review` (scored here from "
             "the request's predictions).", "",
             "| view | rank | mean score % | suites covered | status | flags |",
             "|---|---|---|---|---|---|"]
    for view in lb.views.values():
        row = next((r for r in view.rows if r.name == slug), None)
        if row is None:
            continue
        ranked = sum(r.rank is not None for r in view.rows)
        place = f"{row.rank} of {ranked}" if row.rank is not None else "–"
        flags = [f"{n}: {getattr(row, n)}" for n in ("degenerate", "contaminated", "failing")
                 if getattr(row, n)]
        lines.append(f"| {md_text(view.title or view.name)} | {place} | {pct(row.mean)} | "
                     f"{row.covered}/{row.total} | {row.status} | "
                     f"{md_text('; '.join(flags)) or '–'} |")
    skipped = results.get("skipped") or {}
    if skipped:
        lines += ["", "Not scored: " + "; ".join(f"{md_text(k)}: {md_text(v)}"
                                                for k, v in sorted(skipped.items()))]
    return "\n".join(lines)


def comment_body(review: Review) -> str:
    """The comment with its marker."""
    return review.comment + "\n\n" + MARKER.format(verdict=review.verdict, head=review.head)
