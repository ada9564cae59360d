"""One review run over the open pull requests (:mod:`consistency_bench.leaderboard.review.loop`): :class:`Reviewer`.

Reads the Hub (repo info, the account that reviews, the published suites, the pull requests,
their file listings and files), checks each request with
:mod:`consistency_bench.leaderboard.review.checks` and
scores it as ``submit`` does. :meth:`Reviewer.review` runs the steps of one request in order,
each a method of its own, so that a step can be added between two (a duplicate check, a
reproduction) without touching the others:

1. :meth:`~Reviewer.read` the pull request: its head and this account's last marker;
2. the paths and the name (:func:`~consistency_bench.leaderboard.review.checks.request_slug`, the
   one name rule);
3. :meth:`~Reviewer.check_sizes` from the file listing, before any download (each file of the
   request, :func:`~consistency_bench.leaderboard.review.checks.request_files`);
4. :meth:`~Reviewer.download` and :meth:`~Reviewer.validate` (``submit``'s checks and scores,
   and that a ``run.json``, if the request has one, describes its predictions);
5. :meth:`~Reviewer.check_name_free`; the suites' hashes
   (:func:`~consistency_bench.leaderboard.review.checks.check_hashes`); the comment.
"""  # noqa: E501

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from consistency_bench.bench.errors import BenchError, ConfigError
from consistency_bench.bench.scoring.engine import Recomputed
from consistency_bench.leaderboard.hub.pull_requests import (
    MAX_REQUEST_BYTES,
    REQUESTS,
    validate_files,
)
from consistency_bench.leaderboard.hub.verify_published import download, hub_call, published_entries
from consistency_bench.leaderboard.intake.duplicates import check_request
from consistency_bench.leaderboard.review.checks import (
    REQUEST_FILES,
    Refused,
    Review,
    changed_paths,
    check_hashes,
    head_of,
    last_review,
    request_files,
    request_slug,
    results_comment,
)
from consistency_bench.leaderboard.submissions.meta import META, PREDICTIONS, Scorer
from consistency_bench.leaderboard.submissions.reader import load_all, read_stored_predictions
from consistency_bench.leaderboard.submissions.storage import ScoredFile


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
        scorer: The scorer (``consistency_bench.bench.scoring.engine.score_file``).

    Attributes:
        me: The account the token belongs to (``whoami``): only its own comments' markers
            are read.

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
        self.me = self._whoami()
        self.main = hub_call(repo_id, "reading the repo info", api.dataset_info, repo_id).sha
        self.published = set(published_entries(api, repo_id, self.main))
        self.stored = load_all(self.submissions) if self.submissions.is_dir() else []
        self.taken = {s.slug for s in self.stored} | self.published
        self.claimed: dict[str, int] = {}  # slug -> the pull request of this run accepted on it

    def _whoami(self) -> str:
        """The token's account: review trusts the markers of its own comments only."""
        from huggingface_hub import get_token

        token = self.api.token if self.api.token is not None else get_token()
        found = None
        if token:
            found = hub_call(self.repo_id, "reading the token's account (whoami)",
                             self.api.whoami)
        name = found.get("name") if isinstance(found, dict) else None
        if not isinstance(name, str) or not name:
            raise ConfigError("review needs a token (HF_TOKEN): the review markers it trusts "
                              "are those of its own account's comments; nothing was reviewed")
        return name

    def published_suites(self) -> dict[str, str]:
        """``suite -> sha256`` from the suites repo's ``suites.json`` (at main)."""
        path = hub_call(self.suites_repo, "reading suites.json", self.api.hf_hub_download,
                        self.suites_repo, "suites.json", repo_type="dataset",
                        local_dir=self.workdir / "suites")
        from consistency_bench.bench.io.manifest import read_manifest

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

    def read(self, num: int):
        """Pull request ``num``'s details (events, diff), read from the Hub."""
        return hub_call(self.repo_id, f"reading pull request #{num}",
                        self.api.get_discussion_details, self.repo_id, num, repo_type="dataset")

    def head(self, num: int) -> str | None:
        """The pull request's head commit now."""
        return head_of(self.read(num).events)

    def review(self, num: int, published: dict[str, str], merge: bool) -> Review:
        """Review pull request ``num``; Hub errors propagate, a bad request is refused."""
        details = self.read(num)
        head = head_of(details.events) or ""
        before = last_review(details.events, self.me)
        if before == ("refused", head) or (before == ("accepted", head) and not merge):
            return Review(num, head, "unchanged", posted=False)
        try:
            paths = changed_paths(details.diff or "")
            if paths and not any(p.startswith(f"{REQUESTS}/") for p in paths):
                return Review(num, head, "other", posted=False)  # not a submission: no comment
            slug = request_slug(paths)  # the name rule first, before anything is read
        except Refused as exc:
            return self._refused(num, head, None, str(exc), before)
        try:
            names = request_files(slug, paths)
            self.check_sizes(slug, head, names)
            files = self.download(num, slug, head, names)
            meta, jsonl, scored = self.validate(files, num)
            results = dict(scored.results)
            stored = self.check_name_free(slug, jsonl, num)
            # one model, one entry (issue 27 item 9); a stored earlier state of this very
            # request (stored is True or None) is not compared with itself
            check_request(slug, jsonl, meta, self.stored, stored is not False, Refused)
            check_hashes(results, published, self.suites_repo)
        except Refused as exc:
            return self._refused(num, head, slug, str(exc), before)
        self.claimed[slug] = num
        comment = results_comment(slug, results, self.stored)
        return Review(num, head, "accepted", slug, "", comment, results, files,
                      posted=before != ("accepted", head), stored=stored is True,
                      replaces=stored is None, scored=scored)

    def _refused(self, num, head, slug, reason, before) -> Review:
        quoted = reason.replace("`", "'")  # the reason may quote the submitter's text
        comment = (f"Refused by `consistency-bench review`:\n\n```\n{quoted}\n```\n\nFix the "
                   "request and push to this pull request, or open a new one.")
        return Review(num, head, "refused", slug, reason, comment,
                      posted=before != ("refused", head))

    def check_sizes(self, slug: str, head: str, names: tuple[str, ...] = REQUEST_FILES) -> None:
        """Each file's size from the listing at ``head``, before anything is downloaded.

        Raises:
            Refused: A file larger than its cap
            (:data:`consistency_bench.leaderboard.hub.pull_requests.
                MAX_REQUEST_BYTES`), or missing from the listing.

        """
        paths = [f"{REQUESTS}/{slug}/{name}" for name in names]
        listed = hub_call(self.repo_id, "reading the file sizes", self.api.get_paths_info,
                          self.repo_id, paths, revision=head, repo_type="dataset")
        sizes = {f.path: getattr(f, "size", None) for f in listed}
        for name, path in zip(names, paths, strict=True):
            size = sizes.get(path)
            if not isinstance(size, int):
                raise Refused(f"{path}: not a file at the pull request's head {head[:12]}")
            if size > MAX_REQUEST_BYTES[name]:
                raise Refused(f"{path}: {size:,} bytes, above the {MAX_REQUEST_BYTES[name]:,} "
                              f"bytes a request's {name} may have (not downloaded); "
                              "docs/submit.md says how large an entry may be")

    def download(self, num: int, slug: str, head: str,
                 names: tuple[str, ...] = REQUEST_FILES) -> dict[str, Path]:
        """The request's files (``names``) at its head commit."""
        folder = self.workdir / f"pr-{num}"
        return {name: download(self.api, self.repo_id, f"{REQUESTS}/{slug}/{name}", head,
                               folder) for name in names}

    def validate(self, files: dict[str, Path], num: int) -> tuple[dict, bytes, ScoredFile]:
        """``submit``'s checks of the files; the metadata, the predictions (JSONL), the scores.

        A ``run.json``, when the request has one, must describe the request's predictions (as
        ``submit`` checks it:
        :func:`consistency_bench.leaderboard.reproduce.run_records.entry_record`). The
        file is scored here once (issue 33 item 2): with the default scorer, the same pass
        gives the entry's verified cells
        (:func:`consistency_bench.bench.scoring.engine.score_file_recomputed`), which
        ``--merge`` stores with the results.

        Raises:
            Refused: Whatever the checks raise, with the download folder left out.

        """
        from consistency_bench.leaderboard.reproduce.run_records import RUN, entry_record

        folder = str(self.workdir / f"pr-{num}") + os.sep
        cells: list[Recomputed] = []
        try:
            meta, jsonl, results = validate_files(files[PREDICTIONS], files[META],
                                                  self.data_dir, self.scorer or
                                                  _keeping_cells(cells))
            if RUN in files:  # a run record must describe the request's predictions
                entry_record(files[PREDICTIONS], jsonl, files[RUN])
        except BenchError as exc:
            raise Refused(str(exc).replace(folder, "")) from None
        except Exception as exc:
            raise Refused(f"could not read the request ({type(exc).__name__}: "
                          f"{str(exc).replace(folder, '')})") from None
        return meta, jsonl, ScoredFile(hashlib.sha256(jsonl).hexdigest(), results,
                                       cells[0] if cells else None)

    def check_name_free(self, slug: str, jsonl: bytes, num: int) -> bool | None:
        """Whether the entry is stored already (an interrupted merge); refused when taken.

        ``True``: stored with these predictions (merge it). ``None``: stored, unpublished,
        from an earlier head of this same pull request (its merge failed, then the submitter
        pushed): the store replaces it, or the request would be refused as taken by itself
        for ever. ``False``: free.

        Raises:
            Refused: The name is published, stored with other predictions, or taken by an
                earlier request of this run.

        """
        if slug in self.claimed:
            raise Refused(f"the name {slug!r} is taken (by pull request #{self.claimed[slug]}); "
                          "choose another --name")
        if slug not in self.taken:
            return False
        local = self.submissions / slug
        same = (slug not in self.published and (local / PREDICTIONS).is_file()
                and any(s.slug == slug and read_stored_predictions(s) == jsonl
                        for s in self.stored))
        if not same:
            if slug not in self.published and stored_by_review(local, self.repo_id, num):
                return None
            raise Refused(f"the name {slug!r} is taken; choose another --name")
        return True  # an interrupted review stored it already: merge and publish


def _keeping_cells(cells: list[Recomputed]) -> Scorer:
    """The default scorer (``score_file``), keeping the verified cells of its pass in ``cells``."""
    from consistency_bench.bench.scoring.engine import score_file_recomputed

    def scorer(path: Path, data_dir: str | os.PathLike) -> dict:
        results, recomputed = score_file_recomputed(path, os.fspath(data_dir))
        cells.append(recomputed)
        return results

    return scorer


def stored_by_review(entry: Path, repo_id: str, num: int) -> bool:
    """Whether ``entry`` was stored by a review of that pull request (never remove another)."""
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file
    from consistency_bench.leaderboard.submissions.meta import RESULTS

    try:
        record: Any = load_json_file(entry / RESULTS)  # any JSON value: checked by the lookups
        found = record["provenance"]["arguments"]["pull_request"]
    except (JsonFileError, KeyError, TypeError):
        return False
    return found == f"{repo_id}#{num}"
