"""Render the dataset card (README.md) of a built suite folder.

The card is what the Hub shows and what ``datasets`` reads before loading:

* YAML front matter: ``configs`` (data files), ``dataset_info`` per config (features with
  label names, the ``test`` split's ``num_examples`` and ``num_bytes``, ``download_size``) in
  the layout ``datasets.DatasetInfo._to_yaml_dict`` writes, license (``other`` with
  ``license_name`` / ``license_link``), ``task_categories`` / ``task_ids``,
  ``size_categories``, ``source_datasets``, ``multilinguality``, ``annotations_creators``;
* a body section per config (what it tests, where its rows come from, size against the paper,
  main metric and direction, license with non-commercial sources called out);
* "Deviations from the papers", licenses (one line per source dataset), source files, and one
  citation per paper.

Features come from the written Parquet schema and sizes from the manifest (``num_bytes`` is
measured from the written file as ``datasets`` measures it when it prepares the split, see
:func:`split_num_bytes`; older manifests without it are measured at render time). Output is
deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from bench.manifest import SPLIT
from builders.suite import SUITES

INTRO = """# consistency-bench

Test suites that measure whether a language model is *consistent*, not just accurate: it
should keep its prediction under paraphrase and input swap, flip it under negation, obey
transitivity and additivity (BECEL), keep it when the input format changes (CALM), not keep
it when the input is destroyed (word salad), and label the parts of an input coherently with
the whole (coherence). Built by the `consistency-bench` toolkit from the source corpora listed
below; every row links back to its source file and row.

```python
from datasets import load_dataset
suite = load_dataset("consistency-bench", "snli_transitive", split="test")
```

