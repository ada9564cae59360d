"""What the leaderboard shows of an entry's run record and reproduction.

``leaderboard.json`` gains, per entry in ``meta[NAME]`` and on every view row of the entry:

* ``reproduced``: null (reproducible, not yet reproduced), or ``{"status": "passed" |
  "failed" | "not-reproducible", "label_agreement", "max_prob_diff", "groups", "rows",
  "reason", "date", "tier", "precision", "device"}``. ``not-reproducible``: the entry has no
  run record (its predictions were made elsewhere) or was made by a served model;
* ``setup`` (``meta[NAME]`` only): how the predictions were made, from ``run.json`` (mode,
  model id and commit, dtype and precision, max length, chat, few-shot K and seed, length
  normalisation, prompts version, device, harness version), or null without a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

#: The reason shown for an entry without a run record.
NO_RECORD = ("no run record: the predictions were not made by `consistency-bench predict` or "
             "`baseline`, or were submitted without their run.json")
#: The reason shown for a served model's entry.
SERVED = "made by a served model (API): its weights are not available to run again"
#: Keys of ``reproduced`` (every one present, null where it does not apply).
KEYS = ("status", "label_agreement", "max_prob_diff", "groups", "rows", "reason", "date",
        "tier", "precision", "device")


def _not_reproducible(reason: str) -> dict:
    return {key: None for key in KEYS} | {"status": "not-reproducible", "reason": reason,
                                          "groups": 0, "rows": 0}


def reproduced(run: Mapping | None, reproduction: Mapping | None,
               results: Mapping) -> dict | None:
    """The ``reproduced`` object of an entry (see the module docstring), or None.

    A ``reproduction.json`` counts only for the predictions it checked (its
    ``predictions_sha256`` must be the entry's): a replaced entry is not shown as reproduced.
    """
    if run is None:
        return _not_reproducible(NO_RECORD)
    if run.get("api") is not None or run.get("mode") == "generate":
        return _not_reproducible(SERVED)
    stored = (results.get("predictions") or {}).get("sha256")
    if reproduction is None or reproduction.get("predictions_sha256") != stored:
        return None
    device = reproduction.get("device") or {}
    out = {key: reproduction.get(key) for key in KEYS}
    out.update(tier=(reproduction.get("threshold") or {}).get("tier"),
               device=" ".join(str(x) for x in (device.get("type"), device.get("name")) if x)
               or None)
    return out


def setup(run: Mapping | None) -> dict | None:
    """The ``setup`` object of an entry from its run record, or None without one."""
    if run is None:
        return None
    settings, model = run.get("settings") or {}, run.get("model") or {}
    device = run.get("device") or {}
    return {
        "mode": run.get("mode"),
        "model": model.get("hub_id") or model.get("id"),
        "commit": model.get("commit"),
        "commit_source": model.get("commit_source"),
        "dtype": settings.get("weights_dtype"),
        "precision": device.get("precision"),
        "max_length": settings.get("max_length"),
        "chat": settings.get("chat"),
        "num_fewshot": settings.get("num_fewshot"),
        "fewshot_seed": settings.get("fewshot_seed"),
        "length_norm": settings.get("length_norm"),
        "prompts_sha256": settings.get("prompts_sha256"),
        "device": device.get("type"),
        "harness_version": run.get("harness_version"),
        "api": run.get("api"),
    }


def entry_extras(entry: Path, results: Mapping) -> dict:
    """``{"setup": ..., "reproduced": ...}`` of an entry folder (added to ``meta[NAME]``).

    Raises:
        ConfigError: ``run.json`` or ``reproduction.json`` is unreadable (names the file).

    """
    from consistency_bench.leaderboard.reproduce.run_records import read_reproduction, read_run

    run = read_run(entry)
    return {"setup": setup(run),
            "reproduced": reproduced(run, read_reproduction(entry), results)}


def _pct(value: object) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, (int, float)) else "n/a"


def md_cell(shown: Mapping | None) -> str:
    """The Markdown table's Reproduced cell."""
    if not shown:
        return "–"
    status = shown.get("status")
    if status == "passed":
        return f"✓ {_pct(shown.get('label_agreement'))}"
    if status == "failed":
        diff = shown.get("max_prob_diff")
        extra = f", Δp {diff:.2g}" if isinstance(diff, (int, float)) else ""
        return f"✗ {_pct(shown.get('label_agreement'))}{extra}"
    return "not reproducible"


#: The legend sentence of the Markdown table's Reproduced column.
MD_LEGEND = ("Reproduced: `✓ agreement` when `consistency-bench reproduce` ran the recorded "
             "model again on a sample of groups and its labels agreed (share shown), `✗` when "
             "it did not (Δp: largest probability difference), `not reproducible` when the "
             "entry has no run record or was made by a served model, `–` not yet reproduced.")


def summary_line(report: Mapping) -> str:
    """One line of a ``reproduction.json``'s figures (``reproduce``'s output, review comments)."""
    status = report.get("status")
    if report.get("rows", 0) == 0:
        return f"{status}: {report.get('reason')}"
    threshold = report.get("threshold") or {}
    diff = report.get("max_prob_diff")
    line = (f"{status}: {report['rows']:,} rows of {report['groups']:,} groups in "
            f"{len(report.get('suites') or {})} suites, label agreement "
            f"{100 * report['label_agreement']:.2f}%, largest probability difference "
            f"{'n/a (labels only)' if diff is None else f'{diff:.3g}'} ({threshold.get('tier')} "
            f"tier: >= {100 * threshold.get('min_agreement', 0):.0f}% overall, >= "
            f"{100 * threshold.get('min_suite_agreement', 0):.0f}% per suite, <= "
            f"{threshold.get('max_prob_diff')}; {report.get('precision')} on "
            f"{(report.get('device') or {}).get('type')})")
    return line + (f": {report['reason']}" if report.get("reason") else "")
