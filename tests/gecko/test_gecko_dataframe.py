"""The notebook API: Gecko on a pandas DataFrame, as users of the Vertex AI SDK's Gecko flow call it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines import gecko
from autorater_pipelines.errors import InputError

REPO = Path(__file__).resolve().parents[2]
BLOG = REPO / "examples" / "gecko_vertex"
PARAMS = json.loads((BLOG / "params.json").read_text())
QUIET = {"progress": False, "cache_dir": "off"}


def _blog_frame() -> pd.DataFrame:
    return pd.read_json(BLOG / "dataset.jsonl", lines=True)


def _replay(tmp_path: Path, name: str, records: list[dict]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return f"replay/{path}"


def test_blog_example_generate_then_evaluate():
    """Acceptance: the Vertex AI Gecko sample's two coffee prompts, its template shapes, its reply format."""
    df = _blog_frame()
    assert list(df.columns) == ["prompt", "image"]  # the sample's DataFrame: no id column
    with_rubrics = gecko.generate_rubrics(
        df,
        id_columns=["prompt"],
        rubric_generation_model=f"replay/{BLOG / 'rubric_replay.jsonl'}",
        rubric_generation_parameters=QUIET,
        rubric_generation_prompt_template=PARAMS["rubric_generation_prompt_template"],
    )
    assert list(with_rubrics.index) == [0, 1]
    assert with_rubrics.loc[0, "keywords"] == "{1}[steaming] {2}[cup of coffee] and a {3}[croissant] on a {4}[table]"
    assert with_rubrics.loc[1, "rubrics"].splitlines()[2] == "<question>is there toast?<choices>yes,no"
    record = with_rubrics.loc[1, "qa_records"][2]
    assert (record["question"], record["gt_answer"], record["answer_choices"]) == (
        "is there toast?",
        "yes",
        ["yes", "no"],
    )
    assert with_rubrics["error_kind"].isna().all()

    results, metrics = gecko.evaluate(
        with_rubrics,
        id_columns=["prompt"],
        media_column="image",
        validator_model=f"replay/{BLOG / 'validator_replay.jsonl'}",
        validator_parameters=QUIET,
        validator_prompt_template=PARAMS["validator_prompt_template"],
    )
    assert list(results["final_score"]) == [1.0, 0.5]
    assert results["final_score"].mean() == 0.75 and metrics["mean_final_score"] == 0.75
    assert metrics["parse_failures"] == 0 and metrics["keyword_coverage"] == 1.0
    assert metrics["rows_scored"] == 2 and metrics["evaluation_count"] == 2
    assert results.loc[1, "rubric_results"] == {"q1": "yes", "q2": "yes", "q3": "no", "q4": "no"}
    assert [q["score"] for q in results.loc[1, "qa_results"]] == [1.0, 1.0, 0.0, 0.0]
    raw = results.loc[1, "raw_responses"][0]["text"]
    assert raw.startswith("<question>\nQuestion: is the coffee steaming?\nVerdict: yes\n</question>")
    assert results.loc[0, "image"] == df.loc[0, "image"] and results.attrs["error_messages"] == []


def test_ids_default_to_the_row_index_and_failed_rows_stay(tmp_path, media_file):
    image = str(media_file("png"))
    df = pd.DataFrame(
        {"prompt": ["a red bicycle", "REFUSED", "a blue car"], "image": [image, image, None]},
        index=pd.Index([10, 11, 12]),
    )
    rubric = {
        "keywords": "a {1}[red] {2}[bicycle]",
        "qas": [
            {"question_id": 1, "question": "is it red?", "answer": "yes", "choices": ["yes", "no"]},
            {"question_id": 2, "question": "is there a bicycle?", "answer": "yes", "choices": ["yes", "no"]},
        ],
    }
    generator = _replay(
        tmp_path,
        "rubrics.jsonl",
        [
            {"index": 10, "response": json.dumps(rubric)},
            {"index": 11, "response": "I'd rather not."},
            {"index": 12, "response": json.dumps(rubric)},
        ],
    )
    validator = _replay(tmp_path, "answers.jsonl", [{"index": 10, "response": "Verdict: yes\nVerdict: no"}])
    results, metrics = gecko.evaluate(
        df,
        rubric_generation_model=generator,
        validator_model=validator,
        rubric_generation_parameters=QUIET,
        validator_parameters=QUIET,
        validator_prompt_template="{rubrics}\n{image}",
    )
    assert list(results.index) == [10, 11, 12] and "index" not in results.columns
    assert results.loc[10, "final_score"] == 0.5
    assert results.loc[11, ["error_stage", "error_kind"]].tolist() == ["rubric_generation", "unparseable_rubric"]
    assert results.loc[12, ["error_stage", "error_kind"]].tolist() == ["media", "missing_media"]
    assert pd.isna(results.loc[11, "final_score"]) and pd.isna(results.loc[12, "final_score"])
    assert metrics["rows_scored"] == 1 and metrics["rows_unscored"] == 2
    assert metrics["unscored_rows_by_stage"] == {"media": 1, "rubric_generation": 1}
    assert [e["index"] for e in results.attrs["error_messages"]] == [11, 12]


