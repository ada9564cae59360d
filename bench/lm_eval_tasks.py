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

The two directions live in modules of one job each: :mod:`~bench.lm_eval_export` (the task
YAMLs, ``export_tasks``) and :mod:`~bench.lm_eval_convert` (the samples read back,
``convert_samples``). Their names are importable from here too.
"""

from __future__ import annotations

from bench.lm_eval_convert import (
    DOC_FIELDS,
    SAMPLES_RE,
    convert_samples,
    doc_mismatches,
    find_samples,
)
from bench.lm_eval_export import (
    GROUP,
    REVISION_RE,
    TARGET_TEMPLATE,
    TASK_PREFIX,
    export_tasks,
    resolve_revision,
    suite_fewshot,
    task_config,
    task_name,
)

__all__ = [
    "DOC_FIELDS",
    "GROUP",
    "REVISION_RE",
    "SAMPLES_RE",
    "TARGET_TEMPLATE",
    "TASK_PREFIX",
    "convert_samples",
    "doc_mismatches",
    "export_tasks",
    "find_samples",
    "resolve_revision",
    "suite_fewshot",
    "task_config",
    "task_name",
]
