"""The review loop that one pull request cannot jam (issue 28 items 1, 2, 11, 12).

On the stand-in Hub with several users (``tests.hub_standin.USERS``): the maintainer runs
``review`` (token ``TOKEN``), a researcher opens pull requests (``SUBMITTER_TOKEN``), a third
party comments (``THIRD_PARTY_TOKEN``). ``review`` runs in this process (``run_review``) on one
small built suite (RTE, 496 rows), so every test takes a few seconds.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
import time
from pathlib import Path

import pytest
import yaml

from consistency_bench.bench.errors import ConfigError
from consistency_bench.leaderboard.review.loop import run_review
from tests.helpers import build_suites, write_predictions
from tests.hub_standin import SUBMITTER_TOKEN, THIRD_PARTY_TOKEN, TOKEN, Hub
from tests.test_hub_reads import online  # noqa: F401  (fixture)
from tests.test_hub_submit import META

SUITES = ["rte_semantic"]


@pytest.fixture(scope="module")
def small(corpora, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("loop") / "cb", SUITES)


def gz(built: Path, tmp: Path, choose=None) -> bytes:
    """A prediction file of every row of the suite, gzipped (mtime 0)."""
    kwargs = {"choose": choose} if choose else {}
    path = write_predictions(built, tmp / "p.jsonl", SUITES, **kwargs)
    return gzip.compress(path.read_bytes(), mtime=0)


class Board:
    """The stand-in Hub with the suites and an empty leaderboard; pull requests; reviews."""

    def __init__(self, hub: Hub, built: Path, tmp: Path):
        from huggingface_hub import HfApi

        self.hub, self.built, self.tmp = hub, built, tmp
        hub.add_repo("org/cb", "dataset", {"suites.json": (built / "suites.json").read_bytes()})
        hub.add_repo("org/lb", "dataset", {"README.md": b"# lb\n"})
        self.submitter = HfApi(endpoint=hub.url, token=SUBMITTER_TOKEN)
        self.third = HfApi(endpoint=hub.url, token=THIRD_PARTY_TOKEN)
        self.lines: list[str] = []
        self.good = gz(built, tmp)
        self.meta = yaml.safe_dump(META).encode()

    def request(self, slug: str, predictions: bytes | None = None, meta: bytes | None = None,
                extra: dict | None = None) -> int:
        """Open a pull request adding requests/<slug>/ (as the submitter); its number."""
        from huggingface_hub import CommitOperationAdd

        files = {f"requests/{slug}/meta.yaml": meta or self.meta_of(slug),
                 f"requests/{slug}/predictions.jsonl.gz": predictions or self.good_of(),
                 **(extra or {})}
        self.submitter.create_commit(
            "org/lb", [CommitOperationAdd(p, d) for p, d in files.items()],
            commit_message=f"Submit {slug}", repo_type="dataset", create_pr=True)
        return len(self.hub.pull_requests("org/lb"))

    def meta_of(self, slug: str) -> bytes:
        """``meta.yaml`` with a variant of its own (one model, one entry: issue 27 item 9)."""
        return self.meta + f"variant: request {slug}\n".encode()

    def good_of(self) -> bytes:
        """The good file; from the second request on, a copy that differs in one byte of
        whitespace per request (a byte-identical copy is refused: issue 27 item 9)."""
        n = len(self.hub.pull_requests("org/lb"))
        if n == 0:
            return self.good
        text = gzip.decompress(self.good)
        return gzip.compress(text.replace(b"{", b"{" + b" " * n, 1), mtime=0)

    def push(self, num: int, path: str, data: bytes) -> None:
        """The submitter pushes one more file to pull request ``num``."""
        from huggingface_hub import CommitOperationAdd

        self.submitter.create_commit("org/lb", [CommitOperationAdd(path, data)],
                                     commit_message="push", repo_type="dataset",
                                     revision=f"refs/pr/{num}")

    def head(self, num: int) -> str:
        events = self.hub.pull_requests("org/lb")[num - 1]["events"]
        return [e["data"]["oid"] for e in events if e["type"] == "commit"][-1]

    def review(self, merge: bool = False, **kwargs):
        self.lines.clear()
        return run_review("org/lb", self.built, "org/cb", submissions=self.tmp / "subs",
                          site=self.tmp / "site", merge=merge, endpoint=self.hub.url,
                          token=TOKEN, log=self.lines.append, **kwargs)

    def status(self) -> list[str]:
        return [p["status"] for p in self.hub.pull_requests("org/lb")]

    def on_main(self) -> set[str]:
        return {p.split("/")[1] for p in self.hub.files_at("org/lb")
                if p.startswith("submissions/")}


@pytest.fixture
def board(online, small, tmp_path):  # noqa: F811
    with Hub() as hub:
        yield Board(hub, small, tmp_path)


def verdicts(reviews) -> list[tuple[int, str]]:
    return [(r.num, r.verdict) for r in reviews]


# -- item 1: one name rule; a refused request is commented on and skipped ---------------------

def test_a_name_submit_refuses_is_refused_first_and_never_jams_the_merge(board):
    """``0...`` passed review's pattern and failed ``submit``'s rule inside the merge step,
    which stopped every later merge, on every run."""
    board.request("0...")
    board.request("beta")
    reviews = board.review(merge=True)
    again = board.review(merge=True)
    assert verdicts(reviews) == [(1, "refused"), (2, "accepted")]
    assert "not a valid entry name: it holds '..'" in reviews[0].reason
    [comment] = board.hub.comments("org/lb", 1)
    assert "not a valid entry name" in comment and "review refused" in comment
    assert board.status() == ["open", "merged"]
    assert board.on_main() == {"beta"}
    assert verdicts(again) == [(1, "unchanged")]
    assert not any(p.name.startswith("0") for p in (board.tmp / "subs").iterdir())


@pytest.mark.parametrize("name", ["0...", "a..b", "a.", "a-", "a_", "0", "x" * 64, "x" * 65,
                                  "A", "a b", ".a", "-a", "_a", "a.-.b", "ab.c-d_e"])
def test_one_name_rule_for_submit_and_review(name):
    """A name review's path check accepts is exactly a name ``submit`` stores as itself."""
    from consistency_bench.leaderboard.review.checks import Refused, request_slug
    from consistency_bench.leaderboard.submissions.meta import slugify

    try:
        got = request_slug([f"requests/{name}/meta.yaml",
                            f"requests/{name}/predictions.jsonl.gz"])
    except Refused:
        got = None
    try:
        stored = slugify(name)
    except ConfigError:
        stored = None
    assert got is None or got == stored == name, (name, got, stored)
    if stored == name:
        assert got == name


