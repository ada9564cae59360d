"""lm-evaluation-harness both ways: task YAMLs from a built folder, samples back to predictions.

``export-lm-eval`` writes one ``multiple_choice`` task per suite, named
``consistency_bench_<suite>``, plus the group ``consistency_bench``. Prompts and verbalisers
come from ``bench.prompts``, the table ``predict`` uses, so both routes score the same
strings. Each task records the suite's sha256 from ``suites.json`` in ``metadata``; a
``--hub`` task also pins the dataset commit (``dataset_kwargs.revision``, a SHA given or
resolved at export). Each task carries its suite's few-shot pool (``bench.fewshot``) in the
seed's order with lm-eval's ``first_n`` sampler, so ``--num_fewshot K`` shows the K
demonstrations ``predict --num-fewshot K`` shows; a suite without a pool is pinned to
``num_fewshot: 0`` (lm-eval would otherwise draw demonstrations from the test rows).

Rows whose gold ``label`` is null (derived transitive / additive rows, "no confident choice"
coherence spans) would crash lm-eval's target handling; the target template maps null to the
sentinel index 0. lm-eval's own ``acc`` therefore counts those rows against label 0: it is
not a consistency score. The consistency scores come from ``convert-lm-eval`` and ``score``.

``convert-lm-eval`` reads lm-eval's ``--log_samples`` output: the per-choice log-likelihoods
of every row (``doc.id`` is the row id) become a prediction file with ``label`` = the best
choice and ``probs`` = the softmax over the choices, as ``predict`` writes for causal LMs.
It refuses samples made on a suite whose sha256 differs from the built folder's, samples
whose logged document differs from the suite row of that id (lm-eval loaded other data than the
exported hash says: another Hub revision, an edited copy), and samples that cover a suite only
partly. A suite lm-eval ran 0-shot for want of a pool while others ran K-shot is left out, as
``predict --num-fewshot K`` leaves it out.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench.errors import ConfigError, DataError, shorten
from bench.json_input import depth_above, too_deep_message

TASK_PREFIX = "consistency_bench_"
GROUP = "consistency_bench"
#: lm-eval's file names: ``samples_<task>_<date id>.jsonl`` beside ``results_<date id>.json``.
SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
#: A dataset revision the ``--hub`` tasks pin: a full git commit SHA.
REVISION_RE = re.compile(r"[0-9a-f]{40}")
#: Target template: the gold index, or the sentinel 0 where the row has no gold label.
TARGET_TEMPLATE = "{{label if label is not none else 0}}"


def task_name(suite: str) -> str:
    """lm-eval task name of a suite."""
    return TASK_PREFIX + suite


def task_config(suite: str, entry: dict, data_dir: Path, hub: str | None = None,
                is_pair: bool = True, fewshot: dict | str | None = None,
                revision: str | None = None) -> dict:
    """The lm-eval task config (a dict, written as YAML) of one built suite.

    Args:
        suite: Suite name.
        entry: Its ``suites.json`` entry.
        data_dir: Built folder (used unless ``hub`` is given; written as an absolute path).
        hub: ``ORG/NAME`` of the published dataset: the task loads config ``suite`` from it,
            at ``revision`` (a commit SHA, required with ``hub``).
        is_pair: Whether rows have a second text (only matters for the generic prompt).
        fewshot: ``{"pool", "sha256", "seed", "samples"}`` (the pool in the seed's order,
            ``bench.fewshot.seed_order``): lm-eval's ``first_n`` sampler takes
            ``samples[:K]``, the demonstrations ``predict`` uses. A string (why the suite has
            no pool) pins ``num_fewshot: 0``; None (no pools in the folder) does the same.
        revision: The dataset commit SHA a ``hub`` task pins (``dataset_kwargs.revision``).

    """
    from bench.prompts import TARGET_DELIMITER, lookup
    from bench.runner import suite_task

    task = suite_task(entry)
    spec = lookup(entry.get("family"), task.name, task.label_names, is_pair)
    config: dict = {"task": task_name(suite), "tag": [GROUP + "_" + entry["family"]]}
    if hub:
        if not revision or not REVISION_RE.fullmatch(revision):
            raise ConfigError(f"--hub {hub}: the dataset revision must be a 40-hex commit SHA, "
                              f"got {revision!r}")
        config.update(dataset_path=hub, dataset_name=suite,
                      dataset_kwargs={"revision": revision})
    else:
        path = (data_dir / entry.get("path", f"{suite}/test.parquet")).resolve()
        config.update(dataset_path="parquet", dataset_kwargs={"data_files": {"test": str(path)}})
    config.update(
        test_split="test",
        output_type="multiple_choice",
        doc_to_text=spec.template,
        doc_to_choice=list(spec.choices),
        doc_to_target=TARGET_TEMPLATE,
        target_delimiter=TARGET_DELIMITER,
        metric_list=[{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
    )
    if isinstance(fewshot, dict):
        config.update(fewshot_config={"sampler": "first_n", "samples": fewshot["samples"]})
        shots: dict | str = {k: fewshot[k] for k in ("pool", "sha256", "seed")}
        shots["rows"] = len(fewshot["samples"])
    else:
        # without a pool lm-eval would draw demonstrations from the test rows themselves
        config.update(num_fewshot=0)
        shots = fewshot or "no few-shot pools in the built folder"
    config.update(
        metadata={
            "version": entry.get("version", "1.0.0"),
            "suite": suite,
            "sha256": entry["sha256"],
            "rows": entry["rows"],
            **({"revision": revision} if hub else {}),
            "fewshot": shots,
            "note": "rows without a gold label use the target sentinel 0; lm-eval's acc is "
            "not a consistency score: convert-lm-eval + score give those",
        },
    )
    return config


def suite_fewshot(root: Path, manifest: dict, pools: dict, suite: str, seed: int,
                  cache: dict) -> dict | str:
    """The ``fewshot`` argument of :func:`task_config` for ``suite`` (pool or reason)."""
    from bench.fewshot import COLUMNS, load_pool, no_pool_reason, seed_order, suite_pool

    name = suite_pool(pools, manifest[suite])
    if name is None:
        return no_pool_reason(manifest[suite])
    if name not in cache:
        cache[name] = load_pool(root, name, pools[name])
    samples = [{c: row[c] for c in COLUMNS} for row in seed_order(cache[name], seed)]
    return {"pool": name, "sha256": pools[name]["sha256"], "seed": seed, "samples": samples}


def resolve_revision(hub: str, revision: str | None) -> str:
    """The commit SHA the ``--hub`` tasks pin: ``revision`` checked, or ``main`` resolved.

    A branch or tag name is resolved through ``huggingface_hub`` (``HF_ENDPOINT`` selects the
    Hub) to the commit it points at now, so the tasks load exactly that commit later.

    Raises:
        ConfigError: ``revision`` is not a SHA and cannot be resolved (offline, unknown repo).

    """
    if revision is not None and REVISION_RE.fullmatch(revision):
        return revision
    from huggingface_hub import HfApi

    ref = revision or "main"
    try:
        sha = HfApi().dataset_info(hub, revision=ref).sha
    except Exception as exc:
        raise ConfigError(
            f"--hub {hub}: cannot resolve revision {ref!r} to a commit SHA "
            f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); pass "
            "--dataset-revision SHA (the commit publish-suites made)"
        ) from None
    if not sha or not REVISION_RE.fullmatch(sha):
        raise ConfigError(f"--hub {hub}: the Hub answered revision {sha!r} for {ref!r}, not a "
                          "commit SHA; pass --dataset-revision SHA")
    return sha


def export_tasks(data_dir: str | os.PathLike, out: str | os.PathLike,
                 suites: Sequence[str] | None = None, hub: str | None = None,
                 overwrite: bool = False, seed: int = 0,
                 log=None, revision: str | None = None) -> list[Path]:
    """Write one task YAML per suite and the group YAML into ``out``; return the files.

    With ``hub``, every task pins the dataset's commit (:func:`resolve_revision`).

    Each task carries its suite's few-shot pool in ``seed``'s order (:func:`suite_fewshot`);
    a suite without a pool is pinned to ``num_fewshot: 0`` and reported through ``log``.

    ``out`` is written as a whole (a temporary sibling renamed into place), so an earlier
    export's task files do not linger beside the new ones; files the export did not write (a
    user's ``my_task.yaml``) are kept.

    Raises:
        DataError: ``data_dir`` is not a built folder, or a suite is not in it.
        ConfigError: ``hub`` is not ``ORG/NAME``; ``out`` is a file, or a non-empty folder
            that is not an earlier export (it holds no ``consistency_bench.yaml``) and
            ``overwrite`` is false.

    """
    import pyarrow.parquet as pq
    import yaml

    from bench.atomic import atomic_dir, check_output_dir
    from bench.fewshot import read_pools
    from bench.manifest import parquet_path, read_manifest

    if hub is not None and not re.fullmatch(r"[\w.\-]+/[\w.\-]+", hub):
        raise ConfigError(f"--hub {hub!r}: use ORG/NAME, the dataset publish-suites pushed")
    root = Path(data_dir)
    manifest = read_manifest(root)
    chosen = list(suites) if suites else sorted(manifest)
    unknown = [s for s in chosen if s not in manifest]
    if unknown:
        raise DataError(f"suites not in {root / 'suites.json'}: {', '.join(unknown)}")
    out = check_output_dir(out, overwrite=overwrite, replaceable=f"{GROUP}.yaml",
                           owner="export-lm-eval")
    if hub is not None:
        revision = resolve_revision(hub, revision)
    pools = read_pools(root)
    texts, cache = {}, {}
    for suite in chosen:
        pairs = pq.read_table(parquet_path(root, suite), columns=["text_pair"]).column(0)
        is_pair = pairs.null_count < len(pairs)
        fewshot = suite_fewshot(root, manifest, pools, suite, seed, cache) if pools else None
        if not isinstance(fewshot, dict) and log is not None:
            log(f"{task_name(suite)}: num_fewshot pinned to 0: "
                f"{fewshot or 'no few-shot pools in ' + str(root)}")
        config = task_config(suite, manifest[suite], root, hub, is_pair, fewshot, revision)
        texts[f"{task_name(suite)}.yaml"] = yaml.safe_dump(config, sort_keys=False,
                                                           allow_unicode=True, width=1000)
    group = {"group": GROUP, "task": [task_name(s) for s in chosen],
             "metadata": {"version": 1.0}}
    texts[f"{GROUP}.yaml"] = yaml.safe_dump(group, sort_keys=False)
    with atomic_dir(out, owner="export-lm-eval",  # the user's own files are kept
                    legacy=(f"{GROUP}*.yaml",)) as tmp:
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")
    return [out / name for name in texts]


# ----------------------------------------------------------------------------- convert


def find_samples(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Every ``samples_*.jsonl`` file given or under the given folders.

    Raises:
        DataError: A path does not exist, or none holds a samples file.

    """
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("samples_*.jsonl")))
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise DataError(f"{path}: not a regular file or folder (a FIFO, socket or device)")
        else:
            raise DataError(f"{path}: no such file or folder")
    if not found:
        raise DataError(
            f"no samples_*.jsonl under {', '.join(map(str, paths))}; run lm-eval with "
            "--log_samples --output_path DIR"
        )
    return found


