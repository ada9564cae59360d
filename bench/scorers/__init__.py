"""Family scorers, imported by name (each registers its metric kinds in SCORERS)."""

from bench.scorers import (
    becel,  # noqa: F401
    salad,  # noqa: F401
)
