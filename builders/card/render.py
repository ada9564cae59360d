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

from consistency_bench.bench.io.manifest import MANIFEST, SPLIT
from consistency_bench.bench.prompting.demonstrations import read_pools
from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.builders.card.data import (
    ABSENT_NOTE,
    CORPORA,
    DEVIATIONS,
    FIELDS,
    GRADIENT_NOTE,
    PAPER_SIZES,
    POOL_CORPORA,
    POOL_SOURCE_CORPUS,
    SALAD_SOURCE_ROWS,
    Corpus,
    PaperSize,
    matches_paper,
)
from consistency_bench.builders.suite.spec import SUITES

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
`source_file`, `source_row`, plus per-suite extras. A *group* holds the rows compared with
each other: an original row and its perturbed rows, one *test item*. In the transitive configs
every row is a group of its own (a source row, or a derived row whose two antecedents are source
rows that other derived rows share too), and a test item is a derived row: `snli_transitive`
has 12,199 groups (9,824 source rows and 2,375 derived rows) and 2,375 test items, the paper's
count. `suites.json` records both (`groups`, `test_items`). Score a prediction file with
`consistency-bench score PREDICTIONS --data consistency-bench`.
"""

#: How the labels of a config outside the declared families were made (generated suites).
MACHINE_ANNOTATIONS = ("machine-generated",)

#: What a config made outside the registry is (model-specific word salad, generated suites).
UNREGISTERED = {
    "salad": "Model-specific word salad (gradient-based transformation; the `model` column "
    "names the model whose token importance chose the tokens). No correct label.",
    "generated": "Generated {kind} candidates (see the toolkit's docs/generate.md).",
}


def _front_matter(manifest: Mapping[str, dict], root: Path | None) -> str:
    names = list(manifest)
    corpora = [CORPORA[t] for t in sorted({manifest[n]["task"] for n in names}) if t in CORPORA]
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
        "source_datasets": [
            "original", *sorted({f"extended|{c.hub_id}" for c in corpora if c.hub_id})],
        "task_categories": sorted({"text-classification"} | {c.task_category for c in corpora}),
        "task_ids": sorted({c.task_id for c in corpora}),
        "language_creators": sorted(
            {"machine-generated"} | {a for c in corpora for a in c.language_creators}
        ),
        "annotations_creators": sorted(
            {a for f in families for a in _family_annotations(f)}
        ),
        # No Papers with Code entry exists for this collection; null is the Hub's "none".
        "paperswithcode_id": None,
        "tags": ["consistency", "evaluation", "robustness"],
        "configs": [
            {"config_name": n, "data_files": [{"split": SPLIT, "path": manifest[n]["path"]}]}
            for n in names
        ],
        "dataset_info": [dataset_info(n, manifest[n], root) for n in names],
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def _family_annotations(family: str) -> tuple[str, ...]:
    """How the labels of a family's rows were made (its declaration; generated: machine)."""
    return FAMILIES[family].annotations if family in FAMILIES else MACHINE_ANNOTATIONS


def _paper(family: str) -> str:
    """The paper of a family as the card names it (the family's name when undeclared)."""
    return FAMILIES[family].paper if family in FAMILIES else family


def size_category(rows: int) -> str:
    """The Hub ``size_categories`` bucket of ``rows`` examples."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
              (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]
    for bound, label in bounds:
        if rows < bound:
            return label
    return "10M<n<100M"


def features_of(name: str, entry: dict, root: Path | None):
    """The ``datasets.Features`` of a config.

    Read from its Parquet schema where ``root`` holds the file, else from its registered spec.
    """
    import datasets  # local: ``import consistency_bench.builders.card.render`` stays light
    import pyarrow.parquet as pq

    path = root / entry["path"] if root is not None else None
    if path is not None and path.is_file():
        return datasets.Features.from_arrow_schema(pq.read_schema(path))
    return SUITES[name].features


def dataset_info(name: str, entry: dict, root: Path | None) -> dict:
    """The ``dataset_info`` YAML of one config, as ``datasets`` writes it.

    Features are read from the Parquet schema where ``root`` is given (else from the
    registered spec); ``num_bytes`` from the manifest, measured from the file when missing.
    """
    import datasets  # local: ``import consistency_bench.builders.card.render`` stays light

    path = root / entry["path"] if root is not None else None
    features = features_of(name, entry, root)
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
    """Test items of a built config: its groups, or its derived rows for a transitive suite.

    ``suites.json`` records the count as ``test_items``; an entry written before it had the
    field is counted from ``groups`` and ``variants``.
    """
    if "test_items" in entry:
        return int(entry["test_items"])
    if entry.get("kind") == "transitive":
        return int(entry["variants"].get("transitive", 0))
    return int(entry["groups"])


def non_commercial(license_text: str) -> bool:
    """Whether a license note restricts use to non-commercial research."""
    return bool(re.search(r"non-commercial|\bBY-NC\b", license_text, re.IGNORECASE))


def paper_size(name: str) -> PaperSize | None:
    """The paper's size of a config (:data:`consistency_bench.builders.card.data.PAPER_SIZES`), if it gives one."""  # noqa: E501
    return PAPER_SIZES.get(name)


