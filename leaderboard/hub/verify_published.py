"""``verify``: re-score every entry a leaderboard dataset repo publishes, from its predictions.

Reads one commit of the repo (``main`` resolved to its sha first, so a publish in between
cannot mix two states), downloads each ``submissions/<slug>/results.json`` and
``predictions.jsonl.gz``, scores the predictions against the local built suites exactly as
``rescore`` does, and compares suite by suite (score, CI, consistent accuracy, content hash,
version, suites added or removed). Nothing is written to the Hub.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from consistency_bench.bench.errors import BenchError, shorten
from consistency_bench.leaderboard.submissions.meta import PREDICTIONS, RESULTS, Scorer
from consistency_bench.leaderboard.submissions.rescore import Change, diff_results


class HubReadError(BenchError):
    """The Hub refused or failed a read (missing repo, auth, rate limit, ...)."""


@dataclass(frozen=True)
class Finding:
    """The verdict on one published entry.

    Attributes:
        slug: Entry name (``submissions/<slug>/``).
        status: ``ok``, ``differs`` (the stored results are not what the predictions score) or
            ``unverifiable`` (a file is missing or unreadable).
        changes: For ``differs``: stored -> re-scored, per suite and key.
        reason: For ``unverifiable``: why.

    """

    slug: str
    status: str
    changes: list[Change] = field(default_factory=list)
    reason: str = ""


def read_error(exc: Exception, repo_id: str, action: str) -> HubReadError:
    """A one-line error for a failed call on ``repo_id`` (the token never appears).

    Args:
        exc: What the client raised.
        repo_id: The dataset repo.
        action: What was being done, e.g. ``reading the file list``.

    """
    from huggingface_hub.errors import (
        EntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    from consistency_bench.leaderboard.publish.commit import _status

    where = f"dataset repo {repo_id!r}"
    if isinstance(exc, OfflineModeIsEnabled):
        return HubReadError(f"HF_HUB_OFFLINE is set: unset it to use {where}")
    status = _status(exc)
    if isinstance(exc, RepositoryNotFoundError):
        msg = f"{where} not found, or the token cannot see it"
    elif isinstance(exc, (RevisionNotFoundError, EntryNotFoundError)):
        msg = f"not found while {action} of {where}"
    elif status in (401, 403):
        msg = f"not authorised while {action} of {where}: check HF_TOKEN and its scopes"
    elif status == 429:
        msg = f"rate limited by the Hub while {action} of {where}; retry later"
    elif status is not None:
        msg = f"the Hub answered HTTP {status} while {action} of {where}"
    elif "Timeout" in type(exc).__name__:  # httpx's ReadTimeout, ConnectTimeout, ...
        msg = (f"the Hub did not answer in time while {action} of {where} "
               f"({type(exc).__name__}); what it did is not known: the next run checks")
    else:
        msg = f"could not reach the Hub while {action} of {where}: {type(exc).__name__}"
    return HubReadError(msg)


def hub_call(repo_id: str, action: str, fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` with Hub and transport errors turned into :class:`HubReadError`."""
    from consistency_bench.leaderboard.publish.commit import _transport_errors

    try:
        return fn(*args, **kwargs)
    except _transport_errors() as exc:
        raise read_error(exc, repo_id, action) from None


@contextmanager
def hub_timeout(seconds: float) -> Iterator[None]:
    """Every Hub call in this process waits at most ``seconds`` per step while the block runs.

    Each step is a connect, a read or a write of ``huggingface_hub``'s shared client.
    ``huggingface_hub``'s shared HTTP client has no timeout: a server that accepts a request
    and never answers (seen mid-merge) hung ``review`` forever. A call that runs out of time
    raises the transport's timeout error, which :func:`hub_call` reports in one line.
    """
    from huggingface_hub import get_session

    client = get_session()
    before = client.timeout
    client.timeout = seconds
    try:
        yield
    finally:
        client.timeout = before


def published_entries(api, repo_id: str, revision: str) -> dict[str, set[str]]:
    """``submissions/<slug>/<file>`` in the repo at ``revision``: slug -> file names."""
    from huggingface_hub.hf_api import RepoFile

    tree = hub_call(repo_id, "reading the file list", lambda: list(api.list_repo_tree(
        repo_id, repo_type="dataset", revision=revision, recursive=True)))
    out: dict[str, set[str]] = {}
    for item in tree:
        parts = item.path.split("/")
        if isinstance(item, RepoFile) and len(parts) == 3 and parts[0] == "submissions":
            out.setdefault(parts[1], set()).add(parts[2])
    return dict(sorted(out.items()))


def download(api, repo_id: str, path: str, revision: str, dest: Path) -> Path:
    """One file of the repo at ``revision`` into ``dest`` (same relative path)."""
    got = hub_call(repo_id, f"reading {path}", api.hf_hub_download, repo_id, path,
                   repo_type="dataset", revision=revision, local_dir=dest)
    return Path(got)


def verify_entry(slug: str, results_path: Path, predictions_path: Path,
                 data_dir: str | os.PathLike, scorer: Scorer) -> Finding:
    """Re-score one entry's predictions and compare with its stored results."""
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    try:
        stored = load_json_file(results_path)
    except JsonFileError as exc:  # too deep, a key given twice, not JSON, not UTF-8
        return Finding(slug, "unverifiable", reason=f"{RESULTS}: {exc.detail}")
    if not isinstance(stored, dict) or not isinstance(stored.get("suites"), dict):
        return Finding(slug, "unverifiable", reason=f"{RESULTS} has no 'suites' mapping")
    bad = [suite for suite, entry in stored["suites"].items() if not isinstance(entry, dict)]
    if bad:  # compared field by field below (a suite entry of 5 was an AttributeError)
        return Finding(slug, "unverifiable", reason=f"{RESULTS}: suite {shorten(bad[0])} is not "
                       "an object")
    try:
        new = scorer(predictions_path, data_dir)
    except BenchError as exc:
        return Finding(slug, "unverifiable", reason=f"{PREDICTIONS}: {exc}")
    changes = diff_results(slug, stored, new)
    return Finding(slug, "differs" if changes else "ok", changes)


def verify_hub(repo_id: str, data_dir: str | os.PathLike, *, endpoint: str | None = None,
               token: str | None = None, scorer: Scorer | None = None) -> tuple[str, list[Finding]]:
    """Re-score every entry published in ``repo_id``; return the commit read and the findings.

    Raises:
        HubReadError: The repo cannot be read.

    """
    from huggingface_hub import HfApi

    from consistency_bench.bench.scoring.engine import score_file

    scorer = scorer or score_file
    api = HfApi(endpoint=endpoint, token=token)
    sha = hub_call(repo_id, "reading the repo info", api.dataset_info, repo_id).sha
    findings = []
    with tempfile.TemporaryDirectory(prefix="cb-verify-") as tmp:
        for slug, names in published_entries(api, repo_id, sha).items():
            missing = sorted({RESULTS, PREDICTIONS} - names)
            if missing:
                findings.append(Finding(slug, "unverifiable",
                                        reason=f"not published: {', '.join(missing)}"))
                continue
            res = download(api, repo_id, f"submissions/{slug}/{RESULTS}", sha, Path(tmp))
            pred = download(api, repo_id, f"submissions/{slug}/{PREDICTIONS}", sha, Path(tmp))
            findings.append(verify_entry(slug, res, pred, data_dir, scorer))
    return sha, findings
