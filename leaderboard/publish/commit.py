"""A publish plan and the one commit that sends it (:mod:`consistency_bench.leaderboard.publish`).

:class:`Plan` (the repo and every file), the repo id check, and :func:`execute`: one
``create_repo(exist_ok=True)`` and one ``create_commit``, with each Hub error explained in a
:class:`PublishError` (the token never appears in it).

From ``consistency_bench.leaderboard.publish``, a re-export module that issue 29 deleted:

Publish the leaderboard and the built suites to the Hugging Face Hub.

One ``create_repo(exist_ok=True)`` and one ``create_commit`` per publish, so a failure leaves
the repo at its previous commit (the Hub applies a commit as a whole). The token comes from
``HF_TOKEN`` or the stored login (``huggingface_hub`` resolves it); it is never printed.
``dry_run`` lists every operation and sends nothing.

The parts live in modules of one job each: :mod:`~consistency_bench.leaderboard.publish.commit`
(:class:`Plan`,
:func:`execute`, the Hub errors), :mod:`~consistency_bench.leaderboard.publish.plans` (the
leaderboard and
suites publishes) and :mod:`~consistency_bench.leaderboard.publish.model_results` (a model's
``.eval_results`` and its
card).

"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import BenchError, ConfigError


class PublishError(BenchError):
    """The Hub refused or failed a publish (auth, missing repo, rate limit, ...)."""


@dataclass(frozen=True)
class Plan:
    """What a publish will send: the repo and every file (path in repo -> local path or bytes).

    Attributes:
        repo_id: ``ORG/NAME``.
        repo_type: ``dataset`` or ``model``.
        files: Path in the repo -> a local file, or generated content (bytes).
        message: Commit message (title of the pull request with ``create_pr``).
        create_pr: Open a pull request instead of committing to ``main``.
        create_repo: Create the repo first when it does not exist (never for someone's model).
        space_sdk: SDK of a Space created by this plan (``static`` for the leaderboard page).

    """

    repo_id: str
    repo_type: str
    files: dict[str, Path | bytes]
    message: str
    create_pr: bool = False
    create_repo: bool = True
    space_sdk: str | None = None

    def describe(self) -> list[str]:
        """One line per operation, for ``--dry-run``."""
        lines = []
        if self.create_repo:
            sdk = f", sdk {self.space_sdk}" if self.space_sdk else ""
            lines.append(f"create_repo {self.repo_type} {self.repo_id} (exist_ok{sdk})")
        how = "pull request" if self.create_pr else "commit"
        lines.append(f"create_commit {self.repo_type} {self.repo_id} ({how}): {self.message!r}, "
                     f"{len(self.files)} files")
        for path, src in sorted(self.files.items()):
            if isinstance(src, bytes):
                lines.append(f"  add {path}  ({len(src)} bytes, generated)")
            else:
                lines.append(f"  add {path}  ({src.stat().st_size} bytes from {src})")
        return lines


def check_repo_id(repo_id: str, option: str = "--repo") -> str:
    """Validate ``ORG/NAME``."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*", repo_id or ""):
        raise ConfigError(f"{option} {repo_id!r}: expected ORG/NAME (letters, digits, . _ -)")
    return repo_id


def _status(exc: BaseException) -> int | None:
    """The HTTP status behind ``exc`` or its causes (``hf_xet`` puts it in the message)."""
    from huggingface_hub.errors import HfHubHTTPError

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, HfHubHTTPError) and seen.response is not None:
            return seen.response.status_code
        m = re.search(r"HTTP status (?:client|server) error \((\d{3})", str(seen))
        if m:
            return int(m.group(1))
        seen = seen.__cause__ or seen.__context__
    return None


def _explain(exc: Exception, plan: Plan) -> PublishError:
    """A clear message for a Hub error (the token never appears in it)."""
    from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError

    if isinstance(exc, OfflineModeIsEnabled):
        return PublishError("HF_HUB_OFFLINE is set: unset it to publish; nothing was committed")
    status = _status(exc)
    where = f"{plan.repo_type} repo {plan.repo_id!r}"
    xet = " (the Hub refused the Xet storage token)" if "xet-write-token" in str(exc) else ""
    upload = re.match(r"Error while uploading '(.+)' to the Hub", str(exc))
    if upload:  # an LFS object transfer (storage URL, multipart completion or verify) failed
        code = f"HTTP {status}" if status is not None else type(exc.__cause__).__name__
        msg = (f"the Hub's storage refused the upload of {upload.group(1)!r} to {where} "
               f"({code}); retry, or check the token's write access")
    elif isinstance(exc, RepositoryNotFoundError) or status == 404:
        msg = f"{where} not found, or the token cannot see it"
    elif status in (401, 403):
        msg = (f"not authorised to write to {where}{xet}: set HF_TOKEN to a token with write "
               "access or run `hf auth login`")
    elif status == 429:
        msg = f"rate limited by the Hub while publishing to {where}; retry later"
    elif status is not None:
        msg = f"the Hub answered HTTP {status} while publishing to {where}{xet}"
    elif isinstance(exc, ValueError):
        msg = f"the Hub refused the upload to {where}: {str(exc).splitlines()[0]}"
    else:
        msg = f"could not reach the Hub while publishing to {where}: {type(exc).__name__}"
    return PublishError(msg + "; nothing was committed")


def _transport_errors() -> tuple[type[Exception], ...]:
    """Exceptions ``huggingface_hub`` lets through on network and HTTP failures."""
    from huggingface_hub.errors import HfHubHTTPError

    errors: list[type[Exception]] = [HfHubHTTPError, OSError, ValueError, RuntimeError]
    for module in ("httpx2", "httpx", "requests"):  # the transport of the installed version
        try:
            errors.append(importlib.import_module(module).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def unchanged_files(ops) -> list[str]:
    """Paths the Hub already holds with the same content (the client did not send them)."""
    out = []
    for op in ops:
        remote = getattr(op, "_remote_oid", None)
        if remote is not None and remote == getattr(op, "_local_oid", None):
            out.append(op.path_in_repo)
    return out


def execute(plan: Plan, *, endpoint: str | None = None, token: str | None = None,
            log: Callable[[str], None] = print) -> str:
    """Create the repo if needed and send every file in one commit; return the commit id.

    With ``plan.create_pr`` the commit opens a pull request and its URL is logged.
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=endpoint, token=token)
    ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=f if isinstance(f, bytes) else str(f))
           for p, f in sorted(plan.files.items())]
    try:
        if plan.create_repo:
            api.create_repo(plan.repo_id, repo_type=plan.repo_type, exist_ok=True,
                            space_sdk=plan.space_sdk or None)
        info = api.create_commit(
            plan.repo_id, ops, commit_message=plan.message, repo_type=plan.repo_type,
            create_pr=plan.create_pr,
        )
    except _transport_errors() as exc:
        raise _explain(exc, plan) from None
    same = unchanged_files(ops)
    if len(same) == len(ops):
        log(f"nothing to publish: {plan.repo_id} already holds these {len(ops)} files "
            f"(commit {info.oid})")
    elif plan.create_pr:
        log(f"opened pull request {info.pr_url} on {plan.repo_id} "
            f"({len(ops) - len(same)} files)")
    else:
        kept = f", {len(same)} unchanged not sent" if same else ""
        log(f"published {len(ops) - len(same)} files to {plan.repo_id} in commit "
            f"{info.oid}{kept}")
    return info.oid
