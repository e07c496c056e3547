import copy
import json

import pytest

from autorater_pipelines.errors import InputError
from autorater_pipelines.pairwise.tasks import BUILTIN_TASKS, TaskDefinition, available_tasks, get_task

CUSTOM = {
    "evaluation_criteria": [
        {
            "name": "Politeness",
            "definition": "The reply is courteous.",
            "evaluation_steps": ["Look for rude wording.", "Check the greeting."],
        },
        {
            "name": "Accuracy",
            "definition": "The reply is correct.",
            "evaluation_steps": {"STEP 1": "Check facts.", "STEP 2": "Check numbers."},
        },
    ],
    "score_rubric": {"SAME": "Neither is better.", "A": "A is better.", "B": "B is better."},
    "autorater_prompt_parameter_keys": ["inference_instruction", "customer_message"],
    "default_instruction": "Reply to the customer.",
}


@pytest.mark.parametrize(
    ("task", "name"),
    [
        ("summarization@001", "summarization"),
        ("summarization@latest", "summarization"),
        ("question_answering@001", "question_answering"),
        (" Question_Answering@LATEST ", "question_answering"),
        ("summarization", "summarization"),  # no version = latest, as in Google's documented examples
        ("Question_Answering", "question_answering"),
    ],
)
def test_builtin_tasks(task, name):
    definition = get_task(task)
    assert (definition.name, definition.version, definition.spec) == (name, "001", f"{name}@001")
    assert definition.required_prompt_parameter_keys == ["inference_instruction"]
    assert definition.optional_prompt_parameter_keys == ["inference_context"]
    assert definition.prompt_parameter_keys == ["inference_instruction", "inference_context"]
    assert list(definition.score_rubric) == ["A", "B", "SAME"]
    assert len(definition.criteria) >= 4 and all(c.steps for c in definition.criteria)


def test_criteria_and_default_instructions():
    summarization = get_task("summarization@001")
    qa = get_task("question_answering@001")
    assert [c.name for c in summarization.criteria] == [
        "Instruction following",
        "Groundedness",
        "Comprehensiveness",
        "Conciseness",
        "Fluency",
    ]
    assert [c.name for c in qa.criteria] == [
        "Answers the question",
        "Groundedness",
        "Relevance",
        "Completeness",
        "Fluency",
    ]
    assert summarization.default_instruction == "Summarize the following text."
    assert qa.default_instruction == "Answer the question."
    assert summarization.template_variables == {"default_instruction": "Summarize the following text."}


def test_get_task_returns_a_copy():
    definition = get_task("summarization@001")
    definition.criteria.clear()
    assert get_task("summarization@001").criteria


def test_available_tasks():
    assert available_tasks() == [
        "arena_hard",
        "arena_hard@001",
        "arena_hard@latest",
        "question_answering",
        "question_answering@001",
        "question_answering@latest",
        "summarization",
        "summarization@001",
        "summarization@latest",
        "custom",
    ]


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (
            "summarization@1",
            r"^task: version '1' in 'summarization@1' must be three digits \(e\.g\. '001'\) or 'latest'",
        ),
        ("summarization@v001", r"version 'v001' in 'summarization@v001' must be three digits"),
        ("summarization@", r"version '' in 'summarization@' must be three digits"),
        (
            "summarization@002",
            r"^task: task 'summarization' has no version '002'; valid versions: \['001'\] or 'latest'",
        ),
        (
            "translation@001",
            r"^task: unknown task 'translation' in 'translation@001'; valid values: "
            r"\['arena_hard', 'arena_hard@001', 'arena_hard@latest', 'question_answering', .*'custom'\]\.$",
        ),
        (
            "question_answer",
            r"^task: unknown task 'question_answer'; valid values: \[.*'question_answering', "
            r"'question_answering@001'.*\]\. Did you mean 'question_answering'\?$",
        ),
        ("", r"^task: expected '\{task\}@\{version\}' such as 'summarization@001', got ''"),
        (None, r"got None; valid values: \["),
    ],
)
def test_bad_task_values(task, message):
    with pytest.raises(InputError, match=message):
        get_task(task)


def test_custom_task():
    definition = get_task("custom", {"custom_task_definition": copy.deepcopy(CUSTOM), "other_flag": 1})
    assert isinstance(definition, TaskDefinition)
    assert (definition.name, definition.version) == ("custom", "latest")
    assert [(c.name, c.steps) for c in definition.criteria] == [
        ("Politeness", ["Look for rude wording.", "Check the greeting."]),
        ("Accuracy", ["STEP 1: Check facts.", "STEP 2: Check numbers."]),
    ]
    assert list(definition.score_rubric) == ["A", "B", "SAME"]  # canonical order
    assert definition.required_prompt_parameter_keys == ["inference_instruction", "customer_message"]
    assert definition.optional_prompt_parameter_keys == []
    assert definition.template_variables == {"default_instruction": "Reply to the customer."}
    assert get_task("custom@002", {"custom_task_definition": CUSTOM}).version == "002"


