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
            r"model_a_prompt_parameters: to generate model A's responses, write the model's prompt parameters in "
            r"one of the documented forms: \{\"prompt\": \.\.\.\} \(text models\); or \{\"contents\": \.\.\.\}",
        ),
        (
            {"model_a_prompt_parameters": {"prompt": "question", "system_instruction": "question"}},
            r"model_a_prompt_parameters: .*documented forms.*got \{'prompt': 'question', 'system_instruction'",
        ),
        ({"model_a_prompt_parameters": {"system_instruction": "question"}}, r"documented forms"),
        ({"model_a_prompt_parameters": {"prompt": {"column": "nope"}}}, r"nope"),
        (
            {"response_column_a": "respnse"},
            r"^response_column_a: 'respnse' is neither a column of evaluation_dataset \(columns: \['id', "
            r"'question', 'answer_b'\]\) nor a field of model A's output \(\['response', .*'content'.*\]: each is "
            r"the generated text\).* Did you mean 'response'\?",
        ),
        ({"response_column_a": "answer_a", "model_a": ""}, r"response_column_a.*answer_a"),
    ],
)
def test_prepare_rejects_unusable_generation_settings(tmp_path, overrides, message):
    with pytest.raises(InputError, match=message):
        _prepare(tmp_path, **overrides)


@pytest.mark.parametrize(
    ("prompt_parameters", "response_column", "expected"),
    [
        # text models (text-bison): "prompt" in, "content" out; default_instruction available in templates
        (
            {"prompt": {"template": "{{ default_instruction }}: {{ question }}"}},
            "content",
            {"model_a_prompt": "Answer the question.: What is 1 + 1?"},
        ),
        # Gemini request body: contents (+ optional system_instruction); the output field is inferred
        (
            {"contents": {"column": "question"}, "system_instruction": {"template": "{{ default_instruction }}"}},
            "",
            {"model_a_prompt": "What is 1 + 1?", "model_a_system_instruction": "Answer the question."},
        ),
        ({"contents": "question"}, "predictions", {"model_a_prompt": "What is 1 + 1?"}),
    ],
)
def test_documented_model_prompt_forms(tmp_path, prompt_parameters, response_column, expected):
    examples = _prepare(tmp_path, model_a_prompt_parameters=prompt_parameters, response_column_a=response_column)
    assert {k: v for k, v in examples[0].items() if k.startswith("model_a")} == expected
    assert examples[0]["response_a"] is None


def test_a_response_column_the_dataset_has_is_read_even_with_a_model(tmp_path):
    rows = [{**r, "content": f"pre-generated {r['id']}"} for r in ROWS]
    (tmp_path / "with_content").mkdir()
    dataset = _dataset(tmp_path / "with_content", rows)
    examples = _prepare(tmp_path, evaluation_dataset=dataset, response_column_a="content")
    assert [e["response_a"] for e in examples] == ["pre-generated 1", "pre-generated 2", "pre-generated 3"]
    assert not any(k.startswith("model_a") for k in examples[0])


def test_a_missing_default_instruction_in_a_model_template_is_an_error(tmp_path):
    custom = {
        "evaluation_criteria": [{"name": "Correct", "definition": "The answer is right."}],
        "score_rubric": {"A": "A is better.", "B": "B is better.", "SAME": "Neither."},
        "autorater_prompt_parameter_keys": ["question"],
    }
    with pytest.raises(InputError, match=r"model_a_prompt_parameters\.prompt, column 'default_instruction'"):
        _prepare(
            tmp_path,
            task="custom",
            experimental_args={"custom_task_definition": custom},
            autorater_prompt_parameters={"question": "question"},
            model_a_prompt_parameters={"prompt": {"template": "{{ default_instruction }} {{ question }}"}},
        )


def test_system_instruction_reaches_the_model(tmp_path):
    examples = _prepare(
        tmp_path,
        model_a="gemini-2.5-flash",
        model_a_prompt_parameters={"contents": "question", "system_instruction": {"template": "Be brief."}},
    )
    with ModelEmulator(responder=lambda request: f"[{request.system_instruction}] {request.prompt_text}") as emulator:
        inference.fill_missing_responses(
            examples,
            id_columns=["id"],
            models={"a": "gemini-2.5-flash", "b": ""},
            parameters={"a": {"base_url": emulator.url, "cache_dir": "off"}, "b": None},
            project="p",
        )
    assert [e["response_a"] for e in examples] == [f"[Be brief.] What is {i} + {i}?" for i in (1, 2, 3)]


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
            "error_kind": "blocked",
            "error_message": "the model returned no text (finish reason: safety)",
            "model": "a",
            "sample_index": None,
            "flipped": None,
            "error": judgments[2]["explanation"][len("model A: ") :],
            "row_judged": False,
        }
    ]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"top_k": "3"}, r"unknown keys \['top_k'\]"),
        ({"temperature": "hot"}, r"temperature must be a number from 0 to 2, got 'hot'"),
    ],
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


def test_an_id_column_may_also_be_the_prompt_parameter_of_the_same_name(tmp_path):
    """Google's custom-task notebook: ``id_columns: ["content"]`` and ``"content": "content"``."""
    custom = {
        "evaluation_criteria": [{"name": "Correct", "definition": "The answer is right."}],
        "score_rubric": {"A": "A is better.", "B": "B is better.", "SAME": "Neither."},
        "autorater_prompt_parameter_keys": ["question"],
    }
    args = dict(task="custom@001", experimental_args={"custom_task_definition": custom}, id_columns=["question"])
    examples = _prepare(tmp_path, autorater_prompt_parameters={"question": "question"}, **args)
    assert examples[0]["question"] == "What is 1 + 1?"
    with pytest.raises(InputError, match=r"^id_columns\[0\]: column name 'question' is also an output field"):
        _prepare(tmp_path, autorater_prompt_parameters={"question": {"template": "Q: {{ question }}"}}, **args)
