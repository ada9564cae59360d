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
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError, shorten

HEADLINE = "consistent_accuracy_cc"
#: The ``.eval_results`` folder and the stem of our files in it (one file per setup).
EVAL_RESULTS_DIR = ".eval_results"
EVAL_RESULTS_STEM = "consistency-bench"
#: ``evaluation_framework`` values the Hub accepts in ``eval.yaml``: ``EVALUATION_FRAMEWORKS``
#: in huggingface.js ``packages/tasks/src/eval.ts`` (read 2026-11-25). Neither
#: consistency-bench nor lm-evaluation-harness is listed, so ``eval.yaml`` leaves the field out
#: unless one of these is asked for (docs/leaderboard.md).
HUB_FRAMEWORKS = (
    "exgentic", "inspect-ai", "math-arena", "mteb", "olmocr-bench", "harbor", "archipelago",
    "apex-evals", "screenspot-pro", "swe-bench", "swe-bench-pro", "nemo-evaluator", "yc-bench",
    "open-asr-leaderboard", "mdpbench", "parsebench", "video-mme-v2", "claw-eval",
    "wildclawbench",
)
FRAMEWORK: str | None = None
DESCRIPTION = (
    "Consistency test suites for language models (BECEL, CALM, word salad, coherence). Each "
    "task is one suite (dataset config, split test). Score: consistent_accuracy_cc, the share "
    "of groups where the model is right on the original row(s) and the group's consistency "
    "relation holds, corrected for chance: (ca - chance) / (1 - chance), where chance is that "
    "share for a uniform random predictor; 1 is perfect, 0 is chance level. Scored by "
    "consistency-bench (`consistency-bench score`; docs/metrics.md)."
)


def check_framework(framework: str | None) -> str | None:
    """``framework`` if the Hub lists it (``HUB_FRAMEWORKS``), or None.

    Raises:
        ConfigError: A name the Hub does not list, or ``inspect-ai`` (its ``eval.yaml`` needs
            ``field_spec``, ``solvers`` and ``scorers``, which a consistency suite has not).

    """
    if framework is None:
        return None
    if framework not in HUB_FRAMEWORKS:
        raise ConfigError(
            f"--evaluation-framework {framework}: not a name the Hub lists (huggingface.js "
            f"packages/tasks/src/eval.ts: {', '.join(HUB_FRAMEWORKS)}); leave the option out "
            "to write eval.yaml without it"
        )
    if framework == "inspect-ai":
        raise ConfigError("--evaluation-framework inspect-ai: the Hub then requires field_spec, "
                          "solvers and scorers per task, which consistency suites do not have")
    return framework


def eval_yaml(manifest: Mapping[str, Mapping], *, name: str = "consistency-bench",
              framework: str | None = FRAMEWORK) -> str:
    """The benchmark's ``eval.yaml``: one task per suite, ``id`` = config = suite name.

    Args:
        manifest: ``suites.json``'s ``suites`` mapping (suite name -> entry).
        name: Display name of the benchmark.
        framework: ``evaluation_framework``, a name the Hub lists (:func:`check_framework`),
            or None to leave the field out (docs/leaderboard.md, "Publishing to the Hub").

    """
    import yaml

    doc: dict = {"name": name, "description": DESCRIPTION}
    framework = check_framework(framework)
    if framework is not None:
        doc["evaluation_framework"] = framework
    doc["tasks"] = [{"id": suite, "config": suite, "split": "test"} for suite in sorted(manifest)]
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


@dataclass(frozen=True)
class Setup:
    """How the model was run: part of the file name and of every result's ``notes``.

    Attributes:
        prompt: ``classifier`` (a classification head, no prompt), ``plain`` (causal LM,
            plain-text prompt) or ``chat`` (causal LM, the tokenizer's chat template).
        shots: Few-shot demonstrations per prompt (causal LMs).
        length_norm: ``none``, ``chars`` or ``tokens`` (causal LMs).

    """

    prompt: str
    shots: int = 0
    length_norm: str = "none"

    def __post_init__(self) -> None:
        if self.prompt not in ("classifier", "plain", "chat"):
            raise ConfigError(f"--setup {self.prompt!r}: use classifier, plain or chat")
        if self.shots < 0:
            raise ConfigError(f"--num-fewshot {self.shots}: use 0 or more")
        if self.length_norm not in ("none", "chars", "tokens"):
            raise ConfigError(f"--length-norm {self.length_norm!r}: use none, chars or tokens")
        if self.prompt == "classifier" and (self.shots or self.length_norm != "none"):
            raise ConfigError("--num-fewshot and --length-norm describe causal LMs; a "
                              "classifier setup takes neither")

    @property
    def slug(self) -> str:
        """File-name part: ``classifier`` or ``plain-3shot-chars``."""
        if self.prompt == "classifier":
            return "classifier"
        return f"{self.prompt}-{self.shots}shot-{self.length_norm}"

    @property
    def note(self) -> str:
        """Human-readable setup for ``notes``."""
        if self.prompt == "classifier":
            return "setup: classifier head, no prompt"
        prompt = "chat template" if self.prompt == "chat" else "plain prompt"
        return (f"setup: causal LM, {prompt}, {self.shots}-shot, length normalisation "
                f"{self.length_norm}")

    @property
    def path(self) -> str:
        """The ``.eval_results`` file of this setup (two setups never share a file)."""
        return f"{EVAL_RESULTS_DIR}/{EVAL_RESULTS_STEM}_{self.slug}.yaml"


