"""``review``: the maintainer's side of submissions by pull request.

One run holds ``submissions/.review.lock`` (a second run at once stops at once), learns its own
account (``whoami``), and takes each open pull request of the leaderboard's dataset repo
(oldest first) from start to end before the next one (:func:`handle_request`):

1. Its changed files (the pull request's git diff) must be exactly
   ``requests/<slug>/predictions.jsonl.gz`` and ``requests/<slug>/meta.yaml`` (and optionally
   ``requests/<slug>/run.json``, the run record), one slug valid by ``submit``'s name rule
   (checked first), not already taken (in ``submissions/``, on the Hub, or by an earlier
   request of this run).
2. The files' sizes, from the file listing at the pull request's head, must be under their
   caps (:data:`consistency_bench.leaderboard.hub.pull_requests.MAX_REQUEST_BYTES`) before anything
   is
   downloaded.
3. The files are downloaded at the head commit and checked by the same code as ``submit``
   (:func:`consistency_bench.leaderboard.hub.pull_requests.validate_files`): metadata, prediction
   file,
   coverage, and
   that a ``run.json`` describes the predictions. The scores are computed here, never taken
   from the submitter.
4. Every scored suite's ``content_hash`` must equal the ``sha256`` of that suite in the
   published suites repo's ``suites.json`` (the suites ``load_dataset`` gives).
5. With ``reproduce`` (``review --reproduce N``), an accepted entry is run again on a sample
   (:func:`consistency_bench.leaderboard.reproduce.review_step.reproduce_step`), before its comment.
6. One comment: the per-view results and flags (the entry ranked with the stored ones), or the
   reason for the refusal, ending with a marker ``<!-- consistency-bench review VERDICT SHA -->``.
   A pull request whose last marker names its current head is not commented again; only
   markers that end a comment of the reviewing account count (anyone can write one).
7. With ``merge``, an accepted request is stored in ``submissions/<slug>/`` (the atomic
   ``submit``), its head is read again, and it is merged unless pushed to since its review.

Anything that goes wrong with one pull request (a Hub error, a timeout of
:data:`DEFAULT_TIMEOUT` seconds, an unexpected error) is recorded on its review (verdict
``failed``) and the run goes on with the next. At the end, with ``merge``, the site is rendered
again and the dataset repo (and the Space) republished when ``submissions/`` holds entries the
dataset repo does not, unless an entry is stored whose merge failed: the next run merges it
and republishes. A refused request stays open for a fix.

The checks of a request live in :mod:`consistency_bench.leaderboard.review.checks` (paths, slug,
markers,
hashes, comments) and its review steps in :mod:`consistency_bench.leaderboard.review.reviewer`
(:class:`~consistency_bench.leaderboard.review.reviewer.Reviewer`); this module runs them per
request,
comments, merges
and republishes. Import their names from them; this module re-exports nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from consistency_bench.bench.errors import BenchError, ConfigError
from consistency_bench.leaderboard.hub.pull_requests import REQUESTS
from consistency_bench.leaderboard.hub.verify_published import hub_call, hub_timeout
from consistency_bench.leaderboard.reproduce.review_step import ReproduceStep, reproduce_step
from consistency_bench.leaderboard.reproduce.run_records import RUN
from consistency_bench.leaderboard.review.checks import (
    Review,
    check_local_suites,
    comment_body,
)
from consistency_bench.leaderboard.review.reviewer import Reviewer, stored_by_review
from consistency_bench.leaderboard.submissions.meta import META, PREDICTIONS, Scorer, Submission
from consistency_bench.leaderboard.submissions.reader import load_all
from consistency_bench.leaderboard.submissions.storage import submit

__all__ = [
    "DEFAULT_TIMEOUT",
    "REVIEW_LOCK",
    "handle_request",
    "merge_request",
    "post_comment",
    "render_site",
    "review_lock",
    "run_review",
    "space_behind",
]


def render_site(submissions: Path, site: Path, data_dir: str | os.PathLike) -> None:
    """Render ``site`` from ``submissions`` as ``consistency-bench leaderboard --data`` does.

    The command's own function runs
    (:func:`consistency_bench.leaderboard.webpage.build_site.build_site`),
    so the site is
    exactly what a maintainer's ``leaderboard`` run writes: same checks, same record of the
    entries it shows.

    Raises:
        BenchError: Rendering failed; the message says why.

    """
    from consistency_bench.leaderboard.webpage.build_site import build_site

    try:
        build_site(submissions, site, data_dir)
    except BenchError as exc:
        raise BenchError(f"rendering {site} failed: {exc}") from None


#: Seconds ``review`` waits for one answer of the Hub before that pull request fails (a
#: server that stalls mid-merge hung the run forever: ``huggingface_hub`` sets no timeout).
DEFAULT_TIMEOUT = 120.0
#: The lock file of the review runs, in ``--submissions`` (two runs at once would both store
#: and merge the same requests, and comment twice).
REVIEW_LOCK = ".review.lock"


def run_review(repo_id: str, data_dir: str | os.PathLike, suites_repo: str, *,
               submissions: str | os.PathLike = "submissions",
               site: str | os.PathLike = "leaderboard/site", space: str | None = None,
               merge: bool = False, dry_run: bool = False, endpoint: str | None = None,
               token: str | None = None, log: Callable[[str], None] = print,
               scorer: Scorer | None = None,
               timeout: float = DEFAULT_TIMEOUT,
               reproduce: ReproduceStep | None = None) -> list[Review]:
    """Review every open request; comment; with ``merge``, store, merge and republish.

    Each pull request is handled start to end (:func:`handle_request`) before the next, and
    whatever goes wrong with one (a Hub error, a timeout, a bug) is recorded on its
    :class:`Review` (verdict ``failed``); the others are handled all the same.

    With ``reproduce`` (``review --reproduce N``), each accepted request's entry is run again
    after its review, before its comment
    (:func:`consistency_bench.leaderboard.reproduce.review_step.
    reproduce_step`); ``--merge`` stores a passed reproduction with the entry.

    Raises:
        ConfigError: No token, another review holds the lock, or ``--data`` differs from the
            published suites (nothing was reviewed).
        HubReadError: A call that concerns the whole run failed (the repo info, the list of
            pull requests, the published suites, the republish); what was done before it
            stays done and the next run goes on from there.

    """
    from huggingface_hub import HfApi

    api = HfApi(endpoint=endpoint, token=token)
    submissions = Path(submissions)
    with review_lock(submissions, dry_run), hub_timeout(timeout), \
            tempfile.TemporaryDirectory(prefix="cb-review-") as tmp:
        reviewer = Reviewer(repo_id, data_dir, submissions, suites_repo, api, Path(tmp), log,
                            scorer)
        suites = reviewer.published_suites()
        check_local_suites(data_dir, suites, suites_repo)
        reviews = [handle_request(reviewer, pr.num, suites, merge=merge, dry_run=dry_run,
                                  reproduce=reproduce)
                   for pr in reviewer.open_requests()]
        if dry_run:
            log("dry run: nothing commented, merged, stored or published")
        elif merge:
            _republish_if_needed(reviewer, reviews, Path(site), space, endpoint, token)
    return reviews


def handle_request(reviewer: Reviewer, num: int, suites: dict[str, str], *, merge: bool,
                   dry_run: bool, reproduce: ReproduceStep | None = None) -> Review:
    """Pull request ``num`` from review to merge; a failure stays with it.

    The steps, in order: the review (:meth:`Reviewer.review`: paths and name, sizes, files,
    scores, hashes), with ``reproduce`` the reproduction of an accepted entry
    (:func:`consistency_bench.leaderboard.reproduce.review_step.reproduce_step`), the comment, and
    with
    ``merge`` the store and the merge (:func:`merge_request`). Any error is caught here and
    recorded (verdict ``failed``, the error as ``reason``), so one pull request never stops
    the review or merge of the others.
    """
    log = reviewer.log
    review = Review(num, "", "failed")
    try:
        review = reviewer.review(num, suites, merge)
        log(f"#{num}: {_said(review)}")
        reproduce_step(review, reproduce, log)  # issue 28 item 13: after review, before comment
        if dry_run:
            if review.verdict != "unchanged" and review.posted:
                log("  would comment:\n    " + comment_body(review).replace("\n", "\n    "))
            return review
        post_comment(reviewer, review)
        if merge and review.verdict == "accepted":
            merge_request(reviewer, review)
    except BenchError as exc:  # a Hub error or timeout, a store refused: this request only
        _failed(review, num, str(exc), log)
    except Exception as exc:  # a bug must not stop the others either; one line, no traceback
        _failed(review, num, f"{type(exc).__name__}: {exc}", log)
    review.scored = None  # its per-unit outcomes are large: not kept for the rest of the run
    return review


def _said(review: Review) -> str:
    """What the log says of a review's verdict."""
    return {"accepted": f"accepted {review.slug}", "refused": f"refused: {review.reason}",
            "unchanged": f"unchanged since its review at {review.head[:12]}: skipped",
            "other": f"changes no file under {REQUESTS}/: not a submission, skipped",
            }[review.verdict]


