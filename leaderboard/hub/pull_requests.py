"""Submissions by pull request: ``requests/<slug>/`` in the leaderboard's dataset repo.

``submit --hub ORG/LEADERBOARD`` validates a prediction file and its ``META.yaml`` with the same
code as a local ``submit`` (slug, metadata, the file scored against the built suites, every row
of each suite covered) and then opens one pull request adding::

    requests/<slug>/predictions.jsonl.gz   the prediction file as JSONL, gzip with mtime 0
    requests/<slug>/meta.yaml              the validated metadata
    requests/<slug>/run.json               the run record, when the file has one (optional:
                                           without it the entry is not reproducible)

Results are never taken from the submitter: the local scores only check the file, and the
maintainers score the request again from the first two files.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.io.safe_yaml import MAX_YAML_BYTES
from consistency_bench.bench.runrecord.schema import ENTRY_FILE as RUN_RECORD
from consistency_bench.bench.runrecord.schema import MAX_BYTES as MAX_RECORD_BYTES
from consistency_bench.leaderboard.publish.commit import Plan
from consistency_bench.leaderboard.submissions.meta import (
    META,
    PREDICTIONS,
    Scorer,
    read_meta,
    slugify,
)
from consistency_bench.leaderboard.submissions.storage import gzip_bytes

REQUESTS = "requests"
#: Largest file of a request, in bytes as stored (``review`` checks each file's size in the
#: pull request's file listing before it downloads anything; ``submit --hub`` checks before it
#: sends). ``predictions.jsonl.gz``: 32 MiB. The largest honest file measured is the gzip of a
#: prediction for every row of the 51 suites (942,511 rows) with full-precision random
#: ``probs`` (which compress worst): 28,923,311 bytes (27.6 MiB;
#: ``benchmarks/request_size.py``); the committed entries are 0.27-7.9 MB (``minilm-ft``, with
#: probabilities on every suite: 7,880,888 bytes). Raise it when suites are added.
#: ``meta.yaml``: 256 KiB, the cap of every ``meta.yaml`` read
#: (:data:`consistency_bench.bench.io.safe_yaml.MAX_YAML_BYTES`). ``run.json`` (the optional run
#: record): 1 MiB,
#: the cap of every run record read (:data:`consistency_bench.bench.runrecord.schema.MAX_BYTES`), so
#: a file the
#: review downloads is one it could read; the committed records are 2-8 KB (``submissions/*/
#: run.json``: 2,015-7,721 bytes), a record is a few settings and hashes, not data.
MAX_REQUEST_BYTES = {PREDICTIONS: 32 << 20, META: MAX_YAML_BYTES, RUN_RECORD: MAX_RECORD_BYTES}


@dataclass(frozen=True)
class Request:
    """A validated submission, ready to be sent as a pull request.

    Attributes:
        slug: Entry name (folder under ``requests/`` and later ``submissions/``).
        meta: The validated metadata.
        files: Path in the repo -> content (``predictions.jsonl.gz``, ``meta.yaml`` and, when
            the file has a run record, ``run.json``).
        results: The local scores (shown to the submitter, never sent).

    """

    slug: str
    meta: dict
    files: dict[str, bytes]
    results: dict


def meta_bytes(meta: dict) -> bytes:
    """``meta.yaml`` as ``submit`` stores it (keys sorted)."""
    import yaml

    return yaml.safe_dump(dict(meta), sort_keys=True, allow_unicode=True).encode("utf-8")


def validate_files(predictions: str | os.PathLike, meta_path: str | os.PathLike,
                   data_dir: str | os.PathLike, scorer: Scorer | None = None
                   ) -> tuple[dict, bytes, dict]:
    """Check a prediction file and its metadata exactly as ``submit`` does.

    Returns:
        The validated metadata, the predictions as JSONL bytes, and the scorer's results.

    Raises:
        ConfigError: Bad metadata.
        PredictionFileError: The scorer rejects the file, or a suite is not fully covered.

    """
    from consistency_bench.bench.predictions.records import to_jsonl
    from consistency_bench.bench.scoring.engine import score_file
    from consistency_bench.bench.scoring.results_json import require_coverage

    meta = read_meta(meta_path)
    jsonl = to_jsonl(os.fspath(predictions))
    results = dict((scorer or score_file)(Path(predictions), os.fspath(data_dir)))
    require_coverage(results, str(predictions))
    return meta, jsonl, results


def prepare(predictions: str | os.PathLike, *, name: str, meta_path: str | os.PathLike,
            data_dir: str | os.PathLike, scorer: Scorer | None = None,
            variant: str | None = None) -> Request:
    """Validate a submission and build the files of its pull request.

    Raises:
        ConfigError: Bad name (checked first) or metadata, or a file above its cap
            (:data:`MAX_REQUEST_BYTES`, which ``review`` would refuse).
        PredictionFileError: The scorer rejects the file.

    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.leaderboard.intake.duplicates import with_variant
    from consistency_bench.leaderboard.reproduce.run_records import entry_record

    slug = slugify(name)  # the one name rule (submissions_meta.slug_problem), first
    with_variant(read_meta(meta_path), variant, str(meta_path))  # a bad --variant: before scoring
    meta, jsonl, results = validate_files(predictions, meta_path, data_dir, scorer)
    meta = with_variant(meta, variant, str(meta_path))
    files = {f"{REQUESTS}/{slug}/{PREDICTIONS}": gzip_bytes(jsonl),
             f"{REQUESTS}/{slug}/{META}": meta_bytes(meta)}
    record = entry_record(predictions, jsonl)
    if record is not None:
        files[f"{REQUESTS}/{slug}/{RUN_RECORD}"] = record
    for path, data in files.items():
        cap = MAX_REQUEST_BYTES[path.rsplit("/", 1)[1]]
        if len(data) > cap:
            raise ConfigError(f"{path}: {len(data):,} bytes, above the {cap:,} bytes review "
                              "takes; nothing was sent")
    return Request(slug, meta, files, results)


