"""Registry-wide checks: every registered suite is complete wherever the toolkit needs it.

Every suite has a scorer for its kind, a card entry (its family's paper, licence and citation,
its task's corpus), a row in ``bench/data/sources.tsv`` for each file it reads, a docs section
(its family's page names it) and a place in the leaderboard's tables; every family declaration
(:mod:`consistency_bench.bench.registries.families`) matches what its builder module registers. Also
the
generic
:class:`consistency_bench.bench.registries.registry.Registry` itself.
"""

from __future__ import annotations

import csv
import itertools
import re
from dataclasses import replace
from pathlib import Path

import pytest

from consistency_bench.bench.errors import DataError, DuplicateNameError, UnknownNameError
from consistency_bench.bench.registries import families
from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.registries.registry import Registry
from consistency_bench.bench.registries.source_files import SOURCES
from consistency_bench.bench.scorers.contract import SCORERS
from consistency_bench.bench.scoring.engine import get_scorer
from consistency_bench.builders.card.data import CORPORA, DEVIATIONS, PAPER_SIZES
from consistency_bench.builders.card.render import _config_section
from consistency_bench.builders.catalog import SUITES
from consistency_bench.leaderboard.ranking import model as ranking

ROOT = Path(__file__).resolve().parent.parent
#: Source files registered in bench/registries/source_files.py outside the mirror manifest,
#: with the reason.
OUTSIDE_MANIFEST = {
    "qqp/dev.tsv": ("QQP is not mirrored; GLUE archive, no md5 pinned "
                    "(bench/registries/source_files.py)"),
    "qqp/train.tsv": ("QQP is not mirrored; GLUE archive, no md5 pinned "
                    "(bench/registries/source_files.py)"),
}


def _fail(problems: list[str]) -> None:
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- the registry


def test_registry_registers_looks_up_and_refuses_duplicates():
    reg: Registry[int] = Registry("widget")
    assert reg.register("alpha", 1) == 1
    reg.register("beta", 2)
    assert reg.names() == ("alpha", "beta") and list(reg.items()) == [("alpha", 1), ("beta", 2)]
    assert reg["beta"] == 2 and reg.get("gamma") is None and "alpha" in reg and len(reg) == 2
    with pytest.raises(DuplicateNameError, match="widget 'alpha' is already registered"):
        reg.register("alpha", 3)
    with pytest.raises(UnknownNameError, match=r"Unknown widget 'alpah'\. Did you mean: alpha"):
        reg["alpah"]
    assert reg.unregister("alpha") == 1 and reg.names() == ("beta",)


def test_each_registry_names_what_it_holds():
    for registry, kind in ((SUITES, "suite"), (SCORERS, "metric kind"), (SOURCES, "source file"),
                           (FAMILIES, "family")):
        with pytest.raises(UnknownNameError, match=f"Unknown {kind} "):
            registry["no_such_name"]


# ----------------------------------------------------------------------------- declarations


def test_each_family_declares_exactly_the_suites_its_module_registers():
    problems = []
    for family in FAMILIES.values():
        registered = [n for n, s in SUITES.items() if s.family == family.name]
        if registered != list(family.suites):
            problems.append(f"{family.name}: declared {family.suites}, registered {registered}")
    for name, spec in SUITES.items():
        if spec.family not in FAMILIES:
            problems.append(f"{name}: family {spec.family!r} is not declared")
    _fail(problems)


def test_a_suite_outside_its_declaration_is_refused():
    becel = FAMILIES["becel"]
    with pytest.raises(DataError, match="does not list it"):
        becel.check_suite("snli_new", "snli", "semantic")
    with pytest.raises(DataError, match="task 'mnli' is not in"):
        becel.check_suite("snli_semantic", "mnli", "semantic")
    with pytest.raises(DataError, match="kind 'calm' is not in"):
        becel.check_suite("snli_semantic", "snli", "calm")


def test_a_declaration_must_license_every_task():
    calm = FAMILIES["calm"]
    with pytest.raises(DataError, match="no licence note for task"):
        replace(calm, licenses={"mnli": "x"})


def test_every_suite_takes_citation_and_licence_from_its_family():
    _fail([f"{n}: citation or licence differs from bench/registries/families.py"
           for n, s in SUITES.items()
           if s.citation != FAMILIES[s.family].citation
           or s.license != FAMILIES[s.family].licenses[s.task]])


# ----------------------------------------------------------------------------- every suite


def test_every_suite_has_a_scorer_and_every_scorer_a_family():
    problems = []
    for name, spec in SUITES.items():
        try:
            get_scorer(spec.kind)
        except UnknownNameError as exc:
            problems.append(f"{name}: {exc}")
    declared = set(families.kinds())
    problems += [f"scorer kind {k!r} is declared by no family" for k in SCORERS
                 if k not in declared]
    problems += [f"declared kind {k!r} has no scorer" for k in declared if k not in SCORERS]
    _fail(problems)


