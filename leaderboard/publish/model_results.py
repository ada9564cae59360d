"""Publishing one model's results (:mod:`consistency_bench.leaderboard.publish`): ``.eval_results``, model card.

The pull request on a model repo that adds the setup's ``.eval_results`` file (and, on
request, the model card with its ``model-index``), and the model card's ``model-index``
written locally.
"""  # noqa: E501

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.safe_yaml import load_yaml_text
from consistency_bench.leaderboard.publish.commit import Plan


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
    from consistency_bench.leaderboard.hub.eval_results import (
        eval_result_entries,
        eval_results_yaml,
    )

    entries, skipped = eval_result_entries(
        results, dataset_repo, dataset_revision=dataset_revision, manifest=manifest,
        setup=setup, source_url=source_url or f"https://huggingface.co/datasets/{dataset_repo}",
        meta=meta, include_flagged=include_flagged, entry=entry)
    files: dict[str, Path | bytes] = {setup.path: eval_results_yaml(entries).encode("utf-8")}
    if model_card is not None:
        path = Path(model_card)
        text = read_model_card(path)
        files["README.md"] = model_card_text(text, results, model_repo, dataset_repo,
                                             where=str(path)).encode("utf-8")
    plan = Plan(model_repo, "model", files,
                f"Add consistency-bench results ({entry}, {setup.slug}, {len(entries)} suites)",
                create_pr=True, create_repo=False)
    return plan, skipped


def model_index(results: Mapping, model_name: str, dataset_repo: str) -> list[dict]:
    """``model-index`` metadata (one result per suite) for a model card.

    Each result carries the suite's main metric and, when the results have it, the headline
    ``consistent_accuracy_cc``.
    """
    from consistency_bench.leaderboard.hub.eval_results import HEADLINE, headline

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
    from consistency_bench.bench.io.output_checks import require_regular_file

    require_regular_file(path, f"--model-card {path}")  # missing, a FIFO, /dev/zero: said so
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
    from consistency_bench.bench.io.write import write_text

    path = Path(card)
    text = read_model_card(path) if path.exists() else ""
    write_text(path, model_card_text(text, results, model_name, dataset_repo, where=str(path)))