def _task_of(path: Path) -> tuple[str, str]:
    match = SAMPLES_RE.match(path.name)
    if not match:
        raise DataError(
            f"{path}: not an lm-eval samples file name (samples_<task>_<date>.jsonl)"
        )
    return match["task"], match["date"]


def _results_file(path: Path, date: str) -> dict:
    """The ``results_<date>.json`` lm-eval wrote beside ``path`` (configs, ``n-shot``)."""
    results = path.with_name(f"results_{date}.json")
    if not results.is_file():
        raise DataError(
            f"{path}: {results.name} is not beside it; convert-lm-eval reads the suite hashes "
            "from lm-eval's results file (keep the --output_path folder as lm-eval wrote it)"
        )
    try:
        text = results.read_text(encoding="utf-8")
        depth = depth_above(text)
        if depth is not None:
            raise DataError(f"{results}: {too_deep_message(depth)}")
        found = json.loads(text)
    except (OSError, ValueError) as exc:  # ValueError: JSON, UTF-8, digits
        raise DataError(f"{results}: not a readable lm-eval results file ({exc})") from None
    if not isinstance(found, dict):
        raise DataError(f"{results}: not a readable lm-eval results file (not a JSON object)")
    for field in ("configs", "n-shot"):
        if not isinstance(found.get(field, {}), dict):
            raise DataError(f"{results}: field {field!r} is not an object of tasks")
    return found


