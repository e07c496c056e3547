"""Vertex AI's adaptive-rubric shape: rubric_groups in, rubric_verdicts / score / mean_score / win_rates out.

Every expected figure is worked out by hand in the comments (3 prompts, 2 candidates, 7 rubrics).
"""

import json

import pytest

from autorater_pipelines.gecko import parse_supplied_rubrics, score
from autorater_pipelines.gecko.rubrics import RubricError, normalize_supplied_rubric
from autorater_pipelines.gecko.vertex_rubrics import (
    per_rubric_comparison,
    rubric_from_groups,
    rubric_groups_from_rubric,
    score_metrics,
    win_rates,
)


def rubric(rid, text, importance="HIGH", kind=None):
    return {"rubric_id": rid, "content": {"property": {"description": text}}, "type": kind, "importance": importance}


GROUPS = {
    "p1": {
        "general_quality_rubrics": [
            rubric("names-deadlines", "The response names the three deadlines."),
            rubric("polite", "The response is polite.", "LOW"),
            rubric("under-100-words", "The response is under 100 words.", "MEDIUM", "LENGTH"),
        ],
        "other": [rubric("x", "Unused.")],
    },
    "p2": {"general_quality_rubrics": [rubric("a", "Answers in French."), rubric("b", "Gives a date.")]},
    "p3": {"general_quality_rubrics": [rubric("a", "Cites a source."), rubric("b", "Is one paragraph.")]},
}

# Validator answers per candidate, rubric by rubric (yes = passes).
ANSWERS = {
    "model_a": {"p1": ["yes", "yes", "no"], "p2": ["yes", "yes"], "p3": ["no", "yes"]},  # 2/3, 1, 1/2
    "model_b": {"p1": ["yes", "yes", "yes"], "p2": ["yes", "yes"], "p3": ["no", "no"]},  # 1, 1, 0
}


def rubric_rows():
    rows = [{"id": pid, "prompt": f"prompt {pid}", "rubric_groups": json.dumps(g)} for pid, g in GROUPS.items()]
    parsed = parse_supplied_rubrics(
        rows, id_columns=["id"], rubrics_column="rubric_groups", rubric_group="general_quality_rubrics"
    )
    assert parsed.errors == []
    return parsed.rows


def scored(candidate):
    rows = []
    for row in rubric_rows():
        said = ANSWERS[candidate][row["id"]]
        answers = {
            qa["question_id"]: [{"sample_index": 0, "verdict": f"{v}, checked", "raw": None, "error": None}]
            for qa, v in zip(row["qas"], said, strict=True)
        }
        rows.append(row | {"answers": answers})
    return score(rows, id_columns=["id"])


def test_rubric_groups_column_is_accepted_with_rubric_ids_as_question_ids():
    rows = rubric_rows()
    assert [qa["question_id"] for qa in rows[0]["qas"]] == ["names-deadlines", "polite", "under-100-words"]
    assert rows[0]["qas"][0]["question"] == "The response names the three deadlines."
    assert [qa["answer"] for qa in rows[0]["qas"]] == ["yes", "yes", "yes"]
    assert [qa["question_type"] for qa in rows[0]["qas"]] == ["rubric", "rubric", "LENGTH"]
    assert [qa["importance"] for qa in rows[0]["qas"]] == ["HIGH", "LOW", "MEDIUM"]


def test_score_and_rubric_verdicts_per_row():
    result = scored("model_a")
    assert [r["score"] for r in result.results] == [pytest.approx(2 / 3), 1.0, 0.5]
    first = result.results[0]["rubric_verdicts"]
    assert [v["verdict"] for v in first] == [True, True, False]
    assert first[2] == {
        "evaluated_rubric": rubric("under-100-words", "The response is under 100 words.", "MEDIUM", "LENGTH"),
        "verdict": False,
        "reasoning": "no, checked",  # the validator's answer as given
    }
    assert first[0]["evaluated_rubric"] == GROUPS["p1"]["general_quality_rubrics"][0]


def test_mean_stdev_and_pass_rate_with_intervals():
    metrics = scored("model_a").metrics
    # scores 2/3, 1, 1/2: mean 13/18; sample stdev sqrt(((−1/18)² + (5/18)² + (−4/18)²) / 2) = sqrt(42/648)
    assert metrics["mean_score"] == pytest.approx(13 / 18)
    assert metrics["stdev_score"] == pytest.approx((42 / 648) ** 0.5)
    # t(0.975, 2) = 0.95 / sqrt(2 · 0.975 · 0.025) = 4.302653; 13/18 − 4.302653 · 0.254588 / sqrt(3) = 0.089792
    assert metrics["mean_score_ci_lower"] == pytest.approx(0.0897917, abs=1e-6)
    assert metrics["mean_score_ci_upper"] == 1.0  # 1.3547 clipped
    # one row of three scores 1.0; Wilson (z = 1.959964): (2 + z² ∓ z·sqrt(z² + 8/3)) / (2 (3 + z²))
    assert metrics["pass_rate"] == pytest.approx(1 / 3)
    assert metrics["pass_rate_ci_lower"] == pytest.approx(0.0614919, abs=1e-6)
    assert metrics["pass_rate_ci_upper"] == pytest.approx(0.7923404, abs=1e-6)
    assert metrics["mean_final_score"] == metrics["mean_score"] and metrics["scored_rows"] == 3


