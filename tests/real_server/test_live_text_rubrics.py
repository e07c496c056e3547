"""Text rubrics (media_type "text") generated and validated live by a real OpenAI-compatible server."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from autorater_pipelines import gecko
from autorater_pipelines.cli import main

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


RETRYABLE_KINDS = ("transient", "rate_limit", "budget")


def _run_live(tmp_path, params: dict) -> tuple[list[dict], list[dict], dict]:
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "out"
    flags = ["--output-dir", str(out), "--quiet", "--max-failed-share", "1"]
    code = main(["run", "gecko", "--params", str(tmp_path / "params.json"), *flags])

    def rows(name: str) -> list[dict]:
        return [json.loads(line) for line in (out / name).read_text().splitlines() if line.strip()]

    metrics = json.loads((out / "metrics.json").read_text())
    assert code == (0 if metrics["rows_scored"] else 1)  # 1: no row scored (each an error row, checked after)
    return rows("results.jsonl"), rows("error_messages.jsonl"), metrics


def _check_chain(results: list[dict], errors: list[dict], keys: list[tuple]) -> None:
    """Every row (and candidate) is judged, its score the share of its verdicts passed, or an error row with the
    model's own reason (never a failed or abandoned call)."""

    def key(row: dict) -> tuple:
        return (row["uid"], row.get("candidate"))

    assert sorted([key(r) for r in results] + [key(e) for e in errors if "handled_as" not in e]) == sorted(keys)
    for row in results:
        judged = [v["verdict"] for v in row["rubric_verdicts"] if v["verdict"] is not None]
        assert row["rubric_verdicts"] and row["score"] == (pytest.approx(sum(judged) / len(judged)) if judged else None)
    for error in errors:
        assert error["error_kind"] not in RETRYABLE_KINDS and error["error_message"], error


GROUPS = [
    {"quality": [_rubric("names-paris", "Does the response name Paris?"), _rubric("one-word", "Is it one word?")]},
    {"quality": [_rubric("two-colors", "Does the response name two colors?")]},
]


def test_responses_generated_by_response_model_then_validated_live(real_server, tmp_path) -> None:
    """response_model and validator are the same live model, through `autorater run gecko` (rubrics supplied, so
    every row reaches the generation)."""
    dataset = tmp_path / "prompts.jsonl"
    rows = [{"uid": r["uid"], "prompt": r["prompt"], "rubric_groups": g} for r, g in zip(ROWS, GROUPS, strict=True)]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = f"openai/{real_server.model}"
    params = {
        "evaluation_dataset": str(dataset),
        "id_columns": ["uid"],
        "prompt_column": "prompt",
        "media_type": "text",
        "rubrics_column": "rubric_groups",
        "response_model": model,
        "response_model_parameters": real_server.params(max_output_tokens=48, cache_dir=str(tmp_path / "cache")),
        "validator_model": model,
        "validator_parameters": real_server.params(
            max_output_tokens=16, cache_dir=str(tmp_path / "cache"), questions_per_call=1
        ),
        "scoring": {"missing_answer_policy": "zero", "unparseable_answer_policy": "zero"},
    }
    results, errors, metrics = _run_live(tmp_path, params)
    _check_chain(results, errors, [(0, None), (1, None)])
    for row in results:  # the live model's own response was validated
        assert isinstance(row["response"], str) and row["response"].strip(), row
    assert all(e["stage"] in ("inference", "media") for e in errors), errors  # an empty answer: missing_media
    assert metrics["rubric_prompt_version"] == "supplied" and metrics["evaluation_count"] == 2
    shown = [(r["uid"], r["response"][:60], r["score"]) for r in results]
    print(f"\nresponse_model live: {shown}, errors {[(e['stage'], e['error_kind']) for e in errors]}")


def test_two_candidates_validated_live_on_the_same_supplied_rubrics(real_server, tmp_path) -> None:
    """response_columns through `autorater run gecko`: both candidates' rows are judged on the same rubrics."""
    rows = [
        {**r, "response_b": ["Lyon", "Green."][r["uid"]], "rubric_groups": g} for r, g in zip(ROWS, GROUPS, strict=True)
    ]
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = {
        "evaluation_dataset": str(dataset),
        "id_columns": ["uid"],
        "media_type": "text",
        "response_columns": {"a": "response", "b": "response_b"},
        "rubrics_column": "rubric_groups",
        "validator_model": f"openai/{real_server.model}",
        "validator_parameters": real_server.params(
            max_output_tokens=16, cache_dir=str(tmp_path / "cache"), questions_per_call=1
        ),
        "scoring": {"missing_answer_policy": "zero", "unparseable_answer_policy": "zero"},
    }
    results, errors, metrics = _run_live(tmp_path, params)
    _check_chain(results, errors, [(0, "a"), (0, "b"), (1, "a"), (1, "b")])
    assert set(metrics["candidates"]) == {"a", "b"} and metrics["rubric_prompt_version"] == "supplied"
    wins = metrics["win_rates"]
    assert wins["rows_compared"] + wins["rows_not_compared"] == 2
    assert sum(wins["wins"].values()) + wins["ties"] == wins["rows_compared"]
    print(f"\ncandidates live: {wins}, {metrics['per_rubric_comparison']['a vs b']}")