def _failed(review: Review, num: int, reason: str, log: Callable[[str], None]) -> None:
    review.verdict, review.reason = "failed", reason
    kept = (f"; {review.slug} stays stored and the next review merges it"
            if review.stored and not review.merged else "")
    log(f"#{num}: failed: {reason}{kept}")


def post_comment(reviewer: Reviewer, review: Review) -> None:
    """Post the review's comment (with its marker), unless this head was commented on."""
    if review.verdict in ("unchanged", "other") or not review.posted:
        return
    hub_call(reviewer.repo_id, f"commenting on pull request #{review.num}",
             reviewer.api.comment_discussion, reviewer.repo_id, review.num,
             comment_body(review), repo_type="dataset")


def merge_request(reviewer: Reviewer, review: Review) -> None:
    """Store the accepted entry, then merge its pull request (in this order).

    The Hub merges the pull request's head as it is then, with no expected commit: a push
    since the review would be merged unreviewed. So the head is read again just before the
    merge; a pull request pushed to is not merged (verdict ``changed``), and the entry stored
    from its reviewed files is removed.
    """
    log, submissions = reviewer.log, reviewer.submissions
    slug = review.slug
    assert slug is not None  # an accepted review has its name
    if not review.stored:  # replaces: a copy of this request's earlier head, never merged
        stored = submit(review.files[PREDICTIONS], name=slug,
                        meta_path=review.files[META], root=submissions,
                        data_dir=reviewer.data_dir, scorer=reviewer.scorer,
                        replace=review.replaces, arguments=_store_arguments(reviewer, review),
                        run_record=review.files.get(RUN), reproduction=review.reproduction,
                        scored=review.scored)
        review.stored = True
        reviewer.stored.append(stored)
        log(f"stored {submissions / slug}")
        remember_cells(review, stored, submissions, log)
    now = reviewer.head(review.num)
    if now != review.head:
        if stored_by_review(submissions / slug, reviewer.repo_id, review.num):
            shutil.rmtree(submissions / slug)  # stored from the reviewed files: unstore
        review.verdict, review.stored = "changed", False
        log(f"#{review.num}: changed since its review ({review.head[:12]} -> {str(now)[:12]}): "
            f"not merged, {submissions / slug} removed; the next review takes it again")
        return
    hub_call(reviewer.repo_id, f"merging pull request #{review.num}",
             reviewer.api.merge_pull_request, reviewer.repo_id, review.num,
             repo_type="dataset")
    review.merged = True
    log(f"merged #{review.num} ({review.slug})")


