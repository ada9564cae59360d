"""Bootstrap confidence intervals.

For a mean of 0/1 outcomes the nonparametric bootstrap has a closed form: resampling ``n``
units with replacement from ``k`` successes gives ``Binomial(n, k / n)`` successes, so
``B`` resamples are ``B`` binomial draws (exact, O(B)). General means resample with numpy in
blocks. Both are seeded; the same inputs give the same interval.
"""

from __future__ import annotations

import numpy as np

ALPHA = 0.05


def proportion_ci(
    successes: int, n: int, *, seed: int = 0, n_boot: int = 10_000
) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of ``successes / n``; ``None`` when ``n == 0``."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n]; got {successes} of {n}")
    draws = np.random.default_rng(seed).binomial(n, successes / n, size=n_boot) / n
    low, high = np.quantile(draws, [ALPHA / 2, 1 - ALPHA / 2])
    return float(low), float(high)


def mean_ci(
    values: np.ndarray, *, seed: int = 0, n_boot: int = 10_000, block: int = 256
) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of ``values.mean()``; ``None`` for no values."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for start in range(0, n_boot, block):
        stop = min(start + block, n_boot)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = values[idx].mean(axis=1)
    low, high = np.quantile(means, [ALPHA / 2, 1 - ALPHA / 2])
    return float(low), float(high)
