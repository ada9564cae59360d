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

#: What a run record is named: the prediction file's name plus this.
RUN_SUFFIX = ".run.json"


def prompts_version() -> str:
    """sha256 (first 16 hex) of the prompt table and the generative template's wording."""
    from consistency_bench.bench.prompting.prompts import (
        ANSWER_CUE,
        CALM_INPUT,
        PROMPTS,
        PromptSpec,
        generative_template,
    )

    table = sorted([[k[0] or "", k[1], v.template, list(v.choices)] for k, v in PROMPTS.items()])
    sample = generative_template(PromptSpec("x" + ANSWER_CUE, ("a", "b")))
    text = json.dumps([table, CALM_INPUT, sample], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def api_block(endpoint, server, usage_sent, usage_all, requests: dict) -> dict:
    """The ``api`` object of the run record.

    Args:
        endpoint: The :class:`consistency_bench.bench.served.endpoint.Endpoint` (its host is kept,
        not its key).
        server: The :class:`consistency_bench.bench.served.preflight.ServerInfo`.
        usage_sent: :class:`consistency_bench.bench.served.client.Usage` of the requests this run
        sent.
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
    """The served part of the record: ``mode``, ``model``, ``settings``, ``api``.

    ``model`` is the served name, with the server's ``root`` as ``served_root``; ``settings``
    carry ``prompts_version``. :func:`write_run_record` completes it with the fields every
    run record has (:func:`consistency_bench.bench.runrecord.schema.new_record`: version, date,
    suites, the
    file's sha256).
    """
    revision = api.get("server_model", {}).get("root")
    return {"mode": mode,
            "model": {"id": model, "source": "api", "revision": None, "served_root": revision},
            "settings": {**settings, "prompts_version": prompts_version()}, "api": api}


def suites_of(collected, data_dir) -> list[dict]:
    """``[{name, sha256, rows}]`` of the suites a served run predicted (run-record format)."""
    from consistency_bench.bench.io.manifest import read_manifest

    manifest = read_manifest(Path(data_dir))
    return [{"name": s.suite, "sha256": manifest[s.suite].get("sha256"), "rows": len(s.ids)}
            for s in collected.suites]


def write_run_record(out: str | Path, record: dict, suites: list[dict]) -> Path:
    """Write ``<out>.run.json`` atomically (validated, consistency_bench.bench.runrecord); return its path.

    Plugged into ``repro``'s format (issue 28 item 13) when ``repro`` merged main: the served
    fields of :func:`run_record` plus the shared ones, ``model.source`` ``api``; ``reproduce``
    never runs such a record again, and the leaderboard shows it as not reproducible.
    """  # noqa: E501
    from consistency_bench.bench.runrecord.environment import package_versions
    from consistency_bench.bench.runrecord.schema import new_record, record_path, write_record

    full = new_record(mode=record["mode"], model=record["model"], settings=record["settings"],
                      suites=suites, predictions=out, rows=sum(s["rows"] for s in suites),
                      device=None, packages=package_versions(),
                      run={"shard": None, "processes": 1, "seconds": None}, api=record["api"])
    return write_record(record_path(out), full)
