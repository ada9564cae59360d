"""One review run over the open pull requests (:mod:`leaderboard.review`): :class:`Reviewer`.

Reads the Hub (repo info, the published suites, the pull requests and their files), checks each
request with :mod:`leaderboard.review_checks` and scores it as ``submit`` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from bench.errors import BenchError
from leaderboard.hub_requests import REQUESTS, validate_files
from leaderboard.hub_verify import download, hub_call, published_entries
from leaderboard.intake.duplicates import check_request
from leaderboard.review_checks import (
    REQUEST_FILES,
    Refused,
    Review,
    changed_paths,
    check_hashes,
    head_of,
    last_review,
    request_slug,
    results_comment,
)
from leaderboard.submissions import (
    META,
    PREDICTIONS,
    Scorer,
    load_all,
    read_stored_predictions,
)


class Reviewer:
    """One review run over a leaderboard's open pull requests.

    Args:
        repo_id: The leaderboard's dataset repo.
        data_dir: The built suites (must be the published ones).
        submissions: The maintainer's ``submissions/`` folder.
        suites_repo: The published suites' dataset repo (``suites.json`` there).
        api: A ``huggingface_hub.HfApi``.
        workdir: Where downloads go.
        log: Progress lines.
        scorer: The scorer (``bench.scoring.score_file``).

    """

    def __init__(self, repo_id: str, data_dir: str | os.PathLike,
                 submissions: str | os.PathLike, suites_repo: str, api, workdir: Path,
                 log: Callable[[str], None] = print, scorer: Scorer | None = None):
        self.repo_id = repo_id
        self.data_dir = data_dir
        self.submissions = Path(submissions)
        self.suites_repo = suites_repo
        self.api = api
        self.workdir = workdir
        self.log = log
        self.scorer = scorer
        self.main = hub_call(repo_id, "reading the repo info", api.dataset_info, repo_id).sha
        self.published = set(published_entries(api, repo_id, self.main))
        self.stored = load_all(self.submissions) if self.submissions.is_dir() else []
        self.taken = {s.slug for s in self.stored} | self.published

    def published_suites(self) -> dict[str, str]:
        """``suite -> sha256`` from the suites repo's ``suites.json`` (at main)."""
        path = hub_call(self.suites_repo, "reading suites.json", self.api.hf_hub_download,
                        self.suites_repo, "suites.json", repo_type="dataset",
                        local_dir=self.workdir / "suites")
        from bench.manifest import read_manifest

        # bounded depth and checked fields, as every suites.json (a deep one: RecursionError)
        suites = read_manifest(Path(path).parent, required=("sha256",))
        return {k: v["sha256"] for k, v in suites.items()}

    def open_requests(self) -> list:
        """Open pull requests, oldest first."""
        found = hub_call(self.repo_id, "listing the pull requests", lambda: list(
            self.api.get_repo_discussions(self.repo_id, repo_type="dataset",
                                          discussion_type="pull_request",
                                          discussion_status="open")))
        return sorted((d for d in found if d.status == "open"), key=lambda d: d.num)

    def review(self, num: int, published: dict[str, str], merge: bool) -> Review:
        """Review pull request ``num``; Hub errors propagate, a bad request is refused."""
        details = hub_call(self.repo_id, f"reading pull request #{num}",
                           self.api.get_discussion_details, self.repo_id, num,
                           repo_type="dataset")
        head = head_of(details.events) or ""
        before = last_review(details.events)
        if before == ("refused", head) or (before == ("accepted", head) and not merge):
            return Review(num, head, "unchanged", posted=False)
        try:
            paths = changed_paths(details.diff or "")
            if paths and not any(p.startswith(f"{REQUESTS}/") for p in paths):
                return Review(num, head, "other", posted=False)  # not a submission: no comment
            slug = request_slug(paths)
        except Refused as exc:
            return self._refused(num, head, None, str(exc), before)
        try:
            return self._check(num, head, slug, published, before)
        except Refused as exc:
            return self._refused(num, head, slug, str(exc), before)

    def _refused(self, num, head, slug, reason, before) -> Review:
        quoted = reason.replace("`", "'")  # the reason may quote the submitter's text
        comment = (f"Refused by `consistency-bench review`:\n\n```\n{quoted}\n```\n\nFix the "
                   "request and push to this pull request, or open a new one.")
        return Review(num, head, "refused", slug, reason, comment,
                      posted=before != ("refused", head))

    def _check(self, num, head, slug, published, before) -> Review:
        folder = self.workdir / f"pr-{num}"
        files = {name: download(self.api, self.repo_id, f"{REQUESTS}/{slug}/{name}", head,
                                folder) for name in REQUEST_FILES}
        try:
            meta, jsonl, results = validate_files(files[PREDICTIONS], files[META],
                                                  self.data_dir, self.scorer)
        except BenchError as exc:
            raise Refused(str(exc).replace(str(folder) + os.sep, "")) from None
        except Exception as exc:
            raise Refused(f"could not read the request ({type(exc).__name__}: "
                          f"{str(exc).replace(str(folder) + os.sep, '')})") from None
        stored = False
        if slug in self.taken:
            local = self.submissions / slug
            same = (slug not in self.published and (local / PREDICTIONS).is_file()
                    and any(s.slug == slug and read_stored_predictions(s) == jsonl
                            for s in self.stored))
            if not same:
                raise Refused(f"the name {slug!r} is taken; choose another --name")
            stored = True  # an interrupted review stored it already: merge and publish
        check_request(slug, jsonl, meta, self.stored, stored, Refused)  # one model, one entry
        check_hashes(results, published, self.suites_repo)
        self.taken.add(slug)
        comment = results_comment(slug, results, self.stored)
        return Review(num, head, "accepted", slug, "", comment, results, files,
                      posted=before != ("accepted", head), stored=stored)

