"""The details dataset of a leaderboard publish: files, config, card section.

Layout (docs/leaderboard.md, "Details dataset"): ``details/<kind>/<entry>.parquet``, one file
per entry and metric kind, every file with the same columns
(:data:`consistency_bench.bench.inconsistent.details.DETAILS_SCHEMA`). One config, ``details``, has
one split
per kind (``details/<kind>/*.parquet``), so ``load_dataset(repo, "details",
split="negational")`` loads every entry's negational rows, filtered by the ``entry`` column;
one entry alone loads with ``data_files="details/*/<entry>.parquet"``. Why one config and
kind splits rather than a config per entry or a split per suite: the Hub's Dataset Viewer
refuses more than 3,000 configs and more than 30 splits per config (dataset-viewer
``CONFIG_NAMES_MAX_NUMBER``, ``DatasetWithTooManySplitsError``); the kinds are 9, the suites
51 and the entries unbounded, and an entry added later adds files but never changes the card.
The Hub asks for fewer than 10,000 files per folder and 100,000 per repo: this layout puts
one file per entry in each kind folder (10,000 entries) and at most 9 per entry.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.leaderboard.publish.commit import Plan

#: The config name and the repo folder of the details.
CONFIG = "details"
FOLDER = "details"
#: Details files per commit: the Hub recommends fewer than 100 files per commit
#: (docs/hub/repositories-recommendations); a first publish of many entries is sent in
#: several commits, before the card that points at them.
FILES_PER_COMMIT = 100


@dataclass(frozen=True)
class DetailsFiles:
    """What :func:`write_details` wrote.

    Attributes:
        files: Path in the repo -> local file.
        kinds: The metric kinds with at least one file (the config's splits), sorted.
        skipped: ``entry/suite`` -> why it has no details (scored on other suite files).

    """

    files: dict[str, Path]
    kinds: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def config(self) -> dict:
        """The card's ``configs:`` entry: one split per kind."""
        return {"config_name": CONFIG, "data_files": [
            {"split": kind, "path": f"{FOLDER}/{kind}/*.parquet"} for kind in self.kinds]}


def card_section(repo_id: str, details: DetailsFiles) -> str:
    """The card's paragraph on the details config."""
    splits = ", ".join(f"`{k}`" for k in details.kinds)
    return (
        "## Details\n\n"
        "Every suite row of every entry with the entry's answer, the gold label, the "
        "probabilities, whether the answer is right and whether the row's group is "
        "consistent (the verdict `consistency-bench inspect` lists): config `details`, one "
        f"split per consistency kind ({splits}):\n\n"
        "```python\n"
        "from datasets import load_dataset\n"
        f'rows = load_dataset("{repo_id}", "details", split="negational")\n'
        'mine = rows.filter(lambda r: r["entry"] == "ENTRY")\n'
        "# one entry only: its files\n"
        f'one = load_dataset("{repo_id}", data_files="details/*/ENTRY.parquet", '
        'split="train")\n'
        "```\n\n"
        "Columns: `entry`, `suite`, `task`, `kind`, `id`, `group`, `variant`, `text`, "
        "`text_pair`, `label` (gold), `prediction` (null: an answer outside the labels), "
        "`probs`, `correct`, `unit` (the group the verdict is about), `status` "
        "(`inconsistent`, `wrong`, `right`), `consistent` (null where the group could not be "
        "judged), `extra` (the suite's tag, rule, constraint, span... as JSON)."
    )


def _results(path: Path) -> dict:
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    try:
        value = load_json_file(path)
    except JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    return value if isinstance(value, dict) else {}


def write_details(entries: Mapping[str, tuple[Path, Path]], data: str | os.PathLike,
                  out: Path, warn: Callable[[str], None] = lambda line: None,
                  cache_root: str | os.PathLike | None = None) -> DetailsFiles:
    """Write each entry's details into ``out/details/<kind>/<entry>.parquet``.

    Only the suites whose ``content_hash`` in the entry's results is the built folder's
    sha256 are joined: predictions scored on other suite files would be paired with other
    rows.

    Args:
        entries: Entry name -> (its prediction file, its ``results.json``).
        data: The built suite folder the entries were scored on.
        out: An empty folder of the caller's (a temporary one).
        warn: Called with one line per suite left out.
        cache_root: The submissions folder, whose details cache (:mod:`.reuse`) gives an
            unchanged entry's files instead of making them again; ``None``: no cache.

    """
    from consistency_bench.bench.inconsistent.details import entry_details
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.builders.table_io import write_parquet
    from consistency_bench.leaderboard.details.reuse import details_key, open_cache

    manifest = read_manifest(Path(data))
    cache = open_cache(cache_root, warn)
    files: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    for name, (predictions, results) in sorted(entries.items()):
        scored = _results(results).get("suites") or {}
        suites = []
        for suite, entry in sorted(scored.items()):
            if suite in manifest and entry.get("content_hash") == manifest[suite]["sha256"]:
                suites.append(suite)
            else:
                skipped[f"{name}/{suite}"] = "scored on other suite files than --data holds"
                warn(f"details: {name}/{suite} left out (scored on other suite files than "
                     f"{data} holds)")
        key = details_key(file_sha256(predictions), {s: manifest[s]["sha256"] for s in suites})
        kept = cache.get(name, key) if cache is not None else None
        if kept is None:
            kept = {}
            for kind, table in entry_details(name, predictions, data, suites).items():
                target = out / FOLDER / kind / f"{name}.parquet"
                target.parent.mkdir(parents=True, exist_ok=True)
                write_parquet(table, target)
                kept[kind] = target
            if cache is not None:
                cache.put(name, key, kept)
        else:
            for kind, src in kept.items():
                target = out / FOLDER / kind / f"{name}.parquet"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
                kept[kind] = target
        for kind, target in kept.items():
            files[f"{FOLDER}/{kind}/{name}.parquet"] = target
    kinds = tuple(sorted({path.split("/")[1] for path in files}))
    return DetailsFiles(dict(sorted(files.items())), kinds, skipped)


def with_details(plan: Plan, site: str | os.PathLike, submissions: str | os.PathLike,
                 data: str | os.PathLike, out: Path,
                 warn: Callable[[str], None] = lambda line: None) -> list[Plan]:
    """The details of every entry ``plan`` (a leaderboard publish) publishes, then ``plan``.

    The details files go in commits of at most :data:`FILES_PER_COMMIT` files, before the
    leaderboard commit, whose card is rendered again with the ``details`` config appended to
    its configs and a section on how to load it: the card never names a split whose files
    are not there yet. Unchanged files are not sent again (the Hub client compares hashes),
    so a later publish commits only the details that changed.
    """
    from consistency_bench.leaderboard.publish.plans import leaderboard_card
    from consistency_bench.leaderboard.submissions.meta import PREDICTIONS

    entries = {}
    for path, src in plan.files.items():
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "submissions" and parts[2] == "results.json":
            predictions = Path(submissions) / parts[1] / PREDICTIONS
            if predictions.is_file() and not predictions.is_symlink() and isinstance(src, Path):
                entries[parts[1]] = (predictions, src)
    details = write_details(entries, data, out, warn, cache_root=submissions)
    if not details.kinds:
        return [plan]
    files = dict(plan.files)
    files["README.md"] = leaderboard_card(
        Path(site), plan.repo_id, configs=[details.config],
        sections=[card_section(plan.repo_id, details)]).encode("utf-8")
    paths = list(details.files)
    batches = [paths[i:i + FILES_PER_COMMIT] for i in range(0, len(paths), FILES_PER_COMMIT)]
    plans = [Plan(plan.repo_id, plan.repo_type, {p: details.files[p] for p in batch},
                  f"Update leaderboard details ({k + 1}/{len(batches)})")
             for k, batch in enumerate(batches)]
    return [*plans, replace(plan, files=dict(sorted(files.items())))]
