"""``evaluate`` modules shipped with the package.

Each is a folder laid out as a Hub metric (``<name>/<name>.py`` and the metric card
``<name>/README.md``). Load one by its folder, offline:
``evaluate.load(bench.evaluate_modules.path("consistency_bench"), "tau_sem")``.
"""

from __future__ import annotations

from pathlib import Path


def path(name: str = "consistency_bench") -> str:
    """Folder of a shipped module (with its metric card), for ``evaluate.load``."""
    return str(Path(__file__).parent / name)
