"""Hub Eval Results: the benchmark's ``eval.yaml`` and a model's ``.eval_results`` file.

The Hub renders a leaderboard on a benchmark dataset from its root ``eval.yaml``, and collects
each model's scores from YAML files under ``.eval_results/`` in model repos
(https://huggingface.co/docs/hub/eval-results; ``huggingface_hub.EvalResultEntry``).

One Hub task per suite: a task there names exactly one dataset config and split, and each
suite is one config, so a per-suite score is reproducible from the task alone. A task view of
the leaderboard (``task:snli``, ``kind:transitive``) spans several configs and its aggregate
depends on which suites an entry covers, so it has no single config to point at.

The value of every task is the accuracy-aware headline score, ``consistent_accuracy_cc``
(consistent accuracy corrected for chance, ``(ca - chance) / (1 - chance)``), the score the
leaderboard ranks on. Higher is better; it can be negative (below chance). Pure functions;
nothing here talks to the network.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from bench.errors import ConfigError, shorten

HEADLINE = "consistent_accuracy_cc"
EVAL_RESULTS_PATH = ".eval_results/consistency-bench.yaml"
FRAMEWORK = "consistency-bench"
DESCRIPTION = (
    "Consistency test suites for language models (BECEL, CALM, word salad, coherence). Each "
    "task is one suite (dataset config, split test). Score: consistent_accuracy_cc, the share "
    "of groups where the model is right on the original row(s) and the group's consistency "
    "relation holds, corrected for chance: (ca - chance) / (1 - chance), where chance is that "
    "share for a uniform random predictor; 1 is perfect, 0 is chance level. Scored by "
    "consistency-bench (`consistency-bench score`; docs/metrics.md)."
)


def eval_yaml(manifest: Mapping[str, Mapping], *, name: str = "consistency-bench",
              framework: str = FRAMEWORK) -> str:
    """The benchmark's ``eval.yaml``: one task per suite, ``id`` = config = suite name.

    Args:
        manifest: ``suites.json``'s ``suites`` mapping (suite name -> entry).
        name: Display name of the benchmark.
        framework: ``evaluation_framework``; the Hub accepts the names it lists (see
            docs/leaderboard.md, "Publishing to the Hub").

    """
    import yaml

    doc = {
        "name": name,
        "description": DESCRIPTION,
        "evaluation_framework": framework,
        "tasks": [{"id": suite, "config": suite, "split": "test"} for suite in sorted(manifest)],
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=88)


def headline(entry: Mapping) -> float | None:
    """The suite's headline score from a results-JSON suite entry, or None when absent/null.

    Read defensively: results scored before the score existed lack the key; a value that is
    not a finite number counts as absent.
    """
    value = entry.get(HEADLINE)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def eval_result_entries(results: Mapping, dataset_repo: str, *,
                        dataset_revision: str | None = None,
                        manifest: Mapping[str, Mapping] | None = None):
    """``EvalResultEntry`` per scored suite, and the suites left out with the reason.

    Args:
        results: A results JSON (``consistency-bench score --out``).
        dataset_repo: The benchmark dataset on the Hub (``ORG/NAME``, with the ``eval.yaml``).
        dataset_revision: Its git revision, when known.
        manifest: ``suites.json`` of the published folder: when given, a suite not in it, or
            scored on a file whose sha256 differs, is refused.

    Returns:
        ``(entries, skipped)``: entries sorted by suite; ``skipped`` maps suite -> reason.

    Raises:
        ConfigError: No suite has the headline score, or results were scored on other files.

    """
    from huggingface_hub import EvalResultEntry

    suites = results.get("suites")
    if not isinstance(suites, Mapping) or not suites:
        raise ConfigError("results JSON has no scored suites")
    entries, skipped, mismatched = [], {}, []
    for suite, entry in sorted(suites.items()):
        if manifest is not None:
            if suite not in manifest:
                skipped[suite] = "not in the published suites.json"
                continue
            if entry.get("content_hash") not in (None, manifest[suite].get("sha256")):
                mismatched.append(suite)
                continue
        value = headline(entry)
        if value is None:
            raw = entry.get(HEADLINE)
            reason = ("missing" if HEADLINE not in entry else "undefined (null)" if raw is None
                      else f"not a finite number ({shorten(raw)})")
            skipped[suite] = f"{HEADLINE} {reason}"
            continue
        entries.append(EvalResultEntry(
            dataset_id=dataset_repo, task_id=suite, value=round(value, 6),
            dataset_revision=dataset_revision, notes=HEADLINE,
            date=results.get("date") if isinstance(results.get("date"), str) else None,
        ))
    if mismatched:
        raise ConfigError(
            f"results were scored on other files than the published suites "
            f"(content_hash differs from suites.json): {', '.join(mismatched)}; rescore first"
        )
    if not entries:
        raise ConfigError(
            f"no suite in the results has {HEADLINE} ({len(skipped)} left out); rescore with a "
            "version of consistency-bench that reports it: `consistency-bench rescore`"
        )
    return entries, skipped


def eval_results_yaml(entries) -> str:
    """The ``.eval_results/*.yaml`` text of ``entries`` (``huggingface_hub``'s serialiser)."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml

    return yaml.safe_dump(eval_result_entries_to_yaml(list(entries)), sort_keys=False,
                          allow_unicode=True)
