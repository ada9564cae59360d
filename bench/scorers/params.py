"""The parameters of scoring: the family ``--param KEY=VALUE`` keys, the bootstrap, their checks.

Every key a scorer reads from ``ScoreOptions.params`` (bench/scorers/) is listed in
:data:`KNOWN_PARAMS` with what it means, and checked by :data:`PARAM_CHECKS`; anything else is
a typo and is refused (tests/test_bad_input.py checks the list against the scorers).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping

from consistency_bench.bench.errors import ConfigError, shorten

#: Every key a scorer reads (``options.params`` in bench/scorers/), with its meaning.
KNOWN_PARAMS: dict[str, str] = {
    "calm_theta": "CALM C_S threshold (default 1.0)",
    "coherence_theta": "coherence threshold (default: best of the grid)",
    "coherence_theta_grid": "coherence threshold grid, a JSON list",
    "salad_theta": "word-salad threshold, fixed (default: searched on the other half of the "
                   "groups, cross-fitted)",
    "salad_tolerance": "word-salad tolerance",
    "salad_temperature": "word-salad temperature scaling: a fixed T > 0, or fit (the default: "
                         "fitted on the other half's originals, cross-fitted)",
}


def _fraction(value: object) -> bool:
    """A JSON number (not a bool) in [0, 1]."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0.0 <= value <= 1.0)


#: Per known key: the check of its (JSON-parsed) value and what it must be.
PARAM_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "calm_theta": (_fraction, "a number in [0, 1]"),
    "coherence_theta": (_fraction, "a number in [0, 1]"),
    "coherence_theta_grid": (
        lambda v: isinstance(v, list) and 0 < len(v) <= 1000 and all(map(_fraction, v)),
        "a JSON list of 1 to 1000 numbers in [0, 1], e.g. [0.5,0.6,0.7]"),
    "salad_theta": (_fraction, "a number in [0, 1] (a probability threshold)"),
    "salad_tolerance": (_fraction, "a number in [0, 1] (an allowed drop of accuracy)"),
    "salad_temperature": (
        lambda v: v == "fit" or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                 and math.isfinite(v) and v > 0),
        'a positive number or "fit"'),
}


#: Most bootstrap resamples (each costs 8 bytes per suite and a draw; 10^12 asked for 7 TiB).
MAX_N_BOOT = 1_000_000


def check_bootstrap(seed: object, n_boot: object) -> None:
    """Refuse a bootstrap seed or resample count before any work (``score``, the Python API).

    Raises:
        ConfigError: ``n_boot`` not an integer in 1..:data:`MAX_N_BOOT`, or ``seed`` not an
            integer >= 0.

    """
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 1 <= n_boot <= MAX_N_BOOT:
        raise ConfigError(f"--n-boot {shorten(n_boot)}: must be 1 to {MAX_N_BOOT:,} "
                          "(default 10000)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"--seed {shorten(seed)}: must be >= 0")


def param_items(params: Mapping[str, object] | Iterable[str] | None) -> list[str]:
    """``KEY=VALUE`` strings from a mapping (values as JSON) or from the strings themselves."""
    if params is None:
        return []
    if isinstance(params, Mapping):
        return [f"{key}={value if isinstance(value, str) else json.dumps(value)}"
                for key, value in params.items()]
    if isinstance(params, str):
        return [params]
    return [str(item) for item in params]


def parse_params(items: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` strings to a dict; values parsed as JSON and checked, all of them.

    Every value is checked here, before any work, whether or not a suite of its family is
    scored (a typo in ``salad_theta`` is an error even when scoring BECEL only).

    Raises:
        ConfigError: An item without ``=``, a key no scorer reads, a key given twice, or a
            value of the wrong type or range.

    """
    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--param {shorten(item)}: expected KEY=VALUE")
        if key not in KNOWN_PARAMS:
            raise ConfigError(
                f"--param {shorten(item)}: unknown key {shorten(key)}; known: "
                f"{', '.join(KNOWN_PARAMS)}"
            )
        if key in params:
            raise ConfigError(f"--param {shorten(item)}: {key} is given twice")
        try:
            parsed = json.loads(value, parse_constant=lambda c: None)  # NaN, Infinity: refused
        except (json.JSONDecodeError, RecursionError):
            parsed = value
        check, expected = PARAM_CHECKS[key]
        if not check(parsed):
            raise ConfigError(f"--param {shorten(item)}: {key} must be {expected}")
        params[key] = parsed
    if "coherence_theta" in params and "coherence_theta_grid" in params:
        raise ConfigError("--param coherence_theta and coherence_theta_grid: give one (a fixed "
                          "threshold, or the grid to search)")
    return params


