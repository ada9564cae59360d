"""One folder written atomically: staged beside the target, swept when its owner died.

Part of :mod:`bench.atomic` (the :data:`~consistency_bench.bench.io.output_checks.OWNED` record and
the
staging
names are described there).
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.output_checks import OWNED, _refuse_cwd, read_owned
from consistency_bench.bench.io.write import _cannot_write, dir_mode


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a process of another user counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _staging_re(name: str) -> re.Pattern:
    return re.compile(rf"\.{re.escape(name)}\.(\d+)-[A-Za-z0-9_]+")


def sweep_stale(target: str | os.PathLike) -> list[Path]:
    """Remove the staging siblings ``.<name>.<pid>-*`` of ``target`` whose owner is dead.

    A run killed with ``kill -9`` leaves its staging folder behind; its pid is in the name, so
    the next run (of any command writing ``target``) removes it once that process is gone. A
    crash between the two renames of :func:`atomic_dir` (``target`` moved to ``.<name>.old``,
    the new folder not yet in place) is rolled back: the old folder is put back.

    Returns:
        The staging folders removed.

    """
    target = Path(os.path.abspath(target))
    parent, pattern = target.parent, _staging_re(target.name)
    removed = []
    try:
        siblings = list(parent.iterdir()) if parent.is_dir() else []
    except OSError:
        return removed
    for path in siblings:
        match = pattern.fullmatch(path.name)
        if match is None or path.is_symlink() or not path.is_dir():
            continue
        if not pid_alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    old = target.with_name(f".{target.name}.old")
    if old.is_dir() and not old.is_symlink() and not os.path.lexists(target):
        os.replace(old, target)
    return removed


def _files_under(root: Path) -> list[str]:
    """Relative POSIX paths of every regular file under ``root`` (links not followed)."""
    out = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                out.append(path.relative_to(root).as_posix())
    return sorted(out)


def _carry_foreign(old: Path, new: Path, owned: set[str]) -> list[str]:
    """Hard-link (or copy) into ``new`` every entry of ``old`` the command did not write.

    An entry is kept when it is not listed in ``owned`` (what the previous run wrote) and the
    new run did not write the same path. Symbolic links are kept as links, never followed.

    Returns:
        The relative paths kept.

    """
    kept = []
    for dirpath, dirnames, filenames in os.walk(old):
        here = Path(dirpath)
        rel_dir = here.relative_to(old)
        links = [d for d in dirnames if (here / d).is_symlink()]
        dirnames[:] = [d for d in dirnames if d not in links]
        if not dirnames and not filenames and not links and rel_dir != Path("."):
            if not os.path.lexists(new / rel_dir):  # a user's empty folder
                (new / rel_dir).mkdir(parents=True)
                kept.append(rel_dir.as_posix())
            continue
        for name in filenames + links:
            rel = (rel_dir / name).as_posix()
            if rel in owned or rel == OWNED or os.path.lexists(new / rel):
                continue
            src, dst = here / name, new / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            else:
                try:
                    os.link(src, dst, follow_symlinks=False)
                except OSError:
                    shutil.copy2(src, dst, follow_symlinks=False)
            kept.append(rel)
    return kept


# One piece (over 60 lines): one context manager whose try/finally spans the yield.
@contextmanager
def atomic_dir(
    target: str | os.PathLike,
    *,
    owner: str | None = None,
    record: dict | None = None,
    legacy: tuple[str, ...] = (),
) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``target``.

    Without ``owner`` the old folder is removed as a whole (``build`` carries what it keeps
    itself). With ``owner`` (the command's name) only the files the previous run recorded in
    :data:`OWNED` are replaced: every other file of the old folder is carried over into the
    new one (hard links), and the new :data:`OWNED` lists the files written now, plus
    ``record``. A folder written before that record existed has none: there the files
    matching a ``legacy`` pattern (``fnmatch``, e.g. ``submissions/*/meta.yaml``) count as the
    command's own.

    Stale staging folders of dead runs are swept first (:func:`sweep_stale`). An ``OSError``
    that names no file (a full disk during a write) is reported naming ``target``.

    Raises:
        ConfigError: ``target`` is a symbolic link, a file, or the current folder (or holds
            it).

    """
    target = Path(os.path.abspath(target))
    if target.is_symlink():
        raise ConfigError(f"{target}: is a symbolic link; name the folder itself")
    if os.path.lexists(target) and not target.is_dir():
        raise ConfigError(f"{target}: is a file, not a folder")
    _refuse_cwd(target)
    sweep_stale(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}-"))
    except OSError as exc:
        raise _cannot_write(exc, target) from None
    os.chmod(tmp, dir_mode())  # mkdtemp makes 0700
    try:
        try:
            yield tmp
            if owner is not None:
                written = _files_under(tmp)
                if target.is_dir():
                    previous = read_owned(target)
                    owned = (set(previous["files"]) if previous else
                             {f for f in _files_under(target)
                              if any(fnmatch.fnmatchcase(f, p) for p in legacy)})
                    _carry_foreign(target, tmp, owned)
                body = {"command": owner, "files": written, **(record or {})}
                (tmp / OWNED).write_text(json.dumps(body, indent=1, sort_keys=True) + "\n",
                                         encoding="utf-8")
        except OSError as exc:
            if not _writing(exc, tmp):
                raise  # not a write into the new folder (e.g. an input that could not be read)
            raise _cannot_write(exc, target) from None
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if os.path.lexists(old):
                if old.is_symlink() or not old.is_dir():
                    old.unlink()
                else:
                    shutil.rmtree(old)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


#: ``OSError`` numbers of a failed write (full disk, quota, read-only, permission, I/O).
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                 errno.EFBIG}


def _writing(exc: OSError, tmp: Path) -> bool:
    """Whether ``exc`` is a failed write into ``tmp`` (a full disk names no file at all)."""
    if exc.filename is None:
        return exc.errno in _WRITE_ERRNOS
    return str(exc.filename).startswith(str(tmp))
