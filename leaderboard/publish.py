"""Publish the leaderboard and the built suites to the Hugging Face Hub.

One ``create_repo(exist_ok=True)`` and one ``create_commit`` per publish, so a failure leaves
the repo at its previous commit (the Hub applies a commit as a whole). The token comes from
``HF_TOKEN`` or the stored login (``huggingface_hub`` resolves it); it is never printed.
``dry_run`` lists every operation and sends nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.errors import BenchError, ConfigError


class PublishError(BenchError):
    """The Hub refused or failed a publish (auth, missing repo, rate limit, ...)."""


@dataclass(frozen=True)
class Plan:
    """What a publish will send: the repo and every file (path in repo -> local path)."""

    repo_id: str
    repo_type: str
    files: dict[str, Path]
    message: str

    def describe(self) -> list[str]:
        """One line per operation, for ``--dry-run``."""
        lines = [f"create_repo {self.repo_type} {self.repo_id} (exist_ok)"]
        lines.append(f"create_commit {self.repo_id}: {self.message!r}, {len(self.files)} files")
        for path, local in sorted(self.files.items()):
            lines.append(f"  add {path}  ({local.stat().st_size} bytes from {local})")
        return lines


def check_repo_id(repo_id: str) -> str:
    """Validate ``ORG/NAME``."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*", repo_id or ""):
        raise ConfigError(f"--repo {repo_id!r}: expected ORG/NAME (letters, digits, . _ -)")
    return repo_id


def _folder_files(root: Path, prefix: str = "") -> dict[str, Path]:
    return {
        prefix + p.relative_to(root).as_posix(): p
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


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
        "`heatmap.png`, `submissions/<entry>/` (metadata and results of each entry).\n"
    )


def plan_leaderboard(site: str | os.PathLike, submissions: str | os.PathLike | None,
                     repo_id: str, card_path: Path) -> Plan:
    """Files of a leaderboard publish: the rendered site, each entry's results, the card."""
    site = Path(site)
    if not (site / "leaderboard.md").is_file():
        raise ConfigError(
            f"{site}: no rendered leaderboard; run `consistency-bench leaderboard --out {site}`"
        )
    files = {k: v for k, v in _folder_files(site).items() if not k.startswith("submissions/")}
    if submissions is not None:
        for d in sorted(Path(submissions).iterdir()):
            if d.is_dir() and not d.name.startswith("."):
                for name in ("meta.yaml", "results.json"):
                    if (d / name).is_file():
                        files[f"submissions/{d.name}/{name}"] = d / name
    card_path.write_text(leaderboard_card(site, repo_id), encoding="utf-8")
    files["README.md"] = card_path
    return Plan(repo_id, "dataset", dict(sorted(files.items())), "Update leaderboard")


def plan_suites(data_dir: str | os.PathLike, repo_id: str) -> Plan:
    """Files of a suites publish: the built folder as is (card, manifest, Parquet)."""
    root = Path(data_dir)
    if not (root / "suites.json").is_file() or not (root / "README.md").is_file():
        raise ConfigError(
            f"{root}: not a built suite folder (suites.json / README.md missing); run "
            "`consistency-bench build --out DIR` first"
        )
    return Plan(repo_id, "dataset", _folder_files(root), "Update consistency-bench suites")


def _explain(exc: Exception, plan: Plan) -> PublishError:
    """A clear message for a Hub error (the token never appears in it)."""
    from huggingface_hub.errors import (
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    if isinstance(exc, OfflineModeIsEnabled):
        return PublishError("HF_HUB_OFFLINE is set: unset it to publish; nothing was committed")
    status = None
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        status = exc.response.status_code
    where = f"{plan.repo_type} repo {plan.repo_id!r}"
    if isinstance(exc, RepositoryNotFoundError) or status == 404:
        msg = f"{where} not found, or the token cannot see it"
    elif status in (401, 403):
        msg = (f"not authorised to write to {where}: set HF_TOKEN to a token with write access "
               "or run `hf auth login`")
    elif status == 429:
        msg = f"rate limited by the Hub while publishing to {where}; retry later"
    elif status is not None:
        msg = f"the Hub answered HTTP {status} while publishing to {where}"
    else:
        msg = f"could not reach the Hub while publishing to {where}: {type(exc).__name__}"
    return PublishError(msg + "; nothing was committed")


def execute(plan: Plan, *, endpoint: str | None = None, token: str | None = None,
            log: Callable[[str], None] = print) -> str:
    """Create the repo if needed and send every file in one commit; return the commit id."""
    import httpx
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(endpoint=endpoint, token=token)
    ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f))
           for p, f in sorted(plan.files.items())]
    try:
        api.create_repo(plan.repo_id, repo_type=plan.repo_type, exist_ok=True)
        info = api.create_commit(
            plan.repo_id, ops, commit_message=plan.message, repo_type=plan.repo_type
        )
    except (HfHubHTTPError, httpx.HTTPError, OSError) as exc:
        raise _explain(exc, plan) from None
    log(f"published {len(ops)} files to {plan.repo_id} in commit {info.oid}")
    return info.oid


def model_index(results: Mapping, model_name: str, dataset_repo: str) -> list[dict]:
    """``model-index`` metadata (one result per suite) for a model card."""
    out = []
    for suite, res in sorted(results.get("suites", {}).items()):
        out.append({
            "task": {"type": "text-classification", "name": res.get("task", "")},
            "dataset": {"type": dataset_repo, "name": f"consistency-bench {suite}",
                        "config": suite, "split": "test"},
            "metrics": [{"type": res["main_metric"], "name": res["main_metric"],
                         "value": res["main_score"]}],
        })
    return [{"name": model_name, "results": out}]


def write_model_card(card: str | os.PathLike, results: Mapping, model_name: str,
                     dataset_repo: str) -> None:
    """Write the scores into ``card``'s ``model-index`` metadata (other metadata and text kept).

    Raises:
        ConfigError: The card's YAML header is not valid YAML or not a mapping.

    """
    import yaml

    from bench.atomic import write_text

    path = Path(card)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    meta: dict = {}
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end == -1:
            raise ConfigError(f"{path}: YAML header opened with '---' is never closed")
        try:
            meta = yaml.safe_load(text[4:end]) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: YAML header is not valid YAML: {exc}") from None
        if not isinstance(meta, dict):
            raise ConfigError(f"{path}: YAML header must be a mapping")
        body = text[end + 5:]
    meta["model-index"] = model_index(results, model_name, dataset_repo)
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    write_text(path, f"---\n{header}---\n{body}")