Row contract: `id`, `suite`, `task`, `group`, `variant`, `text`, `text_pair`, `label`,
`source_file`, `source_row`, plus per-suite extras. A *group* is one test item: an original
row and the rows it is compared with. Score a prediction file with
`consistency-bench score PREDICTIONS --data consistency-bench`.
"""

PAPERS = {
    "becel": "BECEL (Jang et al., 2022)",
    "calm": "CALM: Accurate, yet Inconsistent? (Jang et al., 2021)",
    "salad": "BERT & Family Eat Word Salad (Gupta et al., 2021)",
    "coherence": "Beyond the Tip of the Iceberg: coherence of text classifiers (Storks and "
    "Chai, 2021)",
}

#: Hub ``task_ids`` per task (text-classification sub-tasks).
TASK_IDS = {
    "snli": "natural-language-inference",
    "mnli": "natural-language-inference",
    "rte": "natural-language-inference",
    "qnli": "natural-language-inference",
    "boolq": "natural-language-inference",
    "kornli": "natural-language-inference",
    "klue_nli": "natural-language-inference",
    "conv_ent": "natural-language-inference",
    "art": "natural-language-inference",
    "mrpc": "semantic-similarity-classification",
    "qqp": "semantic-similarity-classification",
    "wic": "semantic-similarity-classification",
    "klue_sts": "semantic-similarity-classification",
    "sst2": "sentiment-classification",
    "ag_news": "topic-classification",
}

#: Hub ``source_datasets`` per task (the datasets the rows are derived from).
SOURCE_DATASETS = {
    "snli": "snli",
    "mnli": "multi_nli",
    "rte": "glue",
    "mrpc": "glue",
    "qnli": "glue",
    "qqp": "glue",
    "sst2": "glue",
    "boolq": "super_glue",
    "wic": "super_glue",
    "ag_news": "ag_news",
    "kornli": "kor_nli",
    "klue_nli": "klue",
    "klue_sts": "klue",
    "art": "art",
}

#: How the labels of each family's rows were made (Hub ``annotations_creators``).
ANNOTATIONS = {
    "becel": ("crowdsourced", "expert-generated", "machine-generated"),
    "calm": ("crowdsourced", "machine-generated"),
    "salad": ("crowdsourced", "machine-generated"),
    "coherence": ("crowdsourced", "expert-generated"),
    "generated": ("machine-generated",),
}

#: Every documented deviation from the papers, by config name (docs/suites/*.md).
DEVIATIONS = {
    "sst2_additive": "Paper: about 53K. The 75% length quantile is read from the 6,885 "
    "training *sentences* of GLUE's SST-2 train (the phrases that sit inside no other "
    "phrase; the file itself holds 67,349 phrases, whose quantile, 14 tokens, kept only "
    "1,550 pairs): 27 tokens. 54,540 ordered pairs (x + y and y + x) pass and are sampled to "
    "53,000. Inferred reading: the paper's 53K counts both merge orders (27,270 unordered "
    "pairs would be half of it).",
    "ag_news_additive": "Paper: about 53K. AG News train is not mirrored: the length "
    "quantile (43 tokens) comes from BECEL's validation half of the original test split, "
    "disjoint from the evaluated half. 52,750 ordered pairs pass, all kept. The classes are "
    "uneven after the length filter: World 18,470, Sports 5,050, Business 4,520, Sci/Tech "
    "24,710 pairs; the scorer reports tau per class (`tau_add_per_class`).",
    "conv_ent_coherence": "The paper reports 178 Conversational Entailment test examples; "
    "the released annotation file has 172 (99 positive, 73 negative).",
    "art_coherence": "189 ART examples: 200 were annotated and 11 discarded by the "
    "annotators as having two plausible stories (paper section 4.1).",
    "kornli_calm": "Korean splits: the paper sampled its own Korean test sets with an "
    "unpublished seed (KLUE: half of dev; KorNLI: from train); we use the full XNLI-ko dev "
    "and test sets (two configs) and the full KLUE dev sets.",
}
for _name in ("kornli_test_calm", "klue_nli_calm", "klue_sts_calm"):
    DEVIATIONS[_name] = DEVIATIONS["kornli_calm"]
for _task in ("mnli", "snli", "sst2", "qqp"):
    DEVIATIONS[f"{_task}_salad_pbsmt"] = (
        "Statistical (PBSMT) word salad: Moses and KenLM cannot be installed here. A stand-in "
        "with the same structure is built from NLTK's phrase-based parts (per label: IBM "
        "alignment models, phrase extraction, a stack decoder with a trigram language "
        "model; unknown words passed through). Its outputs differ from Moses's, so its row "
        "is comparable in spirit, not in number, to the paper's PBSMT row."
    )

#: What a config made outside the registry is (model-specific word salad, generated suites).
UNREGISTERED = {
    "salad": "Model-specific word salad (gradient-based transformation; the `model` column "
    "names the model whose token importance chose the tokens). No correct label.",
    "generated": "Generated {kind} candidates (see the toolkit's docs/generate.md).",
}

#: Configs the papers evaluate that the build could not make (their source is not mirrored).
ABSENT_NOTE = (
    "Not built: {names}. Their source is not in the corpus mirror (QQP: the GLUE archive "
    "cannot be fetched or checksummed here); a local copy builds them (docs/suites/calm.md)."
)


def _front_matter(manifest: Mapping[str, dict], root: Path | None) -> str:
    names = list(manifest)
    tasks = sorted({manifest[n]["task"] for n in names})
    families = sorted({manifest[n]["family"] for n in names})
    languages = sorted({_language(n) for n in names})
    total = sum(int(manifest[n]["rows"]) for n in names)
    meta = {
        "pretty_name": "consistency-bench",
        "language": languages,
        "license": "other",
        "license_name": "consistency-bench-source-licenses",
        "license_link": "README.md#licenses",
        "multilinguality": ["multilingual" if len(languages) > 1 else "monolingual"],
        "size_categories": [size_category(total)],
        "source_datasets": ["original"]
        + sorted({f"extended|{SOURCE_DATASETS[t]}" for t in tasks if t in SOURCE_DATASETS}),
        "task_categories": ["text-classification"],
        "task_ids": sorted({TASK_IDS[t] for t in tasks if t in TASK_IDS}),
        "annotations_creators": sorted(
            {a for f in families for a in ANNOTATIONS.get(f, ("machine-generated",))}
        ),
        "tags": ["consistency", "evaluation", "robustness"],
        "configs": [
            {"config_name": n, "data_files": [{"split": SPLIT, "path": manifest[n]["path"]}]}
            for n in names
        ],
        "dataset_info": [dataset_info(n, manifest[n], root) for n in names],
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def size_category(rows: int) -> str:
    """The Hub ``size_categories`` bucket of ``rows`` examples."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
              (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]
    for bound, label in bounds:
        if rows < bound:
            return label
    return "10M<n<100M"