def _table_size(paper: PaperSize | None) -> str:
    """A paper size in the Configs table: the count, or as printed where the paper rounds."""
    if paper is None:
        return "-"
    return paper.printed if paper.rounded else str(paper.value)


def _size_line(name: str, entry: dict) -> str:
    items = count_test_items(entry)
    size = f"{entry['rows']:,} rows, {items:,} test items"
    if items != int(entry["groups"]):  # transitive: every row is a group of its own
        sources = int(entry["variants"].get("source", 0))
        size = (f"{entry['rows']:,} rows in {int(entry['groups']):,} groups (every row a group "
                f"of its own: {sources:,} source rows, {items:,} derived rows), {items:,} test "
                "items (the derived rows)")
    paper = paper_size(name)
    if paper is None:
        return size
    if matches_paper(items, paper):
        verdict = "equal" if not paper.rounded else "equal at the paper's rounding"
    elif paper.rounded:
        verdict = "see Deviations"
    else:
        verdict = f"{items - paper.value:+,}, see Deviations"
    return f"{size}; paper: {paper.printed} ({verdict}); paper size from {paper.where}"


def deviations_of(name: str) -> list[str]:
    """Titles of the deviations that apply to a config, in the order of the table."""
    return list(dict.fromkeys(d.title for d in DEVIATIONS if name in d.configs))


def _config_section(name: str, entry: dict) -> list[str]:
    spec = SUITES.get(name)
    description = spec.description if spec else entry.get(
        "description", UNREGISTERED.get(entry["family"], "").format(kind=entry["kind"])
    )
    license_text = spec.license if spec else entry.get("license", "")
    direction = "higher is better" if entry["higher_is_better"] else "lower is better"
    if entry["kind"] == "salad":
        direction = f"best near chance (1/{len(entry['label_names'])}), {direction} down to it"
    sources = ", ".join(f"`{s['path']}`" for s in entry["sources"])
    lines = [
        f"### `{name}`",
        "",
        f"- **Tests:** {description}".rstrip(),
        f"- **Family:** {_paper(entry['family'])}; task `{entry['task']}` "
        f"(labels: {', '.join(entry['label_names'])}); metric kind `{entry['kind']}`.",
        f"- **Rows from:** {sources}.",
        f"- **Size:** {_size_line(name, entry)}.",
        f"- **Main metric:** `{entry['main_metric']}`, {direction}.",
    ]
    if license_text:
        note = " **Non-commercial use only.**" if non_commercial(license_text) else ""
        lines.append(f"- **License:** {license_text}{note}")
    titles = deviations_of(name)
    if titles:
        lines.append(f"- **Deviations** (see Deviations from the papers): {'; '.join(titles)}.")
    return [*lines, ""]


def field_lines(manifest: Mapping[str, dict], root: Path | None) -> list[str]:
    """The Data Fields table: every column of every config, from the Parquet schemas.

    A column missing from :data:`consistency_bench.builders.card.data.FIELDS` is listed as
    undocumented (a test
    fails on it), so the card never drops a column silently.
    """
    columns: dict[str, dict[str, list[str]]] = {}
    for name, entry in manifest.items():
        for column, feature in features_of(name, entry, root).items():
            kind = _feature_type(feature)
            columns.setdefault(column, {}).setdefault(kind, []).append(name)
    order = list(FIELDS) + sorted(c for c in columns if c not in FIELDS)
    lines = ["| column | type | configs | meaning |", "| --- | --- | --- | --- |"]
    for column in order:
        if column not in columns:
            continue
        kinds = columns[column]
        used = sorted({n for names in kinds.values() for n in names})
        where = "all" if len(used) == len(manifest) else ", ".join(f"`{n}`" for n in used)
        meaning = FIELDS.get(column, "(undocumented)")
        lines.append(f"| `{column}` | {' / '.join(sorted(kinds))} | {where} | {meaning} |")
    return lines


