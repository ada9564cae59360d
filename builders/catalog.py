"""Every suite family, imported by name. Adding a family adds one line here (no scanning).

A family is declared in :mod:`bench.families` (paper, citation, licences, kinds, tasks, the
suites it registers); its module here registers those suites (docs/extending.md).
"""

from builders import (
    becel,  # noqa: F401  (registers the 19 BECEL suites)
    calm,  # noqa: F401  (registers the CALM suites)
    coherence,  # noqa: F401  (registers the ConvEnt and ART span suites)
)
from builders.salad import suites as salad  # noqa: F401  (registers the word-salad suites)
from builders.suite import SUITES, get_suite

__all__ = ["SUITES", "get_suite"]