def test_two_candidates_win_rates_and_per_rubric_comparison():
    a, b = scored("model_a"), scored("model_b")
    assert b.metrics["mean_score"] == pytest.approx(2 / 3) and b.metrics["pass_rate"] == pytest.approx(2 / 3)
    assert b.metrics["stdev_score"] == pytest.approx(3**-0.5)  # 1, 1, 0: sqrt((1/9 + 1/9 + 4/9) / 2)
    rates = win_rates({"model_a": [r["score"] for r in a.results], "model_b": [r["score"] for r in b.results]})
    # p1: b (1 > 2/3); p2: tie (1 = 1); p3: a (1/2 > 0)
    assert rates["win_rates"] == {"model_a": pytest.approx(1 / 3), "model_b": pytest.approx(1 / 3)}
    assert rates["tie_rate"] == pytest.approx(1 / 3)
    assert (rates["wins"], rates["ties"], rates["rows_compared"]) == ({"model_a": 1, "model_b": 1}, 1, 3)

    def verdicts(result):
        return [{v["evaluated_rubric"]["rubric_id"]: v["verdict"] for v in r["rubric_verdicts"]} for r in result]

    comparison = per_rubric_comparison(
        {"model_a": verdicts(a.results), "model_b": verdicts(b.results)}, "model_a", "model_b"
    )
    # both pass: p1 names-deadlines, polite; p2 a, b — both fail: p3 a — only b: p1 under-100-words — only a: p3 b
    assert comparison["both_pass"] == 4 and comparison["both_fail"] == 1 and comparison["rubrics_compared"] == 7
    assert comparison["only_model_a_rubric_ids"] == ["row 2: b"]
    assert comparison["only_model_b_rubric_ids"] == ["row 0: under-100-words"]


def test_win_rates_skip_rows_a_candidate_has_no_score_and_count_three_way_ties():
    rates = win_rates({"x": [0.5, None, 1.0], "y": [0.5, 1.0, 0.0], "z": [0.5, 1.0, 0.9]})
    assert rates["rows_compared"] == 2 and rates["rows_not_compared"] == 1
    assert rates["win_rates"] == {"x": 0.5, "y": 0.0, "z": 0.0} and rates["tie_rate"] == 0.5
    with pytest.raises(ValueError, match=r"one score per row for every candidate, got row counts \{'x': 1, 'y': 2\}"):
        win_rates({"x": [1.0], "y": [1.0, 0.0]})


def test_score_metrics_without_rows_and_with_one_row():
    empty = score_metrics([])
    assert empty["mean_score"] is None and empty["pass_rate"] is None and empty["stdev_score"] is None
    one = score_metrics([1.0, None])
    assert one["mean_score"] == 1.0 and one["stdev_score"] is None and one["scored_rows"] == 1


def test_round_trip_gecko_rubric_to_rubric_groups_and_back():
    gecko_rubric = normalize_supplied_rubric(json.dumps(GROUPS["p1"]), rubric_group="general_quality_rubrics")
    groups = rubric_groups_from_rubric(gecko_rubric, "general_quality_rubrics")
    assert groups == {"general_quality_rubrics": GROUPS["p1"]["general_quality_rubrics"]}
    again = normalize_supplied_rubric(groups)
    assert again["qas"] == gecko_rubric["qas"]


def test_bad_rubric_groups_say_what_to_fix():
    with pytest.raises(RubricError, match=r"has 2 groups \['general_quality_rubrics', 'other'\]: set rubric_group"):
        rubric_from_groups(GROUPS["p1"])
    with pytest.raises(RubricError, match=r"no group 'missing'; groups present: \['general_quality_rubrics'"):
        rubric_from_groups(GROUPS["p1"], "missing")
    with pytest.raises(RubricError, match=r"rubric #1: no content.property.description"):
        rubric_from_groups({"g": [{"rubric_id": "a", "content": {}}]})
    with pytest.raises(RubricError, match=r"rubric_groups\['g'\] has no rubric") as caught:
        rubric_from_groups({"g": []})
    assert caught.value.kind == "empty_rubric"
    rows = [{"id": 1, "r": json.dumps({"g": [rubric("a", "A.")], "h": [rubric("b", "B.")]})}]
    errors = parse_supplied_rubrics(rows, id_columns=["id"], rubrics_column="r").errors
    assert errors[0]["error_kind"] == "invalid_rubric" and "set rubric_group" in errors[0]["error_message"]
