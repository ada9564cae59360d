"""The run record of a served run: its ``mode`` and ``api`` block (contract with ``repro``).

``predict`` writes ``<PRED>.run.json`` beside the prediction file (docs/runner.md); engineer
``repro`` owns the format. This module fills what only a served run knows: ``mode``
(``"loglikelihood"`` or ``"generate"``) and ``api``: the endpoint's ``scheme://host[:port]``
(never the key, never the path or query), the served model name, what ``/models`` reports of
it (id, root, max_model_len...), the ``system_fingerprint`` values of the responses, and the
token usage (of the requests sent by this run, and of every response the file is made of).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: Version of the record written here (``schema_version``).
SCHEMA_VERSION = 1
#: What a run record is named: the prediction file's name plus this.
RUN_SUFFIX = ".run.json"


def prompts_version() -> str:
    """sha256 (first 16 hex) of the prompt table and the generative template's wording."""
    from bench.prompts import ANSWER_CUE, CALM_INPUT, PROMPTS, PromptSpec, generative_template

    table = sorted([[k[0] or "", k[1], v.template, list(v.choices)] for k, v in PROMPTS.items()])
    sample = generative_template(PromptSpec("x" + ANSWER_CUE, ("a", "b")))
    text = json.dumps([table, CALM_INPUT, sample], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def api_block(endpoint, server, usage_sent, usage_all, requests: dict) -> dict:
    """The ``api`` object of the run record.

    Args:
        endpoint: The :class:`bench.served.endpoint.Endpoint` (its host is kept, not its key).
        server: The :class:`bench.served.preflight.ServerInfo`.
        usage_sent: :class:`bench.served.client.Usage` of the requests this run sent.
        usage_all: Token usage summed over every response the file is made of (cached too).
        requests: ``{"distinct", "sent", "cached", "retried"}``.

    """
    return {
        "api": "openai",
        "endpoint": endpoint.host,
        "served_model": endpoint.model,
        "server_model": dict(server.model),
        "system_fingerprints": sorted(server.fingerprints),
        "usage": usage_all,
        "usage_this_run": usage_sent.as_dict(),
        "requests": requests,
    }


def run_record(mode: str, model: str, settings: dict, api: dict) -> dict:
    """The whole record (the keys of the run-record contract in TEAM.md).

    ``schema_version``, ``harness_version``, ``mode``, ``model`` (the served name; the
    server's ``root`` as ``served_root``), ``settings`` (with ``prompts_version``), ``api``.
    """
    from bench import __version__

    revision = api.get("server_model", {}).get("root")
    return {"schema_version": SCHEMA_VERSION, "harness_version": __version__, "mode": mode,
            "model": {"id": model, "revision": None, "served_root": revision},
            "settings": {**settings, "prompts_version": prompts_version()}, "api": api}


def write_run_record(out: str | Path, record: dict) -> Path:
    """Write ``<out>.run.json`` atomically; return its path."""
    from bench.atomic import atomic_path

    path = Path(out)
    path = path.with_name(path.name + RUN_SUFFIX)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False)
                             + "\n", encoding="utf-8")
    return path
