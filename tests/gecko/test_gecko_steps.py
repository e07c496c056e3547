"""Gecko pipeline steps (``autorater_pipelines.gecko.steps``) called directly, without KFP."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autorater_pipelines import gecko, io
from autorater_pipelines.errors import InputError
from autorater_pipelines.gecko import preflight
from autorater_pipelines.gecko import steps as gecko_steps

CHECK = {"id_columns": ["id"], "media_column": "image", "prompt_column": "prompt", "project": "my-project"}


def test_from_struct_turns_integral_floats_back_into_ints():
    value = {"sampling_count": 2.0, "temperature": 0.5, "flag": True, "nested": {"n": [1.0, 1.5]}, "s": "3.0"}
    assert gecko_steps.from_struct(value) == {
        "sampling_count": 2,
        "temperature": 0.5,
        "flag": True,
        "nested": {"n": [1, 1.5]},
        "s": "3.0",
    }
    assert isinstance(gecko_steps.from_struct({"n": 2.0})["n"], int)


def test_validate_parameters_accepts_what_kfp_passes_and_names_the_bad_parameter():
    preflight.validate_parameters({**CHECK, "validator_parameters": {"questions_per_call": 1.0, "sampling_count": 3.0}})
    preflight.validate_parameters({**{**CHECK, "prompt_column": ""}, "rubrics_column": "rubric"})
    with pytest.raises(
        InputError, match=r"validator_parameters: sampling_count must be an integer from 1 to 64, got 2.5"
    ):
        preflight.validate_parameters({**CHECK, "validator_parameters": {"sampling_count": 2.5}})
    with pytest.raises(InputError, match=r"^rubric_generation_model: .*unknown model provider 'claude'"):
        preflight.validate_parameters({**CHECK, "rubric_generation_model": "claude/x"})
    with pytest.raises(InputError, match=r"validator_prompt_template: cannot render template: 'questionz'"):
        preflight.validate_parameters({**CHECK, "validator_prompt_template": "{{ questionz }}"})
    one = {"questions_per_call": 1}
    preflight.validate_parameters(
        {**CHECK, "validator_parameters": one, "validator_prompt_template": "{{ question.question }}"}
    )
    with pytest.raises(InputError, match=r"'questions' is undefined"):  # one-question mode has `question` only
        preflight.validate_parameters(
            {**CHECK, "validator_parameters": one, "validator_prompt_template": "{{ questions }}"}
        )
    with pytest.raises(InputError, match=r"^media_type: media_type must be one of"):
        preflight.validate_parameters({**CHECK, "media_type": "3d"})


def test_validate_parameters_refuses_a_vertex_model_without_project(monkeypatch):
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(
        InputError, match=r"^validator_model: cannot choose how to call Gemini model 'gemini-2.5-flash'"
    ):
        preflight.validate_parameters({**{**CHECK, "project": ""}})


def _validation_row(row_id: str, answers: dict[str, str | None]) -> dict:
    rubric = gecko.normalize_supplied_rubric(
        {"qas": [{"question_id": q, "question": f"Question {q}?", "answer": "yes"} for q in answers]}
    )
    sample = {"sample_index": 0, "raw": None, "choice_probs": None}
    return {
        "id": row_id,
        **rubric,
        "answers": {
            q: [{**sample, "verdict": a, "error": None if a else {"kind": "not_recorded", "message": "no recording"}}]
            for q, a in answers.items()
        },
    }


def test_score_validations_accounts_for_every_row_of_every_stage(tmp_path):
    validations = io.write_jsonl(
        str(tmp_path / "validations.jsonl"),
        [_validation_row("a", {"q1": "yes", "q2": "no"}), _validation_row("b", {"q1": None})],
    )
    assert validations == 2
    rubric_errors = tmp_path / "rubric_errors.jsonl"
    io.write_jsonl(str(rubric_errors), [{"id": "c", "stage": "rubrics", "error_kind": "invalid_rubric"}])
    media_errors = tmp_path / "media_errors.jsonl"
    io.write_jsonl(str(media_errors), [{"id": "d", "stage": "media", "error_kind": "unreadable_media"}])
    metrics = gecko_steps.score_validations(
        validations_path=str(tmp_path / "validations.jsonl"),
        id_columns=["id"],
        scoring={},
        earlier_error_paths=[str(rubric_errors), str(media_errors)],
        results_path=str(tmp_path / "results.jsonl"),
        error_messages_path=str(tmp_path / "errors.jsonl"),
        metrics_path=str(tmp_path / "metrics.json"),
    )
    assert [r["id"] for r in io.read_jsonl(str(tmp_path / "results.jsonl"))] == ["a"]
    assert [e["id"] for e in io.read_jsonl(str(tmp_path / "errors.jsonl"))] == ["c", "d", "b"]
    assert metrics["evaluation_count"] == 4 and metrics["rows_scored"] == 1 and metrics["rows_unscored"] == 3
    assert metrics["unscored_rows_by_stage"] == {"media": 1, "rubrics": 1, "validation": 1}
    assert metrics["mean_final_score"] == 0.5
    assert json.loads((tmp_path / "metrics.json").read_text()) == metrics

    # missing answers scored 0: the row is scored AND listed, but not counted as unscored
    zero = gecko_steps.score_validations(
        validations_path=str(tmp_path / "validations.jsonl"),
        id_columns=["id"],
        scoring={"missing_answer_policy": "zero"},
    )
    assert (zero["rows_scored"], zero["rows_unscored"], zero["error_count"]) == (2, 0, 1)


def test_console_metrics_are_flat_numbers():
    flat = gecko_steps.console_metrics(
        {
            "mean_final_score": 0.8125,
            "stdev_final_score": None,
            "rows_scored": 2,
            "scoring_options": {"dependency_masking": True},
            "accuracy_by_question_type": {"animal/human": 0.75, "counting": 1 / 3},
            "flag": True,
        }
    )
    assert flat == {
        "mean_final_score": 0.8125,
        "rows_scored": 2.0,
        "accuracy_animal_human": 0.75,
        "accuracy_counting": pytest.approx(1 / 3),
    }


def test_export_results_in_both_formats(tmp_path):
    rows = [{"id": "a", "final_score": 1.0}, {"id": "b", "final_score": 0.5}]
    io.write_jsonl(str(tmp_path / "results.jsonl"), rows)
    gecko_steps.export_results(
        results_path=str(tmp_path / "results.jsonl"), output_format="json", destination=str(tmp_path / "r.json")
    )
    assert json.loads((tmp_path / "r.json").read_text()) == rows
    gecko_steps.export_results(
        results_path=str(tmp_path / "results.jsonl"), output_format="JSONL", destination=str(tmp_path / "r.jsonl")
    )
    assert io.read_jsonl(str(tmp_path / "r.jsonl")) == rows
    with pytest.raises(InputError, match=r"output_format: unsupported output_format 'csv'"):
        gecko_steps.export_results(results_path=str(tmp_path / "results.jsonl"), output_format="csv", destination="x")


def test_gecko_steps_import_no_kfp():
    code = "import sys; sys.modules['kfp'] = None; import autorater_pipelines.gecko.steps; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
