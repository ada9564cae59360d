"""The ``consistency-bench`` command line.

The roof of the layers (bench < builders < leaderboard < consistency_bench, docs/design.md):
nothing below imports this package. Each command lives in its own module under
``consistency_bench/commands/``, imported by name and listed in ``COMMANDS`` (no import
strings, no scanning). A command module exposes ``add_parser(subparsers)``, which sets
``func`` on its parser; ``func(args)`` returns the exit code. Any ``BenchError`` becomes one
line on stderr and exit code 2, and so does an ``OSError`` while reading or writing (a full
disk, a read-only folder: the message names the file; writes go through :mod:`bench.atomic`, so
nothing is half-written). Output piped into ``head`` ends quietly. Every command's ``--help``
shows the defaults. A command's ``--no-progress`` silences every library's progress bars.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from consistency_bench.bench import __version__
from consistency_bench.bench.errors import BenchError
from consistency_bench.bench.runtime import one_blas_thread
from consistency_bench.commands import (
    baseline,
    build,
    convert_becel,
    generate,
    hub,
    inspect,
    leaderboard,
    lm_eval,
    merge,
    predict,
    publish,
    reproduce,
    salad,
    score,
    submit,
    train,
)

#: Command modules, in the order ``--help`` lists them: imported by name above (no import
#: strings, no scanning), so the roof's arrows are in the import graph tests/test_layers.py reads.
COMMANDS: tuple[ModuleType, ...] = (
    build,
    generate,
    score,
    inspect,
    convert_becel,
    predict,
    merge,
    lm_eval,
    baseline,
    train,
    submit,
    leaderboard,
    publish,
    hub,
    reproduce,
    salad,
)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """``--help`` with ``(default: X)`` after each option that has a meaningful default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or default is None
            or default is False
            or default == []
            or default == argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


def make_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="consistency-bench",
        description="Build consistency test suites, score prediction files, rank and publish.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_parser(subparsers)
    for command in subparsers.choices.values():
        command.formatter_class = DefaultsHelpFormatter
    return parser


def _os_error(exc: OSError) -> str:
    """One line for a file-system error: the file, the reason."""
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    where = f"{' -> '.join(names)}: " if names else ""
    return f"{where}{exc.strerror or exc}"


def silence_progress_bars() -> None:
    """``--no-progress``: no bars from tqdm, huggingface_hub, datasets or transformers.

    The environment variables reach the libraries imported later (commands import them
    lazily); the ones already imported are switched off directly.
    """
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # read by hub and transformers
    os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["TQDM_DISABLE"] = "1"
    if "huggingface_hub" in sys.modules:
        sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "datasets" in sys.modules:
        sys.modules["datasets"].disable_progress_bars()
    if "transformers" in sys.modules:
        importlib.import_module("transformers.utils.logging").disable_progress_bar()


def _quiet_broken_pipe() -> int:
    """The reader went away (``| head``): point stdout at /dev/null so exit is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a killed writer


def safe_output() -> None:
    """Characters the terminal cannot show become escapes, not a UnicodeEncodeError.

    Under ``LC_ALL=C`` with ``PYTHONUTF8=0`` (or ``PYTHONIOENCODING=ascii``) stdout is ASCII: a
    warning naming a label ``café`` crashed ``score`` after it had scored. A lone surrogate
    cannot be written even as UTF-8. Both now print as ``\\xe9`` / ``\\udc80``.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # a closed or detached stream
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None, quick_exit: bool = False) -> int:
    """Run the CLI; return the exit code.

    Args:
        argv: The arguments (default: the process's).
        quick_exit: End the process as soon as a command that allows it
            (``set_defaults(quick_exit=True)``: ``score``) has finished and its output is
            flushed, without the interpreter's teardown (freeing every module and object:
            ~0.05 s, 9% of scoring BECEL; mypy ends the same way). Only the console command
            asks for it (:func:`console_main`); a caller of :func:`main` gets the code back, and
            a process under a profiler or tracer (cProfile, coverage) ends as usual, so that
            their files are written.

    """
    safe_output()
    try:
        args = make_parser().parse_args(argv)  # --help | head: a broken pipe here too
        one_blas_thread(args.command)
        if getattr(args, "no_progress", False):
            silence_progress_bars()
        code = int(args.func(args) or 0)
        sys.stdout.flush()
        if (quick_exit and getattr(args, "quick_exit", False)
                and sys.getprofile() is None and sys.gettrace() is None):  # cProfile, coverage
            sys.stderr.flush()
            os._exit(code)
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {_os_error(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def console_main() -> None:
    """The ``consistency-bench`` command (and ``python -m consistency_bench``)."""
    sys.exit(main(quick_exit=True))


if __name__ == "__main__":
    console_main()
