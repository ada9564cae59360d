"""``convert-lm-eval``: lm-evaluation-harness ``--log_samples`` output back to a prediction file.

Part of :mod:`bench.lm_eval_tasks` (what is refused, and why, is described there).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, DataError, shorten
from consistency_bench.bench.io.json_input import (
    JsonFileError,
    depth_above,
    load_json_file,
    too_deep_message,
)
from consistency_bench.bench.lm_eval.export_tasks import GEN_PREFIX, TASK_PREFIX

#: lm-eval's file names: ``samples_<task>_<date id>.jsonl`` beside ``results_<date id>.json``.
SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


def find_samples(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Every ``samples_*.jsonl`` file given or under the given folders.

    Raises:
        DataError: A path does not exist, or none holds a samples file.

    """
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            inside = sorted(path.rglob("samples_*.jsonl"))
            for p in inside:  # a FIFO named samples_*.jsonl blocked the read forever
                _regular(p)
            found.extend(inside)
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


def _regular(path: Path) -> None:
    """Refuse a file found in a folder that is not a regular file (or a link to one).

    Raises:
        DataError: A FIFO (opening it blocks until a writer comes), a socket, a device, a
            folder named like a samples file, or a broken link.

    """
    import stat

    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        what = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a folder"
                if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device")
        raise DataError(f"{path}: is {what}, not a regular file; lm-eval writes its samples "
                        "as regular files")


