"""Text rubrics (media_type "text") generated and validated live by a real OpenAI-compatible server."""

from __future__ import annotations

import pandas as pd
import pytest

from autorater_pipelines import gecko

pytestmark = pytest.mark.real_server

ROWS = [
    {"uid": 0, "prompt": "Name the capital of France in one word.", "response": "Paris"},
    {"uid": 1, "prompt": "List two primary colors.", "response": "Red and blue."},
]


def test_text_rubrics_generated_and_validated_live(real_server, tmp_path) -> None:
    model = f"openai/{real_server.model}"
    settings = real_server.params(max_output_tokens=320, cache_dir=str(tmp_path / "cache"))
    results, metrics = gecko.evaluate(
        pd.DataFrame(ROWS),
        media_column="response",
        media_type="text",
        id_columns=["uid"],
        rubric_generation_model=model,
        rubric_generation_parameters=settings,
        validator_model=model,
        validator_parameters=settings,
        scoring={"missing_answer_policy": "zero"},
        progress=False,
    )
    # Every row is scored, with a score the rubric_verdicts explain, or an error row with a stage and a reason.
    assert len(results) == 2
    for row in results.to_dict("records"):
        if row["error_stage"] is None or row.get("error_handled_as"):
            verdicts = row["rubric_verdicts"]
            assert verdicts, row  # never an empty rubric list scored as nothing
            judged = [v["verdict"] for v in verdicts if v["verdict"] is not None]
            assert row["score"] == pytest.approx(sum(judged) / len(judged)) if judged else row["score"] is None
        else:
            assert row["error_stage"] in ("rubric_generation", "media", "validation", "scoring"), row
            assert row["error_message"], row
    assert metrics["rows_scored"] + metrics["rows_unscored"] == 2
    errors = [(r["error_stage"], r["error_kind"], str(r["error_message"])[:80]) for r in results.to_dict("records")]
    print(f"\ntext rubrics live: scored {metrics['rows_scored']}, mean_score {metrics['mean_score']}, rows {errors}")


def _rubric(rid: str, text: str) -> dict:
    return {"rubric_id": rid, "content": {"property": {"description": text}}, "type": None, "importance": None}


def test_supplied_rubric_groups_validated_live(real_server, tmp_path) -> None:
    groups = [
        {"quality": [_rubric("names-paris", "Does the response name Paris?"), _rubric("one-word", "Is it one word?")]},
        {"quality": [_rubric("two-colors", "Does the response name two colors?")]},
    ]
    df = pd.DataFrame(ROWS).assign(rubric_groups=groups)
    settings = real_server.params(max_output_tokens=16, cache_dir=str(tmp_path / "cache"), questions_per_call=1)
    results, metrics = gecko.evaluate(
        df,
        media_column="response",
        media_type="text",
        rubrics_column="rubric_groups",
        id_columns=["uid"],
        validator_model=f"openai/{real_server.model}",
        validator_parameters=settings,
        scoring={"missing_answer_policy": "zero", "unparseable_answer_policy": "zero"},
        progress=False,
    )
    rows = results.to_dict("records")
    # Under the zero policies every rubric has a verdict: each row is scored, its score the share passed.
    assert metrics["rows_scored"] == 2, [(r["error_kind"], r["error_message"]) for r in rows]
    for row in rows:
        verdicts = row["rubric_verdicts"]
        assert [v["evaluated_rubric"]["rubric_id"] for v in verdicts] == [
            r["rubric_id"] for r in groups[row["uid"]]["quality"]
        ]
        assert all(isinstance(v["verdict"], bool) for v in verdicts)
        assert row["score"] == pytest.approx(sum(v["verdict"] for v in verdicts) / len(verdicts))
    assert metrics["pass_rate"] == sum(r["score"] == 1.0 for r in rows) / 2
    print(
        f"\nsupplied rubrics live: scores {[r['score'] for r in rows]}, answers {[r['rubric_results'] for r in rows]}"
    )
