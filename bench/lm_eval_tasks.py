"""lm-evaluation-harness both ways: task YAMLs from a built folder, samples back to predictions.

``export-lm-eval`` writes one ``multiple_choice`` task per suite, named
``consistency_bench_<suite>``, plus the group ``consistency_bench``. Prompts and verbalisers
come from ``bench.prompts``, the table ``predict`` uses, so both routes score the same
strings. Each task records the suite's sha256 from ``suites.json`` in ``metadata``.

Rows whose gold ``label`` is null (derived transitive / additive rows, "no confident choice"
coherence spans) would crash lm-eval's target handling; the target template maps null to the
sentinel index 0. lm-eval's own ``acc`` therefore counts those rows against label 0: it is
not a consistency score. The consistency scores come from ``convert-lm-eval`` and ``score``.

``convert-lm-eval`` reads lm-eval's ``--log_samples`` output: the per-choice log-likelihoods
of every row (``doc.id`` is the row id) become a prediction file with ``label`` = the best
choice and ``probs`` = the softmax over the choices, as ``predict`` writes for causal LMs.
It refuses samples made on a suite whose sha256 differs from the built folder's, and samples
that cover a suite only partly.
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
#: Target template: the gold index, or the sentinel 0 where the row has no gold label.
TARGET_TEMPLATE = "{{label if label is not none else 0}}"


def task_name(suite: str) -> str:
    """lm-eval task name of a suite."""
    return TASK_PREFIX + suite


def task_config(suite: str, entry: dict, data_dir: Path, hub: str | None = None,
                is_pair: bool = True) -> dict:
    """The lm-eval task config (a dict, written as YAML) of one built suite.

    Args:
        suite: Suite name.
        entry: Its ``suites.json`` entry.
        data_dir: Built folder (used unless ``hub`` is given; written as an absolute path).
        hub: ``ORG/NAME`` of the published dataset: the task loads config ``suite`` from it.
        is_pair: Whether rows have a second text (only matters for the generic prompt).

    """
    from bench.prompts import TARGET_DELIMITER, lookup
    from bench.runner import suite_task

    task = suite_task(entry)
    spec = lookup(entry.get("family"), task.name, task.label_names, is_pair)
    config: dict = {"task": task_name(suite), "tag": [GROUP + "_" + entry["family"]]}
    if hub:
        config.update(dataset_path=hub, dataset_name=suite)
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
        metadata={
            "version": entry.get("version", "1.0.0"),
            "suite": suite,
            "sha256": entry["sha256"],
            "rows": entry["rows"],
            "note": "rows without a gold label use the target sentinel 0; lm-eval's acc is "
            "not a consistency score: convert-lm-eval + score give those",
        },
    )
    return config


def export_tasks(data_dir: str | os.PathLike, out: str | os.PathLike,
                 suites: Sequence[str] | None = None, hub: str | None = None,
                 overwrite: bool = False) -> list[Path]:
    """Write one task YAML per suite and the group YAML into ``out``; return the files.

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
    texts = {}
    for suite in chosen:
        pairs = pq.read_table(parquet_path(root, suite), columns=["text_pair"]).column(0)
        is_pair = pairs.null_count < len(pairs)
        config = task_config(suite, manifest[suite], root, hub, is_pair)
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


def _results_configs(path: Path, date: str) -> dict:
    """Task configs from the ``results_<date>.json`` lm-eval wrote beside ``path``."""
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
        configs = json.loads(text).get("configs", {})
    except (OSError, ValueError, AttributeError) as exc:  # ValueError: JSON, UTF-8, digits
        raise DataError(f"{results}: not a readable lm-eval results file ({exc})") from None
    if not isinstance(configs, dict):
        raise DataError(f"{results}: field 'configs' is not an object of task configs")
    return configs


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


def convert_samples(paths: Sequence[str | os.PathLike], data_dir: str | os.PathLike,
                    out: str | os.PathLike, length_norm: str | None = None) -> dict[str, int]:
    """Write a prediction file from lm-eval samples; return rows written per suite.

    Args:
        paths: ``--output_path`` folders or ``samples_*.jsonl`` files.
        data_dir: The built folder the tasks were exported from.
        out: Prediction file (JSONL) to write, atomically.
        length_norm: None or ``"chars"`` (lm-eval's ``acc_norm``).

    Raises:
        DataError: A suite hash differs from the built folder's; a suite is covered only
            partly or twice; a sample names a row that is not in its suite.

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
    per_suite: dict[str, dict[str, list[float]]] = {}
    seen_in: dict[str, Path] = {}
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
        config = _results_configs(path, date).get(task)
        meta = config.get("metadata") if isinstance(config, dict) else None
        meta = meta if isinstance(meta, dict) else {}
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
                records[row_id] = [lls, choices]
        per_suite[suite] = records
    if not per_suite:
        raise DataError(f"no {TASK_PREFIX}* samples in {', '.join(map(str, paths))}")
    counts: dict[str, int] = {}
    with atomic_path(Path(out)) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for suite in sorted(per_suite):
            ids = pq.read_table(parquet_path(root, suite), columns=["id"]).column(0).to_pylist()
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
            for row_id in ids:
                lls, choices = records[row_id]
                probs = choice_probs(lls, [1] * len(lls), choices, length_norm)
                label = max(range(len(probs)), key=probs.__getitem__)
                handle.write(json.dumps({"id": row_id, "label": label,
                                         "probs": [round(p, 6) for p in probs]}) + "\n")
            counts[suite] = len(ids)
    return counts