def _lls(sample: dict, path: Path, line: int, n_choices: int) -> list[float]:
    """The log-likelihood of each choice: finite numbers, one per label of the suite."""
    resps = sample.get("filtered_resps", sample.get("resps"))
    if not isinstance(resps, list) or not resps:
        raise DataError(f"{path}:{line}: field filtered_resps missing or empty")
    if len(resps) != n_choices:
        raise DataError(f"{path}:{line}: field filtered_resps has {len(resps)} choices; the "
                        f"suite has {n_choices} labels (samples of another task export?)")
    out = []
    for resp in resps:
        while isinstance(resp, list) and resp and isinstance(resp[0], list):
            resp = resp[0]
        value = resp[0] if isinstance(resp, list) else resp
        number = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):  # lm-eval may log numbers as strings
            try:
                number = float(value)
            except ValueError:
                number = None
        if number is None or not math.isfinite(number):
            raise DataError(f"{path}:{line}: field filtered_resps value {shorten(resp)}: not a "
                            "log-likelihood (a finite number)")
        out.append(number)
    return out


def _continuations(arguments) -> list[str]:
    """The choices of a sample, without the target delimiter.

    lm-eval logs ``{"gen_args_0": {"arg_0": ctx, "arg_1": cont}}`` or ``[[ctx, cont], ...]``.
    """
    if not isinstance(arguments, (dict, list)):
        return []
    if isinstance(arguments, dict):
        arguments = [[a.get("arg_0"), a.get("arg_1")] if isinstance(a, dict) else a
                     for a in arguments.values()]
    out = []
    for arg in arguments or []:
        cont = str(arg[1]) if isinstance(arg, list | tuple) and len(arg) > 1 else ""
        out.append(cont[1:] if cont.startswith(" ") else cont)
    return out