def remember_cells(review: Review, stored: Submission, submissions: Path,
                   log: Callable[[str], None]) -> None:
    """Write the stored entry's verified-cells record from the review's scoring.

    Issue 33 item 2: the render after the merge then reads it and does not score the entry
    again (:func:`consistency_bench.leaderboard.cache.verified.remember_entry`).
    """
    from consistency_bench.leaderboard.cache.verified import remember_entry

    if review.scored is not None and review.scored.recomputed is not None:
        remember_entry(submissions, stored, review.scored.recomputed,
                       warn=lambda line: log(f"  {line}"))


def _store_arguments(reviewer: Reviewer, review: Review) -> dict:
    """The stored entry's provenance: the pull request and the head it was reviewed at."""
    return {"name": review.slug, "pull_request": f"{reviewer.repo_id}#{review.num}",
            "head": review.head, "submissions": str(reviewer.submissions),
            "data": str(reviewer.data_dir)}


def _republish_if_needed(reviewer: Reviewer, reviews: list[Review], site: Path,
                         space: str | None, endpoint: str | None, token: str | None) -> None:
    """Render and republish when ``submissions/`` holds entries the dataset repo lacks.

    Not while an entry is stored whose pull request failed before its merge: published, it
    would make the next review refuse that request as taken by itself. The next run merges it
    and republishes.
    """
    log, submissions = reviewer.log, reviewer.submissions
    held = [r for r in reviews if r.verdict == "failed" and r.stored and not r.merged]
    if held:
        log("not republished: " + ", ".join(f"#{r.num} ({r.slug})" for r in held)
            + " stored but not merged; the next review merges and republishes")
        return
    local = {s.slug for s in load_all(submissions)} if submissions.is_dir() else set()
    pending = sorted(local - reviewer.published)
    if pending or (space and space_behind(reviewer.api, reviewer.repo_id, space)):
        _republish(reviewer.repo_id, submissions, site, space, reviewer.data_dir, log,
                   endpoint, token, reviewer.suites_repo)