def dataset_info(name: str, entry: dict, root: Path | None) -> dict:
    """The ``dataset_info`` YAML of one config, as ``datasets`` writes it.

    Features are read from the Parquet schema where ``root`` is given (else from the
    registered spec); ``num_bytes`` from the manifest, measured from the file when missing.
    """
    import datasets  # local: ``import builders.card`` stays light
    import pyarrow.parquet as pq

    path = root / entry["path"] if root is not None else None
    if path is not None and path.is_file():
        features = datasets.Features.from_arrow_schema(pq.read_schema(path))
    else:
        features = SUITES[name].features
    num_bytes = entry.get("num_bytes")
    if num_bytes is None and path is not None and path.is_file():
        num_bytes = split_num_bytes(path)
    info = datasets.DatasetInfo(
        features=features,
        splits=datasets.SplitDict(
            {SPLIT: datasets.SplitInfo(SPLIT, num_bytes=int(num_bytes or 0),
                                       num_examples=int(entry["rows"]))}
        ),
        download_size=entry.get("parquet_bytes") or (
            path.stat().st_size if path is not None and path.is_file() else None
        ),
        dataset_size=int(num_bytes or 0),
        config_name=name,
    )
    out = info._to_yaml_dict()
    return {"config_name": name, **{k: v for k, v in out.items() if k != "config_name"}}


def split_num_bytes(path: Path) -> int:
    """The ``num_bytes`` ``datasets`` records when it prepares a Parquet split.

    Its Parquet builder reads the file in batches of one row group and adds up the Arrow
    size of each batch; the in-memory table that was written has another size (one chunk,
    other buffers), so the number is measured the same way from the file.
    """
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    if parquet.metadata.num_row_groups == 0:
        return 0
    size = parquet.metadata.row_group(0).num_rows
    return sum(batch.nbytes for batch in parquet.iter_batches(batch_size=max(size, 1)))


def _language(name: str) -> str:
    spec = SUITES.get(name)
    return spec.task_spec.language if spec else "en"


def count_test_items(entry: dict) -> int:
    """Test items of a built config: groups, or derived rows for transitive suites."""
    if entry.get("kind") == "transitive":
        return int(entry["variants"].get("transitive", 0))
    return int(entry["groups"])


def non_commercial(license_text: str) -> bool:
    """Whether a license note restricts use to non-commercial research."""
    return bool(re.search(r"non-commercial|\bBY-NC\b", license_text, re.IGNORECASE))