def test_works_inside_a_running_event_loop_as_in_jupyter():
    df = _blog_frame()

    async def notebook_cell():
        asyncio.get_running_loop()  # as in a Jupyter cell: a loop is running in this thread
        return gecko.evaluate(
            df,
            id_columns=["prompt"],
            rubric_generation_model=f"replay/{BLOG / 'rubric_replay.jsonl'}",
            validator_model=f"replay/{BLOG / 'validator_replay.jsonl'}",
            rubric_generation_parameters=QUIET,
            validator_parameters=QUIET,
            rubric_generation_prompt_template=PARAMS["rubric_generation_prompt_template"],
            validator_prompt_template=PARAMS["validator_prompt_template"],
        )

    results, metrics = asyncio.run(notebook_cell())
    assert list(results["final_score"]) == [1.0, 0.5] and metrics["mean_final_score"] == 0.75


def test_sdk_qa_records_and_supplied_rubrics(tmp_path):
    image = "gs://bucket/coffee.png"
    records = [
        {"question": "is there coffee?", "question_type": "food", "gt_answer": "yes", "answer_choices": ["yes", "no"]},
        {"question": "is there tea?", "question_type": "food", "gt_answer": "no", "answer_choices": ["yes", "no"]},
    ]
    df = pd.DataFrame({"image": [image], "qa_records": [records], "keywords": ["{1}[coffee] or {2}[tea]"]})
    validator = _replay(tmp_path, "v.jsonl", [{"index": 0, "response": '{"q1": "yes", "q2": "yes"}'}])
    results, metrics = gecko.evaluate(df, validator_model=validator, validator_parameters=QUIET)
    assert results.loc[0, "final_score"] == 0.5
    assert [q["expected"] for q in results.loc[0, "qa_results"]] == ["yes", "no"]
    rubric = json.dumps({"qas": [{"question_id": "a", "question": "is there coffee?", "answer": "yes"}]})
    df = pd.DataFrame({"image": [image], "rubric": [rubric]})
    validator = _replay(tmp_path, "v2.jsonl", [{"index": 0, "response": '{"a": "no"}'}])
    results, _ = gecko.evaluate(df, rubrics_column="rubric", validator_model=validator, validator_parameters=QUIET)
    assert (
        results.loc[0, "final_score"] == 0.0
        and results.loc[0, "rubrics"] == "<question>is there coffee?<choices>yes,no"
    )


def test_bad_input_fails_before_any_call():
    df = _blog_frame()
    replay = f"replay/{BLOG / 'validator_replay.jsonl'}"
    with pytest.raises(
        InputError,
        match=r"media_column: column 'picture' .media_column. is not in the DataFrame; columns: \['prompt', 'image'\]",
    ):
        gecko.evaluate(df, media_column="picture", validator_model=replay)
    with pytest.raises(
        InputError, match=r"id_columns: the DataFrame index identifies the rows .* duplicates \[0, 1\]; pass id_columns"
    ):
        gecko.evaluate(pd.concat([df, df]), validator_model=replay)
    with pytest.raises(InputError, match=r"validator_prompt_template: .*never uses \{rubrics\}"):
        gecko.evaluate(df, validator_prompt_template="Look: {image}", validator_model=replay)
    with pytest.raises(InputError, match=r"expected a pandas DataFrame, got list"):
        gecko.evaluate([{"prompt": "p"}])


