"""Confidence intervals of the shared layer, checked against scipy's implementations."""

from __future__ import annotations

import pytest

from autorater_pipelines.evaluation.intervals import mean_interval, student_t_quantile, wilson_interval

DEGREES_OF_FREEDOM = [*range(1, 60), 99, 100, 250, 999, 1000, 1001, 5000, 100_000, 10**7]
PROBABILITIES = [0.5, 0.6, 0.9, 0.95, 0.975, 0.995, 0.9995]


def test_wilson_interval_matches_scipy_for_every_count_up_to_25() -> None:
    stats = pytest.importorskip("scipy.stats")
    for trials in range(1, 26):
        for successes in range(trials + 1):
            ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
            low, high = wilson_interval(successes, trials)
            assert low == pytest.approx(float(ci.low), abs=1e-12), (successes, trials)
            assert high == pytest.approx(float(ci.high), abs=1e-12), (successes, trials)
    assert wilson_interval(0, 0) is None


def test_student_t_quantile_matches_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    for df in DEGREES_OF_FREEDOM:
        for p in PROBABILITIES:
            expected = float(special.stdtrit(df, p))
            assert student_t_quantile(p, df) == pytest.approx(expected, rel=1e-12, abs=1e-15), (df, p)


def test_student_t_quantile_textbook_values() -> None:
    # two-sided 95 % critical values from printed t tables
    for df, value in ((1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042), (120, 1.980)):
        assert student_t_quantile(0.975, df) == pytest.approx(value, abs=5e-4)


@pytest.mark.parametrize(("p", "df"), [(0.4, 3), (1.0, 3), (0.975, 0), (0.975, 2.5)])
def test_student_t_quantile_refuses_values_outside_its_domain(p: float, df: float) -> None:
    with pytest.raises(ValueError, match=r"0\.5 <= p < 1 and a positive integer df, got p="):
        student_t_quantile(p, df)  # type: ignore[arg-type]


def test_mean_interval_matches_scipy_t_interval() -> None:
    stats = pytest.importorskip("scipy.stats")
    values = [1.0, 1.0, 0.0, 0.5, 1.0, 0.0, 0.5, 1.0]
    mean = sum(values) / len(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=stats.sem(values))
    assert mean_interval(values) == pytest.approx((mean, max(0.0, low), min(1.0, high)), abs=1e-12)
    assert mean_interval([]) == (None, None, None)


def test_mean_interval_without_spread_is_the_wilson_interval_of_the_mean() -> None:
    # all six scores 1: the t-interval would be [1, 1]; Wilson of 6/6 instead (the metrics' ties-as-half case)
    assert mean_interval([1.0] * 6) == (1.0, *wilson_interval(6, 6))
    assert mean_interval([0.5, 0.5]) == (0.5, *wilson_interval(1.0, 2))
