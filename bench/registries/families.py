# ruff: noqa: E501  (BibTeX entries keep one field per line, as ACL Anthology writes them)
"""Every paper family, declared once: paper, citation, licences, kinds, tasks, suites, docs.

A :class:`Family` is this project's ``TaskMetadata`` (MTEB, ``mteb/abstasks/TaskMetadata.py``):
one typed, validated declaration per paper that everything else reads instead of keeping its
own copy. The family's builder module (``builders/becel/``, ...) takes the citation and the
licence of each suite from it and may register only the suites, tasks and kinds it lists
(:func:`consistency_bench.builders.suite.spec.register_suite` checks); the dataset card
(``builders/card/render.py``) takes
the paper's name, the annotation creators and the release licence from it; the leaderboard
(``leaderboard/ranking/``) takes the reading order of families, kinds and tasks and the
tasks' display names; ``docs/suites/index.md`` is :func:`docs_index` (``python -m
consistency_bench.bench.registries.families`` prints it; a test keeps the file current).

This module is pure data on the floor of the layers (``bench``): it imports nothing of the
toolkit but :mod:`consistency_bench.bench.errors` and
:mod:`consistency_bench.bench.registries.registry`, so
builders and leaderboard both
read it without an upward import and without loading any builder. Versions stay beside the
code that makes the rows (``VERSION`` in each builder module): a version changes with that
code, in the same commit. Deviations from a paper stay where they are written and tested
(``builders/card/data.py`` ``DEVIATIONS`` for the card, the family's docs page for the prose);
:attr:`Family.deviations` points at them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from consistency_bench.bench.errors import DataError
from consistency_bench.bench.registries.registry import Registry


@dataclass(frozen=True)
class Family:
    """One paper family of suites.

    Attributes:
        name: Registry key and ``SuiteSpec.family`` of its suites (``"becel"``).
        title: Short display name (``"BECEL"``), for the docs index.
        paper: The paper as the card names it, with authors and year.
        citation: BibTeX of the paper (every suite of the family carries it).
        licenses: Licence note of each task's suites, by task id (the card's per-config
            "License" line; non-commercial sources say so).
        kinds: Metric kinds of its suites, in reading order (each needs a scorer in
            ``consistency_bench.bench.scorers``).
        tasks: Task ids of its suites with their display names, in reading order (a task
            shared with another family has the same display name there).
        suites: Every config it registers, in registration order.
        docs: Its documentation page, relative to the repository root.
        deviations: Where its deviations from the paper are stated.
        annotations: How the labels of its rows were made (Hub ``annotations_creators``).
        builder: The module (or package) whose import registers its suites, as a dotted
            name (``"consistency_bench.builders.becel"``): :mod:`consistency_bench.builders.catalog`
            imports it, no list to keep.
        scorer: The module whose import registers the scorers of its metric kinds
            (``"consistency_bench.bench.scorers.becel"``):
            ``consistency_bench.bench.scoring.engine.get_scorer`` imports it on first
            use; ``None`` when every kind it declares is scored by another family's module.
        release: ``(name, licence)`` of the upstream release the rows come through, when the
            rows are taken from one (the card's Licenses list), else ``None``.

    """

    name: str
    title: str
    paper: str
    citation: str
    licenses: Mapping[str, str]
    kinds: tuple[str, ...]
    tasks: Mapping[str, str]
    suites: tuple[str, ...]
    docs: str
    deviations: str
    annotations: tuple[str, ...]
    builder: str
    scorer: str | None
    release: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "licenses", MappingProxyType(dict(self.licenses)))
        object.__setattr__(self, "tasks", MappingProxyType(dict(self.tasks)))
        where = f"family {self.name!r}"
        for label, values in (("suites", self.suites), ("kinds", self.kinds)):
            if len(set(values)) != len(values):
                raise DataError(f"{where}: {label} lists a name twice")
        missing = sorted(set(self.tasks) - set(self.licenses))
        if missing:
            raise DataError(f"{where}: no licence note for task(s) {', '.join(missing)}")
        extra = sorted(set(self.licenses) - set(self.tasks))
        if extra:
            raise DataError(f"{where}: licence note for undeclared task(s) {', '.join(extra)}")
        if not self.citation.startswith("@") or not self.docs.startswith("docs/"):
            raise DataError(f"{where}: citation must be BibTeX and docs a path under docs/")
        for label, module, parts in (("builder", self.builder, ("builders",)),
                                     ("scorer", self.scorer, ("bench", "scorers"))):
            layer = _PREFIX + ".".join(parts)
            if module is not None and not _is_module_in(module, layer):
                raise DataError(f"{where}: {label} {module!r} is not a dotted module name "
                                f"under {layer}")

    def check_suite(self, name: str, task: str, kind: str) -> None:
        """Check that a suite registered under this family is one it declares.

        Raises:
            DataError: The family does not list the suite, its task or its kind.

        """
        where = f"suite {name!r} of family {self.name!r} (declared in bench/registries/families.py)"
        if name not in self.suites:
            raise DataError(f"{where}: the family does not list it in `suites`")
        if task not in self.tasks:
            raise DataError(f"{where}: task {task!r} is not in the family's `tasks`")
        if kind not in self.kinds:
            raise DataError(f"{where}: kind {kind!r} is not in the family's `kinds`")


#: The import prefix of the layer packages: "" in today's layout, "consistency_bench." once
#: setup.py installs them under that namespace (issue 29, scripts/relayout.py).
_PREFIX = "consistency_bench." if (__package__ or "").startswith("consistency_bench.") else ""


def _is_module_in(name: str, package: str) -> bool:
    """``name`` is a dotted module name inside ``package`` (checked as text, not imported)."""
    parts = name.split(".")
    return name.startswith(package + ".") and all(p.isidentifier() for p in parts)


FAMILIES: Registry[Family] = Registry("family")


def register_family(family: Family) -> Family:
    """Add a family; the registration order is the reading order (leaderboard, docs)."""
    return FAMILIES.register(family.name, family)


def task_names() -> dict[str, str]:
    """Display name of every declared task, in reading order (family by family).

    Raises:
        DataError: Two families give one task different display names.

    """
    names: dict[str, str] = {}
    for family in FAMILIES.values():
        for task, title in family.tasks.items():
            if names.setdefault(task, title) != title:
                raise DataError(f"task {task!r} is {names[task]!r} in one family and "
                                f"{title!r} in family {family.name!r}")
    return names


def kinds() -> tuple[str, ...]:
    """Every declared metric kind, in reading order (family by family)."""
    return tuple(dict.fromkeys(k for family in FAMILIES.values() for k in family.kinds))


def family_of_suite(name: str) -> Family | None:
    """The family that declares a suite, or ``None`` (generated and model-specific configs)."""
    return next((f for f in FAMILIES.values() if name in f.suites), None)


# ----------------------------------------------------------------------------- declarations

_NO_RELEASE_LICENSE = "no license stated upstream"

_BECEL_TASKS = ("boolq", "snli", "rte", "mrpc", "wic", "sst2", "ag_news")
_BECEL_SUITES = (
    *(f"{t}_semantic" for t in _BECEL_TASKS),
    *(f"{t}_negational" for t in ("boolq", "snli", "rte", "mrpc")),
    *(f"{t}_symmetric" for t in ("snli", "rte", "mrpc", "wic")),
    *(f"{t}_transitive" for t in ("snli", "wic")),
    *(f"{t}_additive" for t in ("sst2", "ag_news")),
)

register_family(Family(
    name="becel",
    title="BECEL",
    paper="BECEL (Jang et al., 2022)",
    citation="""@inproceedings{jang-etal-2022-becel,
    title = "{BECEL}: Benchmark for Consistency Evaluation of Language Models",
    author = "Jang, Myeongjun and Kwon, Deuk Sin and Lukasiewicz, Thomas",
    booktitle = "Proceedings of the 29th International Conference on Computational Linguistics",
    year = "2022",
    address = "Gyeongju, Republic of Korea",
    url = "https://aclanthology.org/2022.coling-1.324",
    pages = "3680--3696",
}""",
    licenses={
        "snli": "SNLI: CC BY-SA 4.0. BECEL release: no license stated upstream.",
        "rte": "RTE (GLUE): see the RTE challenge terms. BECEL release: no license stated upstream.",
        "mrpc": "MRPC: Microsoft Research Paraphrase Corpus terms. "
        "BECEL release: no license stated upstream.",
        "boolq": "BoolQ: CC BY-SA 3.0. BECEL release: no license stated upstream.",
        "wic": "WiC: CC BY-NC 4.0. BECEL release: no license stated upstream.",
        "sst2": "SST-2: see the Stanford Sentiment Treebank terms. "
        "BECEL release: no license stated upstream.",
        "ag_news": "AG News: non-commercial research use. BECEL release: no license stated upstream.",
    },
    kinds=("semantic", "negational", "symmetric", "transitive", "additive"),
    tasks={"snli": "SNLI", "rte": "RTE", "mrpc": "MRPC", "boolq": "BoolQ", "wic": "WiC",
           "sst2": "SST-2", "ag_news": "AG News"},
    suites=_BECEL_SUITES,
    docs="docs/suites/becel.md",
    deviations="docs/suites/becel.md (Construction and what we found in the release); "
    "builders/card/data.py DEVIATIONS (the card)",
    annotations=("crowdsourced", "expert-generated", "machine-generated"),
    builder="consistency_bench.builders.becel",
    scorer="consistency_bench.bench.scorers.becel",
    release=("BECEL release", f"{_NO_RELEASE_LICENSE} (github.com/MJ-Jang/BECEL)"),
))

_CALM_STEMS = ("mnli", "qnli", "rte", "qqp", "mrpc", "kornli", "kornli_test", "klue_nli",
               "klue_sts")
_CALM_T2T = ("mnli", "qnli", "rte", "qqp", "mrpc")

register_family(Family(
    name="calm",
    title="CALM",
    paper="CALM: Accurate, yet Inconsistent? (Jang et al., 2021)",
    citation="""@article{jang-etal-2021-calm,
    title = "Accurate, yet Inconsistent? Consistency Analysis on Language Understanding Models",
    author = "Jang, Myeongjun and Kwon, Deuk Sin and Lukasiewicz, Thomas",
    journal = "arXiv preprint arXiv:2108.06665",
    year = "2021",
    url = "https://arxiv.org/abs/2108.06665",
}""",
    licenses={
        "mnli": "MultiNLI: OANC / CC BY-SA 3.0 / CC BY 3.0 mixture (see the MultiNLI paper).",
        "qnli": "QNLI (GLUE): derived from SQuAD, CC BY-SA 4.0.",
        "rte": "RTE (GLUE): see the RTE challenge terms.",
        "qqp": "QQP: Quora's terms of use (non-commercial research).",
        "mrpc": "MRPC: Microsoft Research Paraphrase Corpus terms.",
        "kornli": "KorNLI: CC BY-SA 4.0 (Kakao Brain); its dev and test files are human "
        "translations of XNLI, which is CC BY-NC 4.0 (non-commercial).",
        "klue_nli": "KLUE: CC BY-SA 4.0.",
        "klue_sts": "KLUE: CC BY-SA 4.0.",
    },
    kinds=("calm",),
    tasks={"mnli": "MNLI", "qnli": "QNLI", "rte": "RTE", "qqp": "QQP", "mrpc": "MRPC",
           "kornli": "KorNLI", "klue_nli": "KLUE-NLI", "klue_sts": "KLUE-STS"},
    suites=tuple(
        name for stem in _CALM_STEMS
        for name in (f"{stem}_calm", *((f"{stem}_calm_t2t",) if stem in _CALM_T2T else ()))
    ),
    docs="docs/suites/calm.md",
    deviations="docs/suites/calm.md (Deviations); builders/card/data.py DEVIATIONS (the card)",
    annotations=("crowdsourced", "machine-generated"),
    builder="consistency_bench.builders.calm",
    scorer="consistency_bench.bench.scorers.calm",
))

_SALAD_TASKS = ("mnli", "snli", "qqp", "mrpc", "sst2")

register_family(Family(
    name="salad",
    title="Word salad",
    paper="BERT & Family Eat Word Salad (Gupta et al., 2021)",
    citation="""@inproceedings{gupta-etal-2021-bert,
    title = "{BERT} {\\&} Family Eat Word Salad: Experiments with Text Understanding",
    author = "Gupta, Ashim and Kvernadze, Giorgi and Srikumar, Vivek",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "35",
    number = "14",
    pages = "12946--12954",
    year = "2021",
}""",
    licenses={
        "mnli": "MultiNLI: OANC / CC BY-SA 3.0 / CC BY 3.0 mixture (see the MultiNLI paper).",
        "snli": "SNLI: CC BY-SA 4.0.",
        "mrpc": "MRPC: Microsoft Research Paraphrase Corpus terms.",
        "sst2": "SST-2: see the Stanford Sentiment Treebank terms.",
        "qqp": "QQP: Quora's terms of use (non-commercial research).",
    },
    kinds=("salad",),
    tasks={"mnli": "MNLI", "snli": "SNLI", "qqp": "QQP", "mrpc": "MRPC", "sst2": "SST-2"},
    suites=tuple(
        f"{task}_salad_{transform}" for task in _SALAD_TASKS
        for transform in ("sort", "reverse", "shuffle", "copysort", "pbsmt")
        if not (task == "sst2" and transform == "copysort")  # CopySort: pair tasks only
        and not (task == "mrpc" and transform == "pbsmt")  # no statistical MRPC config
    ),
    docs="docs/suites/word-salad.md",
    deviations="docs/suites/word-salad.md; builders/card/data.py DEVIATIONS (the card)",
    annotations=("crowdsourced", "machine-generated"),
    builder="consistency_bench.builders.salad.suites",
    scorer="consistency_bench.bench.scorers.salad",
))

register_family(Family(
    name="coherence",
    title="Coherence",
    paper="Beyond the Tip of the Iceberg: coherence of text classifiers (Storks and Chai, 2021)",
    citation="""@inproceedings{storks-chai-2021-beyond,
    title = "Beyond the Tip of the Iceberg: Assessing Coherence of Text Classifiers",
    author = "Storks, Shane and Chai, Joyce",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2021",
    year = "2021",
    address = "Punta Cana, Dominican Republic",
    url = "https://aclanthology.org/2021.findings-emnlp.272",
}""",
    licenses={
        "conv_ent": "Conversational Entailment (Zhang and Chai, 2010) over Switchboard; "
        "annotations: sled-group/Verifiable-Coherent-NLU (no license stated upstream).",
        "art": "ART: CC BY 4.0 (AI2); annotations: sled-group/Verifiable-Coherent-NLU (no "
        "license stated upstream).",
    },
    kinds=("coherence", "coherence_theta"),
    tasks={"art": "ART", "conv_ent": "Conversational Entailment"},
    suites=("conv_ent_coherence", "art_coherence"),
    docs="docs/suites/coherence.md",
    deviations="docs/suites/coherence.md (Deviations from the authors' code); "
    "builders/card/data.py DEVIATIONS (the card)",
    annotations=("crowdsourced", "expert-generated"),
    builder="consistency_bench.builders.coherence",
    scorer="consistency_bench.bench.scorers.coherence",
    release=("Coherence annotations",
             f"{_NO_RELEASE_LICENSE} (github.com/sled-group/Verifiable-Coherent-NLU)"),
))


# ----------------------------------------------------------------------------- docs index

def docs_index() -> str:
    """``docs/suites/index.md``: one section per family, from the declarations."""
    lines = [
        "# Suite families",
        "",
        "Generated from the family declarations in `bench/registries/families.py` (`python -m "
        "consistency_bench.bench.registries.families > docs/suites/index.md`; tests/test_registries.py checks that this "
        "file is current). docs/extending.md says how to add a family.",
        "",
        "| family | paper | kinds | tasks | suites | page |",
        "| --- | --- | --- | --- | ---: | --- |",
    ]
    for f in FAMILIES.values():
        page = f.docs.removeprefix("docs/suites/")
        lines.append(f"| `{f.name}` | {f.paper} | {', '.join(f'`{k}`' for k in f.kinds)} | "
                     f"{', '.join(f.tasks.values())} | {len(f.suites)} | [{page}]({page}) |")
    for f in FAMILIES.values():
        lines += ["", f"## {f.title}", "",
                  f"- **Paper:** {f.paper}.",
                  f"- **Deviations:** {f.deviations}.",
                  f"- **Suites:** {', '.join(f'`{s}`' for s in f.suites)}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(docs_index())
