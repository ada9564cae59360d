"""One module per CLI command, each listed in ``consistency_bench.cli.COMMANDS``.

A command module exposes ``add_parser(subparsers)``, which sets ``func`` on its parser. A
command parses its arguments (the shared ones from :mod:`consistency_bench.arguments`), calls
one library function and prints; the work itself lives in ``bench``, ``builders`` or
``leaderboard``.
"""
