"""``python -m consistency_bench``: the same as the ``consistency-bench`` command."""

from consistency_bench.cli import console_main

console_main()