def test_slugify_never_makes_a_slug_it_refuses():
    from consistency_bench.leaderboard.submissions.meta import slug_problem, slugify

    for name in ["a.€.b", "é..", "Model v1.0", "café", "ÄÖÜ", "x" * 200, "a . b", "a-€-"]:
        try:
            slug = slugify(name)
        except ConfigError:
            continue
        assert slug_problem(slug) is None and slugify(slug) == slug, (name, slug)


# -- item 1: one pull request's failure never stops the others ---------------------------------

def test_a_failing_pull_request_never_stops_the_others(board, monkeypatch):
    """A 503 on #1's merge, a 500 on #2's comment, a bug while commenting #3: #4 is still
    reviewed and merged, and the next run finishes the others."""
    from consistency_bench.leaderboard.review import reviewer

    for slug in ("alpha", "beta", "crash", "delta"):
        board.request(slug)
    board.hub.faults += [("POST", r"/api/datasets/org/lb/discussions/1/merge", 503),
                         ("POST", r"/api/datasets/org/lb/discussions/2/comment", 500)]
    comment = reviewer.results_comment

    def buggy(slug, results, stored):
        if slug == "crash":
            raise KeyError("views")
        return comment(slug, results, stored)

    monkeypatch.setattr(reviewer, "results_comment", buggy)
    reviews = board.review(merge=True)
    assert verdicts(reviews) == [(1, "failed"), (2, "failed"), (3, "failed"), (4, "accepted")]
    assert "HTTP 503 while merging pull request #1" in reviews[0].reason
    assert "HTTP 500 while commenting on pull request #2" in reviews[1].reason
    assert reviews[2].reason == "KeyError: 'views'"
    assert board.status() == ["open", "open", "open", "merged"]
    assert [len(board.hub.comments("org/lb", n)) for n in (1, 2, 3, 4)] == [1, 0, 0, 1]
    assert any("not republished: #1 (alpha) stored but not merged" in x for x in board.lines)
    monkeypatch.setattr(reviewer, "results_comment", comment)
    resumed = board.review(merge=True)  # the next run merges the three and republishes
    assert [(r.num, r.verdict, r.merged) for r in resumed] == [
        (1, "accepted", True), (2, "accepted", True), (3, "accepted", True)]
    assert board.status() == ["merged"] * 4
    assert board.on_main() == {"alpha", "beta", "crash", "delta"}


