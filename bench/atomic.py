"""Write files so that a crash never leaves a half-written one behind.

Also the checks every command runs on its output paths before writing anything:
:func:`check_output_dir` (refuse a non-empty folder that is not this command's own output
unless ``--overwrite``, a symbolic link, the current folder) and :func:`check_output_file`
(write only regular files: refuse a folder, a symbolic link, a device node or FIFO, a path
that is one of the inputs, and any path inside a built suite folder).

An output folder written with :func:`atomic_dir` and an ``owner`` records the files the
command wrote in :data:`OWNED`; the next run replaces only those and keeps every other file
(a ``CNAME``, a ``thesis.tex``). Staging folders are named ``.<name>.<pid>-<random>`` so that
the next run can sweep those whose owner died (:func:`sweep_stale`).
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.errors import ConfigError

#: The record of the files a command wrote into its output folder (never published: dot-file).
OWNED = ".consistency-bench-owned.json"
#: A built suite folder holds this file (``bench.manifest.MANIFEST``; not imported to stay light).
BUILT_MARKER = "suites.json"


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
    refuse_special(target)
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


def refuse_special(target: Path, flag: str | None = None) -> None:
    """Refuse to replace anything but a regular file: a link, device node, FIFO or socket.

    ``os.replace`` over ``/dev/full`` or a ``/dev/stdout`` link replaces the node itself; a
    link to an earlier output would be replaced by a file. Neither is what the user meant.

    Raises:
        ConfigError: ``target`` exists and is not a regular file (a folder is left to the
            caller, which has its own message).

    """
    try:
        st = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        return  # unreadable: the write itself will report it, naming the file
    where = f"{flag} {target}" if flag else str(target)
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(
            f"{where}: is a symbolic link (to {os.readlink(target)}); outputs are written only "
            "as regular files. Name the file itself, or a new path"
        )
    if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
        return
    kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
            else "a device node")
    raise ConfigError(
        f"{where}: is {kind}, not a regular file; outputs are written only as regular files. "
        "Name a file path"
    )


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


def read_owned(folder: str | os.PathLike) -> dict | None:
    """The :data:`OWNED` record of ``folder`` (``command``, ``files``, ...), or ``None``."""
    path = Path(folder) / OWNED
    if path.is_symlink() or not path.is_file():
        return None
    from bench.json_input import JsonFileError, load_json_file

    try:
        record = load_json_file(path)
    except JsonFileError:  # unreadable, not JSON, too deep: not a record of ours
        return None
    if not isinstance(record, dict) or not isinstance(record.get("files"), list):
        return None
    record["files"] = [f for f in record["files"] if isinstance(f, str)]
    return record


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


def _refuse_cwd(target: Path, flag: str = "--out") -> None:
    """Refuse the current folder or a folder holding it: it would be renamed under the shell."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return
    resolved = target.resolve()
    if cwd == resolved or resolved in cwd.parents:
        raise ConfigError(
            f"{flag} {target}: is the current folder (or holds it); an output folder is "
            "replaced as a whole, so name a new folder such as ./out"
        )


def check_output_dir(
    target: str | os.PathLike,
    *,
    overwrite: bool = False,
    flag: str = "--out",
    replaceable: str | None = None,
    owner: str | None = None,
) -> Path:
    """Refuse an output folder whose contents would be lost; return it as a ``Path``.

    Every command that writes a folder calls this before doing any work. A missing path or an
    empty folder is fine. A non-empty folder is refused unless ``overwrite`` is true (the
    command's ``--overwrite``), or it is this command's own earlier output: its :data:`OWNED`
    record names ``owner``, or (folders written before that record existed) it holds the file
    ``replaceable`` (e.g. ``leaderboard.json`` for the leaderboard site). A symbolic link, a
    file and the current folder are always refused.

    Args:
        target: The output folder.
        overwrite: The user passed ``--overwrite``.
        flag: The option that named the folder, for the message.
        replaceable: A file name whose presence marks the folder as safe to replace.
        owner: The command's name, as recorded by :func:`atomic_dir`.

    Raises:
        ConfigError: ``target`` is a file, a link, the current folder, or a non-empty folder
            that may not be replaced.

    """
    target = Path(target)
    if target.is_symlink():
        raise ConfigError(
            f"{flag} {target}: is a symbolic link (to {os.readlink(target)}); name the folder "
            "itself, or a new folder"
        )
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{flag} {target}: is a file, not a folder; name a folder")
    if target.is_dir():
        _refuse_cwd(target, flag)
    if target.is_dir() and any(target.iterdir()):
        record = read_owned(target)
        ours = (owner is not None and record is not None and record.get("command") == owner)
        if ours or (record is None and replaceable is not None
                    and (target / replaceable).is_file()):
            return target
        if overwrite:
            return target
        kept = " (files it did not write are kept)" if owner is not None else ""
        raise ConfigError(
            f"{flag} {target}: folder exists and is not empty, and is not an earlier output of "
            f"this command; its contents would be replaced{kept}. Pass --overwrite to write "
            "there anyway, or name a new folder"
        )
    return target


def check_output_file(
    target: str | os.PathLike,
    *,
    inputs: tuple[str | os.PathLike, ...] = (),
    flag: str = "--out",
    built: bool = True,
) -> Path:
    """Refuse an output file path that could lose data; return it as a ``Path``.

    Outputs are written only as regular files: a folder, a symbolic link (``/dev/stdout``, a
    link to an earlier output), a device node (``/dev/full``), a FIFO or a socket is refused.
    So is a path that is one of the command's inputs, however it is spelled, and (``built``)
    any path inside a built suite folder (a folder holding ``suites.json``, at any depth):
    ``score --out DATA/suites.json`` would destroy the build.

    Raises:
        ConfigError: Naming the path and what to do instead.

    """
    target = Path(target)
    if target.is_dir() and not target.is_symlink():
        raise ConfigError(f"{flag} {target}: is a folder; name a file to write")
    refuse_special(target, flag)
    for source in inputs:
        if source is not None and _same_file(target, Path(source)):
            raise ConfigError(
                f"{flag} {target}: is the input file {source}; writing it would overwrite the "
                "input. Name another file"
            )
    if built:
        folder = built_folder_of(target)
        if folder is not None:
            raise ConfigError(
                f"{flag} {target}: is inside the built suite folder {folder} (it holds "
                f"{BUILT_MARKER}); writing there would change the build. Name a file outside it"
            )
    return target


def built_folder_of(path: str | os.PathLike) -> Path | None:
    """The built suite folder (holding ``suites.json``) that ``path`` lies in, or ``None``."""
    resolved = Path(os.path.abspath(path))
    for folder in (resolved.parent, *resolved.parent.parents):
        if (folder / BUILT_MARKER).is_file():
            return folder
    real = Path(path).resolve()
    if real != resolved:
        return built_folder_of(real)
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()
