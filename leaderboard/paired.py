"""Paired tests between two entries on the units (groups) they share.

Pure functions over aligned outcome arrays. ``mcnemar_exact`` for binary per-unit outcomes
(consistent / inconsistent), ``paired_bootstrap`` for any per-unit score. ``ci_overlap_z`` is the
fallback used when per-unit outcomes are not available: it only sees the two bootstrap
intervals, treats them as independent normal intervals and is therefore conservative for
models whose errors are positively correlated (see docs/leaderboard.md).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from consistency_bench.bench.errors import BenchError

Z95 = 1.959963984540054


@dataclass(frozen=True)
class PairedResult:
    """Outcome of one paired comparison.

    Attributes:
        method: ``"mcnemar"``, ``"paired-bootstrap"`` or ``"ci-overlap"``.
        n: Shared units the test used (0 for ``ci-overlap``).
        diff: Mean of ``a - b`` (direction as given by the caller).
        p_value: Two-sided p-value.
        distinguishable: ``p_value < alpha``.

    """

    method: str
    n: int
    diff: float
    p_value: float
    distinguishable: bool


def align(
    a: Mapping[str, float], b: Mapping[str, float]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Shared unit ids (sorted) and the two outcome arrays on them."""
    shared = sorted(set(a) & set(b))
    return (
        shared,
        np.array([a[k] for k in shared], dtype=float),
        np.array([b[k] for k in shared], dtype=float),
    )


#: ``lgamma(m + 1)`` for m = 0, 1, ...: grown on demand, each value from ``math.lgamma``.
_LOG_FACTORIAL = np.zeros(1)


def _log_factorials(n: int) -> np.ndarray:
    """``log m!`` for every ``m <= n`` (at least), as :func:`math.lgamma` gives them."""
    global _LOG_FACTORIAL
    have = len(_LOG_FACTORIAL)
    if have <= n:
        more = [math.lgamma(m + 1) for m in range(have, max(n + 1, 2 * have))]
        _LOG_FACTORIAL = np.concatenate([_LOG_FACTORIAL, more])
    return _LOG_FACTORIAL


def binom_tail_ge(k: int, n: int, p: float) -> float:
    """Exact one-sided binomial p-value ``P(X >= k)`` for ``X ~ Binomial(n, p)``.

    Summed in the log domain over ``i = k..n`` with numpy (the log-factorials cached): the
    same terms as a loop over :func:`math.lgamma`, ~100 times faster, which the flags of a
    500-entry board need; the sum agrees with that loop to the last bit or one ulp.
    """
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_fact = _log_factorials(n)
    i = np.arange(k, n + 1)
    logs = (log_fact[n] - log_fact[i] - log_fact[n - i] + i * math.log(p)
            + (n - i) * math.log1p(-p))
    top = float(logs.max())
    # cumsum adds in order, as a Python sum would; its last value is the total
    return min(1.0, math.exp(top) * float(np.cumsum(np.exp(logs - top))[-1]))


def _binom_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial test of ``k`` successes in ``n`` at p = 0.5."""
    if n == 0:
        return 1.0
    k = min(k, n - k)
    # log C(n, i) - n log 2, summed in the log domain: exact for any n without overflow.
    log_fact = _log_factorials(n)
    i = np.arange(k + 1)
    logs = log_fact[n] - log_fact[i] - log_fact[n - i] - n * math.log(2.0)
    top = float(logs.max())
    tail = math.exp(top) * float(np.cumsum(np.exp(logs - top))[-1])
    return min(1.0, 2.0 * tail)


def format_p(p: float | None) -> str:
    """A p-value for people: ``< 0.001`` below 0.001 (never ``p=0``), ``n/a`` when undefined."""
    if p is None or p != p:
        return "n/a"
    if p < 0.001:
        return "< 0.001"
    return f"{p:.3f}"


def mcnemar_exact(a: ArrayLike, b: ArrayLike, *, alpha: float = 0.05) -> PairedResult:
    """Exact McNemar test on paired binary outcomes (1 = success for that entry).

    Raises:
        BenchError: On arrays of different length or values other than 0 and 1.

    """
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise BenchError(f"mcnemar_exact: shapes differ: {a_arr.shape} vs {b_arr.shape}")
    for arr in (a_arr, b_arr):
        bad = arr[(arr != 0) & (arr != 1)]
        if bad.size:
            raise BenchError(f"mcnemar_exact: outcomes must be 0 or 1, got {bad[0]!r}")
    only_a = int(np.sum((a_arr == 1) & (b_arr == 0)))
    only_b = int(np.sum((a_arr == 0) & (b_arr == 1)))
    p = _binom_two_sided(only_a, only_a + only_b)
    diff = float(np.mean(a_arr - b_arr)) if a_arr.size else 0.0
    return PairedResult("mcnemar", int(a_arr.size), diff, p, p < alpha)


def _seed(seed: int, key: str) -> int:
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def paired_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    key: str = "",
    alpha: float = 0.05,
) -> PairedResult:
    """Paired bootstrap of the mean difference ``a - b`` (same resampled units for both).

    The p-value is the two-sided share of resampled differences on the other side of zero.
    The RNG is derived from ``(seed, key)``, so results do not depend on call order.
    """
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise BenchError(f"paired_bootstrap: shapes differ: {a_arr.shape} vs {b_arr.shape}")
    n = int(a_arr.size)
    if n == 0:
        return PairedResult("paired-bootstrap", 0, 0.0, 1.0, False)
    d = a_arr - b_arr
    observed = float(d.mean())
    rng = np.random.default_rng(_seed(seed, key))
    idx = rng.integers(0, n, size=(n_boot, n))
    means = d[idx].mean(axis=1)
    below = float(np.mean(means <= 0.0))
    above = float(np.mean(means >= 0.0))
    p = min(1.0, 2.0 * min(below, above))
    return PairedResult("paired-bootstrap", n, observed, p, p < alpha)


def ci_sd(ci95: Sequence[float] | None) -> float | None:
    """Return the standard deviation implied by a 95% interval (its width / (2 * 1.96))."""
    if not ci95 or len(ci95) != 2 or ci95[0] is None or ci95[1] is None:
        return None
    return max(0.0, (float(ci95[1]) - float(ci95[0])) / (2 * Z95))


def ci_overlap_z(
    diff: float, sd_a: float | None, sd_b: float | None, *, alpha: float = 0.05
) -> PairedResult:
    """Fallback test from two intervals: z = diff / sqrt(sd_a^2 + sd_b^2), independent normal."""
    if sd_a is None or sd_b is None:
        return PairedResult("ci-overlap", 0, diff, float("nan"), False)
    scale = math.sqrt(sd_a**2 + sd_b**2)
    if scale == 0.0:
        p = 0.0 if diff != 0 else 1.0
    else:
        p = math.erfc(abs(diff) / scale / math.sqrt(2.0))
    return PairedResult("ci-overlap", 0, diff, p, p < alpha)
