"""Render the dataset card (README.md) of a built suite folder."""

from __future__ import annotations

import yaml

from builders.suite import SUITES

INTRO = """# consistency-bench

Test suites that measure whether a language model is *consistent*, not just accurate: it
should keep its prediction under paraphrase and input swap, flip it under negation, obey
transitivity and additivity (BECEL), and more. Built by the `consistency-bench` toolkit from the
source corpora listed below; every row links back to its source file and row.

```python
from datasets import load_dataset
suite = load_dataset("consistency-bench", "snli_transitive", split="test")
```

Row contract: `id`, `suite`, `task`, `group`, `variant`, `text`, `text_pair`, `label`,
`source_file`, `source_row`, plus per-suite extras. Score a prediction file with
`consistency-bench score PREDICTIONS --data consistency-bench`.
"""


def _front_matter(manifest: dict[str, dict]) -> str:
    configs = [
        {
            "config_name": name,
            "data_files": [{"split": "test", "path": entry["path"]}],
        }
        for name, entry in manifest.items()
    ]
    meta = {
        "pretty_name": "consistency-bench",
        "language": sorted({_language(n) for n in manifest}),
        "license": "other",
        "task_categories": ["text-classification"],
        "tags": ["consistency", "evaluation", "robustness"],
        "configs": configs,
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def _language(name: str) -> str:
    spec = SUITES.get(name)
    return spec.task_spec.language if spec else "en"


def render_card(manifest: dict[str, dict]) -> str:
    """The README.md of a built folder, from its manifest (deterministic)."""
    lines = [_front_matter(manifest), INTRO, "## Configs", ""]
    lines.append("| config | family | task | kind | rows | groups | paper size | sha256 |")
    lines.append("| --- | --- | --- | --- | ---: | ---: | ---: | --- |")
    for name, e in manifest.items():
        paper = e.get("expected_size")
        lines.append(
            f"| `{name}` | {e['family']} | {e['task']} | {e['kind']} | {e['rows']} | "
            f"{e['groups']} | {paper if paper is not None else '-'} | `{e['sha256'][:16]}` |"
        )
    lines += ["", "## Sources and licenses", ""]
    seen: set[str] = set()
    for name in manifest:
        spec = SUITES.get(name)
        if spec and spec.license and spec.license not in seen:
            seen.add(spec.license)
            lines.append(f"- {spec.license}")
    lines += ["", "Source files (pinned location and md5):", ""]
    files = sorted(
        {(s["path"], s["md5"], s["url"]) for e in manifest.values() for s in e["sources"]}
    )
    for path, md5, url in files:
        lines.append(f"- `{path}` md5 `{md5}` <{url}>")
    lines += ["", "## Citations", ""]
    cited: set[str] = set()
    for name in manifest:
        spec = SUITES.get(name)
        if spec and spec.citation and spec.citation not in cited:
            cited.add(spec.citation)
            lines += ["```bibtex", spec.citation, "```", ""]
    return "\n".join(lines).rstrip() + "\n"
