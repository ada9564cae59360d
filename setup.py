"""Install the layer folders under one import namespace (issue 29).

The repository keeps ``bench/``, ``builders/`` and ``leaderboard/`` at its top; the wheel
installs them as ``consistency_bench.bench``, ``consistency_bench.builders`` and
``consistency_bench.leaderboard`` (setuptools ``package_dir``). ``benchmarks/``, ``scripts/``
and ``tests/`` are never installed (tests/test_wheel.py). Everything else is in
pyproject.toml.
"""

from setuptools import find_packages, setup

LAYERS = ("bench", "builders", "leaderboard")
PACKAGES = ["consistency_bench", *find_packages(include=["consistency_bench.*"])]
for layer in LAYERS:
    PACKAGES += [f"consistency_bench.{name}"
                 for name in find_packages(include=[layer, f"{layer}.*"])]

setup(packages=PACKAGES, package_dir={f"consistency_bench.{layer}": layer for layer in LAYERS})