def _entry(spec) -> dict:
    """A manifest entry of an unbuilt suite, as the card reads one."""
    return {"family": spec.family, "task": spec.task, "kind": spec.kind,
            "label_names": list(spec.task_spec.label_names), "rows": 0, "groups": 0,
            "variants": {}, "main_metric": spec.main_metric,
            "higher_is_better": spec.higher_is_better,
            "sources": [{"path": p} for p in spec.sources]}


def test_every_suite_has_a_card_entry():
    problems = []
    for name, spec in SUITES.items():
        section = "\n".join(_config_section(name, _entry(spec)))
        family = FAMILIES[spec.family]
        if f"- **Family:** {family.paper}; task `{spec.task}`" not in section:
            problems.append(f"{name}: the card section does not name the family's paper")
        if f"- **License:** {family.licenses[spec.task]}" not in section:
            problems.append(f"{name}: the card section has no licence line")
        if spec.task not in CORPORA:
            problems.append(f"{name}: task {spec.task!r} has no corpus in card_data.CORPORA")
    for deviation in DEVIATIONS:
        problems += [f"deviation {deviation.title!r}: {n!r} is not a registered suite"
                     for n in deviation.configs if n not in SUITES]
    problems += [f"PAPER_SIZES: {n!r} is not a registered suite" for n in PAPER_SIZES
                 if n not in SUITES]
    _fail(problems)


def test_every_source_file_has_a_sources_row():
    with open(ROOT / "bench/data/sources.tsv", encoding="utf-8") as handle:
        rows = {row["path"] for row in csv.DictReader(handle, delimiter="\t")}
    problems = []
    for name, spec in SUITES.items():
        for path in spec.sources:
            if path in rows:
                continue
            if path in OUTSIDE_MANIFEST and path in SOURCES:
                continue
            problems.append(f"{name}: {path} has no row in bench/data/sources.tsv")
    _fail(problems)


def _named_configs(text: str) -> set[str]:
    """Config names a docs page gives, with ``a_{x,y}`` brace groups expanded."""
    names = set()
    for match in re.finditer(r"[a-z0-9_]+(?:\{[a-z0-9_,]+\}[a-z0-9_]*)*", text):
        parts = re.split(r"\{([a-z0-9_,]+)\}", match.group())
        choices = [p.split(",") if i % 2 else [p] for i, p in enumerate(parts)]
        names.update("".join(c) for c in itertools.product(*choices))
    return names


def test_every_suite_has_a_docs_section():
    problems = []
    for family in FAMILIES.values():
        page = ROOT / family.docs
        if not page.is_file():
            problems.append(f"{family.name}: no docs page {family.docs}")
            continue
        named = _named_configs(page.read_text(encoding="utf-8"))
        problems += [f"{n}: {family.docs} does not name it" for n in family.suites
                     if n not in named]
    _fail(problems)


def test_docs_index_is_current():
    index = (ROOT / "docs/suites/index.md").read_text(encoding="utf-8")
    assert index == families.docs_index(), (
        "docs/suites/index.md is stale: python -m consistency_bench.bench.registries.families > docs/suites/index.md")  # noqa: E501


# ----------------------------------------------------------------------------- leaderboard


def test_every_suite_has_a_place_in_the_leaderboard_tables():
    _fail([f"{n}: task, kind or family missing from consistency_bench.leaderboard.ranking's tables"
           for n, s in SUITES.items()
           if s.task not in ranking.TASKS or s.kind not in ranking.KINDS
           or s.family not in ranking.FAMILIES])


def test_leaderboard_tables_are_the_reading_order_they_were():
    """The declarations give the order and names the page was rendered with before them.

    A new family comes after these (it is declared last), so the tables start with them.
    """
    tasks = {
        "snli": "SNLI", "rte": "RTE", "mrpc": "MRPC", "boolq": "BoolQ", "wic": "WiC",
        "sst2": "SST-2", "ag_news": "AG News", "mnli": "MNLI", "qnli": "QNLI", "qqp": "QQP",
        "kornli": "KorNLI", "klue_nli": "KLUE-NLI", "klue_sts": "KLUE-STS",
        "art": "ART", "conv_ent": "Conversational Entailment",
    }
    kinds = ("semantic", "negational", "symmetric", "transitive", "additive", "calm", "salad",
             "coherence", "coherence_theta")
    assert list(ranking.TASKS.items())[:len(tasks)] == list(tasks.items())
    assert families.task_names() == ranking.TASKS
    assert ranking.KINDS[:len(kinds)] == kinds
    assert ranking.FAMILIES[:4] == ("becel", "calm", "salad", "coherence")


def test_a_task_has_one_display_name():
    clash = replace(FAMILIES["salad"], name="clash",
                    tasks={**FAMILIES["salad"].tasks, "snli": "S-NLI"})
    families.register_family(clash)
    try:
        with pytest.raises(DataError, match="task 'snli' is 'SNLI' in one family and 'S-NLI'"):
            families.task_names()
    finally:
        FAMILIES.unregister("clash")