def input_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The files ``convert-lm-eval`` reads that a folder walk does not cover.

    The ``results_<date>.json`` beside each samples file given directly (a folder given is
    searched whole by :func:`consistency_bench.bench.io.output_checks.check_output_file`): an output
    must not be
    one of them.
    """
    out = []
    for item in paths:
        match = SAMPLES_RE.match(Path(item).name)
        if match and not Path(item).is_dir():
            out.append(Path(item).with_name(f"results_{match['date']}.json"))
    return out


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
    if os.path.lexists(results):
        _regular(results)  # a FIFO would block the read
    if not results.is_file():
        raise DataError(
            f"{path}: {results.name} is not beside it; convert-lm-eval reads the suite hashes "
            "from lm-eval's results file (keep the --output_path folder as lm-eval wrote it)"
        )
    try:
        found = load_json_file(results)
    except JsonFileError as exc:  # unreadable, too large, too deep, not JSON, a key twice
        raise DataError(f"{results}: not a readable lm-eval results file ({exc.detail})"
                        ) from None
    if not isinstance(found, dict):
        raise DataError(f"{results}: not a readable lm-eval results file (not a JSON object)")
    for field in ("configs", "n-shot"):
        if not isinstance(found.get(field, {}), dict):
            raise DataError(f"{results}: field {field!r} is not an object of tasks")
    return found


def _lls(sample: dict, path: Path, line: int, n_choices: int) -> list[float]:
    """The log-likelihood of each choice: finite numbers, one per label of the suite.

    Each choice's response is ``[log-likelihood, is_greedy]`` in one of the two forms lm-eval
    writes: JSON values (a number and a boolean), or every value as text, which is how
    lm-eval 0.4 writes its samples files (``EvaluationTracker.save_results_samples`` passes
    ``resps`` and ``filtered_resps`` through ``utils.sanitize_list``, which applies ``str``:
    ``["-1.2345", "False"]``). Text is read only in that form: a float exactly as Python's
    ``str`` writes it and ``"True"`` / ``"False"``; any other text (``" -1"``, ``"1e0"``,
    ``"-1,0"``, ``"٣"``), a mix of the two forms (``["-1.0", false]``), NaN or an infinity is
    refused.
    """
    resps = sample.get("filtered_resps", sample.get("resps"))
    if not isinstance(resps, list) or not resps:
        raise DataError(f"{path}:{line}: field filtered_resps missing or empty")
    if len(resps) != n_choices:
        raise DataError(f"{path}:{line}: field filtered_resps has {len(resps)} choices; the "
                        f"suite has {n_choices} labels (samples of another task export?)")
    out, forms = [], set()
    for resp in resps:
        while isinstance(resp, list) and resp and isinstance(resp[0], list):
            resp = resp[0]
        parts = resp if isinstance(resp, list) else [resp]
        number, form = _log_likelihood(parts)
        if number is None or not math.isfinite(number):
            raise DataError(f"{path}:{line}: field filtered_resps value {shorten(resp)}: not a "
                            "log-likelihood (a finite number, or lm-eval's text of one: "
                            "[\"-1.25\", \"False\"])")
        forms.add(form)
        out.append(number)
    if len(forms) > 1:
        raise DataError(f"{path}:{line}: field filtered_resps mixes numbers and text; lm-eval "
                        "writes one form (the file was edited)")
    return out


def _log_likelihood(parts: list) -> tuple[float | None, str]:
    """``[value, flags...]`` of one choice: the number and its form (``json`` or ``text``)."""
    if not parts:
        return None, ""
    value, flags = parts[0], parts[1:]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ok = all(isinstance(f, bool) for f in flags)
        return (float(value) if ok else None), "json"
    if isinstance(value, str) and all(f in ("True", "False") for f in flags):
        try:
            number = float(value)
        except ValueError:
            return None, "text"
        return (number if str(number) == value else None), "text"  # only str(float)'s spelling
    return None, ""


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


def _generated(sample: dict, path: Path, line: int, choices: list[str]) -> list:
    """``[label index or None, None]`` of a ``generate_until`` sample (strict parsing).

    The raw response (``resps``), not lm-eval's filtered one, is parsed with
    :func:`consistency_bench.bench.served.answers.parse_answer`, the rule ``predict --mode
    generate`` uses.
    """
    from consistency_bench.bench.served.answers import parse_answer

    resp = sample.get("resps")
    while isinstance(resp, list) and resp:
        resp = resp[0]
    if not isinstance(resp, str):
        raise DataError(f"{path}:{line}: field resps value {shorten(sample.get('resps'))}: "
                        "not a generated answer (a string)")
    return [parse_answer(resp, choices), None]


def _choices(meta: dict, path: Path, entry: dict) -> list[str]:
    """The verbalisers a generative task recorded in its metadata (``export-lm-eval``)."""
    choices = meta.get("choices")
    if (not isinstance(choices, list) or len(choices) != len(entry["label_names"])
            or not all(isinstance(c, str) for c in choices)):
        raise DataError(f"{path}: the results file gives no verbalisers for this generative "
                        f"task (metadata.choices {shorten(choices)}); export it again with "
                        "export-lm-eval --generative")
    return choices


def _task_suite(task: str) -> tuple[str | None, bool]:
    """The suite of an lm-eval task name and whether it is a generative variant."""
    if task.startswith(GEN_PREFIX):
        return task[len(GEN_PREFIX):], True
    if task.startswith(TASK_PREFIX):
        return task[len(TASK_PREFIX):], False
    return None, False


def _record(first, second, length_norm) -> dict:
    """A prediction record's ``label`` and ``probs`` from a stored sample.

    ``[log-likelihoods, choices]`` of a multiple-choice sample: softmax and argmax;
    ``[label or None, None]`` of a generated answer: the label only (None: invalid).
    """
    from consistency_bench.bench.runner.causal import choice_probs
    from consistency_bench.bench.served.answers import INVALID_ANSWER

    if second is None:
        return {"label": INVALID_ANSWER if first is None else first}
    probs = choice_probs(first, [1] * len(first), second, length_norm)
    label = max(range(len(probs)), key=probs.__getitem__)
    return {"label": label, "probs": [round(p, 6) for p in probs]}


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


def read_samples(path: Path, n_labels: int, choices: list[str] | None = None
                 ) -> dict[str, list]:
    """Each document of one samples file: ``doc.id -> [first, second, doc, line]``.

    ``[log-likelihoods, continuations, ...]`` of a multiple-choice sample, or, for a
    generative task (``choices``: its verbalisers), ``[label or None, None, ...]`` of the
    generated answer (:func:`_generated`).

    Raises:
        DataError: A line that is not UTF-8, too deep, not a sample with a string ``doc.id``,
            a bad log-likelihood, or a document given twice (file and line named).

    """
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
            if row_id in records:  # the later line silently won
                raise DataError(f"{path}:{line_no}: field doc.id value {shorten(row_id)}: "
                                f"given twice (first on line {records[row_id][3]}); "
                                "lm-eval writes each document once")
            if choices is not None:
                first, second = _generated(sample, path, line_no, choices)
            else:
                first = _lls(sample, path, line_no, n_labels)
                second = _continuations(sample.get("arguments"))
                if len(second) != len(first):
                    second = [""] * len(first)
            records[row_id] = [first, second, sample["doc"], line_no]
    return records


# One piece (over 60 lines): read, check and write one prediction file, in that order.
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

    from consistency_bench.bench.io.manifest import parquet_path, read_manifest
    from consistency_bench.bench.io.write import atomic_path

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
        suite, generative = _task_suite(task)
        if suite is None:
            continue  # another task of the same lm-eval run
        if suite not in manifest:
            raise DataError(f"{path}: suite {suite!r} is not in {root / 'suites.json'}")
        if suite in seen_in:
            raise DataError(f"suite {suite}: samples in both {seen_in[suite]} and {path}; "
                            "pass one run's output")
        seen_in[suite] = path
        meta, n_shot = _task_metadata(path, task, date)
        shots[suite] = (n_shot, meta.get("fewshot"))
        expected = manifest[suite]["sha256"]
        if meta.get("sha256") != expected:
            raise DataError(
                f"suite {suite}: the lm-eval task was exported from a suite with sha256 "
                f"{meta.get('sha256')}, the built folder {root} has {expected}; re-export "
                "with export-lm-eval and rerun lm-eval"
            )
        choices = _choices(meta, path, manifest[suite]) if generative else None
        per_suite[suite] = read_samples(path, len(manifest[suite]["label_names"]), choices)
    if not per_suite:
        raise DataError(f"no {TASK_PREFIX}* samples in {', '.join(map(str, paths))}")
    _drop_zero_shot(per_suite, shots, log)
    counts: dict[str, int] = {}
    with atomic_path(Path(out)) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for suite in sorted(per_suite):
            rows = pq.read_table(parquet_path(root, suite)).to_pylist()
            ids = [r["id"] for r in rows]
            records = per_suite[suite]
            _check_coverage(suite, rows, records, seen_in[suite], parquet_path(root, suite))
            for row_id in ids:
                first, second, _, _ = records[row_id]
                handle.write(json.dumps({"id": row_id, **_record(first, second, length_norm)})
                             + "\n")
            counts[suite] = len(ids)
    return counts


def _task_metadata(path: Path, task: str, date: str) -> tuple[dict, int]:
    """The exported task's ``metadata`` and its number of shots, from the run's results file.

    Args:
        path: The samples file.
        task: Its lm-eval task name.
        date: The run's date, as in the samples file's name.

    Returns:
        ``(metadata, n_shot)``; the metadata is ``{}`` when the results file has none.

    Raises:
        DataError: The results file gives no readable n-shot for the task.

    """
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
    return meta, n_shot


def _drop_zero_shot(per_suite: dict, shots: dict, log) -> None:
    """Drop the suites run 0-shot (no few-shot pool) while others ran K-shot; log each."""
    k = max(n for n, _ in shots.values())
    for suite, (n, pool) in sorted(shots.items()):
        if k and not n and not isinstance(pool, dict):
            del per_suite[suite]
            if log is not None:
                log(f"suite {suite}: left out: lm-eval ran it 0-shot ({pool}) while other "
                    f"suites ran {k}-shot")


def _check_coverage(suite: str, rows: list[dict], records: dict, source: Path,
                    parquet: Path) -> None:
    """Check that a suite's samples cover each of its rows once, with the row's document.

    Raises:
        DataError: A sample names a row not in the suite, a row has no sample, or a
            sample's document differs from its row's.

    """
    ids = [r["id"] for r in rows]
    extra = set(records) - set(ids)
    if extra:
        raise DataError(f"suite {suite}: {len(extra)} samples name rows not in the "
                        f"suite, e.g. {sorted(extra)[0]!r}")
    if len(records) != len(ids):
        raise DataError(
            f"suite {suite}: samples cover {len(records)} of {len(ids)} rows "
            f"({source}); rerun lm-eval without --limit"
        )
    bad = doc_mismatches(suite, rows, {i: r[2] for i, r in records.items()})
    if bad:
        raise DataError(
            f"suite {suite}: {len(bad)} of {len(ids)} documents in {source} "
            f"differ from {parquet} (first: {bad[0]}); lm-eval "
            "loaded other data than the built folder: export from it (pin the Hub "
            "revision) and rerun lm-eval"
        )
