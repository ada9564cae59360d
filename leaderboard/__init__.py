"""The leaderboard, in layers: submissions store, pure ranking, rendering, publishing.

``consistency_bench.leaderboard.ranking`` is pure (a table of results in, ranks out);
``consistency_bench.leaderboard.submissions``
owns the ``submissions/`` folder; ``consistency_bench.leaderboard.webpage.render`` writes Markdown,
HTML,
PNG and JSON
(the page in ``consistency_bench.leaderboard.webpage.page`` with its CSS, script and CSP in
``consistency_bench.leaderboard.webpage.static``
and its content as data, lazily loaded files included, in ``consistency_bench.leaderboard.webpage``;
escaping and number formatting in ``consistency_bench.leaderboard.webpage.formatting``);
``consistency_bench.leaderboard.publish`` pushes to the Hugging Face Hub;
``consistency_bench.leaderboard.hub.eval_results``
writes the Hub
Eval Results files (``eval.yaml``, ``.eval_results/*.yaml``);
``consistency_bench.leaderboard.space`` makes the
static Space and adds the predictions to a publish. Submissions by pull request:
``consistency_bench.leaderboard.hub.pull_requests`` (``submit --hub``),
``consistency_bench.leaderboard.review.loop`` (``review``) and
``consistency_bench.leaderboard.hub.verify_published`` (``verify``, and the Hub reads both use).
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from typing import Any


class _Package(types.ModuleType):
    """The package, callable as the Python API's ``cb.leaderboard(...)`` (docs/api.md).

    Once the layer folders install under ``consistency_bench`` (issue 29), the package
    ``consistency_bench.leaderboard`` and the function ``cb.leaderboard`` share one name: the
    first import of a ``consistency_bench.leaderboard.*`` module sets that attribute of
    ``consistency_bench`` to this package. Calling the package ranks as the function does.
    """

    def __call__(self, *, submissions: str | os.PathLike = "submissions",
                 data: str | os.PathLike | None = None,
                 warn: Callable[[str], None] | None = None) -> Any:
        from consistency_bench.leaderboard.webpage.build_site import stored_board

        return stored_board(submissions, data, warn=warn)


sys.modules[__name__].__class__ = _Package
