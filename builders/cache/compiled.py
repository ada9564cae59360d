"""numba's cache of compiled functions, in the user's cache folder.

numba writes the machine code of ``@njit(cache=True)`` functions beside the module, in its
``__pycache__``, when that folder is writable. Installed from a wheel, the module sits in
``site-packages``, which may be read-only (then numba falls back to a folder of its own) or
shared by several users and Python builds. :func:`use_cache_folder` points numba at
``<build cache>/numba`` instead (``consistency_bench.builders.cache.folder``), unless
``NUMBA_CACHE_DIR`` is set
(the user's choice wins). It must run before the compiled module is imported: numba picks the
cache folder of a function when the function is defined.
"""

from __future__ import annotations

import os

from consistency_bench.builders.cache.folder import cache_dir


def use_cache_folder() -> None:
    """Point numba's cache at the build cache's ``numba`` folder (unless the user chose one).

    With the build caches off, numba's own default is left as it is.
    """
    folder = cache_dir("numba")
    if folder is None or os.environ.get("NUMBA_CACHE_DIR"):
        return
    from numba.core import config  # local: numba is imported only to decode

    if not getattr(config, "CACHE_DIR", ""):  # set from numba's environment at its import
        config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
