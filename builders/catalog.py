"""Every suite of every declared family: the builder modules imported as declared.

A family is declared once in :mod:`consistency_bench.bench.registries.families`; its ``builder``
names the
module whose
import registers its suites (``register_suite``). This module imports each declared builder
in the declarations' order, so adding a family adds no line here (docs/extending.md), and
:data:`SUITES` is the suite registry with every family registered.
"""

from __future__ import annotations

import importlib

from consistency_bench.bench.registries.families import FAMILIES
from consistency_bench.bench.registries.registry import Registry
from consistency_bench.builders.suite import spec as suite


def load_families() -> Registry[suite.SuiteSpec]:
    """Import the builder module of every declared family; the filled suite registry.

    Importing a module twice is a no-op, so a builder imported earlier (a test, a script)
    keeps its registrations and is not registered again.
    """
    for family in FAMILIES.values():
        importlib.import_module(family.builder)
    return suite.SUITES


#: Every registered suite, by name (:data:`consistency_bench.builders.suite.spec.SUITES`, every
#: family
#: loaded).
SUITES = load_families()


def get_suite(name: str) -> suite.SuiteSpec:
    """Look a suite up by name, with a did-you-mean error."""
    return SUITES[name]