def _config_section(name: str, entry: dict) -> list[str]:
    spec = SUITES.get(name)
    description = spec.description if spec else entry.get(
        "description", UNREGISTERED.get(entry["family"], "").format(kind=entry["kind"])
    )
    license_text = spec.license if spec else entry.get("license", "")
    paper = entry.get("expected_size")
    items = count_test_items(entry)
    size = f"{entry['rows']:,} rows, {items:,} test items"
    if paper is not None:
        diff = items - paper
        size += f"; paper: {paper:,}" + (f" ({diff:+,}, see Deviations)" if diff else " (equal)")
    direction = "higher is better" if entry["higher_is_better"] else "lower is better"
    if entry["kind"] == "salad":
        direction = f"best near chance (1/{len(entry['label_names'])}), {direction} down to it"
    sources = ", ".join(f"`{s['path']}`" for s in entry["sources"])
    lines = [
        f"### `{name}`",
        "",
        f"- **Tests:** {description}".rstrip(),
        f"- **Family:** {PAPERS.get(entry['family'], entry['family'])}; task `{entry['task']}` "
        f"(labels: {', '.join(entry['label_names'])}); metric kind `{entry['kind']}`.",
        f"- **Rows from:** {sources}.",
        f"- **Size:** {size}.",
        f"- **Main metric:** `{entry['main_metric']}`, {direction}.",
    ]
    if license_text:
        note = " **Non-commercial use only.**" if non_commercial(license_text) else ""
        lines.append(f"- **License:** {license_text}{note}")
    if name in DEVIATIONS:
        lines.append(f"- **Deviation:** {DEVIATIONS[name]}")
    return lines + [""]


def license_lines(manifest: Mapping[str, dict]) -> list[str]:
    """One line per source dataset: the license sentences of every config, deduplicated.

    A license note is split into sentences; sentences are keyed by the dataset they name
    (the text before the first colon), so a dataset is listed once.
    """
    by_key: dict[str, str] = {}
    for name, entry in manifest.items():
        spec = SUITES.get(name)
        text = spec.license if spec else entry.get("license", "")
        for sentence in re.split(r"(?<=\.)\s+", text.strip()):
            if not sentence:
                continue
            key = sentence.split(":", 1)[0].strip() if ":" in sentence else sentence
            by_key.setdefault(key, sentence)
    return [
        f"- {s}" + (" **Non-commercial.**" if non_commercial(s) else "")
        for _, s in sorted(by_key.items())
    ]


def render_card(manifest: dict[str, dict], root: str | Path | None = None) -> str:
    """The README.md of a built folder, from its manifest (deterministic).

    Args:
        manifest: ``suites.json`` entries by config name.
        root: The built folder (features are read from its Parquet files); ``None`` uses the
            registered specs.

    """
    root = Path(root) if root is not None else None
    lines = [_front_matter(manifest, root), INTRO, "## Configs", ""]
    lines.append("| config | family | task | kind | rows | test items | paper size | main metric "
                 "| sha256 |")
    lines.append("| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |")
    for name, e in manifest.items():
        paper = e.get("expected_size")
        arrow = "↑" if e["higher_is_better"] else "↓"
        lines.append(
            f"| `{name}` | {e['family']} | {e['task']} | {e['kind']} | {e['rows']} | "
            f"{count_test_items(e)} | {paper if paper is not None else '-'} | "
            f"`{e['main_metric']}` {arrow} | `{e['sha256'][:16]}` |"
        )
    nc = sorted(
        n for n in manifest
        if non_commercial(SUITES[n].license if n in SUITES else manifest[n].get("license", ""))
    )
    if nc:
        lines += ["", "**Non-commercial sources** (research use only; see Licenses): "
                  + ", ".join(f"`{n}`" for n in nc) + "."]
    lines += ["", "## Config details", ""]
    for name, entry in manifest.items():
        lines += _config_section(name, entry)
    lines += ["## Deviations from the papers", ""]
    by_text: dict[str, list[str]] = {}
    for name in manifest:
        if name in DEVIATIONS:
            by_text.setdefault(DEVIATIONS[name], []).append(name)
    lines += [f"- {', '.join(f'`{n}`' for n in names)}: {text}" for text, names in by_text.items()]
    families = {e["family"] for e in manifest.values()}
    absent = sorted(
        n for n, s in SUITES.items()
        if n not in manifest and s.task == "qqp" and s.family in families
    )
    if absent:
        lines.append("- " + ABSENT_NOTE.format(names=", ".join(f"`{n}`" for n in absent)))
    lines += ["- Every other config matches its paper's construction; docs/suites/*.md in the "
              "toolkit documents each reading and measured size.", ""]
    lines += ["## Licenses", ""] + license_lines(manifest)
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