def test_custom_task_from_json_round_trip_and_minimal_shape():
    minimal = {
        "evaluation_criteria": [{"name": "Helpful", "definition": "Helps the user."}],
        "score_rubric": {"A": "a", "B": "b", "SAME": "same"},
        "autorater_prompt_parameter_keys": ["inference_instruction"],
    }
    definition = get_task("custom", json.loads(json.dumps({"custom_task_definition": minimal})))
    assert definition.criteria[0].steps == []
    assert definition.template_variables == {}


def _with(**changes):
    definition = copy.deepcopy(CUSTOM)
    definition.update(changes)
    return definition


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        (
            [1],
            r"expected an object with evaluation_criteria, score_rubric and "
            r"autorater_prompt_parameter_keys, got \[1\]",
        ),
        (
            {},
            r"evaluation_criteria: Field required; score_rubric: Field required; "
            r"autorater_prompt_parameter_keys: Field required",
        ),
        (_with(evaluation_criteria=[]), r"evaluation_criteria: List should have at least 1 item"),
        (_with(evaluation_criteria=[{"name": "x"}]), r"evaluation_criteria\[0\]\.definition: Field required"),
        (
            _with(evaluation_criteria=[{"name": "x", "definiton": "y"}]),
            r"evaluation_criteria\[0\]\.definiton: unknown key; valid keys: \['name', 'definition', "
            r"'evaluation_steps'\]",
        ),
        (
            _with(evaluation_criteria=[{"name": "x", "definition": "y", "evaluation_steps": "do it"}]),
            r"evaluation_criteria\[0\]\.evaluation_steps: must be a list of steps or an object of "
            r"label -> step, got 'do it'",
        ),
        (
            _with(evaluation_criteria=[{"name": "x", "definition": "y", "evaluation_steps": [1]}]),
            r"evaluation_criteria\[0\]\.evaluation_steps\[0\]: Input should be a valid string \(got 1\)",
        ),
        (
            _with(evaluation_criteria=[{"name": "x", "definition": "y"}] * 2),
            r"criterion names must be unique, repeated: \['x'\]",
        ),
        (
            _with(evaluation_criteria=[{"name": " ", "definition": "y"}]),
            r"evaluation_criteria\[0\]\.name: String should have at least 1 character",
        ),
        (
            _with(score_rubric={"A": "a", "B": "b"}),
            r"score_rubric: labels must be exactly \['A', 'B', 'SAME'\] .* got \['A', 'B'\]",
        ),
        (_with(score_rubric={"A": "a", "B": "b", "TIE": "t"}), r"got \['A', 'B', 'TIE'\]"),
        (_with(score_rubric={"1": "bad", "2": "ok", "4": "great"}), r"consecutive integers .* got \['1', '2', '4'\]"),
        (_with(score_rubric={"1": "only one level"}), r"consecutive integers .* got \['1'\]"),
        (_with(score_rubric={"1": "bad", "two": "good"}), r"consecutive integers .* got \['1', 'two'\]"),
        (_with(score_rubric={"A": "", "B": "b", "SAME": "s"}), r"descriptions must be non-empty, empty for \['A'\]"),
        (_with(autorater_prompt_parameter_keys=[]), r"autorater_prompt_parameter_keys: List should have at least"),
        (_with(autorater_prompt_parameter_keys=["a b"]), r"keys must be identifiers .* got \['a b'\]"),
        (_with(autorater_prompt_parameter_keys=["a", "a"]), r"keys must be unique, got \['a', 'a'\]"),
        (
            _with(prompt_template="x"),
            r"prompt_template: unknown key; valid keys: \['evaluation_criteria', 'score_rubric', "
            r"'autorater_prompt_parameter_keys', 'default_instruction', 'few_shot_examples_config'\]",
        ),
    ],
)
def test_malformed_custom_task(definition, message):
    with pytest.raises(InputError, match=r"^experimental_args\.custom_task_definition: .*" + message):
        get_task("custom", {"custom_task_definition": definition})


def test_custom_without_definition():
    message = r"^task: task 'custom' needs experimental_args\.custom_task_definition"
    with pytest.raises(InputError, match=message):
        get_task("custom", {})


def test_custom_definition_with_builtin_task_is_refused():
    with pytest.raises(
        InputError,
        match=r"^experimental_args\.custom_task_definition: is set but task is 'summarization@001'; "
        r"set task to 'custom'",
    ):
        get_task("summarization@001", {"custom_task_definition": CUSTOM})


def test_experimental_args_must_be_an_object():
    with pytest.raises(InputError, match=r"^experimental_args: expected an object, got \['x'\]"):
        get_task("summarization@001", ["x"])


def test_registry_shape():
    for name, versions in BUILTIN_TASKS.items():
        for version, definition in versions.items():
            assert (definition.name, definition.version) == (name, version)
