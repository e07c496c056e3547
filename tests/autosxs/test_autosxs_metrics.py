import pytest

from autorater_pipelines.autosxs.metrics import pairwise_metrics, wilson_interval


def _row(choice, human=None, samples=None, confidence=1.0):
    row = {"choice": choice, "confidence": None if choice == "ERROR" else confidence, "samples": samples or []}
    if human is not None:
        row["human"] = human
    return row


def test_win_rates_exclude_errors_and_count_ties_separately():
    rows = [_row("A"), _row("A"), _row("B"), _row("TIE"), _row("ERROR")]
    m = pairwise_metrics(rows)
    assert (m["evaluation_count"], m["judged_count"], m["error_count"]) == (5, 4, 1)
    assert m["autorater_model_a_win_rate"] == 0.5
    assert m["autorater_model_b_win_rate"] == 0.25
    assert m["autorater_tie_rate"] == 0.25
    assert m["autorater_model_a_win_rate_ties_as_half"] == pytest.approx((1 + 1 + 0 + 0.5) / 4)
    assert m["autorater_model_a_win_rate_ci_lower"] < 0.5 < m["autorater_model_a_win_rate_ci_upper"]


def test_wilson_interval_matches_the_closed_form():
    # Wilson 95 % interval for 8/10 by the textbook formula.
    z, n, p = 1.959963984540054, 10, 0.8
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(centre - half, abs=1e-9)
    assert high == pytest.approx(centre + half, abs=1e-9)
    assert wilson_interval(0, 0) is None


def test_no_judged_rows_gives_none_rates():
    m = pairwise_metrics([_row("ERROR")])
    assert m["autorater_model_a_win_rate"] is None and m["autorater_model_a_win_rate_ci_lower"] is None


def test_alignment_metrics_with_a_as_positive_class():
    # human, autorater: TP=2 (A,A), FN=1 (A,B), FP=1 (B,A), TN=1 (B,B); excluded: autorater TIE, human TIE, ERROR.
    pairs = [("A", "A"), ("A", "A"), ("A", "B"), ("B", "A"), ("B", "B"), ("A", "TIE"), ("TIE", "A"), ("B", "ERROR")]
    m = pairwise_metrics([_row(c, h) for h, c in pairs], human_preference_column="human")
    assert (
        m["true_positive_count"],
        m["false_negative_count"],
        m["false_positive_count"],
        m["true_negative_count"],
    ) == (2, 1, 1, 1)
    assert m["alignment_count"] == 5
    assert m["accuracy"] == pytest.approx(3 / 5)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1_score"] == pytest.approx(2 / 3)
    # Cohen's kappa by hand: po = 3/5; pe = P(h=A)P(c=A) + P(h=B)P(c=B) = (3/5)(3/5) + (2/5)(2/5) = 13/25.
    assert m["cohens_kappa"] == pytest.approx((3 / 5 - 13 / 25) / (1 - 13 / 25))
    assert m["human_tie_count"] == 1
    assert m["autorater_tie_on_human_labeled_count"] == 1
    assert m["autorater_error_on_human_labeled_count"] == 1
    assert m["human_preference_model_a_win_rate"] == pytest.approx(4 / 8)


def _samples(original, swapped):
    return [
        {"sample_index": 0, "flipped": False, "choice": original, "attempts": 1, "cached": False},
        {"sample_index": 1, "flipped": True, "choice": swapped, "attempts": 0, "cached": True},
    ]


def test_position_consistency_and_per_order_accuracy():
    rows = [
        _row("A", "A", _samples("A", "A")),  # consistent, both correct
        _row("TIE", "A", _samples("A", "B")),  # inconsistent, original correct
        _row("B", "A", _samples("B", "B")),  # consistent, both wrong
        _row("TIE", "B", _samples("A", "ERROR")),  # only one order judged
    ]
    m = pairwise_metrics(rows, human_preference_column="human")
    assert m["both_orders_judged_count"] == 3
    assert m["position_consistency_count"] == 2
    assert m["position_consistency"] == pytest.approx(2 / 3)
    assert (m["original_order_correct_count"], m["original_order_sample_count"]) == (2, 4)
    assert (m["swapped_order_correct_count"], m["swapped_order_sample_count"]) == (1, 3)
    assert m["both_orders_correct_count"] == 1
    assert m["model_call_attempt_count"] == 4 and m["cached_sample_count"] == 4


