"""Loading WordNet 3.0 through NLTK, offline (the antonym source and the verb base forms).

The data is looked for in ``NLTK_DATA``, the repository's ``.venv/nltk_data`` (where
``scripts/data-deps.sh`` copies Debian's wordnet-base) and the running venv's ``nltk_data``.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

from consistency_bench.bench.errors import ConfigError

REPO_NLTK_DATA = Path(__file__).resolve().parents[2] / ".venv" / "nltk_data"


def nltk_data_paths() -> list[str]:
    """Where WordNet is looked for: NLTK_DATA, the repo's .venv/nltk_data, the venv's."""
    paths = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    paths += [str(REPO_NLTK_DATA), str(Path(sys.prefix) / "nltk_data")]
    return paths


@cache
def wordnet_reader():
    """:func:`load_wordnet`, loaded once (the context checks consult it for every swap)."""
    return load_wordnet()


def load_wordnet():
    """NLTK's WordNet reader, loaded from :func:`nltk_data_paths`.

    Raises:
        ConfigError: nltk is not installed or the WordNet data is not found.

    """
    try:
        import nltk
        from nltk.corpus import wordnet
    except ImportError as exc:
        raise ConfigError(f"WordNet needs nltk (the nlp extra): {exc}") from None
    for path in reversed(nltk_data_paths()):
        if path not in nltk.data.path:
            nltk.data.path.insert(0, path)
    try:
        wordnet.ensure_loaded()
    except LookupError:
        raise ConfigError(
            "WordNet data not found in " + ", ".join(nltk_data_paths()) + ": run "
            "scripts/system-deps.sh and scripts/data-deps.sh (Debian wordnet-base copied into "
            ".venv/nltk_data) or set NLTK_DATA"
        ) from None
    return wordnet
