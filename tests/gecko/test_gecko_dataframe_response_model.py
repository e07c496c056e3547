"""``gecko.evaluate(df, response_model=...)``: text responses generated from the prompts first, as the pipeline's.

The DataFrame API calls the pipeline's validator step (:func:`autorater_pipelines.gecko.candidate_steps.
validate_responses`), so its results are checked against ``autorater run gecko`` on the same rows and models.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autorater_pipelines.cli import main
from autorater_pipelines.errors import InputError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gecko_text_quickstart"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _prompts():
    import pandas as pd

    return pd.DataFrame([{"id": r["id"], "prompt": r["prompt"]} for r in _jsonl(EXAMPLE / "dataset.jsonl")])


def test_replayed_responses_are_generated_then_validated_and_a_missing_one_is_an_inference_error_row(tmp_path):
    from autorater_pipelines import gecko

    given = {r["id"]: r["response"] for r in _jsonl(EXAMPLE / "dataset.jsonl")}
    responses = [{"id": i, "model": "response", "response": text} for i, text in given.items() if i != "haiku"]
    replay = _write_jsonl(tmp_path / "responses.jsonl", responses)
    df = _prompts()
    results, metrics = gecko.evaluate(
        df,
        media_type="text",
        response_model=f"replay/{replay}",
        rubric_generation_model=f"replay/{EXAMPLE / 'rubric_replay.jsonl'}",
        validator_model=f"replay/{EXAMPLE / 'validator_replay.jsonl'}",
        id_columns=["id"],
        progress=False,
    )
    by_id = results.set_index("id")
    # The replayed responses are the quickstart's own, so its validator answers apply: deadlines 4/4, capital 1/2
    # (the pipeline's test_response_model_generates_the_responses_before_validation gives the same).
    assert by_id.loc["deadlines", "score"] == 1.0 and by_id.loc["capital", "score"] == 0.5
    assert by_id.loc["capital", "response"] == "Sydney"  # generated into media_column's default, "response"
    assert list(results.index) == list(df.index) and len(results) == 3  # every input row, in order
    haiku = by_id.loc["haiku"]
    assert (haiku["error_stage"], haiku["error_kind"]) == ("inference", "not_recorded")
    assert haiku["error_message"].startswith(f"response_model 'replay/{replay}': ")
    assert metrics["rubric_prompt_version"] == "text-rubrics-v1" and metrics["evaluation_count"] == 3


@pytest.mark.pipeline
def test_responses_generated_through_the_emulator_score_as_autorater_run_scores_them(tmp_path):
    from autorater_pipelines import gecko
    from autorater_pipelines.testing import ModelEmulator
    from autorater_pipelines.testing.demo_models import gecko_model

    rows = [
        {"id": "fruit", "prompt": "Describe apples and pears"},
        {"id": "sky", "prompt": "Explain why skies look blue"},
        {"id": "blank", "prompt": "  "},  # no prompt: an error row of the rubric step, no response generated
    ]
    with ModelEmulator(responder=gecko_model) as emulator:
        settings = {"base_url": emulator.url, "cache_dir": "off", "progress": False}
        models = {
            "response_model": "gemini-2.5-flash",
            "response_model_parameters": settings,
            "rubric_generation_model": "gemini-2.5-flash",
            "rubric_generation_parameters": settings,
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": settings,
            "project": "test-project",
            "location": "us-central1",
        }
        import pandas as pd

        results, metrics = gecko.evaluate(pd.DataFrame(rows), media_type="text", id_columns=["id"], **models)
        frame_requests = list(emulator.requests)
        params = {
            "evaluation_dataset": str(_write_jsonl(tmp_path / "rows.jsonl", rows)),
            "id_columns": ["id"],
            "prompt_column": "prompt",
            "media_type": "text",
            **models,
        }
        (tmp_path / "params.json").write_text(json.dumps(params))
        out = tmp_path / "out"
        flags = ["--output-dir", str(out), "--quiet", "--max-failed-share", "1"]
        assert main(["run", "gecko", "--params", str(tmp_path / "params.json"), *flags]) == 0
    generated = [r for r in frame_requests if r.response_schema is None and "Response:" not in r.prompt_text]
    assert sorted(r.prompt_text for r in generated) == sorted(r["prompt"] for r in rows[:2])  # one call per prompt
    by_id = results.set_index("id")
    for row in rows[:2]:  # the validator was shown the generated response
        response = by_id.loc[row["id"], "response"]
        assert isinstance(response, str) and response.strip()
        assert any(f"Response:\n{response}" in r.prompt_text for r in frame_requests)
    pipeline = {r["id"]: r for r in _jsonl(out / "results.jsonl")}
    assert set(pipeline) == {"fruit", "sky"} and all(r["score"] is not None for r in pipeline.values())
    assert {k: by_id.loc[k, "score"] for k in pipeline} == {k: r["score"] for k, r in pipeline.items()}
    assert {k: by_id.loc[k, "response"] for k in pipeline} == {k: r["response"] for k, r in pipeline.items()}
    assert metrics["mean_score"] == json.loads((out / "metrics.json").read_text())["mean_score"]
    blank = by_id.loc["blank"]
    assert (blank["error_stage"], blank["error_kind"]) == ("rubric_generation", "missing_prompt")


def test_response_model_is_refused_where_it_cannot_apply():
    from autorater_pipelines import gecko

    df = _prompts()
    replay = "replay/responses.jsonl"
    with pytest.raises(
        InputError, match=r"response_model 'replay/responses.jsonl' generates text .* media_type='image'"
    ):
        gecko.evaluate(df, response_model=replay, id_columns=["id"], progress=False)
    with pytest.raises(InputError, match=r"media_column 'prompt' is a column of the DataFrame, and response_model"):
        gecko.evaluate(df, media_type="text", media_column="prompt", response_model=replay, id_columns=["id"])
    with pytest.raises(InputError, match=r"temprature") as caught:
        gecko.evaluate(
            df,
            media_type="text",
            response_model=replay,
            response_model_parameters={"temprature": 0},
            id_columns=["id"],
        )
    assert caught.value.source == "response_model_parameters"
    with pytest.raises(InputError, match=r"column 'image' \(media_column\) is not in the DataFrame"):
        gecko.evaluate(df, id_columns=["id"])  # without response_model the responses must be in the DataFrame
