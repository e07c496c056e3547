"""Google's custom-task sample form: pointwise score rubric, few-shot examples, bare-string prompt parameters."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from autorater_pipelines import autosxs
from autorater_pipelines import pairwise as judging
from autorater_pipelines.errors import InputError
from autorater_pipelines.models import ModelOutput, ModelRequest
from autorater_pipelines.pairwise import pointwise as scoring
from autorater_pipelines.pairwise import tasks
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.judges import length_judge

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "examples" / "autosxs_docs"
PARAMS = json.loads((DOCS / "custom_task_translation.json").read_text())


def _definition(few_shot_dataset: str | None = None, **changes) -> dict:
    definition = copy.deepcopy(PARAMS["experimental_args"]["custom_task_definition"])
    definition["few_shot_examples_config"]["dataset"] = few_shot_dataset or str(DOCS / "translation_few_shots.jsonl")
    definition.update(changes)
    return definition


def _few_shots(tmp_path: Path, rows: list[dict]) -> str:
    path = tmp_path / "shots.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


SHOTS = [json.loads(line) for line in (DOCS / "translation_few_shots.jsonl").read_text().splitlines()]


def test_the_sample_form_builds_a_pointwise_task_with_worked_examples():
    task = tasks.get_task("custom@001", {"custom_task_definition": _definition()})
    assert task.spec == "custom@001" and task.pointwise and task.score_scale == [1, 2, 3, 4, 5]
    assert [c.steps for c in task.criteria][1] == [
        "STEP 1: Find passages whose meaning differs from the original.",
        "STEP 2: Decide whether each difference is a mistranslation.",
    ]
    assert task.criteria[2].steps == []
    assert [(e.choice, e.response_a_score, e.response_b_score) for e in task.few_shot_examples] == [
        ("B", 2, 4),
        ("SAME", 5, 5),
    ]
    assert task.few_shot_examples[0].task_values[0] == (
        "instruction",
        "You are an expert translator of a newspaper. Translate the following email into Italian.",
    )
    prompt = task.render_judge_prompt({"instruction": "Translate.", "content": "Hello"}, "Ciao", "Salve")
    assert "Score each response on its own, on a scale from 1 to 5 (higher is better):" in prompt
    assert "- 5: An excellent translation" in prompt
    assert "## Worked examples" in prompt and "### Example 2" in prompt
    assert '"response_a_score": 2, "response_b_score": 4}' in prompt
    assert SHOTS[0]["explanation"] in prompt and SHOTS[0]["response_b"] in prompt
    # the worked examples come before the task, which comes before the answer format
    assert (
        prompt.index("### Example 1") < prompt.index("## The task given") < prompt.index('"response_a_score": <integer')
    )
    assert task.judgment_schema["required"] == ["explanation", "response_a_score", "response_b_score"]
    assert task.judgment_schema["properties"]["response_a_score"]["maximum"] == 5
    # the fast path and Jinja agree with examples and a pointwise scale too
    from autorater_pipelines.pairwise.tasks import _judge_prompt

    assert prompt == _judge_prompt.render_with_jinja(
        criteria=[c.model_dump() for c in task.criteria],
        score_rubric=task.score_rubric,
        task_values=[("instruction", "Translate."), ("content", "Hello")],
        response_first="Ciao",
        response_second="Salve",
        score_scale=task.score_scale,
        examples_block=task.examples_block,
    )


@pytest.mark.parametrize(
    ("rows", "changes", "message"),
    [
        ([{**SHOTS[0], "winner": "A"}], {}, r"line 1, column 'winner': few-shot choice 'A' contradicts the scores"),
        (
            [{**SHOTS[0], "response_a_score": 7}],
            {},
            r"line 1, column 'response_a_score': .* not on .* \[1, 2, 3, 4, 5\]",
        ),
        (
            [SHOTS[1], {**SHOTS[0], "explanation": ""}],
            {},
            r"line 2, column 'explanation': few-shot example has no explanation",
        ),
        ([{**SHOTS[0], "winner": "maybe"}], {}, r"column 'winner': few-shot choice 'maybe' is not one of A, B, SAME"),
        (
            [{k: v for k, v in SHOTS[0].items() if k != "response_b"}],
            {},
            r"response_b_column: column 'response_b' is not in",
        ),
        (
            [{k: v for k, v in SHOTS[0].items() if k != "content"}],
            {},
            r"few_shot_examples_config\.autorater_prompt_parameters\.content, column 'content'",
        ),
        ([], {}, r"few_shot_examples_config\.dataset: evaluation dataset is empty: .*shots\.jsonl' holds no rows"),
        (SHOTS, {"response_a_score_column": ""}, r"a pointwise score_rubric needs response_a_score_column and"),
        (
            SHOTS,
            {"autorater_prompt_parameters": {"content": "content"}},
            r"must map exactly the task's autorater_prompt_parameter_keys",
        ),
        (SHOTS, {"choise_column": "winner"}, r"few_shot_examples_config\.choise_column: unknown key"),
    ],
)
def test_bad_few_shot_examples_are_clear_errors(tmp_path, rows, changes, message):
    definition = _definition(_few_shots(tmp_path, rows))
    definition["few_shot_examples_config"].update(changes)
    definition["few_shot_examples_config"] = {
        k: v for k, v in definition["few_shot_examples_config"].items() if v != ""
    }
    with pytest.raises(InputError, match=message):
        tasks.get_task("custom", {"custom_task_definition": definition})


def test_score_columns_need_a_pointwise_rubric():
    rubric = {"A": "A is better.", "B": "B is better.", "SAME": "Neither."}
    with pytest.raises(InputError, match=r"score columns .* need a pointwise score_rubric"):
        tasks.get_task("custom", {"custom_task_definition": _definition(score_rubric=rubric)})
    definition = _definition(score_rubric=rubric)
    for key in ("response_a_score_column", "response_b_score_column"):
        del definition["few_shot_examples_config"][key]
    task = tasks.get_task("custom", {"custom_task_definition": definition})
    assert not task.pointwise and '"choice": "B"}' in task.examples_block


def _request(flipped: bool) -> ModelRequest:
    return ModelRequest(parts=("p",), key={"id": 1, "flipped": flipped}, sample_index=int(flipped))


def test_scores_are_mapped_back_to_models_and_the_higher_score_wins():
    answer = ModelOutput(text=json.dumps({"explanation": "x", "response_a_score": 4, "response_b_score": 2}))
    original = judging.to_sample(_request(False), answer, judging.JudgeSettings(), [1, 2, 3, 4, 5])
    swapped = judging.to_sample(_request(True), answer, judging.JudgeSettings(), [1, 2, 3, 4, 5])
    assert (original.choice, original.scores) == ("A", (4, 2))
    assert (swapped.choice, swapped.scores) == ("B", (2, 4))  # model B was shown first and scored 4
    assert scoring.mean_scores([original, swapped]) == {"response_a_score": 3.0, "response_b_score": 3.0}
    assert judging.combine_samples([original, swapped])[0] == "TIE"
    tie = ModelOutput(text='{"response_a_score": 3, "response_b_score": "3"}')
    assert judging.to_sample(_request(False), tie, judging.JudgeSettings(), [1, 2, 3]).choice == "TIE"
    off_scale = ModelOutput(text='{"response_a_score": 9, "response_b_score": 1}')
    bad = judging.to_sample(_request(False), off_scale, judging.JudgeSettings(), [1, 2, 3, 4, 5])
    assert bad.choice == "ERROR" and "'response_a_score' must be an integer from 1 to 5, got 9" in bad.error


def test_verdict_pattern_is_refused_with_a_pointwise_rubric():
    with pytest.raises(InputError, match=r"^autorater_parameters: verdict_pattern parses A/B/TIE verdicts"):
        autosxs.check_run_parameters(
            "replay/x",
            {"verdict_pattern": r"\[\[(A|B)\]\]", "verdict_map": {"A": "A", "B": "B"}},
            task="custom",
            experimental_args={"custom_task_definition": _definition()},
        )


def test_judging_with_scores_through_the_emulator(tmp_path):
    examples = autosxs.prepare_examples(
        evaluation_dataset=str(DOCS / "translation.jsonl"),
        task=PARAMS["task"],
        id_columns=PARAMS["id_columns"],
        autorater_prompt_parameters=PARAMS["autorater_prompt_parameters"],
        response_column_a="model_a_response",
        response_column_b="model_b_response",
        experimental_args={"custom_task_definition": _definition()},
    )
    with ModelEmulator(responder=length_judge) as emulator:
        judgments, errors, _ = autosxs.judge_examples(
            examples=examples,
            task=PARAMS["task"],
            id_columns=PARAMS["id_columns"],
            autorater_model="gemini-2.5-flash",
            autorater_parameters={"base_url": emulator.url, "cache_dir": "off"},
            experimental_args={"custom_task_definition": _definition()},
        )
        assert all("## Worked examples" in r.prompt_text for r in emulator.requests)
    assert errors == []
    # Worked out by hand from the lengths: rows 1 and 3 model A is longer (5 vs 2), row 2 model B.
    assert [(j["choice"], j["response_a_score"], j["response_b_score"]) for j in judgments] == [
        ("A", 5.0, 2.0),
        ("B", 2.0, 5.0),
        ("A", 5.0, 2.0),
    ]
    assert [(s["flipped"], s["response_a_score"], s["response_b_score"]) for s in judgments[0]["samples"]] == [
        (False, 5, 2),
        (True, 5, 2),
    ]
    assert judgments[0]["content"] == examples[0]["content"]  # id column and bare-string prompt parameter


def test_few_shot_dataset_on_cloud_storage(bucket):
    client_bucket, folder = bucket
    blob = f"{folder.split('/', 3)[3]}/shots.jsonl"
    client_bucket.blob(blob).upload_from_string((DOCS / "translation_few_shots.jsonl").read_text())
    task = tasks.get_task("custom", {"custom_task_definition": _definition(f"{folder}/shots.jsonl")})
    assert len(task.few_shot_examples) == 2