#: Row fields compared between a sample's ``doc`` and the suite row it names.
DOC_FIELDS = ("text", "text_pair", "label")


def doc_mismatches(suite: str, rows: Sequence[dict], docs: dict[str, dict]) -> list[str]:
    """Rows whose document in lm-eval's samples differs from the built suite's row.

    Every column the row and the document share is compared, ``DOC_FIELDS`` at least (a
    document without one of them is a mismatch): lm-eval must have scored these rows, not
    rows of another copy of the suite with the same ids.
    """
    bad = []
    for row in rows:
        doc = docs[row["id"]]
        fields = dict.fromkeys([*DOC_FIELDS, *(k for k in row if k in doc)])
        for field in fields:
            if field not in doc or doc[field] != row.get(field):
                bad.append(f"row {row['id']} field {field}: lm-eval saw "
                           f"{str(doc.get(field, '<missing>'))[:60]!r}, the suite has "
                           f"{str(row.get(field))[:60]!r}")
                break
    return bad


def convert_samples(paths: Sequence[str | os.PathLike], data_dir: str | os.PathLike,
                    out: str | os.PathLike, length_norm: str | None = None,
                    log=None) -> dict[str, int]:
    """Write a prediction file from lm-eval samples; return rows written per suite.

    Args:
        paths: ``--output_path`` folders or ``samples_*.jsonl`` files.
        data_dir: The built folder the tasks were exported from.
        out: Prediction file (JSONL) to write, atomically.
        length_norm: None or ``"chars"`` (lm-eval's ``acc_norm``).
        log: Receives one line per suite left out (run 0-shot for want of a few-shot pool
            while the other suites ran K-shot, as ``predict --num-fewshot K`` skips them).

    Raises:
        DataError: A suite hash differs from the built folder's; a sample's document differs
            from the suite row it names; a suite is covered only partly or twice; a sample
            names a row that is not in its suite.

    """
    import pyarrow.parquet as pq

    from bench.atomic import atomic_path
    from bench.causal import choice_probs
    from bench.manifest import parquet_path, read_manifest

    if length_norm not in (None, "chars"):
        raise ConfigError(f"--length-norm {length_norm!r}: convert-lm-eval supports chars "
                          "(lm-eval logs no token counts)")
    root = Path(data_dir)
    manifest = read_manifest(root)
    per_suite: dict[str, dict[str, list]] = {}
    seen_in: dict[str, Path] = {}
    shots: dict[str, tuple[int, object]] = {}
    for path in find_samples(paths):
        task, date = _task_of(path)
        if not task.startswith(TASK_PREFIX):
            continue  # another task of the same lm-eval run
        suite = task[len(TASK_PREFIX):]
        if suite not in manifest:
            raise DataError(f"{path}: suite {suite!r} is not in {root / 'suites.json'}")
        if suite in seen_in:
            raise DataError(f"suite {suite}: samples in both {seen_in[suite]} and {path}; "
                            "pass one run's output")
        seen_in[suite] = path
        results = _results_file(path, date)
        config = (results.get("configs") or {}).get(task)
        config = config if isinstance(config, dict) else {}
        meta = config.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        try:
            n_shot = int((results.get("n-shot") or {}).get(task, config.get("num_fewshot")) or 0)
        except (TypeError, ValueError):
            raise DataError(f"{path}: the results file gives no readable n-shot for "
                            f"{task}") from None
        shots[suite] = (n_shot, meta.get("fewshot"))
        expected = manifest[suite]["sha256"]
        if meta.get("sha256") != expected:
            raise DataError(
                f"suite {suite}: the lm-eval task was exported from a suite with sha256 "
                f"{meta.get('sha256')}, the built folder {root} has {expected}; re-export "
                "with export-lm-eval and rerun lm-eval"
            )
        records: dict[str, list] = {}
        with open(path, "rb") as handle:
            for line_no, raw in enumerate(handle, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataError(f"{path}:{line_no}: not valid UTF-8 ({exc.reason} at byte "
                                    f"{exc.start})") from None
                if not line.strip():
                    continue
                depth = depth_above(line)
                if depth is not None:
                    raise DataError(f"{path}:{line_no}: {too_deep_message(depth)}")
                try:
                    sample = json.loads(line)
                    row_id = sample["doc"]["id"]
                except (ValueError, KeyError, TypeError) as exc:  # ValueError: JSON, 4,300+ digits
                    raise DataError(f"{path}:{line_no}: not an lm-eval sample with doc.id "
                                    f"({exc})") from None
                if not isinstance(row_id, str) or not row_id:
                    raise DataError(f"{path}:{line_no}: field doc.id value {shorten(row_id)}: "
                                    "expected a row id string")
                lls = _lls(sample, path, line_no, len(manifest[suite]["label_names"]))
                choices = _continuations(sample.get("arguments"))
                if len(choices) != len(lls):
                    choices = [""] * len(lls)
                records[row_id] = [lls, choices, sample["doc"]]
        per_suite[suite] = records
    if not per_suite:
        raise DataError(f"no {TASK_PREFIX}* samples in {', '.join(map(str, paths))}")
    k = max(n for n, _ in shots.values())
    for suite, (n, pool) in sorted(shots.items()):
        if k and not n and not isinstance(pool, dict):
            del per_suite[suite]
            if log is not None:
                log(f"suite {suite}: left out: lm-eval ran it 0-shot ({pool}) while other "
                    f"suites ran {k}-shot")
    counts: dict[str, int] = {}
    with atomic_path(Path(out)) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for suite in sorted(per_suite):
            rows = pq.read_table(parquet_path(root, suite)).to_pylist()
            ids = [r["id"] for r in rows]
            records = per_suite[suite]
            extra = set(records) - set(ids)
            if extra:
                raise DataError(f"suite {suite}: {len(extra)} samples name rows not in the "
                                f"suite, e.g. {sorted(extra)[0]!r}")
            if len(records) != len(ids):
                raise DataError(
                    f"suite {suite}: samples cover {len(records)} of {len(ids)} rows "
                    f"({seen_in[suite]}); rerun lm-eval without --limit"
                )
            bad = doc_mismatches(suite, rows, {i: r[2] for i, r in records.items()})
            if bad:
                raise DataError(
                    f"suite {suite}: {len(bad)} of {len(ids)} documents in {seen_in[suite]} "
                    f"differ from {parquet_path(root, suite)} (first: {bad[0]}); lm-eval "
                    "loaded other data than the built folder: export from it (pin the Hub "
                    "revision) and rerun lm-eval"
                )
            for row_id in ids:
                lls, choices, _ = records[row_id]
                probs = choice_probs(lls, [1] * len(lls), choices, length_norm)
                label = max(range(len(probs)), key=probs.__getitem__)
                handle.write(json.dumps({"id": row_id, "label": label,
                                         "probs": [round(p, 6) for p in probs]}) + "\n")
            counts[suite] = len(ids)
    return counts
