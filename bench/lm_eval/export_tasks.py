"""``export-lm-eval``: one lm-evaluation-harness ``multiple_choice`` task YAML per built suite.

Part of :mod:`bench.lm_eval_tasks` (the route both ways, the pinned hashes and revisions, the
few-shot pools and the null-label target are described there).

From ``bench.lm_eval_tasks``, a re-export module that issue 29 deleted:

lm-evaluation-harness both ways: task YAMLs from a built folder, samples back to predictions.

``export-lm-eval`` writes one ``multiple_choice`` task per suite, named
``consistency_bench_<suite>``, plus the group ``consistency_bench``. Prompts and verbalisers
come from ``consistency_bench.bench.prompting.prompts``, the table ``predict`` uses, so both routes
score the
same
strings. Each task records the suite's sha256 from ``suites.json`` in ``metadata``; a
``--hub`` task also pins the dataset commit (``dataset_kwargs.revision``, a SHA given or
resolved at export). Each task carries its suite's few-shot pool
(``consistency_bench.bench.prompting.demonstrations``) in the
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

The two directions live in modules of one job each:
:mod:`~consistency_bench.bench.lm_eval.export_tasks`
(the task
YAMLs, ``export_tasks``) and :mod:`~consistency_bench.bench.lm_eval.convert_samples` (the samples
read back,
``convert_samples``).

"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, DataError

TASK_PREFIX = "consistency_bench_"
GROUP = "consistency_bench"
#: The generative variants (``export-lm-eval --generative``): task prefix and group.
GEN_PREFIX = "consistency_bench_gen_"
GEN_GROUP = "consistency_bench_gen"
#: Generation settings of a generative task (as ``predict --api openai --mode generate``).
GEN_KWARGS = {"until": ["\n"], "max_gen_toks": 8, "do_sample": False, "temperature": 0}
#: A dataset revision the ``--hub`` tasks pin: a full git commit SHA.
REVISION_RE = re.compile(r"[0-9a-f]{40}")
#: Target template: the gold index, or the sentinel 0 where the row has no gold label.
TARGET_TEMPLATE = "{{label if label is not none else 0}}"


def task_name(suite: str, generative: bool = False) -> str:
    """lm-eval task name of a suite (its generative variant with ``generative``)."""
    return (GEN_PREFIX if generative else TASK_PREFIX) + suite


def generative_config(spec) -> dict:
    """The ``generate_until`` fields of a task (``export-lm-eval --generative``).

    The prompt asks for one label word
    (``consistency_bench.bench.prompting.prompts.generative_template``),
    the
    generation stops at a newline after at most 8 tokens at temperature 0, and the ``strict``
    filter keeps an answer only when it is exactly one verbaliser (case, spaces and
    punctuation ignored: ``consistency_bench.bench.served.answers.answer_regex``), else
    ``[invalid]``. The
    target is the gold verbaliser (rows without a gold label: an empty string).
    """
    import json

    from consistency_bench.bench.prompting.prompts import generative_template
    from consistency_bench.bench.served.answers import INVALID_ANSWER, answer_regex

    choices = list(spec.choices)
    return {
        "output_type": "generate_until",
        "doc_to_text": generative_template(spec),
        "doc_to_target": "{{" + json.dumps(choices) + "[label] if label is not none else ''}}",
        "generation_kwargs": dict(GEN_KWARGS),
        "filter_list": [{"name": "strict", "filter": [
            {"function": "regex", "regex_pattern": answer_regex(choices), "group_select": 0,
             "fallback": INVALID_ANSWER},
            {"function": "take_first"}]}],
        "metric_list": [{"metric": "exact_match", "aggregation": "mean",
                         "higher_is_better": True, "ignore_case": True,
                         "ignore_punctuation": True}],
    }


# One piece (over 60 lines): one lm-eval task config dict, built key by key.
def task_config(suite: str, entry: dict, data_dir: Path, hub: str | None = None,
                is_pair: bool = True, fewshot: dict | str | None = None,
                revision: str | None = None, generative: bool = False) -> dict:
    """The lm-eval task config (a dict, written as YAML) of one built suite.

    Args:
        suite: Suite name.
        entry: Its ``suites.json`` entry.
        data_dir: Built folder (used unless ``hub`` is given; written as an absolute path).
        hub: ``ORG/NAME`` of the published dataset: the task loads config ``suite`` from it,
            at ``revision`` (a commit SHA, required with ``hub``).
        is_pair: Whether rows have a second text (only matters for the generic prompt).
        fewshot: ``{"pool", "sha256", "seed", "samples"}`` (the pool in the seed's order,
            ``consistency_bench.bench.prompting.demonstrations.seed_order``): lm-eval's ``first_n``
            sampler takes
            ``samples[:K]``, the demonstrations ``predict`` uses. A string (why the suite has
            no pool) pins ``num_fewshot: 0``; None (no pools in the folder) does the same.
        revision: The dataset commit SHA a ``hub`` task pins (``dataset_kwargs.revision``).
        generative: Write the ``generate_until`` variant (:func:`generative_config`).

    """
    from consistency_bench.bench.prompting.prompts import TARGET_DELIMITER, lookup
    from consistency_bench.bench.runner.unique_inputs import suite_task

    task = suite_task(entry)
    spec = lookup(entry.get("family"), task.name, task.label_names, is_pair)
    group = GEN_GROUP if generative else GROUP
    config: dict = {"task": task_name(suite, generative), "tag": [group + "_" + entry["family"]]}
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
    if generative:
        config.update(generative_config(spec))
        del config["doc_to_choice"], config["target_delimiter"]
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
            **({"choices": list(spec.choices)} if generative else {}),
            "fewshot": shots,
            "note": "rows without a gold label use the target sentinel 0; lm-eval's acc is "
            "not a consistency score: convert-lm-eval + score give those",
        },
    )
    return config


def suite_fewshot(root: Path, manifest: dict, pools: dict, suite: str, seed: int,
                  cache: dict) -> dict | str:
    """The ``fewshot`` argument of :func:`task_config` for ``suite`` (pool or reason)."""
    from consistency_bench.bench.prompting.demonstrations import (
        COLUMNS,
        load_pool,
        no_pool_reason,
        seed_order,
        suite_pool,
    )

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


# One piece (over 60 lines): every check before the one atomic write of the tasks.
def export_tasks(data_dir: str | os.PathLike, out: str | os.PathLike,
                 suites: Sequence[str] | None = None, hub: str | None = None,
                 overwrite: bool = False, seed: int = 0,
                 log=None, revision: str | None = None,
                 generative: bool = False) -> list[Path]:
    """Write one task YAML per suite and the group YAML into ``out``; return the files.

    With ``hub``, every task pins the dataset's commit (:func:`resolve_revision`). With
    ``generative``, the tasks are the ``generate_until`` variants (``consistency_bench_gen_*``,
    group ``consistency_bench_gen``: :func:`generative_config`).

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

    from consistency_bench.bench.io.manifest import MANIFEST, parquet_path, read_manifest
    from consistency_bench.bench.io.output_checks import check_output_dir
    from consistency_bench.bench.io.staged_folder import atomic_dir
    from consistency_bench.bench.prompting.demonstrations import read_pools

    if hub is not None and not re.fullmatch(r"[\w.\-]+/[\w.\-]+", hub):
        raise ConfigError(f"--hub {hub!r}: use ORG/NAME, the dataset publish-suites pushed")
    root = Path(data_dir)
    manifest = read_manifest(root)
    chosen = list(suites) if suites else sorted(manifest)
    unknown = [s for s in chosen if s not in manifest]
    if unknown:
        raise DataError(f"suites not in {root / 'suites.json'}: {', '.join(unknown)}")
    from consistency_bench.bench.io.output_checks import built_folder_of

    built = built_folder_of(Path(out) / MANIFEST)  # itself or a folder above it
    if built is not None:  # the tasks would become a stray folder of the build
        raise ConfigError(f"--out {out}: is inside the built suite folder {built} (it holds "
                          f"{MANIFEST}); name a folder outside it")
    group_name = GEN_GROUP if generative else GROUP
    out = check_output_dir(out, overwrite=overwrite, replaceable=f"{group_name}.yaml",
                           owner="export-lm-eval", inputs=(data_dir,))
    if hub is not None:
        revision = resolve_revision(hub, revision)
    pools = read_pools(root)
    texts, cache = {}, {}
    for suite in chosen:
        pairs = pq.read_table(parquet_path(root, suite), columns=["text_pair"]).column(0)
        is_pair = pairs.null_count < len(pairs)
        fewshot = suite_fewshot(root, manifest, pools, suite, seed, cache) if pools else None
        if not isinstance(fewshot, dict) and log is not None:
            log(f"{task_name(suite, generative)}: num_fewshot pinned to 0: "
                f"{fewshot or 'no few-shot pools in ' + str(root)}")
        config = task_config(suite, manifest[suite], root, hub, is_pair, fewshot, revision,
                             generative)
        texts[f"{task_name(suite, generative)}.yaml"] = yaml.safe_dump(
            config, sort_keys=False, allow_unicode=True, width=1000)
    group = {"group": group_name, "task": [task_name(s, generative) for s in chosen],
             "metadata": {"version": 1.0}}
    texts[f"{group_name}.yaml"] = yaml.safe_dump(group, sort_keys=False)
    with atomic_dir(out, owner="export-lm-eval",  # the user's own files are kept
                    legacy=(f"{GROUP}*.yaml",)) as tmp:
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")
    return [out / name for name in texts]