def _feature_type(feature: object) -> str:
    import datasets  # local: ``import consistency_bench.builders.card.render`` stays light

    if isinstance(feature, datasets.ClassLabel):
        return "class label"
    if isinstance(feature, datasets.Value):
        return feature.dtype
    inner = getattr(feature, "feature", None)
    if inner is not None:
        return f"list of {_feature_type(inner)}"
    return type(feature).__name__


def deviation_lines(manifest: Mapping[str, dict]) -> list[str]:
    """One line per known deviation that applies to a present config, then what is absent."""
    lines = []
    for deviation in DEVIATIONS:
        names = [n for n in deviation.configs if n in manifest]
        if names:
            listed = ", ".join(f"`{n}`" for n in names)
            lines.append(f"- **{deviation.title}** ({listed}): {deviation.text}")
    dropped = []
    for name, entry in manifest.items():
        spec = SUITES.get(name)
        if spec is None or spec.family != "salad" or spec.task not in SALAD_SOURCE_ROWS:
            continue
        source = SALAD_SOURCE_ROWS[spec.task]
        dropped.append(f"`{name}` {source - int(entry['groups']):,} of {source:,}")
    if dropped:
        lines.append("- **Rows left out per word-salad config** (labelled validation examples "
                     "without a row, of all): " + "; ".join(dropped) + ".")
    families = {e["family"] for e in manifest.values()}
    absent = sorted(
        n for n, s in SUITES.items()
        if n not in manifest and s.task == "qqp" and s.family in families
    )
    if absent:
        lines.append("- " + ABSENT_NOTE.format(names=", ".join(f"`{n}`" for n in absent)))
    if "salad" in families:
        lines.append("- " + gradient_note(manifest))
    lines.append("- Sizes: the word-salad paper prints no count; it transforms each task's "
                 "whole validation set (its section 5), so those configs show the size of "
                 "that split's labelled examples. "
                 "docs/suites/*.md in the toolkit documents each reading and measured size.")
    return lines


def gradient_note(manifest: Mapping[str, dict]) -> str:
    """The line on the model-dependent word-salad transformations, naming those present."""
    made = sorted(n for n, e in manifest.items()
                  if e["family"] == "salad" and n not in SUITES
                  and re.search(r"_salad_(drop|repeat|replace|copyone)_", n))
    present = ("In this folder: " + ", ".join(f"`{n}`" for n in made) + "." if made
               else "This folder holds none.")
    return GRADIENT_NOTE.format(present=present)


def _corpora(manifest: Mapping[str, dict]) -> list[tuple[str, object]]:
    tasks = sorted({e["task"] for e in manifest.values()} & set(CORPORA))
    seen: dict[str, object] = {}
    for task in tasks:
        seen.setdefault(CORPORA[task].name, CORPORA[task])
    return sorted(seen.items())


def _verification(corpus: Corpus) -> str:
    if corpus.verified:
        return f" Stated in {corpus.verified}."
    return (" **Not verified:** no upstream file available here (the mirror's copy, or its "
            "upstream repository) states a license; the line gives the corpus's documented terms.")


def pool_corpora(pools: Mapping[str, dict]) -> dict[str, Corpus]:
    """Pool name -> the corpus its demonstrations come from (by its source file's folder)."""
    out = {}
    for name, entry in pools.items():
        path = entry["sources"][0]["path"]
        key = next(POOL_SOURCE_CORPUS[p] for p in sorted(POOL_SOURCE_CORPUS, key=len,
                                                          reverse=True)
                   if path.startswith(p + "/"))
        out[name] = CORPORA.get(key) or POOL_CORPORA[key]
    return out


