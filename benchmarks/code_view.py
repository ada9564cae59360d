"""The folder to run ``python -m consistency_bench`` from (as its working folder and
``PYTHONPATH``) to run another checkout's code (the benchmarks' ``--code`` and ``--baseline``).

Since the layers install under one namespace (issue 29: ``bench/`` is imported as
``consistency_bench.bench`` through setuptools' ``package_dir``), ``PYTHONPATH=OLD`` alone no
longer selects OLD's layers: ``consistency_bench`` comes from ``OLD/consistency_bench``, which
holds no ``bench/``, so ``consistency_bench.bench`` is found by the editable install's finder,
in *this* checkout. A "before" side run that way measured this checkout's layers. The view
is a folder ``consistency_bench/`` of links into OLD, laid out as the wheel installs it:
everything in ``OLD/consistency_bench`` plus ``bench``, ``builders`` and ``leaderboard``. A
checkout from before the namespace (no ``consistency_bench/bench`` to make, ``bench/`` imported
as ``bench``) is used as it is. The view must also be the working folder: ``python -m`` puts
the working folder first on ``sys.path``, so running from OLD would find
``OLD/consistency_bench`` first again (pass absolute paths to such a process).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

LAYERS = ("bench", "builders", "leaderboard")


#: The views this process made, by checkout (removed when it exits).
_VIEWS: dict[Path, Path] = {}


def code_root(code: Path) -> Path:
    """The folder from which ``python -m consistency_bench`` runs ``code``'s code.

    A view is made once per process, in a private temporary folder (``mkdtemp``: mode 0700,
    a name no other user can take first), from the checkout as it is then.
    """
    code = code.resolve()
    package = code / "consistency_bench"
    if not package.is_dir() or (package / "bench").exists():
        return code  # before the namespace, or already laid out as installed
    if code not in _VIEWS:
        view = Path(tempfile.mkdtemp(prefix="cb-code-view-"))
        atexit.register(shutil.rmtree, view, ignore_errors=True)
        (view / "consistency_bench").mkdir()
        for entry in package.iterdir():
            (view / "consistency_bench" / entry.name).symlink_to(entry)
        for layer in LAYERS:
            (view / "consistency_bench" / layer).symlink_to(code / layer)
        _VIEWS[code] = view
    return _VIEWS[code]
