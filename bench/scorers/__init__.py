"""Family scorers, imported by name (each registers its metric kinds in SCORERS)."""

from bench.scorers import (
    becel,  # noqa: F401
    calm,  # noqa: F401
    coherence,  # noqa: F401
    salad,  # noqa: F401
)