def test_a_fix_pushed_after_a_failed_merge_replaces_the_stored_copy(board):
    """#1's merge fails after its entry was stored; the submitter then pushes other
    predictions: the stored copy (of this request, never merged) is replaced, not "taken"."""
    board.request("alpha")
    board.hub.faults.append(("POST", r"/api/datasets/org/lb/discussions/1/merge", 503))
    first = board.review(merge=True)
    zeros = gz(board.built, board.tmp, choose=lambda row, names: 0)
    board.push(1, "requests/alpha/predictions.jsonl.gz", zeros)
    second = board.review(merge=True)
    assert verdicts(first) == [(1, "failed")] and verdicts(second) == [(1, "accepted")]
    assert second[0].merged and board.on_main() == {"alpha"}
    stored = (board.tmp / "subs" / "alpha" / "predictions.jsonl.gz").read_bytes()
    assert gzip.decompress(stored) == gzip.decompress(zeros)


# -- item 4: control characters in meta.yaml ---------------------------------------------------

def test_control_characters_in_meta_are_refused_by_review(board):
    base = {k: v for k, v in META.items() if k != "model"}
    for slug, model in (("nul", '"a\\0b"'), ("ansi", '"\\e[31mred\\e[0m"'),
                        ("bidi", '"gpt\\u202e2"')):
        board.request(slug, meta=(yaml.safe_dump(base) + f"model: {model}\n").encode())
    reviews = board.review(merge=True)
    assert verdicts(reviews) == [(1, "refused"), (2, "refused"), (3, "refused")]
    assert "field 'model' value 'a\\x00b': control character U+0000" in reviews[0].reason
    assert "control character U+001B" in reviews[1].reason
    assert "control character U+202E" in reviews[2].reason
    assert board.status() == ["open"] * 3 and board.on_main() == set()
    assert all(len(board.hub.comments("org/lb", n)) == 1 for n in (1, 2, 3))


# -- item 2: markers only from the reviewer, only the one that ends its comment ----------------

def test_a_third_partys_marker_does_not_make_review_skip_a_request(board):
    num = board.request("alpha")
    head = board.head(num)
    fake = f"looks fine\n\n<!-- consistency-bench review refused {head} -->"
    board.third.comment_discussion("org/lb", num, fake, repo_type="dataset")
    board.submitter.comment_discussion("org/lb", num, fake, repo_type="dataset")
    reviews = board.review()
    assert verdicts(reviews) == [(1, "accepted")], board.lines
    authors = [e["author"]["name"] for e in board.hub.pull_requests("org/lb")[0]["events"]
               if e["type"] == "comment"]
    assert authors == ["mallory", "researcher", "standin-user"]
    assert verdicts(board.review()) == [(1, "unchanged")]  # its own marker counts


