import json

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines.autosxs import inference
from autorater_pipelines.errors import InputError
from autorater_pipelines.testing import ModelEmulator


def _dataset(tmp_path, rows):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


ROWS = [{"id": i, "question": f"What is {i} + {i}?", "answer_b": str(2 * i)} for i in range(1, 4)]


def _prepare(tmp_path, **overrides):
    args = dict(
        evaluation_dataset=_dataset(tmp_path, ROWS),
        task="question_answering@001",
        id_columns=["id"],
        autorater_prompt_parameters={"inference_instruction": {"column": "question"}},
        response_column_b="answer_b",
        model_a="openai/tiny",
        model_a_prompt_parameters={"prompt": {"template": "Answer briefly: {{ question }}"}},
    )
    args.update(overrides)
    return autosxs.prepare_examples(**args)


def test_prepare_renders_the_model_prompt_when_responses_must_be_generated(tmp_path):
    examples = _prepare(tmp_path)
    assert examples[0]["model_a_prompt"] == "Answer briefly: What is 1 + 1?"
    assert examples[0]["response_a"] is None and examples[0]["response_b"] == "2"
    assert "model_b_prompt" not in examples[0]


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"model_a": ""}, r"response_column_a and model_a are both empty"),
        (
            {"model_a_prompt_parameters": {}},
            r"model_a_prompt_parameters: to generate model A's responses, set exactly one prompt parameter named 'prompt'",
        ),
        ({"model_a_prompt_parameters": {"prompt": {"column": "nope"}}}, r"nope"),
    ],
)
def test_prepare_rejects_unusable_generation_settings(tmp_path, overrides, message):
    with pytest.raises(InputError, match=message):
        _prepare(tmp_path, **overrides)


def test_generation_through_openai_emulator_and_failed_rows_become_error_judgments(tmp_path):
    def responder(request):
        if "3 + 3" in request.prompt_text:
            return {"text": None, "finish_reason": "content_filter"}
        return "The answer is " + request.prompt_text.split()[-1]

    examples = _prepare(tmp_path)
    with ModelEmulator(responder=responder) as emulator:
        counts = inference.fill_missing_responses(
            examples,
            id_columns=["id"],
            models={"a": "openai/tiny", "b": ""},
            parameters={
                "a": {"base_url": emulator.url, "temperature": "0.2", "maxOutputTokens": "64", "cache_dir": "off"},
                "b": None,
            },
        )
        assert emulator.call_count == 3
        assert emulator.requests[0].generation.get("temperature") == 0.2
    assert counts == {"generated_count": 3, "failed_count": 1}
    assert examples[0]["response_a"] == "The answer is 1?"
    assert examples[2]["response_a"] is None and examples[2]["inference_error_a"].startswith("blocked")

    replay = tmp_path / "judge.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"id": i, "flipped": f, "response": json.dumps({"explanation": "x", "choice": "A"})}) + "\n"
            for i in (1, 2)
            for f in (False, True)
        )
    )
    judgments, errors, _ = autosxs.judge_examples(
        examples=examples, task="question_answering@001", id_columns=["id"], autorater_model=f"replay/{replay}"
    )
    assert [j["choice"] for j in judgments] == ["TIE", "TIE", "ERROR"]
    assert judgments[2]["explanation"].startswith("model A: blocked")
    assert errors == [
        {
            "id": 3,
            "stage": "inference",
            "model": "a",
            "sample_index": None,
            "flipped": None,
            "error": judgments[2]["explanation"][len("model A: ") :],
            "row_judged": False,
        }
    ]


@pytest.mark.parametrize(
    "params, message",
    [({"top_k": "3"}, r"unknown key 'top_k'"), ({"temperature": "hot"}, r"temperature must be a number, got 'hot'")],
)
def test_model_parameters_are_validated(params, message):
    with pytest.raises(InputError, match=message):
        inference.model_config(params, side="a")


def test_infer_response_column():
    assert inference.infer_response_column(["id", "prediction"], side="a") == "prediction"
    with pytest.raises(
        InputError, match=r"cannot infer the response column of model B: found \['response', 'content'\]"
    ):
        inference.infer_response_column(["response", "content"], side="b")
