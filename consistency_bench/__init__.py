"""consistency-bench: build consistency test suites, score predictions, rank and publish.

The Python API (docs/api.md)::

    import consistency_bench as cb

    ds = cb.load_suite("rte_symmetric", data="consistency-bench")
    results = cb.score("predictions.jsonl", data="consistency-bench")
    results = cb.evaluate("textattack/bert-base-uncased-RTE", data="consistency-bench")
    board = cb.leaderboard(submissions="submissions")

The names are loaded on first use (PEP 562 ``__getattr__``): ``import consistency_bench``
imports nothing else, so the ``consistency-bench`` command, which lives in this package
(``consistency_bench/cli.py``, the roof of the layers ``bench`` < ``builders`` <
``leaderboard``), starts as fast as before. Nothing below the roof imports this package
(tests/test_layers.py, docs/design.md).
"""

from __future__ import annotations

import importlib  # loaded at interpreter start-up already; ``typing`` (15 ms) is not

#: Public name -> ``"module:attribute"`` it is loaded from on first use.
API = {
    "load_suite": "consistency_bench.api:load_suite",
    "score": "consistency_bench.api:score",
    "predict": "consistency_bench.api:predict",
    "evaluate": "consistency_bench.api:evaluate",
    "leaderboard": "consistency_bench.api:leaderboard",
    "__version__": "consistency_bench.bench:__version__",
}

__all__ = ["evaluate", "leaderboard", "load_suite", "predict", "score"]


def __getattr__(name: str) -> object:
    """Load an API name on first use and keep it in the module (PEP 562)."""
    target = API.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