def test_only_the_marker_that_ends_the_reviewers_own_comment_counts():
    from types import SimpleNamespace as Event

    from consistency_bench.leaderboard.review.checks import last_review

    head = "a" * 40
    marker = f"<!-- consistency-bench review refused {head} -->"
    quoted = Event(type="comment", author="me", content=f"Refused:\n```\n{marker}\n```\nFix it.")
    ends = Event(type="comment", author="me", content=f"Accepted.\n\n{marker}\n")
    other = Event(type="comment", author="you", content=f"x\n\n{marker}")
    hidden = Event(type="comment", author="me", content=f"x\n\n{marker}", hidden=True)
    assert last_review([quoted], "me") is None
    assert last_review([other], "me") is None and last_review([hidden], "me") is None
    assert last_review([quoted, ends, other], "me") == ("refused", head)


# -- item 11: sizes from the listing, before any download --------------------------------------

def test_an_oversized_request_is_refused_before_any_download(board, monkeypatch):
    from consistency_bench.leaderboard.hub import pull_requests as hub_requests

    monkeypatch.setitem(hub_requests.MAX_REQUEST_BYTES, "predictions.jsonl.gz", 1000)
    board.request("big")
    n = len(board.hub.requests)
    reviews = board.review()
    fetched = [p for m, p in board.hub.requests[n:] if "/resolve/" in p and "requests/big" in p]
    assert verdicts(reviews) == [(1, "refused")]
    assert f"{len(board.good):,} bytes, above the 1,000 bytes" in reviews[0].reason
    assert "(not downloaded)" in reviews[0].reason
    assert fetched == []  # neither file was downloaded


def test_an_oversized_run_record_is_refused_before_any_download(board, monkeypatch):
    """``run.json`` (the optional third file, issue 28 item 13) has a cap of its own."""
    from consistency_bench.leaderboard.hub import pull_requests as hub_requests

    monkeypatch.setitem(hub_requests.MAX_REQUEST_BYTES, "run.json", 100)
    board.request("rec", extra={"requests/rec/run.json": b"{" + b" " * 200 + b"}"})
    n = len(board.hub.requests)
    reviews = board.review()
    fetched = [p for m, p in board.hub.requests[n:] if "/resolve/" in p and "requests/rec" in p]
    assert verdicts(reviews) == [(1, "refused")]
    assert "requests/rec/run.json: 202 bytes, above the 100 bytes" in reviews[0].reason
    assert fetched == []  # none of the three files was downloaded


def test_the_documented_cap_is_the_one_review_uses():
    from consistency_bench.leaderboard.hub.pull_requests import MAX_REQUEST_BYTES

    assert MAX_REQUEST_BYTES == {"predictions.jsonl.gz": 32 << 20, "meta.yaml": 256 * 1024,
                                 "run.json": 1 << 20}
    docs = (Path(__file__).resolve().parents[1] / "docs" / "maintain.md").read_text()
    assert "32 MiB" in docs and "MAX_REQUEST_BYTES" in docs
    assert "`run.json` at most 1 MiB" in docs


# -- item 12: pushes, a stalled server, two runs at once ----------------------------------------

def test_a_push_after_the_review_is_reviewed_again_before_any_merge(board):
    num = board.request("alpha")
    first = board.review()  # comment only: accepted at head A
    board.push(num, "README.md", b"# mine now\n")  # then the submitter pushes
    merged = board.review(merge=True)
    assert verdicts(first) == [(1, "accepted")]
    assert verdicts(merged) == [(1, "refused")]
    assert "may only add files under requests/" in merged[0].reason
    assert board.status() == ["open"] and board.on_main() == set()
    assert board.hub.files_at("org/lb")["README.md"] == b"# lb\n"
    assert not (board.tmp / "subs" / "alpha").exists()