def license_lines(manifest: Mapping[str, dict],
                  pools: Mapping[str, dict] | None = None) -> list[str]:
    """One line per source corpus and per release the rows come through, sorted by name.

    Each corpus line says where its license was verified (an upstream file, quoted) or that it
    could not be; a last line lists the ones not verified. ``pools`` (the folder's few-shot
    pools) add the corpora their demonstrations come from and a line on their licenses.
    """
    lines = {}
    corpora = dict(_corpora(manifest))
    by_pool = pool_corpora(pools or {})
    for corpus in by_pool.values():
        corpora.setdefault(corpus.name, corpus)
    for name, corpus in sorted(corpora.items()):
        note = " **Non-commercial.**" if non_commercial(corpus.license) else ""
        caveat = f" **Caveat:** {corpus.caveat}" if corpus.caveat else ""
        lines[name] = (f"- {name}: {corpus.license} <{corpus.license_url}>.{note}{caveat}"
                       f"{_verification(corpus)}")
    for family in sorted({e["family"] for e in manifest.values()} & set(FAMILIES)):
        if FAMILIES[family].release is not None:
            release, text = FAMILIES[family].release
            lines[release] = f"- {release}: {text}."
    out = [line for _, line in sorted(lines.items())]
    if by_pool:
        restricted = sorted(n for n, c in by_pool.items() if non_commercial(c.license))
        out.append("- Few-shot pools (`fewshot/*.parquet`, demonstrations for `predict "
                   "--num-fewshot`; no pool row is a test row): each carries the license of the "
                   "corpus it comes from: " + "; ".join(
                       f"`{n}` {c.name}" for n, c in sorted(by_pool.items())) + "."
                   + (" **Non-commercial:** " + ", ".join(f"`{n}`" for n in restricted) + "."
                      if restricted else ""))
    unverified = sorted(n for n, c in corpora.items() if not c.verified)
    if "KorNLI" in corpora:
        unverified.append("XNLI (the CC BY-NC 4.0 that KorNLI's dev and test files inherit)")
    if unverified:
        out.append("- Licenses not verified against an upstream file: " + ", ".join(unverified)
                   + ". Check them before any use that their license line alone would not "
                   "allow.")
    return out


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
        paper = paper_size(name)
        arrow = "↑" if e["higher_is_better"] else "↓"
        lines.append(
            f"| `{name}` | {e['family']} | {e['task']} | {e['kind']} | {e['rows']} | "
            f"{count_test_items(e)} | {_table_size(paper)} | "
            f"`{e['main_metric']}` {arrow} | `{e['sha256'][:16]}` |"
        )
    nc = sorted(
        n for n in manifest
        if non_commercial(SUITES[n].license if n in SUITES else manifest[n].get("license", ""))
    )
    if nc:
        lines += ["", "**Non-commercial sources** (research use only; see Licenses): "
                  + ", ".join(f"`{n}`" for n in nc) + "."]
    lines += ["", "## Data Fields", "", "Every column of every config (types from the Parquet "
              "schemas; an empty string or null where a column does not apply to a row).", ""]
    lines += field_lines(manifest, root)
    lines += ["", "## Config details", ""]
    for name, entry in manifest.items():
        lines += _config_section(name, entry)
    lines += ["## Deviations from the papers", ""]
    lines += deviation_lines(manifest)
    pools = read_pools(root) if root is not None and (root / MANIFEST).is_file() else {}
    lines += ["", "## Licenses", "", *license_lines(manifest, pools)]
    lines += ["", "Source files (pinned location and md5):", ""]
    files = sorted(
        {(s["path"], s["md5"], s["url"]) for e in manifest.values() for s in e["sources"]}
    )
    for path, md5, url in files:
        lines.append(f"- `{path}` md5 `{md5}` <{url}>")
    lines += ["", "## Citations", "", "The papers the configs follow:", ""]
    cited: set[str] = set()
    for name in manifest:
        spec = SUITES.get(name)
        if spec and spec.citation and spec.citation not in cited:
            cited.add(spec.citation)
            lines += ["```bibtex", spec.citation, "```", ""]
    lines += ["The source corpora:", ""]
    for name, corpus in _corpora(manifest):
        lines += [f"{name}:", "", "```bibtex", corpus.citation, "```", ""]
    return "\n".join(lines).rstrip() + "\n"
