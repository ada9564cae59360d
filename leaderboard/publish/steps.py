"""What ``publish`` and ``publish-results`` do before anything is sent: read, check, plan.

``publish``: the leaderboard's dataset repo and, with a Space, the page are planned (and
checked) together (:func:`plan_publish`). ``publish-results``: the entry's ``results.json``
and ``meta.yaml`` are read from the submissions folder's own files (never through a symbolic
link, size and depth capped), the target model is checked against the entry's metadata, the
dataset revision against git's ref rules, and the pull request planned
(:func:`plan_entry_results`). Sending a plan is
:func:`consistency_bench.leaderboard.publish.commit.execute`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from consistency_bench.bench.errors import ConfigError, shorten

if TYPE_CHECKING:
    from consistency_bench.leaderboard.publish.commit import Plan


def read_results(submissions: str | os.PathLike, entry: str) -> dict:
    """``submissions/entry/results.json``, with one-line errors."""
    from consistency_bench.leaderboard.stored import check_values
    from consistency_bench.leaderboard.submissions.storage import recover

    if not entry or Path(entry).name != entry or entry.startswith("."):
        raise ConfigError(f"--entry {entry!r}: expected the name of a folder in {submissions}")
    root = Path(submissions)
    if root.is_dir() and not root.is_symlink():
        recover(root, lambda line: print(f"warning: {line}", file=sys.stderr))
    path = root / entry / "results.json"
    for link in (root, path.parent, path):
        if link.is_symlink():
            raise ConfigError(f"{link}: is a symbolic link; published results are read only "
                              "from the submissions folder's own files")
    if not path.is_file():
        raise ConfigError(f"{path}: no such submission (--entry {entry!r})")
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    try:
        results = load_json_file(path)
    except JsonFileError as exc:  # too deep, not JSON, not UTF-8, a key twice, too large
        raise ConfigError(str(exc)) from None
    if not isinstance(results, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    if isinstance(results.get("suites"), dict):  # never publish a NaN or hand-edited score
        check_values(results, str(path))
    return results


#: A git revision: a hex commit sha (7-64 digits) or a ref name (``main``, ``v1.0``,
#: ``refs/pr/3``): letters, digits, ``. _ - /``, no ``..``, ``//``, leading ``-`` or ``/``,
#: trailing ``/``, ``.`` or ``.lock`` (git check-ref-format, narrowed to safe characters).
_REVISION = re.compile(r"[0-9a-f]{7,64}|[A-Za-z0-9_][A-Za-z0-9._/-]{0,127}")


def check_revision(value: str | None, flag: str = "--dataset-revision") -> str | None:
    """A git revision written into the results file; ``None`` passes.

    Raises:
        ConfigError: Anything but a hex sha or a plain ref name (``main; rm -rf /`` is
            refused, not written verbatim).

    """
    if value is None:
        return None
    if (not _REVISION.fullmatch(value) or ".." in value or "//" in value or "@{" in value
            or value.endswith(("/", ".", ".lock")) or "/." in value):
        raise ConfigError(f"{flag} {shorten(value)}: not a git revision; use a commit sha "
                          "(hex) or a ref name such as main or refs/pr/3 (letters, digits, "
                          ". _ - /)")
    return value


def check_url(value: str | None, flag: str) -> str | None:
    """An ``https://`` URL written into the results file; ``None`` passes.

    Raises:
        ConfigError: Another scheme (``javascript:alert(1)``, ``http://``, ``file:``), no host,
            or any control character, space or other whitespace (``https://x\n- evil: 1``
            added a line to the YAML written from it).

    """
    if value is None:
        return None
    import unicodedata
    from urllib.parse import urlsplit

    bad = next((c for c in value if c.isspace() or unicodedata.category(c) in ("Cc", "Cf")),
               None)
    if bad is not None:
        raise ConfigError(f"{flag} {shorten(value)}: holds the control or space character "
                          f"U+{ord(bad):04X}; give one https:// URL")
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        raise ConfigError(f"{flag} {shorten(value)}: not a URL ({exc})") from None
    if parts.scheme.lower() != "https" or not parts.netloc or not value.lower().startswith(
            "https://"):
        raise ConfigError(f"{flag} {shorten(value)}: not an https:// URL; give the page's "
                          "https:// address")
    return value


def read_meta(submissions: str | os.PathLike, entry: str) -> dict:
    """``submissions/entry/meta.yaml`` (empty when absent), with one-line errors.

    Read with the submissions' own loader rules (``consistency_bench.bench.io.safe_yaml``: no
    anchors
    or aliases,
    size capped) and never through a symbolic link.
    """
    from consistency_bench.bench.io.safe_yaml import read_yaml_file

    path = Path(submissions) / entry / "meta.yaml"
    if path.is_symlink():
        raise ConfigError(f"{path}: is a symbolic link; metadata is read only from the "
                          "submissions folder's own files")
    if not path.is_file():
        return {}
    meta = read_yaml_file(path)
    return meta if isinstance(meta, dict) else {}


def check_target_model(model: str, meta: dict, entry: str, force: bool) -> None:
    """``--model`` must be the entry's own ``meta.yaml`` ``model`` unless ``--force``.

    Raises:
        ConfigError: The entry's metadata names another model (or none) and ``force`` is not
            set: the pull request would attach this entry's scores to a different model.

    """
    own = meta.get("model")
    if force or own == model:
        return
    if not own:
        raise ConfigError(f"--model {model}: entry {entry!r} has no 'model' in its meta.yaml, "
                          "so it cannot be checked that these scores are that model's; "
                          "pass --force if they are")
    raise ConfigError(f"--model {model}: entry {entry!r} was submitted for model "
                      f"{shorten(own)} (its meta.yaml); these scores are not {model}'s. "
                      "Pass --force only if the entry really evaluates that model")


def plan_entry_results(entry: str, model: str, dataset: str, setup, *,
                       submissions: str | os.PathLike = "submissions",
                       dataset_revision: str | None = None,
                       data: str | os.PathLike | None = None, model_card: str | None = None,
                       source_url: str | None = None, include_flagged: bool = False,
                       force: bool = False) -> tuple[Plan, dict[str, str]]:
    """Check everything and plan the pull request of ``entry``'s Eval Results on ``model``.

    Args:
        entry: Submission whose results are published.
        model: Model repo that gets the pull request.
        dataset: Benchmark dataset repo.
        setup: How the model was run
        (:class:`consistency_bench.leaderboard.hub.eval_results.Setup`).
        submissions: Submissions folder.
        dataset_revision: Git revision of the dataset the scores refer to.
        data: Built suite folder that was published (None: not checked).
        model_card: The model's README.md copy to update.
        source_url: ``source.url`` of every result.
        include_flagged: Publish flagged suites and an incomplete entry.
        force: Publish although ``model`` is not the entry's own.

    Returns:
        The plan and ``{suite: why}`` of the suites left out.

    Raises:
        ConfigError: A bad repo id, revision, entry or model (nothing is sent).

    """
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.leaderboard.publish.commit import check_repo_id
    from consistency_bench.leaderboard.publish.model_results import plan_results

    model = check_repo_id(model, "--model")
    dataset = check_repo_id(dataset, "--dataset")
    check_revision(dataset_revision)
    check_url(source_url, "--leaderboard-url")
    results = read_results(submissions, entry)
    meta = read_meta(submissions, entry)
    check_target_model(model, meta, entry, force)
    manifest = read_manifest(Path(data)) if data else None
    return plan_results(results, entry, model, dataset, setup=setup,
                        dataset_revision=dataset_revision, manifest=manifest,
                        model_card=model_card, meta=meta, source_url=source_url,
                        include_flagged=include_flagged)


def plan_publish(site: str | os.PathLike, submissions: str | os.PathLike, repo_id: str, *,
                 space: str | None = None, suites_repo: str | None = None,
                 data: str | os.PathLike | None = None,
                 details_dir: str | os.PathLike | None = None) -> list[Plan]:
    """The plans of ``publish``: the dataset repo, then (with ``space``) the Space.

    Every plan is made (and checked) before anything is written or sent. With ``data`` (the
    built suites) and ``details_dir`` (an empty folder the caller removes after sending), the
    dataset repo also gets the ``details`` config (leaderboard/details/): its files in
    commits of their own first, then the leaderboard commit.

    Raises:
        ConfigError: A bad repo id, ``suites_repo`` without ``space``, ``data`` without
            ``details_dir``, or a site or entry that cannot be published.

    """
    from consistency_bench.leaderboard.publish.commit import check_repo_id
    from consistency_bench.leaderboard.publish.plans import plan_leaderboard
    from consistency_bench.leaderboard.space import plan_space, with_predictions

    repo = check_repo_id(repo_id)
    if suites_repo and not space:
        raise ConfigError("--suites-repo is linked from the Space card: it needs --space")
    if data is not None and details_dir is None:
        raise ConfigError("details need a folder to be written into (details_dir)")
    plan = with_predictions(plan_leaderboard(site, submissions, repo), submissions)
    if data is not None and details_dir is not None:
        from consistency_bench.bench.io.manifest import read_manifest
        from consistency_bench.leaderboard.details.publish import with_details

        read_manifest(Path(data))  # a --data that is not a built folder: one line, now
        plans = with_details(plan, site, submissions, data, Path(details_dir),
                             lambda line: print(f"warning: {line}", file=sys.stderr))
    else:
        plans = [plan]
    if space:
        suites = check_repo_id(suites_repo, "--suites-repo") if suites_repo else None
        plans.append(plan_space(site, check_repo_id(space, "--space"), repo,
                                suites_repo=suites))
    return plans
