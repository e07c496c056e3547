"""Confidence intervals: Wilson score interval of a proportion, Student-t interval of a mean.

Standard library only (``statistics.NormalDist``, ``math.lgamma``): every pipeline step is a fresh process,
and importing scipy for two quantiles cost more CPU than the rest of a metrics step (and ~100 MB of the
component image). tests/evaluation/test_intervals.py checks both against scipy (``binomtest(...).proportion_ci``,
``stdtrit``) to 1e-12.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

__all__ = ["mean_interval", "student_t_quantile", "wilson_interval"]

_EXPANSION_DF = 1000
"""From this many degrees of freedom on, the Cornish-Fisher expansion is exact to ~1e-14 (relative)."""


def wilson_interval(successes: float, trials: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion, without continuity correction (None when ``trials`` is 0).

    ``successes`` may be fractional (a mean score of ``trials`` values in [0, 1]). ``z`` is the standard
    normal quantile at ``(1 + confidence) / 2``; the bounds are ``(2np + z² ∓ z·sqrt(z² + 4np(1-p))) /
    (2(n + z²))`` clipped to [0, 1] (Wilson 1927).
    """
    if trials <= 0:
        return None
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    n, p = trials, successes / trials
    centre = 2 * n * p + z * z
    half = z * math.sqrt(z * z + 4 * n * p * (1 - p))
    denominator = 2 * (n + z * z)
    return max(0.0, (centre - half) / denominator), min(1.0, (centre + half) / denominator)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float | None, float | None, float | None]:
    """Mean of scores in [0, 1] and its Student-t interval ``mean ± t(n-1) · s / sqrt(n)``, clipped to [0, 1].

    When the t-interval is degenerate (fewer than 2 values, or all equal: 6 rows all won by A would give
    [1, 1]), the Wilson score interval of the mean as a proportion of ``n`` is used instead. Without values:
    ``(None, None, None)``.
    """
    if len(values) == 0:
        return None, None, None
    mean = statistics.fmean(values)
    if len(values) < 2 or statistics.stdev(values) == 0.0:
        low, high = wilson_interval(mean * len(values), len(values), confidence) or (mean, mean)
        return mean, low, high
    t = student_t_quantile(0.5 + confidence / 2, len(values) - 1)
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def student_t_quantile(p: float, df: int) -> float:
    """Quantile at ``p`` (0.5 ≤ p < 1) of Student's t distribution with ``df`` ≥ 1 (integer) degrees of freedom.

    Closed forms for 1 and 2 degrees of freedom; up to :data:`_EXPANSION_DF`, Newton's method on the
    exact distribution function for integer degrees of freedom (Abramowitz & Stegun 26.7.3-26.7.4), started
    from the Cornish-Fisher expansion (A&S 26.7.5), which alone is used above.

    Raises:
        ValueError: ``p`` outside [0.5, 1) or ``df`` not a positive integer.
    """
    if not 0.5 <= p < 1 or df < 1 or int(df) != df:
        raise ValueError(f"student_t_quantile needs 0.5 <= p < 1 and a positive integer df, got p={p!r}, df={df!r}")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    t = _cornish_fisher(p, df)
    if df >= _EXPANSION_DF:
        return t
    target = 2 * p - 1  # P(|T| <= t)
    log_density = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(100):
        density = math.exp(log_density - (df + 1) / 2 * math.log1p(t * t / df))
        step = (_central_probability(t, df) - target) / (2 * density)
        t = max(t - step, t / 2)  # the probability is concave in t > 0: Newton from below never overshoots
        if abs(step) <= 1e-15 * t:
            break
    return t


def _central_probability(t: float, df: int) -> float:
    """``P(|T| <= t)`` for t ≥ 0 and integer ``df`` ≥ 3 (A&S 26.7.3 odd, 26.7.4 even: finite sums)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, sin = math.cos(theta) ** 2, math.sin(theta)
    total = term = 1.0
    if df % 2:
        for k in range(1, (df - 3) // 2 + 1):
            term *= 2 * k / (2 * k + 1) * cos2
            total += term
        return 2 / math.pi * (theta + sin * math.cos(theta) * total)
    for k in range(1, (df - 2) // 2 + 1):
        term *= (2 * k - 1) / (2 * k) * cos2
        total += term
    return sin * total


def _cornish_fisher(p: float, df: int) -> float:
    """The t quantile from the normal one by the Cornish-Fisher expansion in 1/df (A&S 26.7.5)."""
    z = statistics.NormalDist().inv_cdf(p)
    z2 = z * z
    g1 = (z2 + 1) * z / 4
    g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
    g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
    g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
