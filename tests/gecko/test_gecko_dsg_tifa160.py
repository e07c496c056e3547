"""Acceptance: DSG TIFA160 — supplied questions with dependencies, replayed mPLUG answers, human Likert."""

import logging

import pytest
from scipy import stats

from autorater_pipelines import gecko

ID = ["t2i_model", "item_id"]


@pytest.fixture(scope="module")
def dsg(shared_data, public_data, tmp_path_factory):
    data = public_data.convert_dsg_tifa160(shared_data, tmp_path_factory.mktemp("dsg"))
    rows = gecko.load_dataset(str(data.dataset), id_columns=ID, media_column="image", rubrics_column="rubric")
    rubrics = gecko.parse_supplied_rubrics(rows, id_columns=ID, rubrics_column="rubric")
    validated = gecko.validate(
        rubrics.rows,
        id_columns=ID,
        media_column="image",
        media_type="image",
        validator=gecko.Validator.of(
            model=f"replay/{data.replay}", parameters={"questions_per_call": 1, "progress": False}
        ),
    )
    return rows, rubrics, validated


def _correlations(result):
    x = [r["final_score"] for r in result.results]
    y = [r["human_likert"] for r in result.results]
    return round(stats.spearmanr(x, y).statistic, 3), round(stats.kendalltau(x, y).statistic, 3)


def test_conversion_and_malformed_dependency(dsg):
    rows, rubrics, validated = dsg
    assert len(rows) == 800 and rubrics.errors == [] and validated.errors == []
    row = next(r for r in rubrics.rows if r["item_id"] == "tifa160_67")
    q8 = next(qa for qa in row["qas"] if qa["question_id"] == "8")
    assert q8["dependencies"] == ["1"]
    assert any("'outside'" in w for w in row["rubric_warnings"])


def test_dependency_masking_reproduces_dsg(dsg):
    _, _, validated = dsg
    result = gecko.score(
        validated.rows, id_columns=ID, options={"dependency_masking": True, "missing_answer_policy": "zero"}
    )
    assert len(result.results) == 800
    assert _correlations(result) == (0.463, 0.380)
    # The 5 images without recorded answers are scored 0 as upstream does — and listed, not hidden.
    zeroed = [e for e in result.errors if e["handled_as"] == "scored_zero"]
    assert len(zeroed) == 5 and all(e["error_kind"] == "not_recorded" for e in zeroed)
    zero_ids = {(e["t2i_model"], e["item_id"]) for e in zeroed}
    assert all(r["final_score"] == 0.0 for r in result.results if (r["t2i_model"], r["item_id"]) in zero_ids)
    assert result.metrics["masked_questions"] > 0 and result.metrics["parse_failures"] == 0


def test_tifa_dsg_protocol_policy_reproduces_dsg(dsg):
    # DSG's protocol: any answer other than "yes" scores 0, a parent's failure masks its children, images with
    # no answers score 0 — with unparseable answers scored 0 the recorded mPLUG run gives DSG's figures.
    _, _, validated = dsg
    options = {"dependency_masking": True, "missing_answer_policy": "zero", "unparseable_answer_policy": "zero"}
    result = gecko.score(validated.rows, id_columns=ID, options=options)
    assert len(result.results) == 800
    assert _correlations(result) == (0.463, 0.380)
    assert result.metrics["scoring_options"]["unparseable_answer_policy"] == "zero"
    assert "scored 0, unparseable_answer_policy=zero" in result.metrics["final_score_denominator"]
    # mPLUG's non-yes/no answers ("no bus", "no kite", …) name the choice "no": nothing is unparseable.
    assert result.metrics["parse_failures"] == 0
    no_bus = [q for r in result.results for q in r["qa_results"] if str(q["raw"]).lower().startswith("no ")]
    assert no_bus and all(q["verdict"] == "no" and q["score"] == 0.0 for q in no_bus)


def test_without_masking(dsg):
    _, _, validated = dsg
    result = gecko.score(validated.rows, id_columns=ID, options={"missing_answer_policy": "zero"})
    assert _correlations(result)[0] == 0.464


def test_default_policy_keeps_rows_without_answers_out_of_the_scores(dsg, caplog):
    _, _, validated = dsg
    with caplog.at_level(logging.WARNING):
        result = gecko.score(validated.rows, id_columns=ID, options={"dependency_masking": True})
    assert len(result.results) == 795 and result.metrics["rows_unscored"] == 5
    assert len(result.errors) == 5 and all("handled_as" not in e for e in result.errors)


def test_dataframe_api_reproduces_dsg(shared_data, public_data, tmp_path):
    # The notebook route: the same data as a DataFrame, the same replayed mPLUG answers, the same figures.
    import pandas as pd

    data = public_data.convert_dsg_tifa160(shared_data, tmp_path)
    df = pd.read_json(data.dataset, lines=True)
    results, metrics = gecko.evaluate(
        df,
        id_columns=ID,
        media_column="image",
        rubrics_column="rubric",
        validator_model=f"replay/{data.replay}",
        validator_parameters={"questions_per_call": 1, "progress": False},
        scoring={"dependency_masking": True, "missing_answer_policy": "zero", "unparseable_answer_policy": "zero"},
    )
    assert len(results) == 800 and results["final_score"].notna().all()
    x, y = results["final_score"], results["human_likert"]
    assert round(stats.spearmanr(x, y).statistic, 3) == 0.463 and round(stats.kendalltau(x, y).statistic, 3) == 0.380
    assert metrics["rows_scored"] == 800 and metrics["parse_failures"] == 0
    assert (results["error_handled_as"] == "scored_zero").sum() == 5