def test_ties_as_half_interval_matches_scipy_student_t():
    stats = pytest.importorskip("scipy.stats")
    choices = ["A", "A", "B", "TIE", "A", "B", "TIE", "A"]
    scores = [{"A": 1.0, "TIE": 0.5, "B": 0.0}[c] for c in choices]
    mean = sum(scores) / len(scores)
    low, high = stats.t.interval(0.95, len(scores) - 1, loc=mean, scale=stats.sem(scores))
    m = pairwise_metrics([_row(c) for c in choices])
    assert m["autorater_model_a_win_rate_ties_as_half"] == pytest.approx(mean, abs=1e-12)
    assert m["autorater_model_a_win_rate_ties_as_half_ci_lower"] == pytest.approx(max(0.0, low), abs=1e-12)
    assert m["autorater_model_a_win_rate_ties_as_half_ci_upper"] == pytest.approx(min(1.0, high), abs=1e-12)


def _labellings():
    """Every labelling of 1-3 pairs (degenerate ones included) and 20 random ones of 30 pairs."""
    import itertools
    import random

    for n in range(1, 4):
        for labels in itertools.product("AB", repeat=2 * n):
            yield labels[:n], labels[n:]
    rng = random.Random(7)
    for _ in range(20):
        yield tuple(rng.choice("AB") for _ in range(30)), tuple(rng.choice("AB") for _ in range(30))


def test_alignment_metrics_match_scikit_learn():
    import math
    import warnings

    skm = pytest.importorskip("sklearn.metrics")
    for human, choices in _labellings():
        m = pairwise_metrics([_row(c, h) for h, c in zip(human, choices, strict=True)], human_preference_column="human")
        tn, fp, fn, tp = skm.confusion_matrix(human, choices, labels=["B", "A"]).ravel()
        counts = (m["true_negative_count"], m["false_positive_count"], m["false_negative_count"])
        assert counts + (m["true_positive_count"],) == (tn, fp, fn, tp)
        assert m["accuracy"] == pytest.approx(skm.accuracy_score(human, choices))
        for key, score in (
            ("precision", skm.precision_score),
            ("recall", skm.recall_score),
            ("f1_score", skm.f1_score),
        ):
            assert m[key] == pytest.approx(score(human, choices, pos_label="A", zero_division=0)), (key, human, choices)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns (and returns NaN) when kappa is undefined
            kappa = skm.cohen_kappa_score(human, choices, labels=["A", "B"])
        if math.isnan(kappa):
            assert m["cohens_kappa"] is None, (human, choices)
        else:
            assert m["cohens_kappa"] == pytest.approx(kappa, abs=1e-12), (human, choices)


def test_ties_as_half_on_six_identical_rows_does_not_collapse_the_interval_to_a_point():
    # Found by the hostile trial: 6 rows all won by A gave a 95 % interval of [1, 1].
    rows = [{"choice": "A", "samples": []} for _ in range(6)]
    m = pairwise_metrics(rows, ties_as_half=True)
    assert m["autorater_model_a_win_rate"] == 1.0
    # Wilson score interval of 6/6 at 95 %, worked out by hand: z = 1.959964, n = 6 →
    # center (1 + z²/12)/(1 + z²/6) = 0.804833, half-width (z²/12)/(1 + z²/6) = 0.195167
    assert m["autorater_model_a_win_rate_ci_lower"] == pytest.approx(0.609666, abs=1e-5)
    assert m["autorater_model_a_win_rate_ci_upper"] == 1.0
    assert m["autorater_model_b_win_rate_ci_lower"] == pytest.approx(0.0, abs=1e-12)
    assert m["autorater_model_b_win_rate_ci_upper"] == pytest.approx(1 - 0.609666, abs=1e-5)
    # the same as the exact-count Wilson interval of a proportion, which it stands in for
    assert m["autorater_model_a_win_rate_ci_lower"] == pytest.approx(
        m["autorater_model_a_win_rate_ties_as_half_ci_lower"]
    )
    one = pairwise_metrics([{"choice": "TIE", "samples": []}], ties_as_half=True)
    assert one["autorater_model_a_win_rate_ci_lower"] < 0.5 < one["autorater_model_a_win_rate_ci_upper"]