def test_a_push_during_the_merge_run_is_not_merged_and_the_others_are(board, monkeypatch):
    from consistency_bench.leaderboard.review import loop as review_module

    board.request("alpha")
    board.request("beta")
    real_submit = review_module.submit

    def store_then_push(*args, **kwargs):  # #1 is stored: the submitter pushes then
        stored = real_submit(*args, **kwargs)
        if kwargs["name"] == "alpha":
            board.push(1, "README.md", b"# mine now\n")
        return stored

    monkeypatch.setattr(review_module, "submit", store_then_push)
    reviews = board.review(merge=True)
    assert verdicts(reviews) == [(1, "changed"), (2, "accepted")]
    assert board.status() == ["open", "merged"]
    assert board.hub.files_at("org/lb")["README.md"] != b"# mine now\n"
    assert board.on_main() == {"beta"} and not (board.tmp / "subs" / "alpha").exists()


def test_a_server_that_stalls_mid_merge_times_out_and_the_next_run_settles_it(board):
    board.request("alpha")
    board.request("beta")
    board.hub.stalls.append(("POST", r"/api/datasets/org/lb/discussions/1/merge", 6.0))
    start = time.monotonic()
    reviews = board.review(merge=True, timeout=1.0)
    took = time.monotonic() - start
    assert verdicts(reviews) == [(1, "failed"), (2, "accepted")]
    assert "did not answer in time while merging pull request #1" in reviews[0].reason
    assert took < 6.0  # without a timeout the run waits for the stalled server
    assert board.status()[1] == "merged"
    assert board.on_main() == set()  # held: alpha is stored, its merge outcome unknown
    deadline = time.monotonic() + 15
    while board.status()[0] != "merged" and time.monotonic() < deadline:
        time.sleep(0.2)  # the stalled merge goes through on the server after all
    settled = board.review(merge=True)
    assert board.status() == ["merged", "merged"] and settled == []
    assert board.on_main() == {"alpha", "beta"}


def test_two_review_runs_at_once_the_second_stops_before_anything(board):
    from consistency_bench.bench.scoring.engine import score_file

    board.request("alpha")
    entered, release = threading.Event(), threading.Event()

    def slow(path, data_dir):
        entered.set()
        assert release.wait(30)
        return score_file(path, data_dir)

    first: dict = {}
    thread = threading.Thread(target=lambda: first.setdefault("reviews", board.review(
        merge=True, scorer=slow)))
    thread.start()
    try:
        assert entered.wait(30)
        n_requests = len(board.hub.requests)
        with pytest.raises(ConfigError, match="another `consistency-bench review` is running"):
            run_review("org/lb", board.built, "org/cb", submissions=board.tmp / "subs",
                       site=board.tmp / "site", merge=True, endpoint=board.hub.url,
                       token=TOKEN, log=lambda line: None)
        assert len(board.hub.requests) == n_requests  # it asked the Hub nothing
    finally:
        release.set()
        thread.join(60)
    assert verdicts(first["reviews"]) == [(1, "accepted")]
    assert board.status() == ["merged"] and len(board.hub.comments("org/lb", 1)) == 1


def test_review_needs_a_token_to_know_its_own_markers(board, monkeypatch):
    board.request("alpha")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    for token in (None, False):
        with pytest.raises(ConfigError, match="review needs a token"):
            run_review("org/lb", board.built, "org/cb", submissions=board.tmp / "subs",
                       endpoint=board.hub.url, token=token, dry_run=True,
                       log=lambda line: None)


def test_stored_entry_records_its_pull_request(board):
    board.request("alpha")
    board.review(merge=True)
    results = json.loads((board.tmp / "subs" / "alpha" / "results.json").read_text())
    args = results["provenance"]["arguments"]
    assert args["pull_request"] == "org/lb#1" and args["head"] == board.head(1)
    assert hashlib.sha256(gzip.decompress(board.good)).hexdigest() == \
        results["predictions"]["sha256"]


def test_the_cli_timeout_default_is_the_reviews():
    from consistency_bench.cli import make_parser
    from consistency_bench.leaderboard.review.loop import DEFAULT_TIMEOUT

    args = make_parser().parse_args(["review", "--hub", "o/lb", "--suites-repo", "o/cb"])
    assert args.timeout == DEFAULT_TIMEOUT
