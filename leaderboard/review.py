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
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import BenchError
from leaderboard.hub_requests import REQUESTS, validate_files
from leaderboard.hub_verify import download, hub_call, published_entries
from leaderboard.submissions import (
    META,
    PREDICTIONS,
    SLUG_RE,
    Scorer,
    load_all,
    read_stored_predictions,
    submit,
)

MARKER = "<!-- consistency-bench review {verdict} {head} -->"
MARKER_RE = re.compile(r"<!-- consistency-bench review (accepted|refused) ([0-9a-f]{40}) -->")
REQUEST_FILES = (META, PREDICTIONS)


class Refused(BenchError):
    """A request that cannot be accepted; the message is the reason commented on it."""


@dataclass
class Review:
    """What the review found for one pull request.

    Attributes:
        num: Pull request number.
        head: Commit the files were read at.
        verdict: ``accepted``, ``refused``, ``unchanged`` (reviewed before at this head
            and nothing left to do) or ``other`` (changes no file under ``requests/``: not a
            submission, e.g. a maintainer's edit of the card; never commented or merged).
        slug: Entry name, when the paths gave one.
        reason: Why it was refused.
        comment: The comment (posted unless ``unchanged`` or reviewed before).
        results: The scores computed here (accepted only).
        files: Local copies of ``meta.yaml`` and ``predictions.jsonl.gz`` (accepted only).
        posted: Whether this run comments (False when the last marker names this head).
        stored: Whether ``submissions/<slug>`` already holds these predictions.

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
        if (len(parts) != 3 or not SLUG_RE.fullmatch(parts[1]) or parts[1] in (".", "..")
                or "\\" in p or parts[2] not in REQUEST_FILES):
            raise Refused(f"{p!r} is not {REQUESTS}/<name>/meta.yaml or "
                          f"{REQUESTS}/<name>/{PREDICTIONS} with a name of a-z 0-9 . _ -")
        slugs.add(parts[1])
    if len(slugs) != 1:
        raise Refused(f"one request per pull request; this one adds {sorted(slugs)}")
    slug = slugs.pop()
    missing = [f for f in REQUEST_FILES if f"{REQUESTS}/{slug}/{f}" not in paths]
    if missing:
        raise Refused(f"{REQUESTS}/{slug}/ lacks {missing}")
    return slug


def last_review(events) -> tuple[str, str] | None:
    """(verdict, head) of the last review marker among a discussion's comment events."""
    found = None
    for event in events:
        m = MARKER_RE.search(getattr(event, "content", "") or "")
        if event.type == "comment" and m:
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
    from bench.errors import ConfigError
    from bench.manifest import read_manifest

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
    from leaderboard.ranking import Entry, rank
    from leaderboard.render_format import md_text, pct

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
            _meta, jsonl, results = validate_files(files[PREDICTIONS], files[META],
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
        check_hashes(results, published, self.suites_repo)
        self.taken.add(slug)
        comment = results_comment(slug, results, self.stored)
        return Review(num, head, "accepted", slug, "", comment, results, files,
                      posted=before != ("accepted", head), stored=stored)


def comment_body(review: Review) -> str:
    """The comment with its marker."""
    return review.comment + "\n\n" + MARKER.format(verdict=review.verdict, head=review.head)


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
    plans = [with_predictions(plan_leaderboard(site, submissions, repo_id), submissions)]
    if space:
        plans.append(plan_space(site, space, repo_id, suites_repo=suites_repo,
                                endpoint=endpoint))
    for plan in plans:
        execute(plan, endpoint=endpoint, token=token, log=log)
