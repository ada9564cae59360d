"""Publish the leaderboard and the built suites to the Hugging Face Hub.

One ``create_repo(exist_ok=True)`` and one ``create_commit`` per publish, so a failure leaves
the repo at its previous commit (the Hub applies a commit as a whole). The token comes from
``HF_TOKEN`` or the stored login (``huggingface_hub`` resolves it); it is never printed.
``dry_run`` lists every operation and sends nothing.

The parts live in modules of one job each: :mod:`~leaderboard.publish_commit` (:class:`Plan`,
:func:`execute`, the Hub errors), :mod:`~leaderboard.publish_plans` (the leaderboard and
suites publishes) and :mod:`~leaderboard.publish_model` (a model's ``.eval_results`` and its
card). Their names are importable from here too.
"""

from __future__ import annotations

from leaderboard.publish_commit import (
    Plan,
    PublishError,
    _explain,
    _status,
    _transport_errors,
    check_repo_id,
    execute,
    unchanged_files,
)
from leaderboard.publish_model import (
    model_card_text,
    model_index,
    plan_results,
    read_model_card,
    write_model_card,
)
from leaderboard.publish_plans import (
    _folder_files,
    _sha256,
    leaderboard_card,
    plan_leaderboard,
    plan_suites,
    site_files,
    verified_suite_files,
)

__all__ = [
    "Plan",
    "PublishError",
    "_explain",
    "_folder_files",
    "_sha256",
    "_status",
    "_transport_errors",
    "check_repo_id",
    "execute",
    "leaderboard_card",
    "model_card_text",
    "model_index",
    "plan_leaderboard",
    "plan_results",
    "plan_suites",
    "read_model_card",
    "site_files",
    "unchanged_files",
    "verified_suite_files",
    "write_model_card",
]
