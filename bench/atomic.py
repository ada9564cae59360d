"""Write files so that a crash never leaves a half-written one behind.

Also the checks every command runs on its output paths before writing anything:
:func:`check_output_dir` (refuse a non-empty existing folder unless ``--overwrite``) and
:func:`check_output_file` (refuse a directory, or a path that is one of the inputs).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.errors import ConfigError


def _file_mode() -> int:
    """0666 less the process umask (what ``open`` would have created)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """0777 less the process umask (what ``mkdir`` would have created, usually 0755)."""
    return 0o777 & ~_umask()


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it over ``target`` on success.

    On an exception the temporary file is removed and ``target`` is left untouched.
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(exc, target) from None
    os.close(handle)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, _file_mode())  # mkstemp makes 0600; give the usual umask-based mode
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except OSError as exc:
        if exc.filename not in (None, str(tmp_path)):
            raise  # not a write of this file (e.g. an input that could not be read)
        raise _cannot_write(exc, target) from None
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _cannot_write(exc: OSError, target: Path) -> OSError:
    """The same error, naming the file the user asked for instead of a temporary one."""
    return OSError(exc.errno, f"cannot write it ({exc.strerror or exc}); nothing was written",
                   str(target))


def write_text(target: str | os.PathLike, text: str) -> None:
    """Atomically write ``text`` (UTF-8) to ``target``."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextmanager
def atomic_dir(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``target`` (old copy removed)."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    except OSError as exc:
        raise _cannot_write(exc, target) from None
    os.chmod(tmp, dir_mode())  # mkdtemp makes 0700
    try:
        yield tmp
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def check_output_dir(
    target: str | os.PathLike,
    *,
    overwrite: bool = False,
    flag: str = "--out",
    replaceable: str | None = None,
) -> Path:
    """Refuse an output folder whose contents would be lost; return it as a ``Path``.

    Every command that writes a folder calls this before doing any work. A missing path or an
    empty folder is fine. A non-empty folder is refused unless ``overwrite`` is true (the
    command's ``--overwrite``) or it holds the file ``replaceable``, which marks the folder as
    this command's own earlier output (e.g. ``leaderboard.json`` for the leaderboard site).

    Args:
        target: The output folder.
        overwrite: The user passed ``--overwrite``.
        flag: The option that named the folder, for the message.
        replaceable: A file name whose presence marks the folder as safe to replace.

    Raises:
        ConfigError: ``target`` is a file, or a non-empty folder that may not be replaced.

    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{flag} {target}: is a file, not a folder; name a folder")
    if target.is_dir() and any(target.iterdir()):
        if overwrite or (replaceable is not None and (target / replaceable).is_file()):
            return target
        raise ConfigError(
            f"{flag} {target}: folder exists and is not empty; its contents would be replaced. "
            "Pass --overwrite to replace it, or name a new folder"
        )
    return target


def check_output_file(
    target: str | os.PathLike,
    *,
    inputs: tuple[str | os.PathLike, ...] = (),
    flag: str = "--out",
) -> Path:
    """Refuse an output file path that is a folder or one of the command's inputs.

    Raises:
        ConfigError: ``target`` is an existing directory, or the same file as an input.

    """
    target = Path(target)
    if target.is_dir():
        raise ConfigError(f"{flag} {target}: is a folder; name a file to write")
    for source in inputs:
        if source is not None and _same_file(target, Path(source)):
            raise ConfigError(
                f"{flag} {target}: is the input file {source}; writing it would overwrite the "
                "input. Name another file"
            )
    return target


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()
