"""The leaderboard as a static Hugging Face Space, and the predictions in the dataset repo.

The Hub shows a dataset repo's card, not its ``index.html``; a Space with ``sdk: static`` serves
``index.html`` as the page. ``plan_space`` sends the rendered site (page, heatmap, each entry's
``meta.yaml`` the page links to, ``leaderboard.json``) and a README whose front matter carries the
title, emoji, SDK, the linked dataset repos and the tags the Hub's leaderboard listings read
(``leaderboard``, ``submission:*``, ``test:*``, ``judge:*``, ``modality:*``, ``language:*``).
The page gets one line that links to the dataset repo that holds the data.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.leaderboard.publish.commit import Plan
from consistency_bench.leaderboard.publish.plans import site_files
from consistency_bench.leaderboard.webpage.formatting import html_attr, html_text

SDK = "static"
TITLE = "consistency-bench leaderboard"
EMOJI = "⚖️"
#: Tags read by the Hub's leaderboard listings: entries come by pull request and are scored by
#: a maintainer's command (semiautomatic), on public test sets, by a program.
TAGS = ("leaderboard", "submission:semiautomatic", "test:public", "judge:auto",
        "modality:text", "language:english", "language:korean", "consistency")
H1 = "<h1>consistency-bench leaderboard</h1>\n"


def hub_url(endpoint: str | None = None) -> str:
    """The Hub's address: ``endpoint``, else ``HF_ENDPOINT``, else huggingface.co."""
    if endpoint:
        return endpoint.rstrip("/")
    from huggingface_hub import constants

    return constants.ENDPOINT.rstrip("/")


def space_card(space_id: str, datasets: list[str], endpoint: str | None = None) -> str:
    """README of the Space: front matter (title, emoji, sdk, datasets, tags) and a short body."""
    import yaml

    meta = {"title": TITLE, "emoji": EMOJI, "colorFrom": "blue", "colorTo": "indigo",
            "sdk": SDK, "app_file": "index.html", "pinned": False, "license": "apache-2.0",
            "short_description": "Are language models consistent? BECEL, CALM and more",
            "datasets": list(datasets), "tags": list(TAGS)}
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    links = "".join(f"- [{d}]({hub_url(endpoint)}/datasets/{d})\n" for d in datasets)
    return (f"---\n{header}---\n\n# {TITLE} ({space_id})\n\n"
            "The page is `index.html` (a static Space), with the files it loads when asked in "
            "`data/`. The data behind it (every entry's "
            "`meta.yaml`, `results.json` and `predictions.jsonl.gz`, and `leaderboard.json`) "
            f"lives in:\n\n{links}\n"
            "Submit by pull request: `consistency-bench submit PREDICTIONS --meta META.yaml "
            f"--name NAME --hub {datasets[0]}`.\n")


def page_with_data_link(page: str, dataset_repo: str, endpoint: str | None = None) -> str:
    """``page`` (the rendered ``index.html``) with a line linking to the dataset repo.

    Raises:
        ConfigError: The page has no ``<h1>`` heading to put the line under (not rendered by
            ``consistency-bench leaderboard``).

    """
    if H1 not in page:
        raise ConfigError("index.html: no leaderboard heading; render it with "
                          "`consistency-bench leaderboard`")
    url = f"{hub_url(endpoint)}/datasets/{dataset_repo}"
    line = (f'<p class="data-link">Data, predictions and submissions: <a href="{html_attr(url)}" '
            f'rel="noopener noreferrer">{html_text(dataset_repo)}</a></p>\n')
    return page.replace(H1, H1 + line, 1)


def plan_space(site: str | os.PathLike, space_id: str, dataset_repo: str, *,
               suites_repo: str | None = None, endpoint: str | None = None) -> Plan:
    """One commit to the static Space ``space_id``: the rendered site and the Space card."""
    site = Path(site)
    page = site / "index.html"
    if not page.is_file():
        raise ConfigError(f"{site}: no rendered page (index.html); run "
                          f"`consistency-bench leaderboard --out {site}`")
    from consistency_bench.leaderboard.dataset.records import (
        RESULTS_FILE,  # the dataset repo's config only
    )

    files: dict[str, Path | bytes] = {
        k: v for k, v in site_files(site).items()
        if k not in ("README.md", "leaderboard.md", RESULTS_FILE)
    }
    files["index.html"] = page_with_data_link(page.read_text(encoding="utf-8"), dataset_repo,
                                              endpoint).encode("utf-8")
    datasets = [dataset_repo] + ([suites_repo] if suites_repo else [])
    files["README.md"] = space_card(space_id, datasets, endpoint).encode("utf-8")
    return Plan(space_id, "space", dict(sorted(files.items())), "Update leaderboard page",
                space_sdk=SDK)


def with_predictions(plan: Plan, submissions: str | os.PathLike | None) -> Plan:
    """``plan`` (a leaderboard publish) plus each entry's ``predictions.jsonl.gz``.

    Only entries the plan already publishes (their ``results.json``) get their predictions, so
    anyone can re-score every published result from the dataset repo.

    Raises:
        ConfigError: An entry's ``predictions.jsonl.gz`` is a symbolic link (its bytes could
            be any file of the machine: a token) or not a regular file.

    """
    from consistency_bench.leaderboard.submissions.meta import PREDICTIONS

    if submissions is None:
        return plan
    files = dict(plan.files)
    for path in plan.files:
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "submissions" and parts[2] == "results.json":
            src = Path(submissions) / parts[1] / PREDICTIONS
            if src.is_symlink() or (src.exists() and not src.is_file()):
                what = f"a symbolic link (to {os.readlink(src)})" if src.is_symlink() else \
                    "not a regular file"
                raise ConfigError(f"{src}: is {what}; a publish sends only the entry's own "
                                  "regular files. Nothing was sent")
            if src.is_file():
                files[f"submissions/{parts[1]}/{PREDICTIONS}"] = src
    return replace(plan, files=dict(sorted(files.items())))
