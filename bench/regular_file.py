"""One check for a file a command reads by name: it must be a regular file.

``/dev/zero`` never ends, a FIFO blocks until a writer comes, and a folder or a socket cannot
be read as text. Such a path is refused with what it is, instead of "not found".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from bench.errors import ConfigError


def require_regular_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` as a ``Path`` when it is a regular file (or a link to one).

    Args:
        path: The file given.
        what: How the message names it (``--model-card PATH``, ``PATH: metadata file``).

    Raises:
        ConfigError: ``what`` and "not found", or what the path is instead: a folder, a FIFO,
            a device (``/dev/zero``), a socket, "not a regular file".

    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ConfigError(f"{what}: not found") from None
    except OSError as exc:
        raise ConfigError(f"{what}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISREG(mode):
        return path
    kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "of another kind")
    raise ConfigError(f"{what}: is {kind}, not a regular file")