def test_ids_1_and_string_1_are_duplicates_before_any_call():
    """Hostile trial: an id column holding 1 and "1" (or an index [1, "1"]) is two rows to pandas but one id to
    the joins of results with rows, as in AutoSxS; Gecko refuses them before calling a model."""
    from autorater_pipelines.testing import ModelEmulator

    rubric = json.dumps({"qas": [{"question_id": "a", "question": "is there coffee?", "answer": "yes"}]})
    frames = {
        "id column": (pd.DataFrame({"id": [1, "1"], "image": ["gs://b/x.png"] * 2, "rubric": [rubric] * 2}), ["id"]),
        "index": (
            pd.DataFrame(
                {"image": ["gs://b/x.png"] * 2, "rubric": [rubric] * 2}, index=pd.Index([1, "1"], dtype=object)
            ),
            None,
        ),
    }
    messages = {
        "id column": r"id_columns, row 2: duplicate id \{'id': '1'\} \(first seen in row 1 as \{'id': 1\}; ids are "
        r"compared as text",
        "index": r"id_columns: the DataFrame index .* duplicates \[1 and '1'\] \(labels are compared as text",
    }
    with ModelEmulator(responder=lambda request: '{"a": "yes"}') as emu:
        kwargs = {
            "rubrics_column": "rubric",
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": {**QUIET, "base_url": emu.url},
            "project": "p",
            "location": "us-central1",
        }
        for name, (df, id_columns) in frames.items():
            with pytest.raises(InputError, match=messages[name]):
                gecko.evaluate(df, id_columns=id_columns, **kwargs)
            assert emu.call_count == 0, name
        # Control: the same frame with distinct ids is evaluated, one call per row.
        df, _ = frames["id column"]
        results, _ = gecko.evaluate(df.assign(id=[1, "2"]), id_columns=["id"], **kwargs)
        assert list(results["final_score"]) == [1.0, 1.0] and emu.call_count == 2


GECKO_BAD_PARAMETERS = [
    ({"validator_parameters": {"sampling_count": 0}}, r"^validator_parameters: sampling_count must be an integer"),
    (
        {"validator_parameters": {"base_url": "not a url"}},
        r"^validator_parameters: invalid model parameters: base_url=",
    ),
    ({"scoring": {"missing_answer_policy": "ignore"}}, r"^scoring: "),
    (
        {"scoring": {"logprob_weighting": True}},
        r"^scoring: logprob_weighting weighs each answer by the validator's probability of it, which needs "
        r"validator_parameters questions_per_call 1 and logprobs of at least 1 \(received questions_per_call 0, "
        r"logprobs None\)",
    ),
]


@pytest.mark.parametrize(("bad", "message"), GECKO_BAD_PARAMETERS, ids=[json.dumps(b) for b, _ in GECKO_BAD_PARAMETERS])
def test_a_bad_validator_or_scoring_parameter_is_refused_before_the_rubrics_are_generated(bad, message):
    """Every parameter of every stage is checked before the first call (the rubric generator's), at a real server."""
    from autorater_pipelines.testing import ModelEmulator

    df = pd.DataFrame({"id": ["a", "b"], "prompt": ["a cat", "a dog"], "image": ["gs://b/x.png"] * 2})
    with ModelEmulator(responder=lambda request: '{"keywords": "{1}[cat]", "qas": []}') as emulator:
        options = {**QUIET, "base_url": emulator.url}
        kwargs = {
            "id_columns": ["id"],
            "rubric_generation_model": "gemini-2.5-flash",
            "rubric_generation_parameters": options,
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": options,
            "project": "p",
            "location": "us-central1",
            "progress": False,
        }
        with pytest.raises(InputError, match=message):
            gecko.evaluate(
                df, **{**kwargs, **bad, "validator_parameters": {**options, **bad.get("validator_parameters", {})}}
            )
        assert emulator.call_count == 0


def test_a_string_id_column_is_one_column_in_gecko_too():
    """Hostile trial (issue 25): id_columns="ab" was split into 'a' and 'b'."""
    rubric = json.dumps(
        {"qas": [{"question_id": "q", "question": "is there coffee?", "answer": "yes", "question_type": "object"}]}
    )
    replay = [{"ab": "r1", "response": '{"answers": [{"question_id": "q", "answer": "yes"}]}'}]
    df = pd.DataFrame({"ab": ["r1"], "a": ["x"], "b": ["y"], "image": ["gs://b/x.png"], "rubric": [rubric]})
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        results, _ = gecko.evaluate(
            df,
            id_columns="ab",
            rubrics_column="rubric",
            validator_model=_replay(Path(tmp), "validator.jsonl", replay),
            validator_parameters=QUIET,
            progress=False,
        )
    assert list(results["final_score"]) == [1.0]
