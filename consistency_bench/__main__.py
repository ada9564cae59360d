"""``python -m consistency_bench``: the same as the ``consistency-bench`` command."""

import sys

from consistency_bench.cli import main

sys.exit(main())
