"""Publish the leaderboard and the built suites to the Hugging Face Hub.

One ``create_repo(exist_ok=True)`` and one ``create_commit`` per publish, so a failure leaves
the repo at its previous commit (the Hub applies a commit as a whole). The token comes from
``HF_TOKEN`` or the stored login (``huggingface_hub`` resolves it); it is never printed.
``dry_run`` lists every operation and sends nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.errors import BenchError, ConfigError, DataError
from bench.safe_yaml import load_yaml_text


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


def _folder_files(root: Path, prefix: str = "") -> dict[str, Path]:
    """Every regular file under ``root`` (dot-files left out); a symbolic link is refused.

    Raises:
        ConfigError: A file or folder to be sent is a symbolic link (its bytes could be any
            file of the machine: a token) or not a regular file.

    """
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(dirnames + filenames):
            if name.startswith("."):
                continue
            path = here / name
            if path.is_symlink():
                raise ConfigError(
                    f"{path}: is a symbolic link (to {os.readlink(path)}); a publish sends only "
                    "the folder's own regular files. Nothing was sent"
                )
            if name in filenames:
                if not path.is_file():
                    raise ConfigError(f"{path}: not a regular file; nothing was sent")
                out[prefix + path.relative_to(root).as_posix()] = path
    return dict(sorted(out.items()))


def site_files(site: Path) -> dict[str, Path]:
    """The files of a rendered site that ``leaderboard`` wrote (its record), no others.

    ``leaderboard`` keeps files a user added to its folder (``thesis.tex``, ``CNAME``); a
    publish sent them too, to a public repo. They are left out, with one line on stderr.
    A site without a record (rendered before it existed) sends every file, as before.
    """
    import sys

    from bench.atomic import read_owned

    files = _folder_files(site)
    record = read_owned(site)
    if record is None or record.get("command") != "leaderboard":
        return files
    owned = set(record["files"])
    foreign = sorted(k for k in files if k not in owned)
    if foreign:
        more = f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""
        print(f"note: {site}: not sent, not written by `consistency-bench leaderboard`: "
              f"{', '.join(foreign[:5])}{more}", file=sys.stderr)
    return {k: v for k, v in files.items() if k in owned}


def leaderboard_card(site: Path, repo_id: str) -> str:
    """Dataset card of the results repo: YAML header, rendered table, layout."""
    table = (site / "leaderboard.md").read_text(encoding="utf-8")
    return (
        "---\n"
        "license: apache-2.0\n"
        "pretty_name: consistency-bench leaderboard\n"
        "tags:\n- leaderboard\n- consistency\n"
        "configs:\n- config_name: results\n  data_files: leaderboard.json\n"
        "---\n\n"
        f"# consistency-bench leaderboard ({repo_id})\n\n"
        + table
        + "\nFiles: `leaderboard.json` (everything), `index.html` (sortable page), "
        "`heatmap.png`, `submissions/<entry>/` (metadata, results and `predictions.jsonl.gz` "
        "of each entry: `consistency-bench verify` re-scores them).\n"
    )


def plan_leaderboard(site: str | os.PathLike, submissions: str | os.PathLike | None,
                     repo_id: str) -> Plan:
    """Files of a leaderboard publish: the rendered site, each entry's results, the card.

    The entries sent are exactly those the site was rendered from (its record, written by
    ``leaderboard``), checked by hash against ``submissions``; nothing is followed through a
    symbolic link.
    """
    site = Path(site)
    if not (site / "leaderboard.md").is_file():
        raise ConfigError(
            f"{site}: no rendered leaderboard; run `consistency-bench leaderboard --out {site}`"
        )
    if site.is_symlink():
        raise ConfigError(f"--site {site}: is a symbolic link; name the folder itself")
    files: dict[str, Path | bytes] = {
        k: v for k, v in site_files(site).items() if not k.startswith("submissions/")
    }
    if submissions is not None:
        from bench.atomic import read_owned
        from leaderboard.submissions import site_entries

        root = Path(submissions)
        if root.is_symlink() or not root.is_dir():
            raise ConfigError(f"--submissions {submissions}: no such folder (or a link)")
        for name, d in site_entries(read_owned(site), site, root).items():
            for file in ("meta.yaml", "results.json"):
                files[f"submissions/{name}/{file}"] = d / file
    files["README.md"] = leaderboard_card(site, repo_id).encode("utf-8")
    return Plan(repo_id, "dataset", dict(sorted(files.items())), "Update leaderboard")


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        digest = hashlib.sha256()  # hashlib.file_digest needs Python 3.11
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
        return digest.hexdigest()


def verified_suite_files(root: Path) -> tuple[dict[str, dict], dict[str, Path]]:
    """The manifest and the files of a built folder, every Parquet file checked first.

    Every suite's file and every few-shot pool (``suites.json``'s ``fewshot``) must exist and
    match its ``suites.json`` sha256, and the folder may hold no file besides those,
    ``suites.json`` and ``README.md`` (dot-files are never sent), so what is published is
    exactly what was built. All problems are reported at once.

    Raises:
        DataError: A file is missing, changed after the build, or not in ``suites.json``.

    """
    from bench.fewshot import read_pools
    from bench.manifest import MANIFEST, SPLIT, read_manifest

    manifest = read_manifest(root)
    files = _folder_files(root)
    expected = {
        (info.get("path") if isinstance(info, dict) else None) or f"{suite}/{SPLIT}.parquet": suite
        for suite, info in manifest.items()
    }
    pools = {f"fewshot pool {name}": info for name, info in read_pools(root).items()}
    expected.update({info.get("path") or name: name for name, info in pools.items()})
    entries = {**manifest, **pools}
    problems = []
    for rel, suite in sorted(expected.items()):
        want = entries[suite].get("sha256") if isinstance(entries[suite], dict) else None
        if not isinstance(want, str):
            problems.append(f"{MANIFEST}: suite {suite!r} has no sha256")
        elif rel not in files:
            problems.append(f"{rel}: missing")
        elif (digest := _sha256(files[rel])) != want:
            problems.append(f"{rel}: sha256 {digest[:12]}... is not suites.json's "
                            f"{want[:12]}... (changed after the build)")
    extra = sorted(set(files) - set(expected) - {MANIFEST, "README.md"})
    problems += [f"{rel}: not in suites.json" for rel in extra]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DataError(
            f"{root}: {len(problems)} file(s) do not match suites.json, nothing was sent: "
            + "; ".join(problems[:5]) + more + "; rebuild with `consistency-bench build`"
        )
    return manifest, files


def plan_suites(data_dir: str | os.PathLike, repo_id: str, *,
                framework: str | None = None) -> Plan:
    """Files of a suites publish: card, manifest, verified Parquet files and ``eval.yaml``."""
    from leaderboard.hub_eval import FRAMEWORK, eval_yaml

    root = Path(data_dir)
    if not (root / "suites.json").is_file() or not (root / "README.md").is_file():
        raise ConfigError(
            f"{root}: not a built suite folder (suites.json / README.md missing); run "
            "`consistency-bench build --out DIR` first"
        )
    manifest, files = verified_suite_files(root)
    out: dict[str, Path | bytes] = dict(files)
    out["eval.yaml"] = eval_yaml(manifest, framework=framework or FRAMEWORK).encode("utf-8")
    return Plan(repo_id, "dataset", dict(sorted(out.items())), "Update consistency-bench suites")


def plan_results(results: Mapping, entry: str, model_repo: str, dataset_repo: str, *,
                 setup, dataset_revision: str | None = None,
                 manifest: Mapping[str, Mapping] | None = None,
                 model_card: str | os.PathLike | None = None, meta: Mapping | None = None,
                 source_url: str | None = None,
                 include_flagged: bool = False) -> tuple[Plan, dict[str, str]]:
    """A pull request on ``model_repo`` adding the setup's ``.eval_results`` file.

    The file is ``.eval_results/consistency-bench_<setup>.yaml`` (``hub_eval.Setup.path``), so
    two setups of one model (chat and plain, 0- and 5-shot) never overwrite each other. With
    ``model_card`` (the user's copy of the model's README.md), the pull request also replaces
    README.md with that card plus this entry's ``model-index``; the file on disk is not
    changed.

    Returns:
        The plan and the suites left out (suite -> reason).

    Raises:
        ConfigError: See ``hub_eval.eval_result_entries`` (degenerate or incomplete suites
            without ``include_flagged``, other files, no headline score).

    """
    from leaderboard.hub_eval import eval_result_entries, eval_results_yaml

    entries, skipped = eval_result_entries(
        results, dataset_repo, dataset_revision=dataset_revision, manifest=manifest,
        setup=setup, source_url=source_url or f"https://huggingface.co/datasets/{dataset_repo}",
        meta=meta, include_flagged=include_flagged, entry=entry)
    files: dict[str, Path | bytes] = {setup.path: eval_results_yaml(entries).encode("utf-8")}
    if model_card is not None:
        path = Path(model_card)
        if not path.is_file():
            raise ConfigError(f"--model-card {path}: no such file")
        text = read_model_card(path)
        files["README.md"] = model_card_text(text, results, model_repo, dataset_repo,
                                             where=str(path)).encode("utf-8")
    plan = Plan(model_repo, "model", files,
                f"Add consistency-bench results ({entry}, {setup.slug}, {len(entries)} suites)",
                create_pr=True, create_repo=False)
    return plan, skipped


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


def model_index(results: Mapping, model_name: str, dataset_repo: str) -> list[dict]:
    """``model-index`` metadata (one result per suite) for a model card.

    Each result carries the suite's main metric and, when the results have it, the headline
    ``consistent_accuracy_cc``.
    """
    from leaderboard.hub_eval import HEADLINE, headline

    out = []
    for suite, res in sorted(results.get("suites", {}).items()):
        metrics = [{"type": res["main_metric"], "name": res["main_metric"],
                    "value": res["main_score"]}]
        if (value := headline(res)) is not None:
            metrics.append({"type": HEADLINE, "name": HEADLINE, "value": value})
        out.append({
            "task": {"type": "text-classification", "name": res.get("task", "")},
            "dataset": {"type": dataset_repo, "name": f"consistency-bench {suite}",
                        "config": suite, "split": "test"},
            "metrics": metrics,
        })
    return [{"name": model_name, "results": out}]


def model_card_text(text: str, results: Mapping, model_name: str, dataset_repo: str, *,
                    where: str = "model card") -> str:
    """``text`` (a model card) with its ``model-index`` replaced by these scores.

    Other metadata and the card's body are kept.

    Raises:
        ConfigError: The card's YAML header is not valid YAML or not a mapping.

    """
    import yaml

    meta: dict = {}
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end == -1:
            raise ConfigError(f"{where}: YAML header opened with '---' is never closed")
        loaded = load_yaml_text(text[4:end], f"{where} (YAML header)") or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{where}: YAML header must be a mapping")
        meta = loaded
        body = text[end + 5:]
    meta["model-index"] = model_index(results, model_name, dataset_repo)
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{header}---\n{body}"


def read_model_card(path: Path) -> str:
    """A model card's text: a regular UTF-8 text file (no NUL bytes).

    Raises:
        ConfigError: Not a regular file, not UTF-8, or binary.

    """
    if not path.is_file():
        raise ConfigError(f"--model-card {path}: not a regular file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--model-card {path}: not a UTF-8 text file ({exc.reason} at byte "
                          f"{exc.start}); pass the model's README.md") from None
    if "\x00" in text:
        raise ConfigError(f"--model-card {path}: a binary file (NUL bytes); pass the model's "
                          "README.md")
    return text


def write_model_card(card: str | os.PathLike, results: Mapping, model_name: str,
                     dataset_repo: str) -> None:
    """Write the scores into ``card``'s ``model-index`` metadata (atomically).

    Raises:
        ConfigError: The card's YAML header is not valid YAML or not a mapping.

    """
    from bench.atomic import write_text

    path = Path(card)
    text = read_model_card(path) if path.exists() else ""
    write_text(path, model_card_text(text, results, model_name, dataset_repo, where=str(path)))
