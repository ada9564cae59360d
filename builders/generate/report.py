"""Quality report of a generation run: counts per rule, rejections and why, examples."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from consistency_bench.builders.generate.pipeline import GeneratedSuite

EXAMPLES = 5


def summarise(suite: GeneratedSuite) -> dict:
    """Counts and examples of one generated suite (JSON-ready, deterministic)."""
    derived = [r for r in suite.rows if r["variant"] not in ("original", "source", "first",
                                                             "second")]
    by_rule = Counter(str(r.get("rule") or r.get("tag") or r["variant"]) for r in derived)
    by_tag = Counter(str(r["tag"]) for r in derived if "tag" in r)
    reasons = Counter(f"{x.rule}: {x.reason}" for x in suite.rejections)
    examples_rejected: dict[str, list[str]] = {}
    for x in suite.rejections:
        key = f"{x.rule}: {x.reason}"
        if x.text and len(examples_rejected.setdefault(key, [])) < 2:
            examples_rejected[key].append(x.text)
    originals = {r["group"]: r for r in suite.rows if r["variant"] in ("original",)}
    examples = []
    for rule in sorted(by_rule):
        shown = [r for r in derived if str(r.get("rule") or r.get("tag") or r["variant"]) == rule]
        for r in shown[:EXAMPLES]:
            before = originals.get(r["group"])
            examples.append({
                "rule": rule,
                "original": None if before is None else [before["text"], before["text_pair"]],
                "new": [r["text"], r["text_pair"]], "label": r["label"],
            })
    return {
        "suite": suite.name, "kind": suite.kind, "rows": len(suite.rows),
        "candidates": len(derived), "per_rule": dict(sorted(by_rule.items())),
        "per_tag": dict(sorted(by_tag.items())),
        "rejected": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        "rejected_examples": examples_rejected, "examples": examples,
        "needs_verification": suite.needs_verification, "notes": list(suite.notes),
    }


def render(summaries: Sequence[dict]) -> str:
    """Markdown quality report."""
    lines = ["# Generation quality report", ""]
    for s in summaries:
        lines += [f"## `{s['suite']}` ({s['kind']})", "",
                  f"{s['candidates']} candidates in {s['rows']} rows; "
                  + ("**needs human verification**." if s["needs_verification"]
                     else "rule-based, no verification needed."), ""]
        lines += [f"- note: {n}" for n in s["notes"]]
        lines += ["", "| rule | candidates |", "| --- | ---: |"]
        lines += [f"| {rule} | {n} |" for rule, n in s["per_rule"].items()]
        lines += ["", "| rejected: rule: reason | inputs |", "| --- | ---: |"]
        lines += [f"| {reason} | {n} |" for reason, n in list(s["rejected"].items())[:25]]
        if len(s["rejected"]) > 25:
            lines.append(f"| ({len(s['rejected']) - 25} more reasons in the JSON report) | |")
        lines += ["", "Examples:", ""]
        for ex in s["examples"][:15]:
            before = " / ".join(x for x in (ex["original"] or []) if x)
            after = " / ".join(x for x in ex["new"] if x)
            lines.append(f"- [{ex['rule']}] {before or '(derived)'} → {after}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def to_json(summaries: Sequence[dict]) -> str:
    """JSON report."""
    return json.dumps({"suites": list(summaries)}, indent=2, ensure_ascii=False) + "\n"
