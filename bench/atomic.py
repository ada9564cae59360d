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

The parts live in modules of one job each: :mod:`~bench.atomic_write` (one file:
:func:`atomic_path`, :func:`write_text`), :mod:`~bench.atomic_folder` (one folder:
:func:`atomic_dir`, :func:`sweep_stale`, :func:`pid_alive`) and :mod:`~bench.output_checks`
(the checks and the :data:`OWNED` record). Their names are importable from here too.
"""

from __future__ import annotations

from bench.atomic_folder import (
    atomic_dir,
    pid_alive,
    sweep_stale,
)
from bench.atomic_write import (
    _umask,
    atomic_path,
    dir_mode,
    write_text,
)
from bench.output_checks import (
    BUILT_MARKER,
    OWNED,
    built_folder_of,
    check_output_dir,
    check_output_file,
    read_owned,
    refuse_special,
)

__all__ = [
    "BUILT_MARKER",
    "OWNED",
    "_umask",
    "atomic_dir",
    "atomic_path",
    "built_folder_of",
    "check_output_dir",
    "check_output_file",
    "dir_mode",
    "pid_alive",
    "read_owned",
    "refuse_special",
    "sweep_stale",
    "write_text",
]