@contextmanager
def review_lock(submissions: Path, dry_run: bool) -> Iterator[None]:
    """Hold ``submissions/.review.lock`` for the run (not for ``--dry-run``).

    A second ``review`` at once stops before reading anything; a dry run writes nothing.

    Raises:
        ConfigError: Another review holds the lock; nothing was done.

    """
    from filelock import FileLock, Timeout

    from consistency_bench.leaderboard.submissions.storage import check_root

    if dry_run:
        yield
        return
    root = check_root(submissions)
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root / REVIEW_LOCK), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise ConfigError(f"another `consistency-bench review` is running on {root} (it holds "
                          f"{root / REVIEW_LOCK}); nothing was done: run again when it has "
                          "finished") from None
    try:
        yield
    finally:
        lock.release()


def space_behind(api, repo_id: str, space: str) -> bool:
    """Whether the Space lacks the dataset repo's ``leaderboard.json`` (or does not exist).

    Both are sent from the same rendered site, so the same git blob on both ``main`` branches
    means the Space shows what the dataset repo holds. A run interrupted between the dataset
    commit and the Space commit leaves them different; the next review republishes.
    """
    from huggingface_hub.errors import RepositoryNotFoundError

    def blob(repo: str, repo_type: str) -> list[str | None]:
        try:
            found = api.get_paths_info(repo, ["leaderboard.json"], repo_type=repo_type)
        except RepositoryNotFoundError:
            return []
        return [getattr(f, "blob_id", None) for f in found]

    data = hub_call(repo_id, "reading leaderboard.json", blob, repo_id, "dataset")
    page = hub_call(space, "reading the Space's leaderboard.json", blob, space, "space")
    return not data or page != data


def _republish(repo_id, submissions, site, space, data_dir, log, endpoint, token,
               suites_repo=None) -> None:
    """Render the site again and publish the dataset repo (and the Space, linking both repos)."""
    from consistency_bench.leaderboard.publish.commit import execute
    from consistency_bench.leaderboard.publish.plans import plan_leaderboard
    from consistency_bench.leaderboard.space import plan_space, with_predictions

    render_site(submissions, site, data_dir)
    with tempfile.TemporaryDirectory(prefix="cb-details-") as details:
        plan = with_predictions(plan_leaderboard(site, submissions, repo_id), submissions)
        plans = _with_details(plan, site, submissions, data_dir, Path(details), log)
        if space:
            plans.append(plan_space(site, space, repo_id, suites_repo=suites_repo,
                                    endpoint=endpoint))
        for plan in plans:
            execute(plan, endpoint=endpoint, token=token, log=log)


def _with_details(plan, site, submissions, data_dir, out: Path, log) -> list:
    """The republished dataset repo keeps its ``details`` config (leaderboard/details/)."""
    from consistency_bench.leaderboard.details.publish import with_details

    return with_details(plan, site, submissions, data_dir, out, log)
