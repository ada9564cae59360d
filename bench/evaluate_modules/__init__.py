"""``evaluate`` modules shipped with the package.

The Hub-hosted metric scripts are unreachable offline; load these by path:
``evaluate.load(bench.evaluate_modules.path("consistency_bench"), "tau_sem")``.
"""

from __future__ import annotations

from pathlib import Path


def path(name: str = "consistency_bench") -> str:
    """Filesystem path of a shipped module, for ``evaluate.load``."""
    return str(Path(__file__).parent / name / f"{name}.py")
