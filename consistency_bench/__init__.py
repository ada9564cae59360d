"""The ``consistency-bench`` command line: the roof of the layers.

``bench`` (tasks, predictions, scoring) is the floor, ``builders`` (suites) and
``leaderboard`` (ranking, publishing) stand on it, and this package, which holds only the
CLI, stands on all three; nothing below imports it (tests/test_layers.py, docs/design.md).
"""