def suite_flags(results: Mapping, entry: str = "entry") -> dict[str, str]:
    """Suites the leaderboard would not rank for this entry: degenerate or incomplete.

    Degenerate is decided by the leaderboard's own cell
    (``consistency_bench.leaderboard.ranking.flags``), so
    ``publish-results`` refuses exactly what the leaderboard shows only for reference.
    Incomplete suites are the results' ``skipped`` suites with some but not all rows.
    """
    from consistency_bench.bench.scoring.results_json import incomplete
    from consistency_bench.leaderboard.ranking.flags import _cell, _judge_tasks
    from consistency_bench.leaderboard.ranking.model import Entry, suite_info

    flags = {suite: f"incomplete ({why})" for suite, why in incomplete(results).items()}
    holder = Entry(entry, results)
    cells, infos = {}, {}
    for suite, res in (results.get("suites") or {}).items():
        if not isinstance(res, Mapping) or HEADLINE not in res:
            continue
        infos[suite] = suite_info(suite, res)
        cell = _cell(holder, suite, res, infos[suite])
        if cell is not None:
            cells[suite] = {entry: cell}
    # one verdict per task, on its distinct originals, exactly as the leaderboard judges it
    _judge_tasks(cells, infos, [holder])
    for suite, by_entry in cells.items():
        if by_entry[entry].degenerate:
            flags[suite] = f"degenerate ({by_entry[entry].degenerate})"
    return dict(sorted(flags.items()))


def result_date(results: Mapping, meta: Mapping | None = None) -> str | None:
    """When the entry was scored: ``provenance.date``, else the meta's ``date``, else None."""
    for value in ((results.get("provenance") or {}).get("date"), (meta or {}).get("date"),
                  results.get("date")):
        if isinstance(value, str) and value:
            return value
        isoformat = getattr(value, "isoformat", None)  # a YAML date or datetime
        if isoformat is not None:
            return isoformat()
    return None


# One piece (over 60 lines): one pass over the suites, each kept, skipped or refused.
def eval_result_entries(results: Mapping, dataset_repo: str, *,
                        dataset_revision: str | None = None,
                        manifest: Mapping[str, Mapping] | None = None,
                        setup: Setup | None = None, source_url: str | None = None,
                        meta: Mapping | None = None, include_flagged: bool = False,
                        entry: str = "entry"):
    """``EvalResultEntry`` per scored suite, and the suites left out with the reason.

    Args:
        results: A results JSON (``consistency-bench score --out``).
        dataset_repo: The benchmark dataset on the Hub (``ORG/NAME``, with the ``eval.yaml``).
        dataset_revision: Its git revision, when known.
        manifest: ``suites.json`` of the published folder: when given, a suite not in it, or
            scored on a file whose sha256 differs, is refused.
        setup: How the model was run (written into ``notes``).
        source_url: The leaderboard page (``source.url``).
        meta: The entry's ``meta.yaml`` (its ``date`` when the results have none).
        include_flagged: Publish degenerate suites too, flagged in ``notes``; without it an
            entry with a degenerate or incomplete suite is refused.
        entry: The entry's name, for messages.

    Returns:
        ``(entries, skipped)``: entries sorted by suite; ``skipped`` maps suite -> reason.

    Raises:
        ConfigError: No suite has the headline score, results were scored on other files, or
            a suite is degenerate or incomplete and ``include_flagged`` is off.

    """
    from huggingface_hub import EvalResultEntry

    suites = results.get("suites")
    if not isinstance(suites, Mapping) or not suites:
        raise ConfigError("results JSON has no scored suites")
    flags = suite_flags(results, entry)
    if flags and not include_flagged:
        raise ConfigError(
            f"entry {entry!r} is degenerate or incomplete on {len(flags)} suite(s), which the "
            "leaderboard does not rank: " + "; ".join(f"{s}: {why}" for s, why in flags.items())
            + "; pass --include-flagged to publish them with the flag in notes"
        )
    incomplete_note = [s for s, why in flags.items() if why.startswith("incomplete")]
    date = result_date(results, meta)
    entries, skipped, mismatched = [], {}, []
    for suite, scored in sorted(suites.items()):
        if manifest is not None:
            if suite not in manifest:
                skipped[suite] = "not in the published suites.json"
                continue
            if scored.get("content_hash") not in (None, manifest[suite].get("sha256")):
                mismatched.append(suite)
                continue
        value = headline(scored)
        if value is None:
            skipped[suite] = _missing_headline(scored)
            continue
        notes = _notes(suite, setup, flags, incomplete_note)
        entries.append(EvalResultEntry(
            dataset_id=dataset_repo, task_id=suite, value=round(value, 6),
            dataset_revision=dataset_revision, notes=notes, date=date,
            source_url=source_url, source_name="consistency-bench leaderboard"
            if source_url else None,
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


def _missing_headline(scored: Mapping) -> str:
    """Why a suite's results have no usable headline score."""
    raw = scored.get(HEADLINE)
    reason = ("missing" if HEADLINE not in scored else "undefined (null)" if raw is None
              else f"not a finite number ({shorten(raw)})")
    return f"{HEADLINE} {reason}"


def _notes(suite: str, setup: Setup | None, flags: Mapping[str, str],
           incomplete: list[str]) -> str:
    """The ``notes`` of a suite's result: metric, setup, its flag, the suites left out."""
    notes = [HEADLINE]
    if setup is not None:
        notes.append(setup.note)
    if suite in flags:
        notes.append(f"flagged {flags[suite]}")
    if incomplete:
        notes.append(f"entry incomplete on {', '.join(incomplete)} (not published)")
    return "; ".join(notes)


def eval_results_yaml(entries) -> str:
    """The ``.eval_results/*.yaml`` text of ``entries`` (``huggingface_hub``'s serialiser)."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml

    return yaml.safe_dump(eval_result_entries_to_yaml(list(entries)), sort_keys=False,
                          allow_unicode=True)