def plan_request(request: Request, repo_id: str) -> Plan:
    """One pull request on the leaderboard's dataset repo adding ``requests/<slug>/``."""
    message = f"Submit {request.slug} ({request.meta['model']})"
    return Plan(repo_id, "dataset", dict(sorted(request.files.items())), message,
                create_pr=True, create_repo=False)


def taken_paths(repo_id: str, slug: str, *, endpoint: str | None = None,
                token: str | None = None) -> list[str]:
    """``submissions/<slug>`` and ``requests/<slug>`` as far as they exist on ``main``."""
    from huggingface_hub import HfApi

    from consistency_bench.leaderboard.hub.verify_published import hub_call

    api = HfApi(endpoint=endpoint, token=token)
    found = hub_call(repo_id, "checking the name", api.get_paths_info, repo_id,
                     [f"submissions/{slug}", f"{REQUESTS}/{slug}"], repo_type="dataset")
    return sorted(f.path for f in found)


def published_board(repo_id: str, *, endpoint: str | None = None,
                    token: str | None = None) -> object:
    """The parsed ``leaderboard.json`` on the repo's ``main``, or ``None`` when it has none."""
    import tempfile

    from huggingface_hub import HfApi

    from consistency_bench.bench.io.json_input import load_json_file
    from consistency_bench.leaderboard.hub.verify_published import download, hub_call

    api = HfApi(endpoint=endpoint, token=token)
    found = hub_call(repo_id, "checking for leaderboard.json", api.get_paths_info, repo_id,
                     ["leaderboard.json"], repo_type="dataset")
    if not found:
        return None
    with tempfile.TemporaryDirectory(prefix="cb-board-") as tmp:
        return load_json_file(download(api, repo_id, "leaderboard.json", "main", Path(tmp)))


def submit_request(predictions: str | os.PathLike, *, name: str, meta_path: str | os.PathLike,
                   data_dir: str | os.PathLike, repo_id: str, dry_run: bool = False,
                   log: Callable[[str], None] = print, variant: str | None = None) -> None:
    """Validate a submission as a local ``submit`` does, then open its pull request.

    What ``submit --hub`` does: the file is scored locally (the scores are not sent), the pull
    request planned, and with ``dry_run`` only described; otherwise the name is checked against
    the Hub before anything is sent.

    Raises:
        ConfigError: A bad repo id, name or metadata, or a name the Hub already holds (nothing
            is sent).
        PredictionFileError: The scorer rejects the file.

    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.scoring.results_json import invalid_warning
    from consistency_bench.leaderboard.intake.duplicates import (
        board_candidates,
        candidate,
        check_duplicate,
    )
    from consistency_bench.leaderboard.publish.commit import check_repo_id, execute

    repo = check_repo_id(repo_id, "--hub")
    request = prepare(predictions, name=name, meta_path=meta_path, data_dir=data_dir,
                      variant=variant)
    warning = invalid_warning(request.results, str(predictions))
    if warning:
        log(warning)
    log(f"validated {predictions}: {len(request.results.get('suites', {}))} suites "
        "scored locally (the maintainers score the request again; these scores are not sent)")
    plan = plan_request(request, repo)
    if dry_run:
        log("\n".join(plan.describe()))
        log("dry run: nothing sent (the name is checked against the Hub without --dry-run)")
        return
    taken = taken_paths(repo, request.slug)
    if taken:
        raise ConfigError(f"--name {name!r}: {repo} already has {', '.join(taken)}; "
                          "choose another name; nothing was sent")
    jsonl = gzip.decompress(request.files[f"{REQUESTS}/{request.slug}/{PREDICTIONS}"])
    check_duplicate(candidate(request.slug, jsonl, request.meta),
                    board_candidates(published_board(repo)), how="--variant TEXT",
                    where=f"{predictions}: ", outcome="nothing was sent")
    execute(plan)
