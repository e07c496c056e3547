"""Adaptive rubrics for text (issue 23): media_type "text" through `autorater run gecko` and the DataFrame API.

Expected figures are worked out by hand from the replay files and the emulator's rule (a "mention" rubric passes
when the word is in the response).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from autorater_pipelines import gecko
from autorater_pipelines.cli import main
from autorater_pipelines.gecko import prompts
from autorater_pipelines.gecko.params import Validator
from autorater_pipelines.testing import ModelEmulator
from autorater_pipelines.testing.demo_models import gecko_model

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gecko_text_quickstart"
EMULATED = {"cache_dir": "off", "progress": False, "initial_backoff_s": 0.05, "max_backoff_s": 0.2}
GCP = {"project": "test-project", "location": "us-central1"}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _outputs(out: Path) -> tuple[dict, dict, list[dict]]:
    results = {r["id"]: r for r in _jsonl(out / "results.jsonl")}
    return results, json.loads((out / "metrics.json").read_text()), _jsonl(out / "error_messages.jsonl")


@pytest.mark.pipeline
def test_text_quickstart_replayed_through_autorater_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    out = tmp_path / "text"
    assert main(["run", "gecko", "--params", str(EXAMPLE / "params.json"), "--output-dir", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "  mean final_score   0.8333  95% CI [" in printed  # 5/6 (= mean_score), see below
    # the heading does not repeat "accuracy", which is a text rubric type
    assert "  share of questions passed, by type:\n    accuracy           0.000  (1 question)" in printed
    assert "  pass_rate          0.6667  95% CI [" in printed and "(share of scored rows with score 1.0)" in printed
    results, metrics, errors = _outputs(out)
    assert errors == []
    # deadlines: 4 of 4 rubrics pass; haiku: 2 of 2; capital: "Sydney" fails "names Canberra", passes "one word"
    assert {k: r["score"] for k, r in results.items()} == {"deadlines": 1.0, "haiku": 1.0, "capital": 0.5}
    capital = results["capital"]["rubric_verdicts"]
    assert [v["verdict"] for v in capital] == [False, True]
    assert capital[0]["evaluated_rubric"] == {
        "rubric_id": "q1",
        "content": {"property": {"description": "Does the response name Canberra as the capital?"}},
        "type": "accuracy",
        "importance": None,
    }
    # mean (1 + 1 + 1/2) / 3 = 5/6; stdev sqrt(((1/6)² + (1/6)² + (1/3)²) / 2) = sqrt(1/12); 2 of 3 rows at 1.0
    assert metrics["mean_score"] == pytest.approx(5 / 6)
    assert metrics["stdev_score"] == pytest.approx((1 / 12) ** 0.5)
    assert metrics["pass_rate"] == pytest.approx(2 / 3)
    assert metrics["accuracy_by_question_type"]["accuracy"] == 0.0
    validations = _jsonl(out / "validations.jsonl")
    assert validations[0]["validator"]["media_probe"]["status"] == "skipped"  # text: no media probe


def test_text_validator_prompt_shows_prompt_response_and_rubrics():
    template = gecko.validation.validator_template(Validator.of(), prompt_column="prompt", media_type="text")
    parts = template.render(
        prompt="Say hi.",
        response="Hello there!",
        media_type="text",
        questions=[{"question_id": "q1", "question": "Is it a greeting?", "options": [], "yes_no": True}],
        rubrics="",
    )
    assert parts == (
        prompts.render(
            prompts.compile_template(prompts.VALIDATE_TEXT_ALL_TEMPLATE, source="t"),
            source="t",
            prompt="Say hi.",
            response="Hello there!",
            media_type="text",
            questions=[{"question_id": "q1", "question": "Is it a greeting?", "options": [], "yes_no": True}],
        ),
    )
    assert "Prompt:\nSay hi.\n\nResponse:\nHello there!\n\n[q1] Is it a greeting? Answer yes or no." in parts[0]


def _emulated(url: str) -> dict:
    return {**EMULATED, "base_url": url}


ROWS = [
    {"id": "fruit", "prompt": "Describe apples and pears", "response": "Apples are sweet; pears are softer."},
    {"id": "fails", "prompt": "FAIL_RUBRIC for this prompt", "response": "Anything."},
    {"id": "empty", "prompt": "Describe plums", "response": ""},
    {"id": "sky", "prompt": "Explain why skies look blue", "response": "Sunlight scatters in the air."},
]


def _check_scores(results: dict) -> None:
    # fruit: rubrics for Describe, apples, pears; the response mentions apples and pears -> 2/3
    fruit = results["fruit"]
    assert [v["evaluated_rubric"]["content"]["property"]["description"] for v in fruit["rubric_verdicts"]] == [
        "Does the response mention 'Describe'?",
        "Does the response mention 'apples'?",
        "Does the response mention 'pears'?",
    ]
    assert [v["verdict"] for v in fruit["rubric_verdicts"]] == [False, True, True]
    assert fruit["score"] == pytest.approx(2 / 3)
    # sky: Explain, skies, look, blue -> none in "Sunlight scatters in the air." -> 0
    assert results["sky"]["score"] == 0.0


def _check_errors(errors: dict[str, tuple]) -> None:
    """A failed generation and an empty response are error rows with the reason, never empty rubrics."""
    assert set(errors) == {"fails", "empty"}
    stage, kind, message = errors["fails"]
    assert (stage, kind) == ("rubric_generation", "empty_rubric")
    assert message.startswith("the generated rubric has no usable question")
    stage, kind, message = errors["empty"]
    assert (stage, kind) == ("media", "missing_media")
    assert message.startswith("no response text in column 'response' (media_type text), got ''")


@pytest.mark.pipeline
def test_generated_text_rubrics_end_to_end_through_the_emulator(tmp_path):
    dataset = tmp_path / "text.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    with ModelEmulator(responder=gecko_model) as emulator:
        params = {
            "evaluation_dataset": str(dataset),
            "id_columns": ["id"],
            "prompt_column": "prompt",
            "media_column": "response",
            "media_type": "text",
            "rubric_generation_model": "gemini-2.5-flash",
            "rubric_generation_parameters": {**_emulated(emulator.url), "guidelines": "Check every noun."},
            "validator_model": "gemini-2.5-flash",
            "validator_parameters": _emulated(emulator.url),
            **GCP,
        }
        (tmp_path / "params.json").write_text(json.dumps(params))
        out = tmp_path / "out"
        code = main(
            ["run", "gecko", "--params", str(tmp_path / "params.json"), "--output-dir", str(out), "--quiet"]
            + ["--max-failed-share", "1"]
        )
        requests = emulator.requests
    assert code == 0
    generation = [r for r in requests if r.response_schema and "qas" in r.response_schema["properties"]]
    assert len(generation) == 4 and all("Guidelines from the user" in r.prompt_text for r in generation)
    assert all(r.media == [] for r in requests), "text runs send no media"
    results, metrics, errors = _outputs(out)
    _check_scores(results)
    assert set(results) == {"fruit", "sky"}
    _check_errors({e["id"]: (e["stage"], e["error_kind"], e["error_message"]) for e in errors})
    assert metrics["mean_score"] == pytest.approx(1 / 3) and metrics["pass_rate"] == 0.0


def test_dataframe_generate_rubrics_writes_rubric_groups_that_round_trip(tmp_path):
    df = pd.DataFrame(ROWS).set_index("id")
    with ModelEmulator(responder=gecko_model) as emulator:
        settings = _emulated(emulator.url)
        with_rubrics = gecko.generate_rubrics(
            df,
            media_type="text",
            rubric_generation_model="gemini-2.5-flash",
            rubric_generation_parameters=settings,
            project="test-project",
            location="us-central1",
        )
        groups = with_rubrics.loc["fruit", "rubric_groups"]
        assert list(groups) == ["gecko_rubrics"]
        assert [r["rubric_id"] for r in groups["gecko_rubrics"]] == ["q1", "q2", "q3"]
        assert groups["gecko_rubrics"][1]["content"]["property"]["description"] == (
            "Does the response mention 'apples'?"
        )
        assert pd.isna(with_rubrics.loc["fails", "rubric_groups"])
        assert with_rubrics.loc["fails", "error_stage"] == "rubric_generation"
        # only the Vertex column goes back in: the rubrics are read from it
        vertex_only = with_rubrics[["prompt", "response", "rubric_groups"]].dropna(subset=["rubric_groups"])
        vertex_only = vertex_only.assign(rubric_groups=vertex_only["rubric_groups"].map(json.dumps))
        results, metrics = gecko.evaluate(
            vertex_only,
            media_column="response",
            media_type="text",
            rubrics_column="rubric_groups",
            validator_model="gemini-2.5-flash",
            validator_parameters=settings,
            project="test-project",
            location="us-central1",
        )
    fails = with_rubrics.loc["fails"]
    empty = results.loc["empty"]
    _check_errors(
        {
            "fails": (fails["error_stage"], fails["error_kind"], fails["error_message"]),
            "empty": (empty["error_stage"], empty["error_kind"], empty["error_message"]),
        }
    )
    _check_scores({k: results.loc[k].to_dict() for k in ("fruit", "sky")})
    assert metrics["mean_score"] == pytest.approx(1 / 3) and metrics["rows_scored"] == 2


# Validator answers of the example's two candidates, rubric by rubric (the rubrics of rubric_replay.jsonl):
# response: deadlines 4/4, haiku 2/2, capital 1/2 ("Sydney"); response_b: deadlines 3/4 (May 16 missing), haiku
# 1/2 (not 5-7-5), capital 2/2 ("Canberra").
CANDIDATE_ANSWERS = {
    "model_a": {"deadlines": ["yes", "yes", "yes", "yes"], "haiku": ["yes", "yes"], "capital": ["no", "yes"]},
    "model_b": {"deadlines": ["yes", "yes", "no", "yes"], "haiku": ["no", "yes"], "capital": ["yes", "yes"]},
}


def test_two_candidates_on_the_same_rubrics_win_rates_by_hand(tmp_path):
    from autorater_pipelines.gecko.candidates import evaluate_candidates

    replay = tmp_path / "validator.jsonl"
    lines = []
    for candidate, by_id in CANDIDATE_ANSWERS.items():
        for rid, said in by_id.items():
            reply = {"answers": [{"question_id": f"q{i}", "answer": a} for i, a in enumerate(said, 1)]}
            lines.append({"id": rid, "candidate": candidate, "response": json.dumps(reply)})
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    df = pd.DataFrame(_jsonl(EXAMPLE / "dataset.jsonl"))
    results, metrics = evaluate_candidates(
        df,
        response_columns={"model_a": "response", "model_b": "response_b"},
        id_columns=["id"],
        rubric_generation_model=f"replay/{EXAMPLE / 'rubric_replay.jsonl'}",
        validator_model=f"replay/{replay}",
        progress=False,
    )
    assert list(results["model_a"]["score"]) == [1.0, 1.0, 0.5]
    assert list(results["model_b"]["score"]) == [0.75, 0.5, 1.0]
    a, b = metrics["candidates"]["model_a"], metrics["candidates"]["model_b"]
    assert a["mean_score"] == pytest.approx(5 / 6) and a["pass_rate"] == pytest.approx(2 / 3)
    # b: mean (3/4 + 1/2 + 1) / 3 = 3/4; stdev sqrt((0 + 1/16 + 1/16) / 2) = 1/4; one row of three at 1.0
    assert b["mean_score"] == pytest.approx(0.75) and b["stdev_score"] == pytest.approx(0.25)
    assert b["pass_rate"] == pytest.approx(1 / 3)
    # deadlines: a (1 > 3/4); haiku: a (1 > 1/2); capital: b (1 > 1/2)
    wins = metrics["win_rates"]
    assert wins["win_rates"] == {"model_a": pytest.approx(2 / 3), "model_b": pytest.approx(1 / 3)}
    assert wins["tie_rate"] == 0.0 and wins["rows_compared"] == 3
    comparison = metrics["per_rubric_comparison"]["model_a vs model_b"]
    # only a: deadlines q3 (May 16), haiku q1 (5-7-5); only b: capital q1 (Canberra); both pass the other 5
    assert comparison["only_model_a_rubric_ids"] == ["row 0: q3", "row 1: q1"]
    assert comparison["only_model_b_rubric_ids"] == ["row 2: q1"]
    assert (comparison["both_pass"], comparison["both_fail"], comparison["rubrics_compared"]) == (5, 0, 8)


def test_candidates_with_bad_response_columns_are_refused_before_any_call():
    from autorater_pipelines.errors import InputError
    from autorater_pipelines.gecko.candidates import evaluate_candidates

    df = pd.DataFrame(_jsonl(EXAMPLE / "dataset.jsonl"))
    with pytest.raises(InputError, match=r"response_columns names columns not in the DataFrame: \{'b': 'nope'\}"):
        evaluate_candidates(df, response_columns={"a": "response", "b": "nope"}, id_columns=["id"])
    with pytest.raises(InputError, match=r"response_columns must map each candidate's name .* got \[\]"):
        evaluate_candidates(df, response_columns=[], id_columns=["id"])
    with pytest.raises(InputError, match=r"has a column 'candidate', which response_columns adds"):
        evaluate_candidates(df.assign(candidate=1), response_columns={"a": "response"}, id_columns=["id"])


def _rubric(rid: str, text: str, importance: str | None = None) -> dict:
    return {"rubric_id": rid, "content": {"property": {"description": text}}, "type": None, "importance": importance}


@pytest.mark.pipeline
def test_vertex_rubric_groups_column_with_rubric_group_through_autorater_run(tmp_path):
    rows = [
        {
            "id": "deadlines",
            "response": "Hi team, deadlines are May 2 and May 9.",
            "rubric_groups": {
                "general": [_rubric("all-dates", "Names all three deadlines?", "HIGH"), _rubric("polite", "Polite?")],
                "other": [_rubric("x", "Unused?")],
            },
        },
        {"id": "capital", "response": "Sydney", "rubric_groups": {"general": [_rubric("canberra", "Names Canberra?")]}},
    ]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers = {("deadlines", "all-dates"): "no", ("deadlines", "polite"): "yes", ("capital", "canberra"): "no"}
    replay = tmp_path / "validator.jsonl"
    replay.write_text(
        "".join(json.dumps({"id": i, "question_id": q, "response": a}) + "\n" for (i, q), a in answers.items())
    )
    params = {
        "evaluation_dataset": str(dataset),
        "id_columns": ["id"],
        "media_column": "response",
        "media_type": "text",
        "rubrics_column": "rubric_groups",
        "rubric_group": "general",
        "validator_model": f"replay/{replay}",
        "validator_parameters": {"questions_per_call": 1},
    }
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "out"
    assert main(["run", "gecko", "--params", str(tmp_path / "params.json"), "--output-dir", str(out), "--quiet"]) == 0
    results, metrics, errors = _outputs(out)
    assert errors == []
    # deadlines: all-dates no, polite yes -> 1/2; capital: canberra no -> 0
    assert {k: r["score"] for k, r in results.items()} == {"deadlines": 0.5, "capital": 0.0}
    verdicts = results["deadlines"]["rubric_verdicts"]
    assert [v["evaluated_rubric"] for v in verdicts] == rows[0]["rubric_groups"]["general"]
    assert [v["verdict"] for v in verdicts] == [False, True]
    assert metrics["mean_score"] == 0.25 and metrics["pass_rate"] == 0.0
