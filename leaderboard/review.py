"""``review``: the maintainer's side of submissions by pull request.

For each open pull request on the leaderboard's dataset repo (oldest first):

1. Its changed files (the pull request's git diff) must be exactly
   ``requests/<slug>/predictions.jsonl.gz`` and ``requests/<slug>/meta.yaml``, one valid slug,
   not already taken (in ``submissions/``, on the Hub, or by an earlier request of this run).
2. Both files are downloaded at the pull request's head commit and checked by the same code as
   ``submit`` (:func:`leaderboard.hub_requests.validate_files`): metadata, prediction file,
   coverage. The scores are computed here, never taken from the submitter.
3. Every scored suite's ``content_hash`` must equal the ``sha256`` of that suite in the
   published suites repo's ``suites.json`` (the suites ``load_dataset`` gives).
4. One comment: the per-view results and flags (the entry ranked with the stored ones), or the
   reason for the refusal, ending with a marker ``<!-- consistency-bench review VERDICT SHA -->``.
   A pull request whose last marker names its current head is not commented again.

With ``merge``, each accepted request is stored in ``submissions/<slug>/`` (the atomic
``submit``), then its pull request is merged, and at the end the site is rendered again and the
dataset repo (and the Space) republished. A refused request stays open for a fix. The order
makes an interrupted run safe to repeat: a Hub error stops the run before anything else is
sent; the next run finds the entry stored with the same predictions, merges, and republishes
whatever ``submissions/`` holds that the dataset repo does not. A bad request never stops the
review of the others.

The checks of a request live in :mod:`leaderboard.review_checks` (paths, slug, markers,
hashes, comments) and the per-request review in :mod:`leaderboard.reviewer`
(:class:`~leaderboard.reviewer.Reviewer`); this module runs them, comments, merges and
republishes. Their names are importable from here too.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.errors import BenchError
from leaderboard.hub_requests import REQUESTS
from leaderboard.hub_verify import hub_call
from leaderboard.review_checks import (
    MARKER,
    MARKER_RE,
    REQUEST_FILES,
    Refused,
    Review,
    changed_paths,
    check_hashes,
    check_local_suites,
    comment_body,
    head_of,
    last_review,
    request_slug,
    results_comment,
)
from leaderboard.reviewer import Reviewer
from leaderboard.submissions import (
    META,
    PREDICTIONS,
    Scorer,
    load_all,
    submit,
)

__all__ = [
    "MARKER",
    "MARKER_RE",
    "REQUEST_FILES",
    "Refused",
    "Review",
    "Reviewer",
    "changed_paths",
    "check_hashes",
    "check_local_suites",
    "comment_body",
    "head_of",
    "last_review",
    "render_site",
    "request_slug",
    "results_comment",
    "run_review",
    "space_behind",
]


def render_site(submissions: Path, site: Path, data_dir: str | os.PathLike) -> None:
    """Render ``site`` from ``submissions`` as ``consistency-bench leaderboard --data`` does.

    The command's own function runs (:func:`leaderboard.build_site.build_site`), so the site is
    exactly what a maintainer's ``leaderboard`` run writes: same checks, same record of the
    entries it shows.

    Raises:
        BenchError: Rendering failed; the message says why.

    """
    from leaderboard.build_site import build_site

    try:
        build_site(submissions, site, data_dir)
    except BenchError as exc:
        raise BenchError(f"rendering {site} failed: {exc}") from None


def run_review(repo_id: str, data_dir: str | os.PathLike, suites_repo: str, *,
               submissions: str | os.PathLike = "submissions",
               site: str | os.PathLike = "leaderboard/site", space: str | None = None,
               merge: bool = False, dry_run: bool = False, endpoint: str | None = None,
               token: str | None = None, log: Callable[[str], None] = print,
               scorer: Scorer | None = None) -> list[Review]:
    """Review every open request; comment; with ``merge``, store, merge and republish.

    Raises:
        HubReadError: A Hub call failed; what was done before it stays done and the next run
            goes on from there.

    """
    from huggingface_hub import HfApi

    api = HfApi(endpoint=endpoint, token=token)
    submissions = Path(submissions)
    with tempfile.TemporaryDirectory(prefix="cb-review-") as tmp:
        reviewer = Reviewer(repo_id, data_dir, submissions, suites_repo, api, Path(tmp), log,
                            scorer)
        suites = reviewer.published_suites()
        check_local_suites(data_dir, suites, suites_repo)
        reviews = []
        for pr in reviewer.open_requests():
            r = reviewer.review(pr.num, suites, merge)
            reviews.append(r)
            what = {"accepted": f"accepted {r.slug}", "refused": f"refused: {r.reason}",
                    "unchanged": f"unchanged since its review at {r.head[:12]}: skipped",
                    "other": f"changes no file under {REQUESTS}/: not a submission, skipped"}
            log(f"#{r.num}: {what[r.verdict]}")
            if dry_run and r.verdict != "unchanged" and r.posted:
                log("  would comment:\n    " + comment_body(r).replace("\n", "\n    "))
        if dry_run:
            log("dry run: nothing commented, merged, stored or published")
            return reviews
        for r in reviews:
            if r.verdict != "unchanged" and r.posted:
                hub_call(repo_id, f"commenting on pull request #{r.num}", api.comment_discussion,
                         repo_id, r.num, comment_body(r), repo_type="dataset")
        if merge:
            _merge(api, repo_id, reviews, submissions, data_dir, scorer, log)
            local = {s.slug for s in load_all(submissions)} if submissions.is_dir() else set()
            pending = sorted(local - reviewer.published)
            if pending or (space and space_behind(api, repo_id, space)):
                _republish(repo_id, submissions, Path(site), space, data_dir, log, endpoint,
                           token, suites_repo)
    return reviews


def _merge(api, repo_id, reviews, submissions, data_dir, scorer, log) -> None:
    """Store each accepted entry, then merge its pull request (in this order)."""
    for r in reviews:
        if r.verdict != "accepted":
            continue
        if not r.stored:
            submit(r.files[PREDICTIONS], name=r.slug, meta_path=r.files[META],
                   root=submissions, data_dir=data_dir, scorer=scorer)
            log(f"stored {submissions / r.slug}")
        # the Hub merges the pull request's head as it is then, with no expected commit: a push
        # since the review would be merged unreviewed. Read the head again just before.
        details = hub_call(repo_id, f"reading pull request #{r.num}",
                           api.get_discussion_details, repo_id, r.num, repo_type="dataset")
        now = head_of(details.events)
        if now != r.head:
            shutil.rmtree(submissions / r.slug)  # stored from the reviewed files: unstore
            log(f"#{r.num}: changed since its review ({r.head[:12]} -> {str(now)[:12]}): "
                f"not merged, {submissions / r.slug} removed; the next review takes it again")
            continue
        hub_call(repo_id, f"merging pull request #{r.num}", api.merge_pull_request, repo_id,
                 r.num, repo_type="dataset")
        log(f"merged #{r.num} ({r.slug})")


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
    from leaderboard.publish import execute, plan_leaderboard
    from leaderboard.space import plan_space, with_predictions

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
    from leaderboard.details.publish import with_details

    return with_details(plan, site, submissions, data_dir, out, log)
