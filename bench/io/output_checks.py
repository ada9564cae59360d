"""The checks every command runs on its output paths before writing anything.

Part of :mod:`bench.atomic` (the checks are described there): :func:`check_output_dir`,
:func:`check_output_file`, :func:`refuse_special`, :func:`built_folder_of` and the
:data:`OWNED` record of a command's output folder (:func:`read_owned`); and the one check of
an input read by name that must be a regular file (:func:`require_regular_file`), with the
same words for what a path is instead.

From ``bench.atomic``, a re-export module that issue 29 deleted:

Write files so that a crash never leaves a half-written one behind.

Also the checks every command runs on its output paths before writing anything:
:func:`check_output_dir` (refuse a non-empty folder that is not this command's own output
unless ``--overwrite``, a symbolic link, the current folder) and :func:`check_output_file`
(write only regular files: refuse a folder, a symbolic link, a device node or FIFO, a path
that is one of the inputs, and any path inside a built suite folder).

An output folder written with :func:`atomic_dir` and an ``owner`` records the files the
command wrote in :data:`OWNED`; the next run replaces only those and keeps every other file
(a ``CNAME``, a ``thesis.tex``). Staging folders are named ``.<name>.<pid>-<random>`` so that
the next run can sweep those whose owner died (:func:`sweep_stale`).

The parts live in modules of one job each: :mod:`~consistency_bench.bench.io.write` (one file:
:func:`atomic_path`, :func:`write_text`), :mod:`~consistency_bench.bench.io.staged_folder` (one
folder:
:func:`atomic_dir`, :func:`sweep_stale`, :func:`pid_alive`) and
:mod:`~consistency_bench.bench.io.output_checks`
(the checks and the :data:`OWNED` record).

"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from consistency_bench.bench.errors import ConfigError

#: The record of the files a command wrote into its output folder (never published: dot-file).
OWNED = ".consistency-bench-owned.json"
#: A built suite folder holds this file (``consistency_bench.bench.io.manifest.MANIFEST``; not
#: imported
#: to stay light).
BUILT_MARKER = "suites.json"


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


def read_owned(folder: str | os.PathLike) -> dict | None:
    """The :data:`OWNED` record of ``folder`` (``command``, ``files``, ...), or ``None``."""
    path = Path(folder) / OWNED
    if path.is_symlink() or not path.is_file():
        return None
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    try:
        record = load_json_file(path)
    except JsonFileError:  # unreadable, not JSON, too deep: not a record of ours
        return None
    if not isinstance(record, dict) or not isinstance(record.get("files"), list):
        return None
    record["files"] = [f for f in record["files"] if isinstance(f, str)]
    return record


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
    inputs: tuple[str | os.PathLike | None, ...] = (),
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
        inputs: Files and folders the command reads: the output folder may be none of them
            and hold none of them (compared by identity: the real paths, links resolved), even
            with ``overwrite`` (``train --base M --out M --overwrite`` replaced the model it
            was reading).

    Raises:
        ConfigError: ``target`` is a file, a link, the current folder, an input or a folder
            holding one, or a non-empty folder that may not be replaced.

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
    refuse_input_folders(target, inputs, flag)
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


def refuse_input_folders(target: str | os.PathLike,
                         inputs: tuple[str | os.PathLike | None, ...], flag: str = "--out"
                         ) -> None:
    """Refuse an output folder that is one of ``inputs`` or holds one (links resolved).

    An output folder is replaced as a whole, so it would lose what it holds: ``train --base M
    --out M --overwrite`` replaced the model it was reading, ``build --sources S --out S
    --overwrite`` the source mirror. An input that does not exist here (a Hub id) is skipped.

    Raises:
        ConfigError: Naming the folder, the input and what to do instead.

    """
    target = Path(target)
    real = target.resolve()
    for source in inputs:
        if source is None or str(source) == "" or not Path(source).expanduser().exists():
            continue  # not a local path (a Hub id): nothing here to lose
        src = Path(source).expanduser().resolve()
        if src == real or real in src.parents:
            what = "is the input" if src == real else "holds the input"
            raise ConfigError(f"{flag} {target}: {what} {source}; the output folder is replaced "
                              "as a whole, so it would lose the input. Name another folder")


def check_output_file(
    target: str | os.PathLike,
    *,
    inputs: tuple[str | os.PathLike | None, ...] = (),
    flag: str = "--out",
    built: bool = True,
) -> Path:
    """Refuse an output file path that could lose data; return it as a ``Path``.

    Outputs are written only as regular files: a folder, a symbolic link (``/dev/stdout``, a
    link to an earlier output), a device node (``/dev/full``), a FIFO or a socket is refused,
    and so is a path whose folder does not exist (nothing is created for it). So is a path
    that is one of the command's inputs by identity (``os.path.samefile``: however it is
    spelled, a hard link too), or any file inside an input that is a folder (an lm-eval
    output folder, a model folder), and (``built``) any path inside a built suite folder (a
    folder holding ``suites.json``, at any depth): ``score --out DATA/suites.json`` would
    destroy the build.

    Raises:
        ConfigError: Naming the path and what to do instead.

    """
    target = Path(target)
    if target.is_dir() and not target.is_symlink():
        raise ConfigError(f"{flag} {target}: is a folder; name a file to write")
    refuse_special(target, flag)
    for source in inputs:
        found = None if source is None else input_file_at(target, Path(source))
        if found is not None:
            inside = "" if found == Path(source) else f" (found in the input folder {source})"
            raise ConfigError(
                f"{flag} {target}: is the input file {found}{inside}; writing it would "
                "overwrite the input. Name another file"
            )
    parent = target.parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise ConfigError(f"{flag} {target}: the folder {parent} {what}; create it first "
                          "(an output's folder is never created for it)")
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


def input_file_at(target: Path, source: Path) -> Path | None:
    """The input file that ``target`` is (by identity), or ``None``.

    ``source`` is an input file or folder: a file is compared with ``os.path.samefile``; a
    folder is searched (links to files followed, as a reader opening them would; links to
    folders not) for a file with ``target``'s device and inode. An output that does not exist
    yet is no input, unless both are spelled as the same path.
    """
    try:
        st = os.stat(target)
    except OSError:
        return source if target.resolve() == source.resolve() else None
    try:
        if not source.is_dir():
            return source if os.path.samefile(target, source) else None
    except OSError:
        return None
    for folder, _dirs, names in os.walk(source):
        for name in names:
            path = Path(folder) / name
            try:
                found = os.stat(path)
            except OSError:
                continue
            if (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino):
                return path
    return None


def require_regular_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` as a ``Path`` when it is a regular file (or a link to one).

    ``/dev/zero`` never ends, a FIFO blocks until a writer comes, and a folder or a socket
    cannot be read as text: such a path is refused with what it is, not "not found".

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
